"""Short lines (headings, one-word lines) are embedded with their section (engine.embed.context, docs/decisions/0001):
the rule itself, both indexing paths and re-embedding agreeing, search on a real index, and old indexes re-embedding.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import Index, IndexConfig, embed
from engine.embed import context
from engine.errors import MethodMismatchError
from engine.ingest.extract import sentence_hash
from engine.store.meta import Key, PerMethod

CONFIG = IndexConfig(workers=0)
HEADING = "Skin."
# a leather goods company's shipping policy under a heading that names its material, not the reader's skin
BAG_SHOP = (
    f"{HEADING}\n\n"
    "Orders of our leather bags ship within three working days from the warehouse in Leeds.\n\n"
    "Parcels to addresses abroad travel by courier and carry a tracking number.\n\n"
    "Returns are free for thirty days if the bag comes back unused in its box."
)
SKIN_CARE = ("Washing your face gently with lukewarm water and applying moisturiser every morning keeps your skin soft "
             "and healthy.")
QUERY = "how to care for your skin"


def spans(words: list[int], sizes: list[int]) -> list[tuple[int, int]]:
    made = context.spans(np.array(words), np.array(sizes))
    return list(zip(made.lo.tolist(), made.hi.tolist()))


# --- the rule ----------------------------------------------------------------------------------------------------


def test_a_long_sentence_is_embedded_alone() -> None:
    assert spans([20, 15, 30], [3]) == [(0, 1), (1, 2), (2, 3)]


def test_a_heading_takes_the_sentence_after_it() -> None:
    assert spans([1, 20, 15], [3]) == [(0, 2), (1, 2), (2, 3)]


def test_a_heading_takes_sentences_until_the_pool_is_full_or_capped() -> None:
    assert spans([1, 5, 4, 30], [4])[0] == (0, 3)  # 1 + 5 + 4 < POOL_WORDS, but three sentences is the cap
    assert spans([2, 5, 6, 30], [4])[0] == (0, 3)  # 2 + 5 + 6 reaches POOL_WORDS
    assert spans([1, 2, 1, 5, 30], [5])[:3] == [(0, 3), (1, 4), (2, 5)]  # a run of headings reaches the text


def test_a_short_line_never_reaches_into_another_document() -> None:
    # a document that is one heading stays alone; the next document's heading takes its own text
    assert spans([1, 2, 20], [1, 2]) == [(0, 1), (1, 3), (2, 3)]


def test_a_short_last_line_takes_the_sentences_before_it() -> None:
    assert spans([20, 15, 2], [3])[2] == (1, 3)
    # a closing run of short lines: each takes the rest of the document, then what comes before, up to the cap
    assert spans([20, 3, 2, 1], [4])[1:] == [(1, 4), (1, 4), (1, 4)]


def test_a_line_without_words_stays_alone() -> None:
    assert spans([0, 20], [2]) == [(0, 1), (1, 2)]


def test_a_short_line_stands_for_the_longest_sentence_of_its_span() -> None:
    made = context.spans(np.array([1, 20, 15, 2, 3, 9, 30]), np.array([3, 4]))
    assert made.sources().tolist() == [1, 1, 2, 5, 5, 5, 6]


def test_word_ids_are_pooled_as_the_joined_text_would_be() -> None:
    static = embed.load("static")
    texts = [HEADING, *BAG_SHOP.split("\n\n")[1:], "Thanks.", "Contents.", SKIN_CARE]
    sizes = [5, 2]
    flat, offsets = static.tokenizer.encode(texts)
    made = context.spans(np.diff(offsets), sizes)
    pooled = context.pooled_ids(flat, offsets, made)
    joined = static.tokenizer.encode([" ".join(texts[a:b]) for a, b in spans(np.diff(offsets).tolist(), sizes)])
    assert np.array_equal(pooled[0], joined[0]) and np.array_equal(pooled[1], joined[1])
    by_ids, by_ids_spans = context.embed_ids(static, flat, offsets, sizes)
    by_texts, by_texts_spans = context.encode(static, texts, sizes)
    assert np.allclose(by_ids, by_texts) and np.array_equal(by_ids_spans.hi, by_texts_spans.hi)
    assert context.pooled_texts(texts, made)[0] == f"{HEADING} {texts[1]}"


# --- a real index ------------------------------------------------------------------------------------------------


@pytest.fixture
def shop_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bags.txt").write_text(BAG_SHOP, encoding="utf-8")
    (docs / "skincare.txt").write_text(f"Morning routine\n\n{SKIN_CARE}", encoding="utf-8")
    return docs


def hash_of(idx: Index, text: str) -> int:
    return idx.store.db.execute("SELECT hash FROM sentences WHERE text = ?", [text]).fetchone()[0]


def stored_vector(idx: Index, text: str) -> np.ndarray:
    (sid,) = [r[0] for r in idx.store.db.execute("SELECT id FROM sentences WHERE text = ?", [text]).fetchall()]
    _, vectors = idx.store.vectors.read(idx.method, [sid])
    return vectors[0]


def test_a_heading_does_not_win_a_query_its_section_does_not_answer(shop_docs: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "index", config=CONFIG) as idx:
        idx.add([shop_docs])
        response = idx.search(QUERY, k=2, mode="semantic", include_weak=True)
        assert Path(response.results[0].path).name == "skincare.txt"
        # the heading is still stored and shown as written, but its vector is its section's, not the word's
        assert idx.store.db.execute("SELECT count(*) FROM sentences WHERE text = ?", [HEADING]).fetchone()[0] == 1
        bare = embed.load("static").encode([HEADING])[0]
        assert float(stored_vector(idx, HEADING) @ bare) < 0.5
        # and it counts as a copy of the sentence its vector stands for (boilerplate, calibration), not of "Skin."
        assert hash_of(idx, HEADING) == hash_of(idx, BAG_SHOP.split("\n\n")[1]) != sentence_hash(HEADING)


def test_an_index_embedded_before_the_rule_reembeds_once(shop_docs: Path, tmp_path: Path) -> None:
    static = embed.load("static")
    with Index(tmp_path / "index", config=CONFIG) as idx:
        idx.add([shop_docs])
        # what an older quire left: every sentence embedded alone, under the model's bare fingerprint
        rows = idx.store.db.execute("SELECT id, text FROM sentences ORDER BY id").fetchall()
        idx.store.vectors.add("static", np.array([r[0] for r in rows]), static.encode([r[1] for r in rows]))
        idx.store.sentences.set_hashes(np.array([r[0] for r in rows]), np.array([sentence_hash(r[1]) for r in rows]))
        with idx.store.db.atomic():
            idx.store.meta.put(Key.FINGERPRINT, static.fingerprint)
            idx.store.meta.put(PerMethod.FINGERPRINT.of("static"), static.fingerprint)
    with Index(tmp_path / "index", create=False, config=CONFIG) as idx:
        with pytest.raises(MethodMismatchError, match="re-embed"):
            idx.search(QUERY, mode="semantic")
        idx.add()
        assert idx.store.meta.get(Key.FINGERPRINT) == context.fingerprint(static) != static.fingerprint
        assert float(stored_vector(idx, HEADING) @ static.encode([HEADING])[0]) < 0.5
        assert hash_of(idx, HEADING) == hash_of(idx, BAG_SHOP.split("\n\n")[1])
        assert Path(idx.search(QUERY, k=1, mode="semantic", include_weak=True).results[0].path).name == "skincare.txt"
        generation = idx.store.meta.get(Key.GENERATION)
        idx.add()  # once: nothing left to re-embed
        assert idx.store.meta.get(Key.GENERATION) == generation


def test_reembedding_gives_the_vectors_indexing_gave(shop_docs: Path, tmp_path: Path) -> None:
    # documents longer than a re-embedding batch, so batches must end where documents do
    (shop_docs / "long.txt").write_text("\n\n".join(
        [f"Part {n}.\n\nThe {n}th chapter of the manual explains how the pump number {n} is serviced." for n in range(9)]
        + ["End."]), encoding="utf-8")
    config = IndexConfig(workers=0, batch_sentences=4)
    with Index(tmp_path / "index", config=config) as idx:
        idx.add([shop_docs])
        ids, indexed = idx.store.vectors.read("static")
        hashes = idx.store.db.execute("SELECT id, hash FROM sentences ORDER BY id").fetchall()
        with idx.store.db.atomic():
            idx.store.meta.put(Key.FINGERPRINT, "static-older")
            idx.store.meta.put(PerMethod.FINGERPRINT.of("static"), "static-older")
        idx.add()
        again_ids, again = idx.store.vectors.read("static")
        assert idx.store.db.execute("SELECT id, hash FROM sentences ORDER BY id").fetchall() == hashes
    assert np.array_equal(ids, again_ids)
    assert np.allclose(indexed, again, atol=2e-3)
