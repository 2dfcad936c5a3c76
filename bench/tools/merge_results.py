"""Join `quire eval` results measured in parts (e.g. one collection per process) into one latest.json/.md.

Example (five collections measured in parallel, each with ``--out parts/NAME``)::

    python bench/tools/merge_results.py parts/*/latest.json --out bench/results/h100
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout without installing

from engine.eval import report  # noqa: E402
from engine.eval.merge import merge  # noqa: E402


def main() -> None:
    """Merge, write, print the markdown."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", type=Path, nargs="+", help="latest.json files of the parts, in order of preference")
    parser.add_argument("--out", type=Path, required=True, help="folder for the merged latest.json and latest.md")
    args = parser.parse_args()
    results = merge([json.loads(p.read_text(encoding="utf-8")) for p in args.parts])
    _, md_path = report.write(results, args.out)
    print(md_path.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
