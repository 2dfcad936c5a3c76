"""The word index (engine.store.postings, engine.store.bm25) on real SQLite files: it ranks as FTS5 does through
batches, merges, deletions and rewrites, survives a merge under a reader, and is built for indexes that predate it."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from fts5_check import assert_word_index_matches_fts5

from engine import Index
from engine.config import IndexConfig
from engine.errors import Cancelled
from engine.ingest.documents import NewDocument, SentenceRecord
from engine.store import postings, schema
from engine.store.database import Store
from engine.store.meta import Key
from engine.text import terms

WORDS = ["river", "rivers", "mill", "otter", "Otters", "heron", "bridge", "weir", "wheel", "bank", "reed", "pike",
         "eel", "swan", "naïve", "Über", "Strasse", "the", "of", "flows"]
QUERIES = ["river", "otters heron", "mill wheel weir bank", "naive uber", "strasse pike eel swan reed", "the of",
           "flows rivers otter", "nowhere", "x3 river"]


def _doc(path: str, sentences: list[str]) -> NewDocument:
    records = tuple(SentenceRecord(t, 0, len(t), None, hash(t) & 0xFFFF) for t in sentences)
    # passages of two sentences: a document has several
    passages = tuple((i, min(i + 1, len(sentences) - 1)) for i in range(0, len(sentences), 2))
    return NewDocument(path, 1, 1.0, path, path, "text", records, passages)


def _sentences(rng: np.random.Generator, n: int, tag: int) -> list[str]:
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(2, 12)))) + f" x{tag}." for _ in range(n)]


def _write(store: Store, rng: np.random.Generator, paths: list[str]) -> None:
    docs = [_doc(p, _sentences(rng, int(rng.integers(1, 7)), i)) for i, p in enumerate(paths)]
    n = sum(len(d.sentences) for d in docs)
    store.write_documents(docs, rng.normal(size=(n, 4)).astype(np.float32), "m")


def _batches(store: Store, rng: np.random.Generator, batches: range) -> None:
    """One write of four documents per batch number."""
    for batch in batches:
        _write(store, rng, [f"/d{batch}-{i}" for i in range(4)])


@pytest.fixture
def small_segments(monkeypatch):
    """Blocks of a few postings and merges of two segments, so that a small test crosses every boundary."""
    monkeypatch.setattr(postings, "BLOCK_POSTINGS", 7)
    monkeypatch.setattr(postings, "MERGE_FANIN", 2)
    monkeypatch.setattr(postings, "FINAL_POSTINGS", 400)
    monkeypatch.setattr(postings, "READ_AHEAD", 2)


def test_ranks_as_fts5_through_batches_merges_deletions_and_rewrites(tmp_path, small_segments) -> None:
    rng = np.random.default_rng(0)
    store = Store(tmp_path / "idx")
    try:
        _batches(store, rng, range(12))
        levels = [r[0] for r in store.db.execute("SELECT level FROM lexical_segments")]
        assert postings.FINAL_LEVEL in levels and len(levels) < 12  # merged, and some grew final
        for query in QUERIES:
            assert_word_index_matches_fts5(store, query)
        # deleting and rewriting documents: readers skip the dead passages, merges drop them
        store.delete_paths([f"/d{b}-{i}" for b in range(0, 12, 3) for i in range(4)])
        _write(store, rng, [f"/d1-{i}" for i in range(4)])  # rewrites: new passages, the old ones dead
        for query in QUERIES:
            assert_word_index_matches_fts5(store, query)
        _batches(store, rng, range(12, 20))
        for query in QUERIES:
            assert_word_index_matches_fts5(store, query)
        members = np.concatenate([np.frombuffer(m, np.int32) for (m,) in store.db.execute(
            "SELECT members FROM lexical_segments")])
        live = sorted(r[0] for r in store.db.execute("SELECT id FROM passages"))
        dead = [r[0] for r in store.db.execute("SELECT passage_id FROM lexical_dead")]
        # every live passage is in one segment; whatever is dead and not yet purged is marked
        assert sorted(set(members.tolist()) - set(dead)) == live and len(members) == len(set(members.tolist()))
    finally:
        store.close()


def test_mostly_deleted_final_segments_are_rewritten(tmp_path, small_segments) -> None:
    rng = np.random.default_rng(1)
    store = Store(tmp_path / "idx")
    try:
        _batches(store, rng, range(8))
        store.delete_paths([f"/d{b}-{i}" for b in range(8) for i in range(3)])
        _write(store, rng, ["/new"])  # a write runs the merge policy
        dead = store.db.execute("SELECT count(*) FROM lexical_dead").fetchone()[0]
        size = store.db.execute("SELECT sum(size) FROM lexical_segments").fetchone()[0]
        assert dead < postings.PURGE_SHARE * size
        for query in QUERIES:
            assert_word_index_matches_fts5(store, query)
    finally:
        store.close()


def _segments(store: Store) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each segment's postings (keys, passages, counts) as its blocks hold them, in order."""
    out = {}
    for (segment,) in store.db.execute("SELECT id FROM lexical_segments ORDER BY id").fetchall():
        parts = []
        for terms_, ends, passages, counts in store.db.execute(
            "SELECT terms, ends, passages, counts FROM lexical_blocks WHERE id >> 32 = ? ORDER BY id", [segment]
        ):
            runs = np.diff(np.frombuffer(ends, np.int32), prepend=0)
            parts.append((np.repeat(np.frombuffer(terms_, np.int64), runs), np.frombuffer(passages, np.int32),
                          np.frombuffer(counts, np.uint16)))
        out[segment] = tuple(np.concatenate(p) for p in zip(*parts))
    return out


