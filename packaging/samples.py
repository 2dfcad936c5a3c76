"""Write the folder of sample documents that packaging/smoke.sh feeds to a built bundle's ``--selftest``.

One document of every format the readers support (written by tests/docgen.py, so the smoke test and the reader
tests agree on what each file says) plus plain-text articles cut from tests/data/toy_corpus.txt. The PDF and Office
files are read in reader processes however few files there are: that path re-runs the frozen executable
(packaging/quire_app.py).

    python packaging/samples.py DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import docgen  # noqa: E402 - tests/docgen.py, found through the path set above

from engine.ingest.readers import isolated  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "toy_corpus.txt"
# Sentences per plain-text article: a few paragraphs each, like a short note.
ARTICLE_SENTENCES = 20
# One writer per format; each file carries the sentence its docgen constant names.
WRITERS = (docgen.make_txt, docgen.make_md, docgen.make_rst, docgen.make_html, docgen.make_pdf,
           docgen.make_docx, docgen.make_pptx, docgen.make_odt, docgen.make_epub, docgen.make_rtf)


def write_samples(folder: Path) -> list[Path]:
    """Write the sample documents into ``folder`` (created) and return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [write(folder) for write in WRITERS]
    lines = [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    articles = [lines[i:i + ARTICLE_SENTENCES] for i in range(0, len(lines), ARTICLE_SENTENCES)]
    for number, article in enumerate(articles, 1):
        path = folder / "articles" / f"article-{number:02d}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text("\n".join(article) + "\n", encoding="utf-8")
        paths.append(path)
    if not any(isolated(path) for path in paths):
        raise RuntimeError("no sample would be read in a reader process; the smoke test needs that path")
    return paths


def main() -> None:
    """Command line: ``python packaging/samples.py DIR``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    folder = parser.parse_args().folder
    print(f"{len(write_samples(folder))} sample documents in {folder}")


if __name__ == "__main__":
    main()
