"""The status-bar line after an indexing run: what changed, said once.

A watched folder is re-indexed after every change under it, an editor's swap file included, so most runs change
nothing; saying "indexed 0 documents" then, or naming again a file that was skipped the run before, buried the
messages that matter. A problem is announced once, and again only after it went away (the file was indexed or
removed) or its reason changed. Qt-free, so the wording is tested without a window.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from engine import FileState

if TYPE_CHECKING:
    from engine import IndexReport, IndexStatus

Problem = tuple[str, FileState, str]  # path, state (skipped, failed, or indexed when only in part), reason


def counted(n: int, noun: str) -> str:
    """"1 document", "2 documents", "1,204 sentences"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def problems_of(status: IndexStatus) -> frozenset[Problem]:
    """The files of ``status`` that are not indexed, or only in part, and why (``status.files`` must be listed)."""
    return frozenset((f.path, f.status, f.reason or "") for f in status.files
                     if f.status != FileState.INDEXED or f.reason)


def run_message(report: IndexReport, announced: Iterable[Problem]) -> tuple[str, frozenset[Problem]]:
    """The line to show for ``report`` ("" when the run changed nothing worth saying) and the problems announced
    once it is shown; ``announced``: those said before."""
    problems = frozenset((i.path, i.status, i.reason) for i in report.issues)
    new = problems - frozenset(announced)
    parts = []
    if report.cancelled or report.documents:
        verb = "stopped after" if report.cancelled else "indexed"
        parts.append(f"{verb} {counted(report.documents, 'document')} ({counted(report.sentences, 'sentence')}) "
                     f"in {report.seconds:.1f} s")
    if report.removed:
        parts.append(f"{counted(report.removed, 'deleted file')} left the index")
    cut = sum(status == FileState.INDEXED for _, status, _ in new)  # indexed up to a limit, the rest left out
    if len(new) > cut:
        parts.append(f"{counted(len(new) - cut, 'file')} not indexed (see File report)")
    if cut:
        parts.append(f"{counted(cut, 'file')} indexed only in part (see File report)")
    return "; ".join(parts), frozenset(announced) | new
