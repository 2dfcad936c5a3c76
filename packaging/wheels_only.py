"""Check that every dependency of the app installs from a wheel: a user's machine needs no compiler (issue 57).

Resolves the project's dependencies and its ``app`` extra with ``pip install --dry-run --only-binary :all:`` for
each Python and platform a user may have; pip reads each wheel's metadata and installs nothing. Needs PyPI.

Usage: python packaging/wheels_only.py [--here]   (--here: this interpreter and platform only)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = ("3.11", "3.12", "3.13")
# Each platform's tags that pip should accept (it does not widen a manylinux tag to the older ones itself).
PLATFORMS = (("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"), ("win_amd64",),
             ("macosx_14_0_arm64", "macosx_11_0_arm64"))


def requirements() -> list[str]:
    """The app's dependencies as pyproject.toml lists them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["app"]]


def resolves(listed: Path, python: str | None, platform: tuple[str, ...]) -> tuple[bool, str]:
    """Whether pip finds a wheel for every requirement in ``listed`` (for another Python and platform if given)."""
    command = [sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed", "--only-binary",
               ":all:", "-r", str(listed)]
    if python and platform:
        command += ["--python-version", python, *(f"--platform={tag}" for tag in platform),
                    "--target", tempfile.mkdtemp()]
    done = subprocess.run(command, capture_output=True, text=True)
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
    return done.returncode == 0, "; ".join(errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--here", action="store_true", help="this interpreter and platform only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        listed = Path(scratch) / "requirements.txt"
        listed.write_text("\n".join(requirements()) + "\n", encoding="utf-8")
        targets: list[tuple[str | None, tuple[str, ...]]] = (
            [(None, ())] if args.here else [(p, q) for p in PYTHONS for q in PLATFORMS])
        failed = 0
        for python, platform in targets:
            ok, why = resolves(listed, python, platform)
            failed += not ok
            where = platform[0] if platform else "this platform"
            print(f"{python or 'this Python'} {where}: {'wheels' if ok else 'NO: ' + why}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
