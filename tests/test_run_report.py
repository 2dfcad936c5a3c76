"""The status-bar line after an indexing run: counts in the right number, and a file not indexed named once."""

from __future__ import annotations

from app.gui.run_report import run_message
from engine.filestate import FileState
from engine.indexing.run import FileIssue
from engine.reports import IndexReport


def test_run_messages():
    def report(documents=0, sentences=0, removed=0, issues=(), cancelled=False) -> IndexReport:
        return IndexReport("static", documents, sentences, 0, removed, tuple(issues), 1.25, cancelled)

    skipped = FileIssue("/d/empty.txt", FileState.SKIPPED, "empty file")
    message, announced = run_message(report(1, 1, issues=[skipped]), ())
    assert message == "indexed 1 document (1 sentence) in 1.2 s; 1 file not indexed (see File report)"
    assert run_message(report(issues=[skipped]), announced) == ("", announced)
    assert run_message(report(2, 1204), announced)[0] == "indexed 2 documents (1,204 sentences) in 1.2 s"
    assert run_message(report(cancelled=True), announced)[0] == "stopped after 0 documents (0 sentences) in 1.2 s"
    assert run_message(report(removed=3), announced)[0] == "3 deleted files left the index"
    failed = FileIssue("/d/empty.txt", FileState.FAILED, "unreadable")  # the same file, another reason: said again
    assert run_message(report(issues=[failed]), announced)[0] == "1 file not indexed (see File report)"

    cut = FileIssue("/d/huge.txt", FileState.INDEXED, "too many sentences: only the first 50,000 are indexed")
    assert run_message(report(issues=[cut, failed]), ())[0] == (
        "1 file not indexed (see File report); 1 file indexed only in part (see File report)")
