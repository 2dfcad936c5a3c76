"""Fitting, saving and loading the MLM head that the bundled model lacks (tiny encoder, CPU)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.torch

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from conftest import CORPUS  # noqa: E402
from test_neural import tiny_bert_folder  # noqa: E402

from engine.embed.neural_model import load_head, save_head  # noqa: E402
from engine.errors import MethodUnavailableError  # noqa: E402
from engine.neuralhead import fit  # noqa: E402


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    folder = tiny_bert_folder(tmp_path_factory.mktemp("tiny-encoder"))
    encoder = transformers.AutoModel.from_pretrained(str(folder), add_pooling_layer=False).eval()
    return encoder, transformers.AutoTokenizer.from_pretrained(str(folder))


def test_fitted_head_learns_and_round_trips_through_its_file(tiny_encoder, tmp_path: Path):
    encoder, tokenizer = tiny_encoder
    sentences = [s for text in CORPUS.values() for s in text.replace("\n", " ").split(". ") if len(s.split()) > 3]
    positions = fit.cache_positions(encoder, tokenizer, sentences * 4, np.random.default_rng(0))
    assert len(positions.labels) > 50 and positions.states.shape[1] == 32
    decoder = encoder.get_input_embeddings().weight.detach()
    head = fit.Head(decoder, 1e-12, fit.unigram(positions.labels, decoder.shape[0]))
    before = fit.scores(head, positions)
    report = fit.train(head, positions, epochs=30, lr=1e-2, batch=64, seed=0, max_cpu_seconds=60)
    assert report["steps"] > 0
    after = fit.scores(head, positions)
    assert after["accuracy"] > before["accuracy"] and after["loss"] < before["loss"]

    path = tmp_path / "head.npz"
    save_head(path, head.export())
    loaded = load_head(path, encoder)
    assert torch.allclose(loaded.dense_weight, head.dense.weight.detach(), atol=1e-2)
    assert torch.allclose(loaded.vocab_bias, head.vocab_bias.detach(), atol=1e-2)
    assert loaded.decoder.data_ptr() == decoder.data_ptr()  # tied, not stored


def test_missing_head_file_says_how_to_make_one(tiny_encoder, tmp_path: Path):
    with pytest.raises(MethodUnavailableError, match="engine.neuralhead"):
        load_head(tmp_path / "nothing.npz", tiny_encoder[0])
