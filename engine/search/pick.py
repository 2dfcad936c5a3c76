"""The documents a search shows: the ranking weighed in rounds until ``k`` strong documents are found, identical
copies folded into one result."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from engine.search.candidates import Candidate
from engine.search.passages import ChosenPassage

log = logging.getLogger(__name__)

# Documents weighed in the second round, after the first k (:func:`rounds`): in place of those that turn out weak or
# duplicates.
SECOND_ROUND = 5


@dataclass(frozen=True)
class Picked:
    """The documents weighed and kept, copies folded (``picked``), and how many of them are strong."""

    picked: list[ChosenPassage]
    strong: int


def rounds(ranked: list[Candidate], k: int) -> Iterator[list[Candidate]]:
    """The ranking in the parts that are weighed one after another, each only if the ones before did not give k
    results: the first k, SECOND_ROUND more, then the rest. Most queries find their k results among the first few
    documents (on the Wikipedia benchmark's queries, 10 results took 10 documents at the median and at most 13 in
    three queries of four), so the candidates of the documents after the first k are read only when needed
    (docs/benchmarks.md)."""
    yield ranked[:k]
    if len(ranked) > k:
        yield ranked[k : k + SECOND_ROUND]
    if len(ranked) > k + SECOND_ROUND:
        yield ranked[k + SECOND_ROUND :]


def pick_shown(weighed: Iterable[ChosenPassage], k: int, include_weak: bool) -> Picked:
    """The weighed documents kept, in order, until ``k`` of them are strong (with ``include_weak``, all of them); a
    document with the content of one kept is listed as that one's copy."""
    picked: list[ChosenPassage] = []
    seen_hashes: dict[str | None, ChosenPassage] = {}
    strong = 0
    for evidence in weighed:
        record = evidence.record
        if record.hash in seen_hashes:
            seen_hashes[record.hash].duplicates.append(record.path)
            continue
        seen_hashes[record.hash] = evidence
        picked.append(evidence)
        strong += not evidence.weak
        if len(picked) >= k and not include_weak and strong >= k:
            break
    return Picked(picked, strong)
