"""Which accelerator the GPU methods should use, found without importing torch unless it is installed."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass

from engine.errors import ConfigError

log = logging.getLogger(__name__)

# Forces a device ("cpu", "cuda", "mps"), e.g. to keep a shared GPU free or to compare speeds.
DEVICE_ENV = "QUIRE_DEVICE"
KINDS = ("cuda", "mps", "cpu")


@dataclass(frozen=True)
class Device:
    """``kind`` is what torch calls it ("cuda", "mps", "cpu"); ``description`` names it for people."""

    kind: str
    description: str

    @property
    def accelerated(self) -> bool:
        """True for a GPU."""
        return self.kind != "cpu"

    @property
    def half(self) -> bool:
        """Whether models run in float16 here: on CUDA it doubles throughput at no measurable quality cost; MPS
        and CPU kernels for float16 are patchy or slower, so they stay in float32."""
        return self.kind == "cuda"


def _available(torch, kind: str) -> bool:
    if kind == "cuda":
        return bool(torch.cuda.is_available())
    if kind == "mps":
        mps = getattr(torch.backends, "mps", None)
        return bool(mps is not None and mps.is_available())
    return True


def _describe(torch, kind: str) -> str:
    if kind == "cuda":
        return f"CUDA: {torch.cuda.get_device_name(0)}"
    if kind == "mps":
        return "Apple GPU (MPS)"
    return f"CPU ({torch.get_num_threads()} threads)"


def detect(prefer: str | None = None) -> Device:
    """``prefer`` (or $QUIRE_DEVICE) if given and present, else CUDA, then Apple MPS, then the CPU.

    Importing torch costs seconds, so callers do this off the UI thread.

    Raises:
        ConfigError: ``prefer`` names no device kind, or a GPU that is not present.
    """
    prefer = (prefer or os.environ.get(DEVICE_ENV) or "").strip().lower() or None
    if prefer is not None and prefer not in KINDS:
        raise ConfigError(f"unknown device {prefer!r}; choose from {', '.join(KINDS)}")
    if importlib.util.find_spec("torch") is None:
        if prefer not in (None, "cpu"):
            raise ConfigError(f"device {prefer!r} needs torch: pip install -e '.[gpu]'")
        return Device("cpu", "CPU (torch not installed)")
    import torch

    if prefer is not None:
        if not _available(torch, prefer):
            raise ConfigError(f"device {prefer!r} was asked for but is not available here")
        return Device(prefer, _describe(torch, prefer))
    kind = next(k for k in KINDS if _available(torch, k))
    found = Device(kind, _describe(torch, kind))
    log.info("device: %s", found.description)
    return found


@contextlib.contextmanager
def attention_kernels(kind: str) -> Iterator[None]:
    """Scaled dot-product attention without cuDNN's kernel on CUDA; nothing changes elsewhere.

    cuDNN builds an execution graph for every new input shape, and ours change with every batch (length-bucketed
    texts): on an H100 that build cost about 9 ms of CPU per attention call, 2.2 s of a 3.8 s neural batch whose GPU
    work took 0.3 s (torch profiler). Flash and memory-efficient attention need no per-shape set-up.
    """
    if kind != "cuda":
        yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        yield
