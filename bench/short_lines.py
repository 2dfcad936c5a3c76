"""Short lines as top hits: how often a sentence of fewer than ``--short`` words (a heading, a title, "See also.") is
the best semantic or hybrid hit, on Wikipedia articles indexed as files (docs/decisions/0001).

Three query sets: 50 topical questions written for articles of the first six gz files (each with the article that
answers it), 50 article titles (the answer is that article), and 12 one-word topics that are also common section
headings ("economy", "history"), where a bare heading is the nearest vector of the query by construction.
For each set and mode: how many queries' top hit is a short sentence, how many of those are outside the expected
article (a short line winning for a query its section does not answer), and how many top hits are in the expected
article (questions and titles), and how many top hits are headings of any length (a short line without final
punctuation, engine.text.sentences.is_heading). Indexing wall and CPU time are printed too. ``--rule N,M,S`` indexes
under other constants of engine.embed.context (SHORT_WORDS, POOL_WORDS, MAX_SPAN) to compare them.
``--bare-headings`` writes the articles' section headings without the full stop the extractor gives them
("Organised labour." as "Organised labour"), as word processors and Markdown write headings.

Usage: python bench/short_lines.py [--files 6] [--short 4] [--rule N,M,S] [--bare-headings] [--keep DIR]
       [--output FILE]
Writes bench/results/short_lines.json.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from bench.index_wiki import DEFAULT_CORPUS, write_articles  # noqa: E402
from engine import Index, IndexConfig, embed  # noqa: E402
from engine.text.sentences import is_heading  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "short_lines.json"
# A section heading as the extractor writes it: a line of a few words with one full stop, at its end.
_HEADING_LINE = re.compile(r"^([^.!?\n]+)\.$", re.MULTILINE)
TITLES = 50

# (question, title of the article that answers it), for articles of AA/wiki_00 .. wiki_05
QUESTIONS = [
    ("what do anarchists oppose", "Anarchism"),
    ("early signs of autism in young children", "Autism"),
    ("how much sunlight a surface reflects", "Albedo"),
    ("where the shape of the letter A comes from", "A"),
    ("the civil rights movement in Montgomery and Birmingham", "Alabama"),
    ("the hero of the Trojan War killed by an arrow in his heel", "Achilles"),
    ("the president shot at Ford's Theatre", "Abraham Lincoln"),
    ("the philosopher who taught Alexander the Great", "Aristotle"),
    ("Gershwin's orchestral piece with taxi horns", "An American in Paris"),
    ("how Oscar winners are chosen by the academy members", "Academy Awards"),
    ("leap seconds and atomic clocks", "International Atomic Time"),
    ("helping others at a cost to oneself", "Altruism"),
    ("the novelist who founded objectivism", "Ayn Rand"),
    ("the war of independence from France in 1962", "Algeria"),
    ("the study of human societies and cultures", "Anthropology"),
    ("turning base metals into gold", "Alchemy"),
    ("the seven-bit character encoding for computers", "ASCII"),
    ("drawing pictures frame by frame to make them move", "Animation"),
    ("the Greek god of music, prophecy and archery", "Apollo"),
    ("the tennis player married to Steffi Graf", "Andre Agassi"),
    ("the small country in the Pyrenees between France and Spain", "Andorra"),
    ("the sum of the numbers divided by how many there are", "Arithmetic mean"),
    ("Orwell's story of farm animals who overthrow their farmer", "Animal Farm"),
    ("frogs and salamanders that lay their eggs in water", "Amphibian"),
    ("the purchase of the territory from Russia in 1867", "Alaska"),
    ("the domestication of crops and livestock", "Agriculture"),
    ("the author of Brave New World", "Aldous Huxley"),
    ("seaweeds and other organisms that photosynthesise in water", "Algae"),
    ("testing whether the means of several groups differ", "Analysis of variance"),
    ("saturated hydrocarbons such as methane and propane", "Alkane"),
    ("counting with beads that slide on rods", "Abacus"),
    ("substances that donate protons and turn litmus red", "Acid"),
    ("the black sticky material used to pave roads", "Asphalt"),
    ("the first crewed landing on the Moon", "Apollo 11"),
    ("Swift's satire proposing that the poor sell their children as food", "A Modest Proposal"),
    ("lithium, sodium and potassium react violently with water", "Alkali metal"),
    ("the number of protons in the nucleus of an atom", "Atomic number"),
    ("the burrowing African mammal that eats ants and termites", "Aardvark"),
    ("the Dutch Caribbean island off the coast of Venezuela", "Aruba"),
    ("the first constitution of the United States before 1789", "Articles of Confederation"),
    ("the ocean between the Americas and Europe and Africa", "Atlantic Ocean"),
    ("the philosopher of the will and pessimism", "Arthur Schopenhauer"),
    ("the theory of relativity and the photoelectric effect", "Albert Einstein"),
    ("the Taliban and the Soviet invasion", "Afghanistan"),
    ("the Japanese martial art that redirects an attacker's force", "Aikido"),
    ("the Macedonian king who conquered the Persian Empire", "Alexander the Great"),
    ("the director of Psycho and The Birds", "Alfred Hitchcock"),
    ("the Persian physician who wrote The Canon of Medicine", "Avicenna"),
    ("machines that learn and reason like people", "Artificial intelligence"),
    ("the nut of a tree related to the peach", "Almond"),
]

# one-word topics that are also frequent section headings of these articles
WORDS = ["history", "economy", "geography", "culture", "religion", "climate", "demographics", "transport",
         "education", "sports", "literature", "music"]


def bare_headings(docs: Path) -> int:
    """Take the full stop off each section heading of the articles under ``docs`` (a line of at most as many words as
    the splitter's heading rule allows, with no other sentence end); returns how many were changed."""
    changed = 0

    def bare(match: re.Match[str]) -> str:
        nonlocal changed
        if not is_heading(match.group(1)):
            return match.group(0)
        changed += 1
        return match.group(1)

    for path in docs.rglob("*.txt"):
        path.write_text(_HEADING_LINE.sub(bare, path.read_text(encoding="utf-8")), encoding="utf-8")
    return changed


def word_count(embedder, texts: list[str]) -> list[int]:
    """Words of each text as the static tokenizer sees them (the unit of the short-line rule)."""
    _, offsets = embedder.tokenizer.encode(texts)
    return [int(n) for n in offsets[1:] - offsets[:-1]]


def top_hits(idx: Index, queries: list[str], mode: str) -> list:
    return [next(iter(idx.search(q, k=1, mode=mode, include_weak=True, explain=False).results), None) for q in queries]


def measure(idx: Index, titles: dict[str, str], queries: list[tuple[str, str | None]], short: int, static) -> dict:
    out = {}
    for mode in ("semantic", "hybrid"):
        hits = top_hits(idx, [q for q, _ in queries], mode)
        counts = word_count(static, [h.sentence if h else "" for h in hits])
        expected = [(h, title) for h, (_, title) in zip(hits, queries) if title is not None]
        out[mode] = {
            "top_hit_short": sum(1 for h, n in zip(hits, counts) if h and n < short),
            "top_hit_short_elsewhere": sum(1 for h, n, (_, t) in zip(hits, counts, queries)
                                           if h and n < short and t is not None and titles.get(h.path) != t)
            if expected else None,
            "top_hit_in_expected_article": sum(1 for h, t in expected if h and titles.get(h.path) == t)
            if expected else None,
            "top_hit_heading": sum(1 for h in hits if h and is_heading(h.sentence)),
            "queries": len(queries),
            "examples": [{"query": q, "sentence": h.sentence if h else None, "article": titles.get(h.path) if h else None}
                         for (q, _), h in list(zip(queries, hits))[:8]],
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=6, help="first N gz files of the corpus (6: 298 articles)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--short", type=int, default=4, help="a sentence of fewer words than this is short")
    parser.add_argument("--rule", default=None, help="N,M,S: index with these short-line constants instead")
    parser.add_argument("--bare-headings", action="store_true", help="write section headings without their full stop")
    parser.add_argument("--keep", type=Path, default=None, help="put the articles and index here and keep them")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.rule:
        from engine.embed import context

        context.SHORT_WORDS, context.POOL_WORDS, context.MAX_SPAN = (int(v) for v in args.rule.split(","))
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="quire-short-"))
    docs, index_dir = scratch / "articles", scratch / "index"
    try:
        for stale in (docs, index_dir):
            shutil.rmtree(stale, ignore_errors=True)
        articles, _ = write_articles(args.corpus, args.files, docs)
        headings = bare_headings(docs) if args.bare_headings else None
        titles = {str(p): p.read_text(encoding="utf-8").split("\n", 1)[0] for p in docs.rglob("*.txt")}
        static = embed.load("static")
        with Index(index_dir, method="static", config=IndexConfig()) as idx:
            started, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
            idx.add([docs])
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_SELF)
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            texts = [r[0] for r in idx.store.db.execute("SELECT text FROM sentences").fetchall()]
            counts = word_count(static, texts)
            picked = sorted(titles.items())[:: max(1, len(titles) // TITLES)][:TITLES]
            result = {
                "rule": args.rule, "bare_headings": headings, "files": args.files, "articles": articles, "sentences": len(texts), "short_words": args.short,
                "short_sentences": sum(1 for n in counts if n < args.short),
                "index_wall_seconds": round(wall, 2),
                "index_cpu_seconds_main_process": round(after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime, 2),
                "index_cpu_seconds_readers": round(children.ru_utime + children.ru_stime, 2),
                "questions": measure(idx, titles, QUESTIONS, args.short, static),
                "titles": measure(idx, titles, [(t, t) for _, t in picked], args.short, static),
                "words": measure(idx, titles, [(w, None) for w in WORDS], args.short, static),
            }
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{result['articles']} articles, {result['sentences']:,} sentences, {result['short_sentences']:,} of fewer "
          f"than {args.short} words; indexed in {result['index_wall_seconds']} s")
    for name in ("questions", "titles", "words"):
        for mode, row in result[name].items():
            right = "" if row["top_hit_in_expected_article"] is None else \
                f" ({row['top_hit_short_elsewhere']} outside the expected article), top hit in the expected " \
                f"article {row['top_hit_in_expected_article']}/{row['queries']}"
            print(f"{name:<9} {mode:<8} top hit short {row['top_hit_short']}/{row['queries']}{right}, a heading "
                  f"{row['top_hit_heading']}")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
