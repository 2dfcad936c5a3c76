"""The pure-Python sentence rules against blingfire (docs/decisions/0009): how often they give the same sentences, and
how fast each is through ``split_spans`` (blank lines, headings, the repair and the long-sentence cut included).

Texts: the articles of the first ``--files`` enwiki gz files, plus any ``--text`` files (e.g. Vim's manual,
/usr/share/vim/vim90/doc/usr_*.txt, for hard-wrapped technical prose). Per source: documents split identically,
the share of blingfire's sentences the rules give too (as a multiset), sentence counts, MB/s for each splitter, and a
few differences. Needs blingfire (an x86-64 machine).

Usage: python bench/sentence_splitters.py [--files 2] [--text FILE ...] [--examples 5] [--output FILE]
Writes bench/results/sentence_splitters.json.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from bench.index_wiki import _DOC, DEFAULT_CORPUS  # noqa: E402
from engine.text.sentences import AVAILABLE, Splitter, split_sentences  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "sentence_splitters.json"


def wiki_articles(corpus: Path, files: int) -> list[str]:
    """The article bodies of the first ``files`` gz files."""
    texts = []
    for source in sorted(corpus.rglob("wiki_*.gz"))[:files]:
        with gzip.open(source, "rt", encoding="utf-8") as handle:
            texts.extend(body.strip() for _doc_id, _title, body in _DOC.findall(handle.read()))
    return texts


def compare(texts: list[str], examples: int) -> dict:
    """Agreement and speed of the two splitters on ``texts``."""
    split: dict[Splitter, list[list[str]]] = {}
    seconds: dict[Splitter, float] = {}
    for splitter in (Splitter.BLINGFIRE, Splitter.RULES):
        started = time.perf_counter()
        split[splitter] = [split_sentences(text, splitter) for text in texts]
        seconds[splitter] = time.perf_counter() - started
    ours, theirs = split[Splitter.RULES], split[Splitter.BLINGFIRE]
    shared = sum(sum((Counter(a) & Counter(b)).values()) for a, b in zip(ours, theirs))
    differing = [(a, b) for a, b in zip(theirs, ours) if a != b]
    megabytes = sum(len(text.encode("utf-8")) for text in texts) / 1e6
    return {
        "documents": len(texts),
        "megabytes": round(megabytes, 2),
        "documents_identical": round(1 - len(differing) / max(len(texts), 1), 4),
        "blingfire_sentences_kept": round(shared / max(sum(map(len, theirs)), 1), 4),
        "sentences": {s.value: sum(map(len, split[s])) for s in split},
        "mb_per_second": {s.value: round(megabytes / seconds[s], 2) for s in split},
        "differences": [
            {"blingfire_only": [x for x in b if x not in set(r)], "rules_only": [x for x in r if x not in set(b)]}
            for b, r in differing[:examples]
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--files", type=int, default=2, help="enwiki gz files to read (0: none)")
    parser.add_argument("--text", type=Path, nargs="*", default=[], help="text files, each one document")
    parser.add_argument("--examples", type=int, default=5, help="differences to show per source")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if Splitter.BLINGFIRE not in AVAILABLE:
        raise SystemExit("blingfire cannot be loaded here: there is nothing to compare the rules with")

    sources = {}
    if args.files:
        sources["enwiki"] = wiki_articles(args.corpus, args.files)
    if args.text:
        sources["text files"] = [path.read_text(encoding="utf-8", errors="replace") for path in args.text]
    report = {name: compare(texts, args.examples) for name, texts in sources.items() if texts}
    for name, row in report.items():
        speed = row["mb_per_second"]
        print(f"{name}: {row['documents']} documents, {row['megabytes']} MB; identical documents "
              f"{100 * row['documents_identical']:.1f}%, blingfire's sentences kept "
              f"{100 * row['blingfire_sentences_kept']:.2f}%, sentences {row['sentences']}, "
              f"MB/s blingfire {speed['blingfire']} rules {speed['rules']}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "command": " ".join(sys.argv),
                                       **report}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
