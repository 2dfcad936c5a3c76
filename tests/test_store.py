"""The SQLite store and the HNSW graph, on real files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.filestate import FileState
from engine.ingest.documents import NewDocument, SentenceRecord
from engine.store import meta
from engine.store.chunks import IN_CHUNK, IN_LENGTHS, in_chunks
from engine.store.database import Store
from engine.store.documents import StateCounts
from engine.store.meta import Key, PerMethod
from engine.store.vectors import VectorIndex


def _doc(path: str, texts: list[str]) -> NewDocument:
    sentences = tuple(SentenceRecord(t, i * 10, i * 10 + len(t), None, hash(t) & 0xFFFF) for i, t in enumerate(texts))
    return NewDocument(
        path=path,
        size=1,
        mtime=1.0,
        hash=path,
        title=path,
        kind="text",
        sentences=sentences,
        passages=((0, len(texts) - 1),),
    )


def _unit(rng, n, dim=8):
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _graph(store, n, seed):
    """A graph opened on ``n`` random unit vectors written to ``store``: (graph, sentence ids, vectors)."""
    v = _unit(np.random.default_rng(seed), n)
    _, ids = store.write_documents([_doc("/a", [f"s{i}" for i in range(n)])], v, "m")
    return _opened(store), ids, v


def _opened(store, fingerprint="fp"):
    """The graph opened and saved, as an indexing run does (a search only opens it)."""
    index = VectorIndex(store.folder, "m", fingerprint, 8)
    index.open(store)
    index.save(store.meta.generation())
    return index


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "idx")
    yield s
    s.close()


def test_file_states_and_settings_are_stored_as_the_strings_indexes_always_held(store):
    # the enums' values are the on-disk format: an index made by an older quire reads as before
    store.write_documents([_doc("/a", ["alpha"])], _unit(np.random.default_rng(0), 1), "m")
    store.record_unindexed("/b", 1, 1.0, "h", FileState.SKIPPED, "empty file")
    with store.transaction():
        store.meta.put(PerMethod.CALIBRATION.of("m"), {"mean": 0.1})
    rows = store.db.execute("SELECT path, status, typeof(status) FROM documents ORDER BY path").fetchall()
    assert rows == [("/a", "indexed", "text"), ("/b", "skipped", "text")]
    keys = {r[0] for r in store.db.execute("SELECT key FROM meta")}
    assert {"schema_version", "index_id", "generation", "next_sentence_id", "next_passage_id", "calibration:m"} <= keys
    assert [r.status for r in store.documents.listing()] == [FileState.INDEXED, FileState.SKIPPED]
    assert store.documents.states() == StateCounts(indexed=1, skipped=1) and store.documents.states().documents == 2


def test_write_replace_and_delete_keep_fts_consistent(store):
    rng = np.random.default_rng(0)
    store.write_documents([_doc("/a", ["alpha beta", "gamma"]), _doc("/b", ["beta delta"])], _unit(rng, 3), "m")
    assert {d for _, d, _ in store.words.fts_bm25('"beta"', 10)} == {1, 2}
    removed, new_ids = store.write_documents([_doc("/a", ["epsilon"])], _unit(rng, 1), "m")
    assert sorted(removed) == [1, 2] and new_ids.tolist() == [4]
    assert store.words.fts_bm25('"alpha"', 10) == [] and len(store.words.fts_bm25('"epsilon"', 10)) == 1
    assert store.delete_paths(["/b"]) == [3]
    assert store.words.fts_bm25('"beta"', 10) == []
    assert store.sentences.count() == 1 and store.sentences.passage_count() == 1
    ids, vectors = store.vectors.read("m")
    assert ids.tolist() == [4] and vectors.shape == (1, 8)


def test_cached_counts_follow_writes_of_this_and_other_connections(store, tmp_path):
    rng = np.random.default_rng(0)
    store.write_documents([_doc("/a", ["alpha beta"]), _doc("/b", ["beta"])], _unit(rng, 2), "m")
    assert store.words.frequencies(["beta", "alpha", "zeta"]) == {"beta": 2, "alpha": 1}
    assert store.sentences.passage_count() == 2
    store.write_documents([_doc("/c", ["beta zeta"])], _unit(rng, 1), "m")  # this connection writes
    assert store.words.frequencies(["beta", "zeta"]) == {"beta": 3, "zeta": 1}
    assert store.sentences.passage_count() == 3
    other = Store(tmp_path / "idx")  # another connection (the indexer, beside the app's searcher) writes
    try:
        other.delete_paths(["/a", "/b"])
    finally:
        other.close()
    assert store.words.frequencies(["beta", "alpha", "zeta"]) == {"beta": 1, "zeta": 1}
    assert store.sentences.passage_count() == 1


def test_sentence_ids_are_never_reused(store):
    rng = np.random.default_rng(0)
    _, first = store.write_documents([_doc("/a", ["one", "two"])], _unit(rng, 2), "m")
    store.delete_paths(["/a"])
    _, second = store.write_documents([_doc("/a", ["three"])], _unit(rng, 1), "m")
    assert second.min() > first.max()


def test_vectors_round_trip_at_half_precision(store):
    rng = np.random.default_rng(1)
    v = _unit(rng, 4)
    _, ids = store.write_documents([_doc("/a", ["a", "b", "c", "d"])], v, "m")
    got_ids, got = store.vectors.read("m", ids.tolist())
    assert got_ids.tolist() == ids.tolist() and np.allclose(got, v, atol=2e-3)


def test_vector_index_catches_up_after_a_crash_and_rebuilds_when_missing(tmp_path, store, graph_always):
    rng = np.random.default_rng(2)
    v = _unit(rng, 3)
    _, ids = store.write_documents([_doc("/a", ["a", "b", "c"])], v, "m")
    index = _opened(store)
    assert index.live_count == 3
    # a second write that never reached the graph file (process killed before save)
    removed, more = store.write_documents([_doc("/a", ["d", "e"])], _unit(rng, 2), "m")
    reopened = _opened(store)
    found, _ = reopened.search(store.vectors.read("m", more.tolist())[1][0], 5)
    assert set(found.tolist()) == set(more.tolist())
    # the graph file is gone: rebuilt from the stored vectors
    reopened.path.unlink()
    rebuilt = _opened(store)
    assert rebuilt.live_count == 2
    # a graph of another model version is never trusted
    other = _opened(store, "other-fingerprint")
    assert other.live_count == 2


def test_corrupt_graph_file_is_rebuilt(store):
    rng = np.random.default_rng(3)
    store.write_documents([_doc("/a", ["a", "b"])], _unit(rng, 2), "m")
    index = _opened(store)
    index.path.write_bytes(b"garbage")
    again = VectorIndex(store.folder, "m", "fp", 8)
    again.open(store)
    assert again.live_count == 2


def test_search_returns_cosine_similarity_best_first(store):
    index, ids, v = _graph(store, 50, seed=4)
    got, sims = index.search(v[7], 3)
    assert got[0] == ids[7] and sims[0] == pytest.approx(1.0, abs=1e-2)
    assert (np.diff(sims) <= 1e-6).all()
    index.remove([int(ids[7])])
    assert ids[7] not in index.search(v[7], 3)[0]


def test_graph_vectors_leave_out_deleted_and_unknown_ids(store):
    index, ids, v = _graph(store, 5, seed=6)
    got, rows = index.vectors(ids.tolist())
    assert got.tolist() == ids.tolist() and np.allclose(rows, v, atol=1e-3)  # rebuilt from half precision
    index.remove([int(ids[1])])
    got, rows = index.vectors([int(ids[3]), int(ids[1]), 10**9])
    assert got.tolist() == [int(ids[3])] and rows.shape == (1, 8) and np.allclose(rows[0], v[3], atol=1e-3)
    assert index.vectors([10**9])[0].size == 0 and index.vectors([])[1].shape == (0, 8)


def test_coded_search_finds_the_exact_nearest_among_many_rows(store, monkeypatch):
    """Past the candidates the codes pick, the exact scores decide: each query vector's own row, and its exact top 10
    where the code scan is asked for every row."""
    from engine.store import vectors

    monkeypatch.setattr(vectors, "EXACT_BELOW", 500)
    index, ids, v = _graph(store, 3000, seed=8)
    assert index.coded
    for q, label in zip(v[:30], ids[:30]):
        assert index.search(q, 1, candidates=200)[0].tolist() == [int(label)]
    stored_ids, stored = store.vectors.read("m")
    exact = stored_ids[np.argsort(-(stored @ stored[0]), kind="stable")[:10]]
    assert index.search(stored[0], 10, candidates=3000)[0].tolist() == exact.tolist()
    index.remove(ids[:2990])
    assert sorted(index.search(v[0], 50)[0].tolist()) == sorted(ids[2990:].tolist())


def test_sentences_of_passages_come_in_order_and_use_an_index(store):
    rng = np.random.default_rng(2)
    store.write_documents([_doc("/a", ["one", "two", "three"]), _doc("/b", ["four"])], _unit(rng, 4), "m")
    pids = [r[0] for r in store.db.execute("SELECT id FROM passages ORDER BY id")]
    got = store.sentences.of_passages([*pids, 999])
    assert {p: [r.text for r in rows] for p, rows in got.items()} == {pids[0]: ["one", "two", "three"], pids[1]: ["four"]}
    plan = " ".join(r[3] for r in store.db.execute("EXPLAIN QUERY PLAN SELECT * FROM sentences WHERE passage_id = 1"))
    assert "INDEX" in plan
    assert store.documents.indexed_count() == 2


def test_connections_opening_a_new_index_together_all_succeed(tmp_path):
    """The app opens its search and indexing connections at once; a fresh index must not answer "locked"."""
    from concurrent.futures import ThreadPoolExecutor

    folder = tmp_path / "fresh"

    def open_and_write(i: int) -> int:
        s = Store(folder)
        try:
            with s.db.atomic():
                s.meta.put(PerMethod.CALIBRATION.of(f"opener{i}"), i)
            return int(s.meta.get(Key.SCHEMA_VERSION))
        finally:
            s.close()

    with ThreadPoolExecutor(max_workers=6) as pool:
        versions = list(pool.map(open_and_write, range(12)))
    assert len(set(versions)) == 1
    check = Store(folder)
    assert all(check.meta.get(PerMethod.CALIBRATION.of(f"opener{i}")) == i for i in range(12))
    check.close()


def test_opening_an_index_while_a_run_reserves_ids_leaves_the_run_alone(tmp_path, store):
    """The app's search worker opens its Store while the index process writes a batch: write_documents reads the next
    ids from meta, then writes them (meta.reserve_ids). An open that wrote anything (PRAGMA auto_vacuum did, every
    time) made the run's snapshot stale, and SQLite failed its write at once with "database is locked" (issue 33)."""
    with store.db.atomic():
        store.meta.get(Key.SCHEMA_VERSION)  # the run's transaction has read: its snapshot is taken
        Store(store.path.parent).close()
        assert meta.reserve_ids(store.db.conn, Key.NEXT_SENTENCE_ID, "sentences", 5) == 1


