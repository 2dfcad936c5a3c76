"""What the sharded-collection tests share: a corpus of real sentences written as documents, the queries asked of
it, and the comparison of a collection's rankings with one index's."""

from __future__ import annotations

from pathlib import Path

from engine import Index, Mode
from engine.cluster.collection import Collection

TOY = Path(__file__).parent / "data" / "toy_corpus.txt"
# Queries on the toy corpus's topics, and some on none of them (the gate must agree as well).
QUERIES = (
    "bus segregation boycott", "Rosa Parks arrested", "linguistics Russian verb", "music album release",
    "war army battle", "river city population", "university professor studies", "football club season",
    "church bishop", "television series episode", "quantum chromodynamics of gluons",
)


def write_documents(folder: Path, per_document: int = 8) -> Path:
    """The toy corpus's sentences as text files of ``per_document`` lines (52 of them), under ``folder``, some in
    subfolders."""
    lines = TOY.read_text(encoding="utf-8").splitlines()
    for n, start in enumerate(range(0, len(lines), per_document)):
        path = folder / f"part-{n % 3}" / f"doc-{n:02d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines[start : start + per_document]) + "\n", encoding="utf-8")
    return folder


def ranking(searcher: Index | Collection, query: str, mode: Mode, second_look: bool = True) -> tuple[list[str], bool]:
    """The top 10 documents' paths, weak ones too, and whether the search found nothing relevant."""
    response = searcher.search(query, k=10, mode=mode, include_weak=True, explain=False, second_look=second_look)
    return [r.path for r in response.results], response.nothing_relevant


def compare(one: Index, many: Collection, second_look: bool = True) -> dict[Mode, float]:
    """Per mode, the smallest share of one index's top 10 that the collection's top 10 holds over QUERIES; lexical
    rankings are asserted equal, in order, and so is every refined answer. ``second_look``: as
    refined by the sentence model (the merged first documents re-read), or the first ranking."""
    worst = {mode: 1.0 for mode in Mode}
    for query in QUERIES:
        for mode in Mode:
            single, gate = ranking(one, query, mode, second_look)
            sharded, sharded_gate = ranking(many, query, mode, second_look)
            # the first ranking's probabilities read each shard's own null (a tiny shard's is rough): the refined
            # answer, which the sentence model's cosines carry, is the one that must agree
            assert gate == sharded_gate or not second_look, (query, mode)
            if mode is Mode.LEXICAL:
                assert sharded == single, query
            if single:
                worst[mode] = min(worst[mode], len(set(single) & set(sharded)) / len(single))
    return worst


def assert_ranks_as_one(one: Index, many: Collection) -> None:
    """The collection's top 10 holds 95% of one index's in the first ranking and 90% once refined: the second look
    re-orders the merged first documents by probabilities read with each shard's own null, so a tie at the tenth
    place may fall the other way."""
    first = compare(one, many, second_look=False)
    assert first[Mode.SEMANTIC] >= 0.95 and first[Mode.HYBRID] >= 0.95
    refined = compare(one, many)
    assert refined[Mode.SEMANTIC] >= 0.9 and refined[Mode.HYBRID] >= 0.9
