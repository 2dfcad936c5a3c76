"""Step 4 (Sec. 3.3, Eq. 2-3): knowledge distillation of sentence similarities from the teacher.

For a batch of K = 128 sentences the loss is the cross-entropy between the teacher's and the student's row-wise
softmax (temperature tau = 0.05, the diagonal excluded) over cosine similarities. The student is the word matrix
itself (a sentence is the sum of its word vectors); Adam with lr 1e-3, at most 30k steps, gradient norm clipped at
5.0, validation every 40 steps on held-out corpus sentences and early stopping after 5 validations without
improvement (the authors' code, github.com/twadada/swe4semantics).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DistillConfig:
    """Hyper-parameters; the defaults are the paper's and the authors' code's."""

    batch_size: int = 128
    tau: float = 0.05
    lr: float = 1e-3
    max_steps: int = 30_000
    validate_every: int = 40
    patience: int = 5
    clip: float = 5.0
    seed: int = 0
    # Wall-clock cap (not in the paper): a CPU-only build on a shared machine must end within a working session.
    max_seconds: float | None = None
    device: str = "cpu"


def similarity_loss(student: torch.Tensor, teacher: torch.Tensor, tau: float) -> torch.Tensor:
    """Eq. 2: -(1/K) sum_i sum_{j != i} sigma(T)_ij log sigma(S)_ij, with sigma the softmax of Eq. 3 over k != i."""
    s = F.normalize(student, dim=-1)
    t = F.normalize(teacher, dim=-1)
    k = s.shape[0]
    eye = torch.eye(k, dtype=torch.bool, device=s.device)
    s_logits = (s @ s.T / tau).masked_fill(eye, float("-inf"))
    t_logits = (t @ t.T / tau).masked_fill(eye, float("-inf"))
    target = torch.softmax(t_logits, dim=-1)
    log_pred = torch.log_softmax(s_logits, dim=-1).masked_fill(eye, 0.0)
    return -(target * log_pred).sum(dim=-1).mean()


