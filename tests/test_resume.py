"""Kill `quire index` mid-run with SIGKILL: the database must open, answer queries, and the next run must finish
with the HNSW graph and the database in agreement (one live vector per sentence, every file indexed once)."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from clock import wait_until

from engine import Index, embed
from engine.filestate import FileState

# slow: fault injection (a killed process, a full disk), the tier .ci/run runs after the fast one and lint
pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent
TOY = Path(__file__).parent / "data" / "toy_corpus.txt"
FILES = 120
SENTENCES_PER_FILE = 30


def write_folder(folder: Path) -> dict[str, str]:
    """Files of shuffled toy sentences, each opening with a sentence only it has; returns path -> that sentence."""
    lines = TOY.read_text(encoding="utf-8").splitlines()
    rng = random.Random(0)
    folder.mkdir(parents=True)
    own = {}
    for n in range(FILES):
        path = folder / f"f{n:04d}.txt"
        own[str(path)] = f"Ledger entry {tag(n)} records the {tag(n)} shipment."
        path.write_text("\n\n".join([own[str(path)], *rng.sample(lines, SENTENCES_PER_FILE)]), encoding="utf-8")
    return own


def tag(n: int) -> str:
    """A word only file ``n`` has, made of letters: sentences differing only in digits count as boilerplate."""
    return "zephyr" + "".join(chr(ord("a") + int(d)) for d in f"{n:04d}")


def indexed_documents(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db / 'index.db'}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute(f"SELECT count(*) FROM documents WHERE status = '{FileState.INDEXED}'").fetchone()[0]
    except sqlite3.Error:
        return 0  # not created yet, or locked for a moment


def live_vectors(idx: Index) -> int:
    return idx.vector_index(embed.load(idx.method)).live_count


def quire(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app.cli", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_kill_mid_index_then_resume(tmp_path: Path) -> None:
    docs, db = tmp_path / "docs", tmp_path / "index"
    own = write_folder(docs)
    # small batches so that several transactions commit before the kill, as they would on a large folder
    process = quire("index", str(docs), "--db", str(db), "--batch", "500", "--json")
    wait_until(lambda: indexed_documents(db) > 0 or process.poll() is not None, timeout=240)
    assert indexed_documents(db) > 0, process.communicate() if process.poll() is not None else "nothing written"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    done_before = indexed_documents(db)
    assert 0 < done_before < FILES, "the run must be killed part-way"

    # the killed index opens and answers, with what it had committed
    with Index(db, create=False) as idx:
        status = idx.status(files=True)
        assert status.indexed == done_before
        committed = {f.path for f in status.files if f.status == FileState.INDEXED}
        first = min(committed)
        assert idx.search(tag(0), k=1, mode="lexical").results[0].path == first
        # the ledger sentences differ only in words the model may not know: any committed one is a right answer
        best = idx.search(own[first], k=1, mode="semantic").results[0]
        assert best.path in committed and best.similarity > 0.99
        assert live_vectors(idx) == idx.store.sentences.count()

    process = quire("index", "--db", str(db), "--json")
    out, err = process.communicate(timeout=240)
    assert process.returncode == 0, err
    report = json.loads(out)
    assert report["documents"] == FILES - done_before and report["unchanged"] == done_before

    with Index(db, create=False) as idx:
        status = idx.status(files=True)
        assert status.indexed == FILES and len({f.path for f in status.files}) == FILES
        assert status.sentences == FILES * (SENTENCES_PER_FILE + 1)
        assert live_vectors(idx) == idx.store.sentences.count() == status.sentences
        last = max(own)
        assert idx.search(tag(FILES - 1), k=1, mode="lexical").results[0].path == last
        assert idx.search(own[last], k=1, mode="semantic").results[0].sentence.startswith("Ledger entry")
