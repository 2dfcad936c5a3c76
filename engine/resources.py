"""Where bundled files (the static model, the neural head, calibration priors, icons) are, wherever quire was
installed or unpacked.

The repository keeps them in its top-level ``resources/`` folder; a built wheel carries the same files as the package
data ``engine/_resources`` (setup.py maps the folder there), found through importlib.resources, so a ``pip install
--user``, a venv anywhere or a zipapp finds them without knowing ``sys.prefix``.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable  # Python 3.11+; only the annotations need it

log = logging.getLogger(__name__)

# Set to a folder laid out like resources/ to use other files (a trial model, a test's).
ENV = "QUIRE_RESOURCES"
# The package data folder inside an installed engine package (setup.py).
PACKAGED = "_resources"
_CHECKOUT = Path(__file__).resolve().parent.parent / "resources"
# Files copied out of a zip (a zipapp) to be read by path; removed when the interpreter exits.
_EXTRACTED: dict[str, Path] = {}
_EXTRACTED_STACK = contextlib.ExitStack()
atexit.register(_EXTRACTED_STACK.close)


def _packaged() -> Traversable | None:
    """The installed package's resource folder, or None in a checkout (where engine/ has none)."""
    folder = resources.files("engine").joinpath(PACKAGED)
    return folder if folder.is_dir() else None


def resources_dir() -> Traversable:
    """The folder of bundled files: $QUIRE_RESOURCES, a PyInstaller bundle, the installed package's data, or the
    checkout's ``resources/``. It is a :class:`~pathlib.Path` except inside a zip; use :func:`resource_path` for a
    file on disk."""
    override = os.environ.get(ENV)
    if override:
        return Path(override)
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    packaged = _packaged()
    return packaged if packaged is not None else _CHECKOUT


def resource_path(name: str) -> Path:
    """Path of one bundled file, ``name`` relative to the resources folder with ``/`` separators (it may not exist;
    callers say what to do about that). A file inside a zip is copied to a temporary file once per process."""
    folder = resources_dir()
    parts = name.split("/")
    if isinstance(folder, Path):
        return folder.joinpath(*parts)
    member = folder.joinpath(*parts)
    if not member.is_file():
        return _CHECKOUT.joinpath(*parts)  # absent here too: the caller's "missing" message names a real place
    if name not in _EXTRACTED:
        _EXTRACTED[name] = _EXTRACTED_STACK.enter_context(resources.as_file(member))
        log.debug("copied %s out of the zip to %s", name, _EXTRACTED[name])
    return _EXTRACTED[name]
