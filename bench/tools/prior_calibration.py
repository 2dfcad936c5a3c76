"""Measure a method's random-pair cosine distribution on general text and bundle it as the calibration prior that
folders too small to calibrate themselves use (docs/decisions/0003-a-prior-for-small-folders.md).

Wikipedia articles of the first ``--files`` gz files are written as text files and indexed through the product
(`Index.add`, which calibrates the index as every index is calibrated); the stored calibration is written to
``resources/calibration/<fingerprint>.json`` with its provenance. The fingerprint names the model and the rule its
vectors were made under, so a prior never applies to another model.

Usage: python bench/tools/prior_calibration.py [--method static] [--files 4] [--corpus DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout without installing

from bench.index_wiki import DEFAULT_CORPUS, write_articles  # noqa: E402
from engine import Index  # noqa: E402
from engine.eval.report import portable  # noqa: E402
from engine.resources import resource_path  # noqa: E402
from engine.search.calibration import PRIOR_FOLDER, Calibration  # noqa: E402
from engine.store.meta import PerMethod  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def measure(corpus: Path, files: int, method: str, work: Path) -> tuple[Calibration, str, dict]:
    """Index the articles of ``files`` gz files with ``method``; the index's calibration, fingerprint and counts."""
    articles, size = write_articles(corpus, files, work / "docs")
    index = Index(work / "index", method=method)
    try:
        index.add([work / "docs"])
        status = index.status()
        stored = index.store.meta.get(PerMethod.CALIBRATION.of(method))
    finally:
        index.close()
    if not stored:
        raise SystemExit(f"the index of {articles} articles was not calibrated")
    calibration = Calibration.from_meta({k: v for k, v in stored.items() if k != "sentences"})
    assert calibration is not None
    return calibration, str(status.fingerprint), {"articles": articles, "bytes": size, "sentences": status.sentences}


def main() -> None:
    """Parse the options, measure, print the figures, write the prior."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--method", default="static", help="embedding method")
    parser.add_argument("--files", type=int, default=4, help="Wikipedia gz files whose articles are indexed")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="WikiExtractor folder (wiki_*.gz)")
    parser.add_argument("--out", type=Path, default=resource_path(PRIOR_FOLDER), help="folder of the priors")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="quire-prior-") as work:
        calibration, fingerprint, counts = measure(args.corpus, args.files, args.method, Path(work))
    provenance = {
        **counts, "method": args.method, "fingerprint": fingerprint, "corpus_files": args.files,
        "corpus": portable(str(args.corpus), REPO), "measured": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": f"python bench/tools/prior_calibration.py --method {args.method} --files {args.files}",
    }
    print(f"| method | articles | sentences | pairs | mean | std | 1-in-1000 tail |\n|---|---|---|---|---|---|---|\n"
          f"| {args.method} | {counts['articles']:,} | {counts['sentences']:,} | {calibration.pairs:,} | "
          f"{calibration.mean:.3f} | {calibration.std:.3f} | {calibration.threshold:.3f} |")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{fingerprint}.json"
    path.write_text(json.dumps({"calibration": calibration.to_meta(), "provenance": provenance}, indent=1) + "\n",
                    encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