def test_queued_inserts_are_in_the_graph_once_saved_and_can_be_removed(tmp_path, store, graph_always):
    rng = np.random.default_rng(5)
    v = _unit(rng, 6)
    _, ids = store.write_documents([_doc("/a", ["a", "b", "c", "d", "e", "f"])], v, "m")
    index = VectorIndex(tmp_path / "idx", "m", "fp", 8)
    index.add_later(ids[:3], v[:3])
    index.add_later(ids[3:], v[3:])  # waits for the first batch
    index.remove([int(ids[5])])  # waits for the second, which holds it
    assert index.live_count == 5
    found, _ = index.search(v[5], 6)
    assert int(ids[5]) not in found.tolist()
    index.add_later(ids[:0], v[:0])
    index.save(store.meta.generation())
    reopened = VectorIndex(tmp_path / "idx", "m", "fp", 8)
    reopened.open(store)
    assert reopened.live_count == 5


def test_a_save_queued_behind_an_insert_writes_the_graph_as_of_the_generation_given(tmp_path, store, caplog):
    rng = np.random.default_rng(7)
    v = _unit(rng, 6)
    _, ids = store.write_documents([_doc("/a", ["a", "b", "c", "d", "e", "f"])], v, "m")
    generation = store.meta.generation()
    index = VectorIndex(tmp_path / "idx", "m", "fp", 8)
    index.add_later(ids[:4], v[:4])
    index.add_later(ids[4:], v[4:], then_save=generation)  # saved on the insert's thread, after it
    index.wait()
    assert json.loads(index.sidecar.read_text())["generation"] == generation
    reopened = VectorIndex(tmp_path / "idx", "m", "fp", 8)
    with caplog.at_level("INFO", logger="engine.store.vectors"):
        reopened.open(store)
    assert not caplog.records  # neither caught up nor rebuilt: the file holds all six
    assert reopened.live_count == 6
    found, _ = reopened.search(v[5], 1)
    assert found.tolist() == [int(ids[5])]


