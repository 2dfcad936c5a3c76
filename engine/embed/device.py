"""Which accelerator the GPU methods should use, found without importing torch unless it is installed."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    """``kind`` is what torch calls it ("cuda", "mps", "cpu"); ``description`` names it for people."""

    kind: str
    description: str

    @property
    def accelerated(self) -> bool:
        """True for a GPU."""
        return self.kind != "cpu"


def detect() -> Device:
    """CUDA, then Apple MPS, then the CPU. Importing torch costs seconds, so callers do this off the UI thread."""
    if importlib.util.find_spec("torch") is None:
        return Device("cpu", "CPU (torch not installed)")
    import torch

    if torch.cuda.is_available():
        return Device("cuda", f"CUDA: {torch.cuda.get_device_name(0)}")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return Device("mps", "Apple GPU (MPS)")
    return Device("cpu", "CPU")