def test_compacting_merges_all_segments_block_by_block_into_what_one_sort_gives(tmp_path, small_segments) -> None:
    rng = np.random.default_rng(4)
    store = Store(tmp_path / "idx")
    try:
        _batches(store, rng, range(7))  # segments of 4, 2 and 1 batches (merges of two)
        store.delete_paths(["/d2-1", "/d5-0"])
        before = _segments(store)
        assert len(before) > 2 and max(k.size for k, _, _ in before.values()) > 5 * postings.BLOCK_POSTINGS
        dead = {r[0] for r in store.db.execute("SELECT passage_id FROM lexical_dead")}
        # the reference: every segment's postings in segment order, one stable sort by key, the dead dropped
        keys, passages, counts = (np.concatenate(p) for p in zip(*before.values()))
        order = np.argsort(keys, kind="stable")
        order = order[~np.isin(passages[order], list(dead))]
        assert store.words.compact()
        (after,) = _segments(store).values()
        for got, want in zip(after, (keys[order], passages[order], counts[order])):
            assert np.array_equal(got, want)
        row = store.db.execute("SELECT level, postings, firsts, lasts FROM lexical_segments").fetchone()
        assert row[0] == postings.FINAL_LEVEL and row[1] == order.size
        starts = np.arange(0, order.size, postings.BLOCK_POSTINGS)
        assert np.array_equal(np.frombuffer(row[2], np.int64), keys[order][starts])
        assert np.array_equal(np.frombuffer(row[3], np.int64),
                              keys[order][np.minimum(starts + postings.BLOCK_POSTINGS, order.size) - 1])
        assert store.db.execute("SELECT count(*) FROM lexical_dead").fetchone()[0] == 0
        for query in QUERIES:
            assert_word_index_matches_fts5(store, query)
    finally:
        store.close()


def test_compacting_waits_until_the_other_segments_add_up(tmp_path, small_segments, monkeypatch) -> None:
    monkeypatch.setattr(postings, "FINAL_POSTINGS", 10**9)  # no merges but compaction's
    monkeypatch.setattr(postings, "MERGE_FANIN", 10**6)
    rng = np.random.default_rng(5)
    store = Store(tmp_path / "idx")
    try:
        _batches(store, rng, range(6))
        assert store.words.compact()  # six similar segments: well past the share
        assert not store.words.compact()  # one segment: nothing to do
        size = store.db.execute("SELECT postings FROM lexical_segments").fetchone()[0]
        while True:
            _write(store, rng, [f"/more{store.db.execute('SELECT count(*) FROM documents').fetchone()[0]}"])
            sizes = [r[0] for r in store.db.execute("SELECT postings FROM lexical_segments")]
            if sum(sizes) - size >= postings.COMPACT_SHARE * size:
                break
            assert not store.words.compact()  # a little more: left as it is
        assert store.words.compact() and store.db.execute("SELECT count(*) FROM lexical_segments").fetchone()[0] == 1
        _write(store, rng, ["/last"])
        assert not store.words.compact()
        with store.db.atomic():
            assert postings.compact(store.db.conn, force=True)
        for query in QUERIES:
            assert_word_index_matches_fts5(store, query)
    finally:
        store.close()


