"""The neural method on tiny randomly initialised BERT masked-LMs (CPU, no downloads).

``tiny_bert_folder`` is also used by the sbert tests.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.torch

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


from conftest import CORPUS, embedded_as_indexed, index_and_search  # noqa: E402

from engine.embed.neural import NeuralEmbedder  # noqa: E402
from engine.embed.neural_inputs import BLUEPRINTS, blueprint_masks, masked_positions, token_chunks  # noqa: E402
from engine.embed.neural_model import MODEL_ENV, MlmHead  # noqa: E402
from engine.embed.neural_tune import vocab_loss_grad  # noqa: E402
from engine.store.meta import Key, PerMethod  # noqa: E402

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def tiny_bert_folder(folder: Path, *, max_positions: int = 64, seed: int = 0) -> Path:
    """A randomly initialised 2-layer BertForMaskedLM and a word-level tokenizer over the test corpus's words."""
    words = sorted({w.strip(".,!?;:()'\"<>/#%=").lower() for text in CORPUS.values() for w in text.split()} - {""})
    vocab = SPECIAL + [".", ",", "?", "!", "'", "-", "%", "<", ">", "/", "=", "\"", ";", ":", "(", ")"] + words
    folder.mkdir(parents=True, exist_ok=True)
    entries = list(dict.fromkeys(vocab))
    (folder / "vocab.txt").write_text("\n".join(entries), encoding="utf-8")
    # transformers 5 builds from `vocab`, 4.x from `vocab_file`.
    tokenizer = transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(entries)},
                                               vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    assert tokenizer.unk_token_id not in tokenizer("Porpoises hunt fish.")["input_ids"]
    tokenizer.save_pretrained(str(folder))
    torch.manual_seed(seed)
    config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64,
                                     max_position_embeddings=max_positions)
    transformers.BertForMaskedLM(config).eval().save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return tiny_bert_folder(tmp_path_factory.mktemp("tiny-bert"))


# Fig. 9: the 12 inputs for a 6-token text, 1 = masked, in blueprint order (2,1), (1,1), (1,2), (1,3).
FIG9 = [
    [0, 0, 1, 0, 0, 1], [1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0],
    [0, 1, 0, 1, 0, 1], [1, 0, 1, 0, 1, 0],
    [0, 1, 1, 0, 1, 1], [1, 0, 1, 1, 0, 1], [1, 1, 0, 1, 1, 0],
    [0, 1, 1, 1, 0, 1], [1, 0, 1, 1, 1, 0], [1, 1, 0, 1, 1, 1], [1, 1, 1, 0, 1, 1],
]


def test_blueprints_match_figure_9():
    assert blueprint_masks(6).astype(int).tolist() == FIG9


@pytest.mark.parametrize("n, rows", [(1, 1), (2, 7), (3, 11)])
def test_short_texts_get_inputs_that_each_mask_something(n, rows):
    masks = blueprint_masks(n)
    assert masks.shape == (rows, n)
    assert masks.any(axis=1).all()
    if n == 1:  # no blueprint ever masks a lone token; the explicit rule masks it
        assert masks.tolist() == [[True]]


def test_long_text_is_chunked_at_sentence_boundaries():
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}

    def tokenize(text: str) -> list[int]:
        return [words.get(w.strip(".").lower(), 0) for w in text.split()]

    text = "One two three. Four five. Six seven one two."
    chunks = token_chunks(text, tokenize, max_tokens=5)
    assert chunks == [[1, 2, 3, 4, 5], [6, 7, 1, 2]]  # two sentences fit in 5 tokens, the third does not
    assert token_chunks(text, tokenize, max_tokens=4) == [[1, 2, 3], [4, 5], [6, 7, 1, 2]]
    assert token_chunks("One two", tokenize, max_tokens=5) == [[1, 2]]
    assert token_chunks("", tokenize, max_tokens=5) == []


def _fig10_inputs(ids: list[int], mask_id: int) -> tuple[list[list[int]], list[list[int]]]:
    """Fig. 10 of the paper as printed, plus the explicit one-token rule."""
    inputs, labels = [], []
    for k, m in BLUEPRINTS:
        period = k + m
        for s in range(min(period, len(ids))):
            row, label = list(ids), [-100] * len(ids)
            for j in range(len(ids)):
                if (j - s) % period >= k:
                    label[j], row[j] = row[j], mask_id
            if any(x != -100 for x in label):
                inputs.append(row)
                labels.append(label)
    if not inputs:
        inputs, labels = [[mask_id]], [list(ids)]
    return inputs, labels


