"""Where bundled files (the static model, icons) are, wherever quire was installed or unpacked."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def resources_dir() -> Path:
    """The ``resources/`` folder: $QUIRE_RESOURCES, a PyInstaller bundle, an installed share folder, or the checkout."""
    override = os.environ.get("QUIRE_RESOURCES")
    if override:
        return Path(override)
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    checkout = Path(__file__).resolve().parent.parent / "resources"
    if checkout.is_dir():
        return checkout
    return Path(sys.prefix) / "share" / "quire" / "resources"


def resource_path(name: str) -> Path:
    """Path of one bundled file (it may not exist; callers say what to do about that)."""
    return resources_dir() / name