def held_out_split(lengths: np.ndarray, n_valid: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Train and validation rows among the sentences with at least one known word (``lengths > 0``); at most a
    fifth of them are held out, so a toy build still has most of its sentences to learn from."""
    usable = np.flatnonzero(lengths > 0)
    rng = np.random.default_rng(seed + 1)
    valid = np.sort(rng.choice(usable, size=min(n_valid, usable.size // 5), replace=False))
    return np.setdiff1d(usable, valid), valid


class _Batches:
    """Gathers a batch's word ids in EmbeddingBag layout from the CSR token arrays."""

    def __init__(self, flat: np.ndarray, offsets: np.ndarray, teacher: np.ndarray, device: str) -> None:
        self.flat, self.offsets, self.teacher, self.device = flat, offsets, teacher, device

    def get(self, rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        starts, ends = self.offsets[rows], self.offsets[rows + 1]
        ids = np.concatenate([self.flat[s:e] for s, e in zip(starts, ends)])
        bag_offsets = np.concatenate([[0], np.cumsum(ends - starts)[:-1]])
        return (
            torch.from_numpy(ids.astype(np.int64)).to(self.device),
            torch.from_numpy(bag_offsets.astype(np.int64)).to(self.device),
            torch.from_numpy(self.teacher[rows].astype(np.float32)).to(self.device),
        )


class _Student(torch.nn.Module):
    """A sentence is the sum of its word vectors. With a ``trainable`` mask the fixed rows sit in a frozen bag and
    only the trainable ones are a parameter, in a second bag reached through an id map, so the optimiser's work
    scales with the rows that move (a vocabulary extension trains 45k of 107k rows)."""

    # buffers (register_buffer), declared so that their type is known
    rows: torch.Tensor
    remap: torch.Tensor

    def __init__(self, vectors: np.ndarray, trainable: np.ndarray | None) -> None:
        super().__init__()
        table = torch.from_numpy(vectors.copy())
        self.fixed: torch.nn.EmbeddingBag | None = None
        if trainable is None:
            self.free = torch.nn.EmbeddingBag.from_pretrained(table, freeze=False, mode="sum")
            return
        rows = torch.from_numpy(np.flatnonzero(trainable))
        pad = rows.numel()  # fixed rows map to this all-zero row of the trainable bag
        fixed = table.clone()
        fixed[rows] = 0.0
        self.fixed = torch.nn.EmbeddingBag.from_pretrained(fixed, freeze=True, mode="sum")
        free = torch.cat([table[rows], torch.zeros(1, table.shape[1])])
        self.free = torch.nn.EmbeddingBag.from_pretrained(free, freeze=False, mode="sum", padding_idx=pad)
        remap = torch.full((table.shape[0],), pad, dtype=torch.long)
        remap[rows] = torch.arange(pad)
        self.register_buffer("rows", rows)
        self.register_buffer("remap", remap)

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        if self.fixed is None:
            return self.free(ids, offsets)
        return self.fixed(ids, offsets) + self.free(self.remap[ids], offsets)

    def table(self, free: torch.Tensor) -> torch.Tensor:
        """The whole (ids x d) matrix with ``free`` (a copy of the trainable bag's weight) in place."""
        if self.fixed is None:
            return free
        out = self.fixed.weight.detach().clone()
        out[self.rows] = free[:-1]
        return out


def distill(
    vectors: np.ndarray,
    flat: np.ndarray,
    offsets: np.ndarray,
    teacher: np.ndarray,
    train_rows: np.ndarray,
    valid_rows: np.ndarray,
    config: DistillConfig = DistillConfig(),
    trainable: np.ndarray | None = None,
) -> tuple[np.ndarray, dict]:
    """Fine-tune ``vectors`` (ids x d); sentences are CSR word ids ``flat``/``offsets`` with teacher embeddings.

    Only sentences with at least one known word should be passed in ``train_rows``/``valid_rows``. With
    ``trainable`` (a boolean per row) only those rows move; the others stay exactly as given.
    Returns the best (lowest validation loss) vectors and a training log.
    """
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    student = _Student(vectors, trainable).to(config.device)
    optimiser = torch.optim.Adam(student.parameters(), lr=config.lr)
    batches = _Batches(flat, offsets, teacher, config.device)
    valid_batches = [batches.get(valid_rows[i : i + config.batch_size]) for i in range(0, valid_rows.size, config.batch_size)]

    def validation_loss() -> float:
        with torch.no_grad():
            losses = [similarity_loss(student(ids, offs), t, config.tau).item() for ids, offs, t in valid_batches]
        return float(np.mean(losses))

    best = validation_loss()
    best_weights = student.free.weight.detach().clone()
    history = [{"step": 0, "valid_loss": best}]
    bad = 0
    order = rng.permutation(train_rows)
    cursor = 0
    step = 0
    started = time.monotonic()
    for step in range(1, config.max_steps + 1):
        if cursor + config.batch_size > order.size:
            order = rng.permutation(train_rows)
            cursor = 0
        ids, offs, t = batches.get(order[cursor : cursor + config.batch_size])
        cursor += config.batch_size
        loss = similarity_loss(student(ids, offs), t, config.tau)
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), config.clip)
        optimiser.step()
        if step % config.validate_every == 0:
            current = validation_loss()
            history.append({"step": step, "train_loss": float(loss.item()), "valid_loss": current})
            if current < best:
                best, bad = current, 0
                best_weights = student.free.weight.detach().clone()
            else:
                bad += 1
                if bad >= config.patience:
                    log.info("distillation: early stop at step %d (best validation loss %.4f)", step, best)
                    break
            if config.max_seconds is not None and time.monotonic() - started > config.max_seconds:
                log.info("distillation: time budget spent at step %d (best validation loss %.4f)", step, best)
                break
            if step % (config.validate_every * 25) == 0:
                log.info("distillation: step %d, validation loss %.4f (best %.4f)", step, current, best)
    return student.table(best_weights).cpu().numpy(), {"steps": step, "best_valid_loss": best, "history": history}
