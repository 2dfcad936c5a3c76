"""Step 5: the model file goes where the app loads it, with its provenance and its words' neighbours beside it."""

from __future__ import annotations

import json
import logging
import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from engine.embed.static import load_model
from engine.staticbuild.neighbours import write_neighbours

log = logging.getLogger(__name__)


def export(model: Path, out: Path) -> None:
    """Copy a built model file to ``out`` with its metadata beside it as PROVENANCE.json, and its neighbour table
    (engine.staticbuild.neighbours)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(model.read_bytes())
    out.with_name("PROVENANCE.json").write_text(json.dumps(load_model(out).meta, indent=2) + "\n")
    log.info("exported %s (%.1f MB)", out, out.stat().st_size / 1e6)
    write_neighbours(out)


def portable(arg: str) -> str:
    """An absolute path as seen from the checkout (e.g. ``../shared/...``), so the shipped provenance names no machine."""
    return os.path.relpath(arg) if os.path.isabs(arg) else arg


def recorded_command(module: str, argv: Sequence[str]) -> str:
    """The command line a provenance file records: paths made portable, so it can be pasted on another machine."""
    return f"python -m {module} " + " ".join(shlex.quote(portable(a)) for a in argv)