def test_vector_batches_cover_every_vector_in_id_order(store):
    rng = np.random.default_rng(6)
    store.write_documents([_doc("/a", [f"s{i}" for i in range(7)])], _unit(rng, 7), "m")
    batches = list(store.vectors.batches("m", batch=3))
    assert [b[0].size for b in batches] == [3, 3, 1]
    ids, vectors = store.vectors.read("m")
    assert np.concatenate([b[0] for b in batches]).tolist() == ids.tolist()
    assert np.array_equal(np.concatenate([b[1] for b in batches]), vectors)
    assert list(store.vectors.batches("absent")) == []


def test_boilerplate_counts_come_from_a_covering_index(store):
    rng = np.random.default_rng(7)
    store.write_documents([_doc(p, ["shared footer", p]) for p in ("/a", "/b", "/c")], _unit(rng, 6), "m")
    assert store.sentences.keys(list(range(1, 7)), up_to=5) == {
        1: (1, 3), 2: (1, 1), 3: (2, 3), 4: (2, 1), 5: (3, 3), 6: (3, 1)}
    assert store.sentences.keys([1, 2], up_to=2) == {1: (1, 2), 2: (1, 1)}
    plan = " ".join(r[-1] for r in store.db.execute(
        "EXPLAIN QUERY PLAN SELECT s.id, (SELECT count(*) FROM (SELECT DISTINCT t.doc_id FROM sentences t "
        "WHERE t.hash = s.hash LIMIT 5)) FROM sentences s WHERE s.id IN (1, 2)"
    ))
    assert "COVERING INDEX idx_sentences_hash_doc_id" in plan


