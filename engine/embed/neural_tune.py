"""Batched micro-tuning: the fast path of the neural method (paper, Appendix B, and beyond).

The three tuned vectors (Sec. 2: ``transform.LayerNorm.weight``, ``.LayerNorm.bias``, ``transform.dense.bias``) sit
above the encoder and act on each position separately, so:

1. the encoder runs once per masked input and only the states at masked positions are kept, already multiplied by
   the frozen dense weight (``z = W h``); epochs then cost only the head;
2. vocabulary logits are computed only at masked positions, in chunks, so memory stays bounded however many
   texts are tuned together;
3. many texts are tuned in one batch, each with its own copy of the three vectors. A text's loss is the mean over
   its own masked positions (what ``BertForMaskedLM`` computes for one text's batch); the batch loss is the sum of
   those means, so each copy's gradient is exactly its own text's. AdamW is element-wise, so one optimizer over the
   stacked copies takes the same steps as one optimizer per text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from engine.embed.neural_inputs import BLUEPRINTS, blueprint_masks
from engine.embed.neural_model import MaskedLM, MlmHead


@dataclass(frozen=True)
class TuneSettings:
    """Micro-tuning hyper-parameters; the defaults are the paper's (Sec. 2) and the authors' optimizer."""

    epochs: int = 10
    lr: float = 0.01
    weight_decay: float = 0.01  # torch AdamW default, as in the authors' code
    blueprints: tuple[tuple[int, int], ...] = BLUEPRINTS


@dataclass(frozen=True)
class MaskedStates:
    """Encoder states at every masked position of every input of a batch of texts.

    ``z`` (M, d) is the state times the head's dense weight, ``labels`` (M,) the hidden token, ``owner`` (M,) the
    index of the text (unit) the position belongs to.
    """

    z: torch.Tensor
    labels: torch.Tensor
    owner: torch.Tensor
    n_units: int


@torch.no_grad()
def encode_masked(encoder: torch.nn.Module, tokenizer, ids: np.ndarray, masked: np.ndarray, device: str, *,
                  token_budget: int = 16_384) -> torch.Tensor:
    """Encoder states (K, d) float32 at the masked positions of equal-length inputs, in row-major order.

    ``ids`` (N, n) are token ids without special tokens, ``masked`` (N, n) says which become [MASK]; [CLS] and
    [SEP] are added and never masked. Inputs of one length need no padding; ``token_budget`` bounds one call.
    """
    count, n = ids.shape
    rows = np.where(masked, tokenizer.mask_token_id, ids)
    rows = np.concatenate([np.full((count, 1), tokenizer.cls_token_id), rows,
                           np.full((count, 1), tokenizer.sep_token_id)], axis=1)
    rows_t = torch.from_numpy(rows).to(device)
    mask_t = torch.tensor(masked, dtype=torch.bool, device=device)
    step = max(1, token_budget // (n + 2))
    picked = []
    for start in range(0, count, step):
        hidden = encoder(input_ids=rows_t[start:start + step]).last_hidden_state[:, 1:-1]
        picked.append(hidden[mask_t[start:start + step]].float())
    return torch.cat(picked)


def masked_states(lm: MaskedLM, units: list[list[list[int]]], settings: TuneSettings, device: str, *,
                  token_budget: int = 16_384) -> MaskedStates:
    """Run the encoder once over every masked input of every chunk of every unit.

    ``units[i]`` is the list of token-id chunks of text i. Chunks of equal length are encoded together.
    """
    by_length: dict[int, list[tuple[int, list[int]]]] = {}
    for unit, chunks in enumerate(units):
        for chunk in chunks:
            by_length.setdefault(len(chunk), []).append((unit, chunk))
    weight = lm.head.dense_weight
    zs, labels, owners = [], [], []
    for n, items in sorted(by_length.items()):
        ids = np.array([chunk for _, chunk in items], dtype=np.int64)  # (C, n)
        unit_of = np.array([unit for unit, _ in items], dtype=np.int64)
        pattern = blueprint_masks(n, settings.blueprints)  # (R, n)
        shape = (len(items), len(pattern), n)
        masked = np.broadcast_to(pattern, shape).reshape(-1, n)
        rows = np.broadcast_to(ids[:, None, :], shape).reshape(-1, n)
        labels.append(rows[masked])
        owners.append(np.broadcast_to(unit_of[:, None, None], shape).reshape(-1, n)[masked])
        zs.append(encode_masked(lm.encoder, lm.tokenizer, rows, masked, device, token_budget=token_budget) @ weight.T)
    if not zs:
        empty = torch.zeros(0, dtype=torch.long, device=device)
        return MaskedStates(torch.zeros(0, weight.shape[0], device=device), empty, empty, len(units))
    return MaskedStates(
        z=torch.cat(zs),
        labels=torch.from_numpy(np.concatenate(labels)).to(device),
        owner=torch.from_numpy(np.concatenate(owners)).to(device),
        n_units=len(units),
    )


def vocab_loss_grad(v: torch.Tensor, labels: torch.Tensor, weight: torch.Tensor, head: MlmHead, *,
                    chunk_positions: int = 2048, half: bool = False) -> torch.Tensor:
    """Gradient, with respect to the head's output ``v`` (M, d), of sum_i weight_i * CE(decoder v_i + b, label_i).

    Written out instead of left to autograd: d CE / d v = (softmax(E v + b) - onehot(label)) E = softmax(E v + b) E -
    E[label], so the one-hot term is a row lookup and the per-position weight scales the (M, d) result. The (chunk,
    V) logits are then touched by three kernels only (the product that writes them, the softmax, the product that
    reads them), where autograd would keep the logits, their log-softmax and its gradient. The two vocabulary
    products are about 2 x 2 x d x V flops per masked position and epoch; on a GPU the passes over V-sized memory cost
    as much again, which is why there are no more of them. ``half`` runs the products and the softmax's storage in
    float16 (GPU; the softmax accumulates in float32).
    """
    dtype = torch.float16 if half else torch.float32
    decoder = head.decoder.to(dtype)
    vocab_bias = head.vocab_bias.to(dtype)
    grad = torch.empty_like(v)
    for start in range(0, v.shape[0], chunk_positions):
        part = slice(start, start + chunk_positions)
        probs = torch.softmax(torch.addmm(vocab_bias, v[part].to(dtype), decoder.T), dim=1)
        grad[part] = torch.mm(probs, decoder).float()
    grad -= head.decoder[labels]
    return grad.mul_(weight[:, None])


def micro_tune(states: MaskedStates, head: MlmHead, settings: TuneSettings, *, chunk_positions: int = 2048,
               half: bool = False) -> torch.Tensor:
    """Tune one copy of the three vectors per unit on its masked positions; return Eq. 1 embeddings (n, 3d).

    Units without any masked position (empty text) get a zero row. Each epoch is one full-batch step, as the
    paper's "single batch of no more than 12 inputs" per text (Sec. 2): the small d-wide part of the head runs
    under autograd over all positions at once, the vocabulary part is :func:`vocab_loss_grad`.
    """
    n, d = states.n_units, head.dense_bias.shape[0]
    originals = (head.ln_weight, head.ln_bias, head.dense_bias)  # L0, L1, L2 of Sec. 2
    params = [p.detach().float().expand(n, d).clone().requires_grad_(True) for p in originals]
    gamma, beta, bias = params
    owner = states.owner
    counts = torch.bincount(owner, minlength=n)
    # A text's loss is the mean over its own masked positions, as BertForMaskedLM computes for that text's batch.
    weight = 1.0 / counts.clamp(min=1).float()[owner]
    optimizer = torch.optim.AdamW(params, lr=settings.lr, weight_decay=settings.weight_decay)
    for _ in range(settings.epochs):
        optimizer.zero_grad(set_to_none=False)
        u = head.activation(states.z + bias[owner])
        v = F.layer_norm(u, (d,), eps=head.eps) * gamma[owner] + beta[owner]
        with torch.no_grad():
            grad = vocab_loss_grad(v, states.labels, weight, head, chunk_positions=chunk_positions, half=half)
        v.backward(grad)
        optimizer.step()
    with torch.no_grad():
        deltas = [p - o.float()[None, :] for p, o in zip(params, originals)]
        deltas = [F.normalize(x, dim=1) for x in deltas]
        out = F.normalize(torch.cat(deltas, dim=1), dim=1)
        out[counts == 0] = 0.0
    return out
