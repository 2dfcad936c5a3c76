"""The sbert method on a tiny randomly initialised sentence-transformers model (CPU, no downloads)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.torch

pytest.importorskip("torch")
st = pytest.importorskip("sentence_transformers")


from conftest import index_and_search  # noqa: E402
from sentence_transformers.sentence_transformer.modules import Pooling, Transformer  # noqa: E402
from test_neural import TEXTS, tiny_bert_folder  # noqa: E402

from engine.embed.sbert import MODEL_ENV, SbertEmbedder, length_buckets  # noqa: E402


@pytest.fixture(scope="module")
def tiny_sbert(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny-sbert")
    bert = tiny_bert_folder(root / "bert")
    transformer = Transformer(str(bert), max_seq_length=64)
    pooling = Pooling(32, pooling_mode="mean")
    folder = root / "sbert"
    st.SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(folder))
    return folder


def test_length_buckets_cover_every_text_once_and_respect_the_budget():
    lengths = [5, 300, 40, 40, 7, 1200, 0, 60]
    batches = length_buckets(lengths, batch_tokens=1300, max_batch=3)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)
    assert all(len(b) * max(1, lengths[b[0]]) <= 1300 or len(b) == 1 for b in batches)
    assert all(len(b) <= 3 for b in batches)


def test_bucketed_gpu_path_equals_plain_encode_on_cpu(tiny_sbert):
    plain = SbertEmbedder(tiny_sbert, device="cpu", bucketed=False)
    bucketed = SbertEmbedder(tiny_sbert, device="cpu", bucketed=True)
    texts = TEXTS * 3 + ["", "a much longer text about whales, stars, noodles and budgets " * 9]  # past the 64-token limit
    a, b = plain.encode(texts), bucketed.encode(texts)
    assert a.shape == b.shape == (len(texts), 32)
    assert np.all(np.sum(a * b, axis=1) >= 0.999)
    assert plain.encode([]).shape == (0, 32)


def test_sbert_method_through_quire_index_and_search(tiny_sbert, corpus, tmp_path, monkeypatch):
    monkeypatch.setenv(MODEL_ENV, str(tiny_sbert))
    monkeypatch.setenv("QUIRE_DEVICE", "cpu")
    response = index_and_search("sbert", corpus, tmp_path / "index", "noodles al dente")
    assert response["results"][0]["path"].endswith("pasta.html")


def test_loading_the_bundled_model_prints_nothing_on_stderr(tmp_path):
    # transformers' load report ("BertModel LOAD REPORT ... UNEXPECTED") and weight-loading bar are noise to a user
    import subprocess
    import sys

    texts = tmp_path / "texts.txt"
    texts.write_text("a sentence\nanother one\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "app.cli", "embed", "--method", "sbert", "--input", str(texts),
                           "--output", str(tmp_path / "v.npy")], cwd=Path(__file__).resolve().parent.parent,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"2 x 384 vectors written to {tmp_path / 'v.npy'}"]