@pytest.mark.parametrize("parts", [2, 3, 7, 40])
def test_a_split_bm25_scan_finds_the_same_passages_with_the_same_scores(store, monkeypatch, parts) -> None:
    """Each part's bm25() takes IDF and mean length from the whole table, so splitting only spreads the work: the
    same rows, merged best first (more parts than passages, or parts without a match, change nothing)."""
    from engine.store import scans

    monkeypatch.setattr(scans, "SCAN_PARTS", 8)
    rng = np.random.default_rng(3)
    words = ["river", "mill", "otter", "heron", "bridge", "weir", "wheel", "bank", "reed", "pike", "eel", "swan"]
    docs = [_doc(f"/d{i}", [" ".join(rng.choice(words, size=3 + i % 6)) + f" x{i}"]) for i in range(30)]
    store.write_documents(docs, _unit(rng, 30), "m")
    for match in ('"river" OR "heron"', '"otter"', '"x3"', '"nowhere"', '"pike" AND "eel"'):
        whole = sorted(store.words.fts_bm25(match, 1000), key=lambda r: (-r[2], r[0]))
        assert store.words.fts_bm25(match, 1000, parts=parts) == whole
        assert [r[2] for r in store.words.fts_bm25(match, 5, parts=parts)] == [r[2] for r in whole[:5]]
    assert len(store._scans.opened) == min(parts, 8) - 1


