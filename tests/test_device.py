"""Device detection on this CPU-only machine (CI has no GPU)."""

from __future__ import annotations

import pytest

from engine.embed.device import DEVICE_ENV, attention_kernels, detect
from engine.errors import ConfigError

pytestmark = pytest.mark.torch

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


def test_cuda_attention_leaves_out_cudnn_and_restores_it():
    torch = pytest.importorskip("torch")
    before = torch.backends.cuda.cudnn_sdp_enabled()
    with attention_kernels("cuda"):
        assert not torch.backends.cuda.cudnn_sdp_enabled()
        assert torch.backends.cuda.flash_sdp_enabled()
    assert torch.backends.cuda.cudnn_sdp_enabled() == before
    with attention_kernels("cpu"):
        assert torch.backends.cuda.cudnn_sdp_enabled() == before