def _reference_embedding(folder: Path, text: str) -> np.ndarray:
    """A plain per-text loop with the whole BertForMaskedLM: only the 3 vectors trainable, AdamW lr 0.01, 10 epochs
    of one batch, eval mode, then Eq. 1."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    model = transformers.BertForMaskedLM.from_pretrained(str(folder)).eval()
    names = ["cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.bias",
             "cls.predictions.transform.dense.bias"]
    params = dict(model.named_parameters())
    for name, p in params.items():
        p.requires_grad_(name in names)
    before = [copy.deepcopy(params[n].detach()) for n in names]
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    inputs, labels = _fig10_inputs(ids, tokenizer.mask_token_id)
    wrap = lambda rows, a, b: torch.tensor([[a, *r, b] for r in rows])  # noqa: E731
    input_ids = wrap(inputs, tokenizer.cls_token_id, tokenizer.sep_token_id)
    label_ids = wrap(labels, -100, -100)
    optimizer = torch.optim.AdamW([params[n] for n in names], lr=0.01)
    for _ in range(10):
        optimizer.zero_grad()
        model(input_ids=input_ids, labels=label_ids).loss.backward()
        optimizer.step()
    deltas = [(params[n].detach() - b) for n, b in zip(names, before)]
    e = torch.cat([d / d.norm() for d in deltas])
    return (e / e.norm()).numpy()


TEXTS = [
    "Rigel is a blue supergiant star in the constellation of Orion.",
    "Porpoises are small toothed whales.",
    "Drain the noodles",
    "whales",
    "the doctor replies",
]


def test_batched_fast_path_equals_plain_per_text_loop(tiny_bert):
    embedder = NeuralEmbedder(tiny_bert, device="cpu")
    batched = embedder.encode(TEXTS)
    assert batched.shape == (len(TEXTS), 3 * 32)
    for text, row in zip(TEXTS, batched):
        reference = _reference_embedding(tiny_bert, text)
        assert float(row @ reference) >= 0.999, text
    one_at_a_time = np.vstack([embedder.encode([t]) for t in TEXTS])
    assert np.allclose(one_at_a_time, batched, atol=1e-4)


def test_written_out_vocabulary_gradient_equals_autograd_of_weighted_cross_entropy():
    generator = torch.Generator().manual_seed(0)
    m, d, vocab = 37, 8, 50
    head = MlmHead(*(torch.randn(*shape, generator=generator) for shape in ((d, d), (d,), (d,), (d,))),
                   decoder=torch.randn(vocab, d, generator=generator), vocab_bias=torch.randn(vocab, generator=generator),
                   eps=1e-12, activation=torch.nn.functional.gelu)
    v = torch.randn(m, d, generator=generator, requires_grad=True)
    labels = torch.randint(0, vocab, (m,), generator=generator)
    weight = torch.rand(m, generator=generator)
    logits = torch.nn.functional.linear(v, head.decoder, head.vocab_bias)
    (torch.nn.functional.cross_entropy(logits, labels, reduction="none") * weight).sum().backward()
    written = vocab_loss_grad(v.detach(), labels, weight, head, chunk_positions=10)  # chunks of 10, 10, 10, 7
    assert torch.allclose(written, v.grad, atol=1e-5)


def test_short_and_empty_texts(tiny_bert):
    vectors = NeuralEmbedder(tiny_bert, device="cpu").encode(["", "whales", "small whales", "small toothed whales"])
    assert np.all(vectors[0] == 0)
    assert np.allclose(np.linalg.norm(vectors[1:], axis=1), 1.0, atol=1e-5)
    assert np.isfinite(vectors).all()


def test_long_text_gets_one_embedding_from_all_its_chunks(tmp_path):
    folder = tiny_bert_folder(tmp_path / "short-window", max_positions=12)
    embedder = NeuralEmbedder(folder, device="cpu")
    long_text = " ".join([CORPUS["animals/porpoise.md"].split("\n\n")[1]] * 3)
    chunks = embedder.chunks([long_text])[0]
    assert len(chunks) > 1 and all(len(c) <= 10 for c in chunks)
    vectors = embedder.encode([long_text, "porpoises"])
    assert vectors.shape == (2, 96)
    assert abs(float(np.linalg.norm(vectors[0])) - 1.0) < 1e-5


def test_neural_method_through_quire_index_and_search(tiny_bert, corpus, tmp_path, monkeypatch):
    monkeypatch.setenv(MODEL_ENV, str(tiny_bert))
    monkeypatch.setenv("QUIRE_DEVICE", "cpu")
    response = index_and_search("neural", corpus, tmp_path / "index", "porpoises use echolocation")
    assert response["results"] and response["results"][0]["path"].endswith("porpoise.md")


def test_batches_bound_masked_positions_not_just_texts(tiny_bert):
    embedder = NeuralEmbedder(tiny_bert, device="cpu")
    embedder.texts_per_batch, embedder.positions_per_batch = 100, 200
    units = [[[5] * 6], [[5] * 40], [[5] * 6], [[5] * 6, [5] * 6], []]
    runs = embedder.batches(units)
    assert runs[0][0] == 0 and runs[-1][1] == len(units)
    assert all(a[1] == b[0] for a, b in zip(runs, runs[1:]))  # consecutive, nothing skipped
    for start, stop in runs:
        held = sum(masked_positions(len(c)) for u in units[start:stop] for c in u)
        assert held <= 200 or stop - start == 1  # one unit over the limit travels alone
    assert masked_positions(6) == int(np.sum(FIG9))


def test_an_index_centres_neural_vectors_on_the_first_batch_it_embeds(tiny_bert, tmp_path, monkeypatch):
    from conftest import write_corpus

    from engine import Index
    from engine.embed.centre import centre_rows

    monkeypatch.setenv(MODEL_ENV, str(tiny_bert))
    monkeypatch.setenv("QUIRE_DEVICE", "cpu")
    docs = write_corpus(tmp_path / "docs", {f"{copy}/{rel}": text for copy in "abc" for rel, text in CORPUS.items()})
    with Index(tmp_path / "index", method="neural") as index:
        index.add([docs])
        ids, stored = index.store.vectors.read("neural")
        rows = index.store.sentences.by_ids(ids.tolist())
        texts = [rows[int(i)].text for i in ids]
        mean = np.asarray(index.store.meta.get(PerMethod.CENTRE.of("neural")), dtype=np.float32)
        raw = embedded_as_indexed(NeuralEmbedder(tiny_bert, device="cpu"), [(rows[int(i)].doc_id, t)
                                                                            for i, t in zip(ids, texts)])
        assert len(texts) >= 32 and np.linalg.norm(mean) > 0.1
        assert np.allclose(mean, raw.mean(axis=0), atol=1e-4)
        assert np.allclose(stored, centre_rows(raw, mean), atol=1e-4)
        # A query is centred on the same mean, so a sentence finds itself first.
        response = index.search(texts[7], k=3, mode="semantic")
        assert response.results[0].sentence == texts[7]
        assert abs(response.results[0].similarity - 1.0) < 1e-3


def test_quire_embed_centres_neural_vectors_on_the_file(tiny_bert, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from app.cli import cli
    from engine.embed.centre import centre_rows, collection_mean

    monkeypatch.setenv(MODEL_ENV, str(tiny_bert))
    monkeypatch.setenv("QUIRE_DEVICE", "cpu")
    lines = [s.strip() for text in CORPUS.values() for s in text.replace("\n", " ").split(". ") if s.strip()] * 3
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = CliRunner().invoke(cli, ["embed", "--method", "neural", "--input", str(tmp_path / "in.txt"),
                                    "--output", str(tmp_path / "out.npy")])
    assert done.exit_code == 0, done.output
    raw = NeuralEmbedder(tiny_bert, device="cpu").encode(lines)
    assert len(lines) >= 32 and collection_mean(raw).any()
    assert np.allclose(np.load(tmp_path / "out.npy"), centre_rows(raw, collection_mean(raw)), atol=1e-4)


def test_switching_an_index_to_neural_centres_what_it_re_embeds(tiny_bert, tmp_path, monkeypatch):
    from conftest import write_corpus

    from engine import Index
    from engine.embed.centre import centre_rows

    monkeypatch.setenv(MODEL_ENV, str(tiny_bert))
    monkeypatch.setenv("QUIRE_DEVICE", "cpu")
    docs = write_corpus(tmp_path / "docs", {f"{copy}/{rel}": text for copy in "abc" for rel, text in CORPUS.items()})
    with Index(tmp_path / "index") as index:
        index.add([docs])
        assert index.method == "static" and index.store.meta.get(PerMethod.CENTRE.of("neural")) is None
        index.reembed("neural")
        ids, stored = index.store.vectors.read("neural")
        rows = index.store.sentences.by_ids(ids.tolist())
        raw = embedded_as_indexed(NeuralEmbedder(tiny_bert, device="cpu"), [(rows[int(i)].doc_id, rows[int(i)].text)
                                                                            for i in ids])
        assert index.method == "neural"
        assert np.allclose(stored, centre_rows(raw, raw.mean(axis=0)), atol=1e-4)


def test_an_index_re_embedded_for_a_newer_model_keeps_one_centre_for_old_and_new_documents(tiny_bert, tmp_path,
                                                                                            monkeypatch):
    from conftest import write_corpus

    from engine import Index
    from engine.embed.centre import centre_rows

    monkeypatch.setenv(MODEL_ENV, str(tiny_bert))
    monkeypatch.setenv("QUIRE_DEVICE", "cpu")
    old = write_corpus(tmp_path / "old", {f"{copy}/{rel}": text for copy in "abc" for rel, text in CORPUS.items()})
    new = write_corpus(tmp_path / "new", {"d/notes.txt": "Porpoises and whales hunt fish. Rigel is a star."})
    with Index(tmp_path / "index", method="neural") as index:
        index.add([old])
        with index.store.db.atomic():  # as an index written before the method centred its vectors
            index.store.meta.put(Key.FINGERPRINT, "neural-older")
            index.store.meta.put(PerMethod.FINGERPRINT.of("neural"), "neural-older")
            index.store.meta.put(PerMethod.CENTRE.of("neural"), None)
        index.add([old, new])
        ids, stored = index.store.vectors.read("neural")
        rows = index.store.sentences.by_ids(ids.tolist())
        raw = embedded_as_indexed(NeuralEmbedder(tiny_bert, device="cpu"), [(rows[int(i)].doc_id, rows[int(i)].text)
                                                                            for i in ids])
        mean = np.asarray(index.store.meta.get(PerMethod.CENTRE.of("neural")), dtype=np.float32)
        assert np.allclose(stored, centre_rows(raw, mean), atol=1e-4)
