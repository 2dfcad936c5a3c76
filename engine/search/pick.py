"""The documents a search weighs and shows: the ranking's head weighed in rounds until enough distinct documents are
found (identical copies folded into one), and of the verdict's order those a person is shown."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from engine.search.candidates import Candidate
from engine.search.gate import Judged, Verdict
from engine.search.passages import ChosenPassage

log = logging.getLogger(__name__)

# Documents weighed in the second round, after the first ones asked for (:func:`rounds`): in place of copies.
SECOND_ROUND = 5


@dataclass(frozen=True)
class Kept:
    """Distinct documents' passages in ranking order, and by document id the paths of files with a kept one's
    content."""

    passages: tuple[ChosenPassage, ...]
    copies: Mapping[int, tuple[str, ...]]


def rounds(ranked: Sequence[Candidate], n: int) -> Iterator[Sequence[Candidate]]:
    """The ranking in the parts that are weighed one after another, each only if the ones before did not give ``n``
    distinct documents: the first n, SECOND_ROUND more, then the rest. Most queries find them among the first few
    (docs/benchmarks.md), so the candidate sentences of the documents after the first n are read only when needed."""
    yield ranked[:n]
    if len(ranked) > n:
        yield ranked[n : n + SECOND_ROUND]
    if len(ranked) > n + SECOND_ROUND:
        yield ranked[n + SECOND_ROUND :]


def distinct(chosen: Iterable[ChosenPassage], n: int) -> Kept:
    """The first ``n`` distinct documents of ``chosen`` (read lazily); a document with the content of one kept is
    listed as that one's copy."""
    kept: list[ChosenPassage] = []
    by_hash: dict[str | None, int] = {}  # content hash -> the document kept with it
    copies: dict[int, list[str]] = {}
    for passage in chosen:
        record = passage.record
        if record.hash in by_hash:
            copies.setdefault(by_hash[record.hash], []).append(record.path)
            continue
        if len(kept) >= n:
            break
        by_hash[record.hash] = passage.doc.doc_id
        kept.append(passage)
    return Kept(tuple(kept), {doc_id: tuple(paths) for doc_id, paths in copies.items()})


def shown(verdict: Verdict, k: int, include_weak: bool) -> list[Judged]:
    """The first ``k`` documents of the verdict's order a person is shown: those that share something with the query
    (every one with ``include_weak``)."""
    return [j for j in verdict.order if include_weak or j.related][:k]