def test_a_compaction_that_fails_halfway_leaves_the_index_as_it_was(tmp_path, small_segments, monkeypatch) -> None:
    rng = np.random.default_rng(7)
    store = Store(tmp_path / "idx")
    try:
        _batches(store, rng, range(7))
        before = _segments(store)
        flush = postings._SegmentWriter._flush
        calls = []

        def failing(self, **kw):
            calls.append(1)
            if len(calls) == 3:  # some blocks written, some sources' blocks already deleted
                raise OSError("disk full")
            flush(self, **kw)

        monkeypatch.setattr(postings._SegmentWriter, "_flush", failing)
        with pytest.raises(OSError):
            store.words.compact()
        after = _segments(store)
        assert after.keys() == before.keys()
        assert all(np.array_equal(a, b) for s in before for a, b in zip(after[s], before[s]))
        for query in QUERIES:
            assert_word_index_matches_fts5(store, query)
    finally:
        store.close()


def test_an_indexing_run_ends_compacted_unless_cancelled(tmp_path, small_segments, monkeypatch) -> None:
    monkeypatch.setattr(postings, "MERGE_FANIN", 10**6)  # a segment per batch
    docs = tmp_path / "docs"
    docs.mkdir()
    rng = np.random.default_rng(6)
    for i in range(12):
        (docs / f"{i}.txt").write_text(" ".join(_sentences(rng, 6, i)) + "\n")
    config = IndexConfig(workers=0, batch_sentences=8)
    with Index(tmp_path / "idx", config=config) as index:
        stop = threading.Event()
        index.add([docs], cancel=stop, progress=lambda p: stop.set() if p.files_done >= 6 else None)
        assert index.store.db.execute("SELECT count(*) FROM lexical_segments").fetchone()[0] > 1
        index.add([docs])
        assert index.store.db.execute("SELECT count(*) FROM lexical_segments").fetchone()[0] == 1
        for query in QUERIES:
            assert_word_index_matches_fts5(index.store, query)


def test_long_counts_and_a_passage_of_no_words(tmp_path) -> None:
    store = Store(tmp_path / "idx")
    try:
        long = " ".join(["otter"] * 70_000)  # more than the stored count holds: bm25 has saturated long before
        store.write_documents([_doc("/a", [long, "—"]), _doc("/b", ["otter river"])],
                              np.ones((3, 4), np.float32), "m")
        ranked = store.words.bm25(["otter"], 10)
        assert [p for p, _, _ in ranked] == [1, 2]
        assert_word_index_matches_fts5(store, "river")
    finally:
        store.close()


def test_a_merge_between_reading_the_segment_list_and_the_blocks_is_read_again(tmp_path, small_segments) -> None:
    rng = np.random.default_rng(2)
    reader = Store(tmp_path / "idx")
    writer = Store(tmp_path / "idx")
    try:
        _write(writer, rng, ["/a", "/b"])
        stems = [t.stem for t in terms.query_terms("river otters mill")]
        stale = object()
        words = reader.words._index
        before, _ = words.scores(reader.db.conn, stale, stems, 100)
        _write(writer, rng, ["/c", "/d"])  # merges the first segment away
        assert words._snapshot.segments[0].id not in [r[0] for r in writer.db.execute("SELECT id FROM lexical_segments")]
        after, _ = words.scores(reader.db.conn, stale, stems, 100)  # same version given: the blocks say otherwise
        assert after.passages.size > before.passages.size
        assert after.rows() == reader.words.bm25(stems, 100)
    finally:
        reader.close()
        writer.close()


def _make_old(folder, rng) -> None:
    """An index as quire wrote it before the word index: schema 2, no word index tables."""
    store = Store(folder)
    try:
        for batch in range(5):
            _write(store, rng, [f"/d{batch}-{i}" for i in range(3)])
        with store.db.atomic():
            for table in ("lexical_segments", "lexical_blocks", "lexical_dead"):
                store.db.execute(f"DROP TABLE {table}")
            store.meta.put(Key.SCHEMA_VERSION, 2)
    finally:
        store.close()


