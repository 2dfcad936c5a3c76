"""Device detection on this CPU-only machine (CI has no GPU)."""

from __future__ import annotations

import pytest

from engine.embed.device import DEVICE_ENV, detect
from engine.errors import ConfigError

torch = pytest.importorskip("torch")
no_gpu = pytest.mark.skipif(torch.cuda.is_available() or torch.backends.mps.is_available(), reason="a GPU is present")


@no_gpu
def test_cpu_only_machine_gets_the_cpu(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    found = detect()
    assert found.kind == "cpu"
    assert not found.accelerated and not found.half
    assert found.description.startswith("CPU")


@no_gpu
def test_asking_for_a_missing_gpu_says_so(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, "cuda")
    with pytest.raises(ConfigError, match="not available"):
        detect()


def test_forcing_the_cpu_and_rejecting_unknown_names(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, "CPU")
    assert detect().kind == "cpu"
    with pytest.raises(ConfigError, match="unknown device"):
        detect("tpu")
