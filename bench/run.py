"""The one benchmark command: ``python bench/run.py [--quick] [--methods static,sbert] ...`` = ``quire eval``.

Every number is recomputed; results go to bench/results/latest.json and latest.md (see `quire eval --help`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from app.cli import cli  # noqa: E402

if __name__ == "__main__":
    cli(["eval", *sys.argv[1:]], prog_name="bench/run.py")