def test_vector_index_writes_its_graph_only_when_it_changed(store, graph_always):
    index, ids, _ = _graph(store, 20, seed=4)
    written = index.path.stat()
    index.save(41)  # the database moved on without touching this method's vectors (say, a file was only touched)
    assert index.path.stat().st_mtime_ns == written.st_mtime_ns and index.path.stat().st_ino == written.st_ino
    assert json.loads(index.sidecar.read_text())["generation"] == 41
    reopened = VectorIndex(store.folder, "m", "fp", 8)
    store.meta.put(Key.GENERATION, 41)
    reopened.open(store)  # the sidecar's generation is the database's: loaded as it is, not caught up
    assert reopened.path.stat().st_ino == written.st_ino and reopened.live_count == 20
    reopened.remove(ids[:1])
    reopened.save(42)
    assert reopened.path.stat().st_ino != written.st_ino
    again = VectorIndex(store.folder, "m", "fp", 8)
    store.meta.put(Key.GENERATION, 42)
    again.open(store)
    assert again.live_count == 19


def test_reads_by_key_go_as_lists_of_few_lengths_and_find_each_row_once(store):
    # a chunk is padded to the next of IN_LENGTHS with its last key, so statements are prepared once per length
    for n in (1, 3, 8, 9, 200, IN_CHUNK, IN_CHUNK + 7):
        chunks = list(in_chunks(range(n)))
        assert [v for chunk, _ in chunks for v in dict.fromkeys(chunk)] == list(range(n))
        for chunk, marks in chunks:
            assert len(chunk) in IN_LENGTHS and marks.count("?") == len(chunk)
    rng = np.random.default_rng(0)
    _, ids = store.write_documents([_doc("/a", ["alpha", "beta", "gamma"]), _doc("/b", ["delta"])], _unit(rng, 4), "m")
    rows = store.sentences.by_ids([int(i) for i in ids[:3]])  # three keys in a list of four
    assert sorted(r.text for r in rows.values()) == ["alpha", "beta", "gamma"]
    passages = store.sentences.of_passages(sorted({r.passage_id for r in rows.values()}))
    assert [r.text for rows_ in passages.values() for r in rows_] == ["alpha", "beta", "gamma"]


def test_the_random_sample_is_the_same_whatever_order_the_files_came_in(tmp_path):
    """Calibration and the queries' null draw from it: drawn by id, two builds of one folder got other samples (and
    relevance thresholds) when the reader processes handed the files over in another order."""
    import hashlib

    texts = {f"/d{i:02}": [f"sentence {i} of {j}" for j in range(5)] for i in range(40)}

    def doc(path: str) -> NewDocument:
        made = _doc(path, texts[path])
        hashed = tuple(SentenceRecord(r.text, r.start, r.end, r.page, int.from_bytes(
            hashlib.blake2b(r.text.encode(), digest_size=8).digest(), "little", signed=True)) for r in made.sentences)
        return NewDocument(**{**made.__dict__, "sentences": hashed})

    drawn = []
    for name, order in (("a", sorted(texts)), ("b", sorted(texts, reverse=True))):
        store = Store(tmp_path / name)
        store.write_documents([doc(p) for p in order], _unit(np.random.default_rng(0), 200), "m")
        ids = store.sentences.random_ids(50).tolist()
        drawn.append({r[0] for r in store.db.execute(f"SELECT text FROM sentences WHERE id IN ({','.join('?' * 50)})",
                                                      ids)})
        assert store.sentences.random_ids(500).size == 200 and len(set(ids)) == 50
        store.close()
    assert drawn[0] == drawn[1]
