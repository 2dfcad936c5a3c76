"""Cache frozen-encoder states at masked positions of corpus sentences, then fit the MLM head on them.

The training inputs are masked with the same periodic blueprints the neural method tunes on (one random blueprint
row per sentence), so the head learns to predict under exactly the masking density it will meet at micro-tuning,
which reaches 75% for blueprint (1, 3), far from BERT pre-training's 15%.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from engine.embed.neural_inputs import blueprint_masks, normalise_text
from engine.embed.neural_model import MlmHead
from engine.embed.neural_tune import encode_masked

if TYPE_CHECKING:
    from transformers import PreTrainedModel

log = logging.getLogger(__name__)

# Longer sentences add little beyond more positions of the same kind, and cost attention time when caching.
MAX_TOKENS = 64


@dataclass(frozen=True)
class Positions:
    """Encoder states (float16 to halve memory) at masked positions and the tokens hidden there."""

    states: torch.Tensor  # (K, d)
    labels: torch.Tensor  # (K,)


def cache_positions(encoder: PreTrainedModel, tokenizer, sentences: Sequence[str], rng: np.random.Generator,
                    device: str = "cpu") -> Positions:
    """Mask each sentence with one random blueprint row and keep the encoder states at its masked positions."""
    encoded = tokenizer([normalise_text(s) for s in sentences], add_special_tokens=False)["input_ids"]
    limit = min(MAX_TOKENS, encoder.config.max_position_embeddings - 2)
    by_length: dict[int, list[list[int]]] = {}
    for ids in encoded:
        ids = ids[:limit]
        if len(ids) >= 2:
            by_length.setdefault(len(ids), []).append(ids)
    states, labels = [], []
    for n, group in sorted(by_length.items()):
        ids = np.array(group, dtype=np.int64)
        patterns = blueprint_masks(n)
        masked = patterns[rng.integers(0, len(patterns), size=len(group))]
        states.append(encode_masked(encoder, tokenizer, ids, masked, device).half().cpu())
        labels.append(torch.from_numpy(ids[masked]))
    return Positions(torch.cat(states), torch.cat(labels))


class Head(torch.nn.Module):
    """Trainable transform and vocabulary bias; the decoder is the frozen word-embedding matrix."""

    decoder: torch.Tensor  # a buffer (register_buffer), declared so that its type is known

    def __init__(self, decoder: torch.Tensor, eps: float, unigram: torch.Tensor) -> None:
        super().__init__()
        d = decoder.shape[1]
        self.dense = torch.nn.Linear(d, d)
        # Identity start: the last layer's states already live near the input embedding space the decoder reads.
        with torch.no_grad():
            self.dense.weight.copy_(torch.eye(d))
            self.dense.bias.zero_()
        self.norm = torch.nn.LayerNorm(d, eps=eps)
        # A log-unigram start lets the transform learn context instead of first learning token frequencies.
        self.vocab_bias = torch.nn.Parameter(unigram.log().clone())
        self.register_buffer("decoder", decoder.detach().float())

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        """Vocabulary logits."""
        return F.linear(self.norm(F.gelu(self.dense(states))), self.decoder, self.vocab_bias)

    def export(self) -> MlmHead:
        """As the :class:`MlmHead` the neural method loads."""
        return MlmHead(self.dense.weight.detach(), self.dense.bias.detach(), self.norm.weight.detach(),
                       self.norm.bias.detach(), self.decoder, self.vocab_bias.detach(), self.norm.eps, F.gelu)


def unigram(labels: torch.Tensor, vocab: int) -> torch.Tensor:
    """Add-one smoothed frequency of the hidden tokens."""
    counts = torch.bincount(labels, minlength=vocab).float() + 1.0
    return counts / counts.sum()


@torch.no_grad()
def scores(head: Head, positions: Positions, batch: int = 2048) -> dict[str, float]:
    """Top-1 masked-token accuracy and mean cross-entropy (nats); the loss also moves when the top-1 does not."""
    right, loss = 0, 0.0
    for start in range(0, len(positions.labels), batch):
        logits, labels = head(positions.states[start:start + batch].float()), positions.labels[start:start + batch]
        right += int((logits.argmax(dim=1) == labels).sum())
        loss += float(F.cross_entropy(logits, labels, reduction="sum"))
    count = max(1, len(positions.labels))
    return {"accuracy": right / count, "loss": loss / count}


def train(head: Head, positions: Positions, *, epochs: float, lr: float, batch: int, seed: int,
          max_cpu_seconds: float) -> dict:
    """AdamW on cross-entropy with linear warm-up and cosine decay; stops early when ``max_cpu_seconds`` of this
    process's CPU time run out (CPU, not wall, time: on a shared machine the wall clock measures the other jobs)."""
    generator = torch.Generator().manual_seed(seed)
    total = len(positions.labels)
    steps = max(1, math.ceil(epochs * total / batch))
    warmup = max(1, steps // 20)
    optimizer = torch.optim.AdamW([p for p in head.parameters() if p.requires_grad], lr=lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps))))
    started, cpu_started = time.monotonic(), time.process_time()
    step, order, losses = 0, torch.empty(0, dtype=torch.long), []
    while step < steps and time.process_time() - cpu_started < max_cpu_seconds:
        if len(order) < batch:
            order = torch.cat([order, torch.randperm(total, generator=generator)])
        pick, order = order[:batch], order[batch:]
        loss = F.cross_entropy(head(positions.states[pick].float()), positions.labels[pick])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
        step += 1
        if step % 50 == 0:
            log.info("step %d/%d loss %.3f (%.0f s, %.0f CPU-s)", step, steps, float(np.mean(losses[-50:])),
                     time.monotonic() - started, time.process_time() - cpu_started)
    return {"steps": step, "planned_steps": steps, "seconds": round(time.monotonic() - started, 1),
            "cpu_seconds": round(time.process_time() - cpu_started, 1),
            "final_loss": round(float(np.mean(losses[-50:])), 4) if losses else None}
