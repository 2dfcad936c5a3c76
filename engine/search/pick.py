"""The documents a search shows: the ranking's head weighed in rounds until ``k`` strong documents are found, and
identical copies folded into one result."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from engine.search.candidates import Candidate
from engine.search.gate import Verdict
from engine.search.passages import ChosenPassage

log = logging.getLogger(__name__)

# Documents weighed in the second round, after the first k (:func:`rounds`): in place of those that turn out weak or
# duplicates.
SECOND_ROUND = 5


@dataclass(frozen=True)
class Picked:
    """The passages to show, in order; how many documents were kept (copies folded) and how many of them are
    strong; and by document id, the paths of the files with the same content as a kept one."""

    shown: tuple[ChosenPassage, ...]
    kept: int
    strong: int
    copies: Mapping[int, tuple[str, ...]]


def rounds(ranked: Sequence[Candidate], k: int) -> Iterator[Sequence[Candidate]]:
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


def pick_shown(chosen: Iterable[ChosenPassage], verdict: Verdict, k: int, include_weak: bool) -> Picked:
    """The passages of the ``k`` documents shown, read from ``chosen`` (lazily: the ranking in rounds) until ``k``
    documents kept are strong (with ``include_weak``, all of it); a document with the content of one kept is listed
    as that one's copy. Weak documents are shown only with ``include_weak``."""
    kept: list[ChosenPassage] = []
    by_hash: dict[str | None, int] = {}  # content hash -> the document kept with it
    copies: dict[int, list[str]] = {}
    strong = 0
    for passage in chosen:
        record = passage.record
        if record.hash in by_hash:
            copies.setdefault(by_hash[record.hash], []).append(record.path)
            continue
        by_hash[record.hash] = passage.doc.doc_id
        kept.append(passage)
        strong += not verdict.weak[passage.doc.doc_id]
        if len(kept) >= k and not include_weak and strong >= k:
            break
    shown = kept[:k] if include_weak else [p for p in kept if not verdict.weak[p.doc.doc_id]][:k]
    return Picked(tuple(shown), len(kept), strong, {doc_id: tuple(paths) for doc_id, paths in copies.items()})
