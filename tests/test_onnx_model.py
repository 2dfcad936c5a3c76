"""The second look's sentence model: all-MiniLM-L6-v2 as an int8 ONNX graph in resources/minilm, run without torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.embed import onnx

REPO = Path(__file__).resolve().parent.parent
TEXTS = ["The night train to Vienna leaves at 22:10 from platform 4.", "overnight rail service to Austria",
         "Tomatoes need full sun and regular watering.", "how often should I cut back tomato shoots",
         "symptoms of diabetes in cats", "", "a" * 3000]


def test_vectors_are_unit_rows_and_paraphrases_sit_closer_than_strangers():
    vectors = onnx.bundled().encode(TEXTS)
    assert vectors.shape == (len(TEXTS), onnx.DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    cos = vectors @ vectors.T
    assert cos[0, 1] > cos[0, 3] + 0.2 and cos[0, 1] > cos[0, 4] + 0.2  # the train, not the tomatoes or the cats
    assert cos[2, 3] > cos[2, 1] + 0.2 and cos[2, 3] > cos[2, 4] + 0.2


def test_a_text_encodes_the_same_alone_in_a_batch_and_from_the_cache():
    model = onnx.OnnxSentenceModel(onnx.resource_path(onnx.MODEL), onnx.resource_path(onnx.TOKENIZER), cache_size=2)
    batch = model.encode(TEXTS)
    alone = np.vstack([model.encode([t]) for t in TEXTS])  # each text again: the last two come from the cache
    assert np.array_equal(batch, alone)  # a text's vector does not depend on the others asked with it
    assert len(model._cache) == 2
    assert model.encode([]).shape == (0, onnx.DIM)


def test_loading_the_model_imports_no_torch():
    code = ("import sys; from engine.embed import onnx; onnx.bundled().encode(['a sentence']); "
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(onnx.ConfigError, match="engine.onnxbuild"):
        onnx.OnnxSentenceModel(tmp_path / "none.onnx", tmp_path / "none.json")


@pytest.mark.torch
@pytest.mark.slow
def test_the_shipped_graph_agrees_with_sentence_transformers_and_rebuilds(tmp_path):
    pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers")
    pytest.importorskip("onnx")
    from engine.embed.sbert import bundled_model_path
    from engine.onnxbuild.__main__ import main

    reference = st.SentenceTransformer(str(bundled_model_path()), device="cpu").encode(
        TEXTS[:5], normalize_embeddings=True)
    shipped = onnx.bundled().encode(TEXTS[:5])
    assert np.all(np.sum(reference * shipped, axis=1) > 0.95)  # int8 weights: near, not equal (STS-B in PROVENANCE)
    assert main(["--out", str(tmp_path)]) == 0
    rebuilt = onnx.OnnxSentenceModel(tmp_path / "model.int8.onnx", tmp_path / "tokenizer.json").encode(TEXTS[:5])
    assert np.all(np.sum(rebuilt * shipped, axis=1) > 0.999)


def test_a_shorter_limit_cuts_the_text_as_the_model_would():
    model = onnx.bundled()
    long = "The night train to Vienna leaves at 22:10 from platform 4. " * 20
    cut = onnx.OnnxSentenceModel(onnx.resource_path(onnx.MODEL), onnx.resource_path(onnx.TOKENIZER), max_tokens=16)
    assert np.allclose(model.encode([long], max_tokens=16), cut.encode([long]), atol=1e-6)
    assert not np.allclose(model.encode([long], max_tokens=16), model.encode([long]), atol=1e-3)
