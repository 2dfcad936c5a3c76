"""all-MiniLM-L6-v2 through ONNX Runtime, on the CPU, without torch: the sentence model of the search's second look
(``engine.search.secondlook``; docs/decisions/0039-second-look.md).

The graph (``python -m engine.onnxbuild``) maps token ids to unit sentence vectors, so this module tokenises and runs
it, one text at a time: its int8 layers quantise their inputs by the range of the whole batch, so a text run beside
others would get a vector that depends on them, and a search's scores on what else it re-scored. Alone, a text has
one vector wherever it is asked for, and no padding to compute. Texts run side by side on RUNNERS threads, each run
on one: a single text's products are too small to share, and ONNX Runtime's own threads spun against the rest of
the query on a busy machine (docs/decisions/0039-second-look.md). The vectors of recent texts are kept: a person
typing a query asks for the same candidate sentences again and again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from engine.errors import ConfigError
from engine.resources import resource_path

log = logging.getLogger(__name__)

MODEL = "minilm/model.int8.onnx"
TOKENIZER = "minilm/tokenizer.json"
PROVENANCE = "minilm/PROVENANCE.json"
DIM = 384
# Tokens a text is cut to: a sentence or the start of its passage. Attention costs grow with the square of it.
MAX_TOKENS = 128
# Vectors of recent texts kept (1.5 KB each).
CACHE = 4096
# Texts run at once, each on one thread.
RUNNERS = max(1, min(4, os.cpu_count() or 1))


class OnnxSentenceModel:
    """Unit sentence vectors from an ONNX graph of a sentence transformer (``encode``), thread-safe."""

    def __init__(self, model: Path, tokenizer: Path, *, max_tokens: int = MAX_TOKENS, cache_size: int = CACHE) -> None:
        # ONNX Runtime's telemetry, read as it is imported, would leave a session file in the user's temporary folder
        # (and is nothing an offline app should start); set here, where the one import of it is
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        try:
            import onnxruntime
        except ImportError as e:  # a dependency of quire: only a broken install lacks it
            raise ConfigError("the second look needs onnxruntime: pip install onnxruntime") from e
        from tokenizers import Tokenizer

        if not model.is_file() or not tokenizer.is_file():
            raise ConfigError(f"the second look's model is missing ({model}); build it with "
                              f"`python -m engine.onnxbuild` or reinstall quire")
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # its warnings about unused initialisers are not the user's business
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_tokens)
        self._max_tokens = max_tokens
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._runners = ThreadPoolExecutor(RUNNERS, thread_name_prefix="quire-look")

    def encode(self, texts: Sequence[str], *, max_tokens: int | None = None) -> np.ndarray:
        """Unit vectors of ``texts`` (float32, one row each; a text with no token is the [CLS] [SEP] pair's), each
        cut to ``max_tokens`` tokens (at most the model's own limit; None: that limit)."""
        limit = min(max_tokens or self._max_tokens, self._max_tokens)
        tokens = [_cut(e.ids, limit) for e in self._tokenizer.encode_batch(list(texts))]
        # by the tokens the model reads: a short text cut at any limit, or asked for again, is one vector
        keys = [hashlib.blake2b(ids.tobytes(), digest_size=16).digest() for ids in tokens]
        with self._lock:
            known = {k: self._cache[k] for k in keys if k in self._cache}
        todo = {key: ids for key, ids in zip(keys, tokens) if key not in known}
        fresh = dict(zip(todo, self._runners.map(self._vector, todo.values())))
        self._remember(fresh)
        known.update(fresh)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = known[key]
        return out

    def _vector(self, ids: np.ndarray) -> np.ndarray:
        """One text's vector (ONNX Runtime's sessions may be run from several threads at once)."""
        batch = ids[None, :]
        return self._session.run(None, {"input_ids": batch, "attention_mask": np.ones_like(batch)})[0][0]

    def _remember(self, fresh: dict[bytes, np.ndarray]) -> None:
        if not self._cache_size:
            return
        with self._lock:
            self._cache.update(fresh)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)


def _cut(ids: list[int], limit: int) -> np.ndarray:
    """Token ids cut to ``limit``, the closing [SEP] kept."""
    return np.array(ids if len(ids) <= limit else [*ids[: limit - 1], ids[-1]], dtype=np.int64)


@functools.cache
def bundled() -> OnnxSentenceModel:
    """The model shipped in ``resources/minilm/``, loaded once per process on first use."""
    log.info("loading the second look's sentence model")
    return OnnxSentenceModel(resource_path(MODEL), resource_path(TOKENIZER))


def available() -> bool:
    """Whether the bundled model's files are there (a checkout without the built model has none)."""
    return all(resource_path(name).is_file() for name in (MODEL, TOKENIZER, PROVENANCE))


@functools.cache
def identity() -> str:
    """Which build of the bundled model this is (its source and build time): vectors it made are another's than a
    rebuilt model's."""
    data = json.loads(resource_path(PROVENANCE).read_text(encoding="utf-8"))
    return f"{data['source_fingerprint']}@{data['built']}"