def test_an_index_from_before_the_word_index_searches_by_fts5_then_builds_it(tmp_path) -> None:
    rng = np.random.default_rng(3)
    _make_old(tmp_path / "idx", rng)
    store = Store(tmp_path / "idx")
    try:
        assert not store.words.ready()
        exact = store.words.fts_bm25('"river" OR "otters"', 100)
        assert store.words.frequencies(["river"])["river"] > 0  # from FTS5 meanwhile
        store.delete_paths(["/d0-0"])  # a deletion before the build reaches those passages
        stop = threading.Event()
        seen: list[tuple[int, int]] = []

        def progress(done: int, total: int) -> None:
            seen.append((done, total))
            stop.set()

        with pytest.raises(Cancelled):
            store.words.build(batch=4, progress=progress, cancel=stop)
        assert not store.words.ready() and seen == [(4, seen[0][1])]
        store.words.build(batch=4)  # resumes where it stopped
        assert store.words.ready()
        assert store.db.execute("SELECT count(*) FROM lexical_dead").fetchone()[0] == 0
        assert store.meta.get(Key.SCHEMA_VERSION) == schema.SCHEMA_VERSION
        for query in QUERIES:
            assert_word_index_matches_fts5(store, query)
        assert len(store.words.bm25(["river", "otter"], 100)) <= len(exact)
    finally:
        store.close()


def test_indexing_builds_the_word_index_of_an_old_index_first(tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Herons wait by the weir while the otters swim.\n")
    with Index(tmp_path / "idx", config=IndexConfig(workers=0)) as index:
        index.add([docs])
        with index.store.db.atomic():
            index.store.db.execute("DELETE FROM lexical_blocks")
            index.store.db.execute("DELETE FROM lexical_segments")
            index.store.meta.put(Key.WORD_INDEX_BACKFILL, postings.plan_backfill(index.store.db.conn))
        assert index.search("otters", mode="lexical").results[0].path.endswith("a.txt")  # by FTS5
        phases = []
        index.add(progress=lambda p: phases.append((p.phase, p.unit, p.files_done, p.files_total)))
        assert ("preparing", "passages", 1, 1) in phases and index.store.words.ready()
        assert index.search("otters", mode="lexical").results[0].path.endswith("a.txt")
        assert_word_index_matches_fts5(index.store, "otters weir herons")


@pytest.mark.parametrize("cjk", [True, False])
def test_schema_4_rebuilds_the_word_index_of_an_index_holding_cjk_text(tmp_path, cjk: bool) -> None:
    """Schema 4 counted a CJK run as one word; opening such an index empties its word index and the next indexing
    run builds it in pairs of letters, so a Japanese word is found inside a sentence. An index with no CJK text keeps
    its word index."""
    from engine import Mode

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ja.txt").write_text("このグループは東京にあります。\n" if cjk else "The group is in Tokyo.\n", encoding="utf-8")
    (docs / "en.txt").write_text("Otters live by the river.\n", encoding="utf-8")
    with Index(tmp_path / "idx", config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
        with idx.store.db.atomic():
            idx.store.meta.put(Key.SCHEMA_VERSION, 4)
    with Index(tmp_path / "idx", config=IndexConfig(workers=0)) as idx:
        assert idx.store.words.ready() is not cjk
        assert idx.store.meta.get(Key.SCHEMA_VERSION) == schema.SCHEMA_VERSION
        idx.add([docs])  # nothing changed on disk: the run only builds the word index
        assert idx.store.words.ready()
        word = "グループ" if cjk else "group"
        assert [Path(r.path).name for r in idx.search(word, mode=Mode.LEXICAL).results] == ["ja.txt"]
        assert idx.search("otters", mode=Mode.LEXICAL).results[0].path.endswith("en.txt")


def test_a_passage_s_terms_are_added_in_the_query_s_order_below_and_above_the_dense_count() -> None:
    from engine.store.bm25 import DENSE_SUMS, _sums

    # 1e16 + 1.0 rounds back to 1e16: added in order, the two ones are lost; 1e16 + (1.0 + 1.0) keeps them
    for repeats in (1, DENSE_SUMS):
        ids = np.repeat(np.arange(repeats, dtype=np.int64), 3)
        matched, total = _sums(ids, np.tile([1e16, 1.0, 1.0], repeats))
        assert matched.tolist() == list(range(repeats))
        assert np.all(total == (1e16 + 1.0) + 1.0)
