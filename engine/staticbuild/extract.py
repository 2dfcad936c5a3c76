"""Step 2 (Sec. 3.1): contextual word vectors, E(w) = mean over up to N sentences of the teacher's vector at w.

One pass serves many words: each corpus sentence is encoded once, and its vector at every vocabulary word that still
needs contexts is added to that word's running sum. As in the authors' code, a word contributes its first occurrence
in a sentence, and a word split into sub-words gets the mean of their vectors.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from engine.embed.wordtok import FIRST_WORD_ID, WordTokenizer
from engine.staticbuild.teacher import Teacher

log = logging.getLogger(__name__)

_SCAN_BATCH = 20_000


@dataclass
class Selection:
    """Chosen sentences and, per sentence (CSR ``offsets``), the words it serves and their pre-token positions."""

    texts: list[str]
    word_ids: np.ndarray
    positions: np.ndarray
    offsets: np.ndarray
    scanned: int

    def save(self, path: Path) -> None:
        """Atomic write, so an interrupted build never sees half a selection."""
        tmp = path.with_suffix(".tmp.npz")
        np.savez(
            tmp,
            texts=np.frombuffer("\n".join(self.texts).encode("utf-8"), dtype=np.uint8),
            word_ids=self.word_ids,
            positions=self.positions,
            offsets=self.offsets,
            scanned=np.array(self.scanned),
        )
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> Selection:
        """Read what :meth:`save` wrote."""
        with np.load(path) as d:
            return cls(
                texts=d["texts"].tobytes().decode("utf-8").split("\n"),
                word_ids=d["word_ids"],
                positions=d["positions"],
                offsets=d["offsets"],
                scanned=int(d["scanned"]),
            )


def _incidence(texts: list[str], tok: WordTokenizer) -> tuple[np.ndarray, np.ndarray]:
    """Distinct vocabulary ids of each text (CSR), vectorised over the batch."""
    flat, offsets = tok.encode_raw(texts)
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), np.diff(offsets))
    words = flat >= FIRST_WORD_ID
    pairs = np.unique(owner[words] * tok.size + flat[words])
    ids, owners = pairs % tok.size, pairs // tok.size
    out_offsets = np.searchsorted(owners, np.arange(len(texts) + 1))
    return ids.astype(np.int32), out_offsets


def select_sentences(
    sentences: Iterable[str], tok: WordTokenizer, *, per_word: int, max_sentences: int, seed: int = 0
) -> Selection:
    """Choose at most ``max_sentences`` corpus sentences that give every word as many of its N contexts as possible.

    Encoding the whole corpus with the teacher is too slow on a CPU, so the encoded sentences must be chosen well.
    Each word w wants a fraction p_w = min(1, N / df_w) of the sentences containing it (df_w: sentences containing
    w). With one uniform draw u_s per sentence, "some word of s wants s" is u_s < max_w p_w, i.e.
    u_s * min_w df_w < N: so the sentences with the smallest key u_s * min_w df_w are exactly the ones a budget
    should buy. They are taken in key order and each word keeps its first N contexts.
    """
    texts: list[str] = []
    id_chunks: list[np.ndarray] = []
    offset_chunks: list[np.ndarray] = []
    batch: list[str] = []
    for sentence in [*sentences, None]:
        if sentence is not None:
            batch.append(sentence)
        if batch and (sentence is None or len(batch) == _SCAN_BATCH):
            ids, offsets = _incidence(batch, tok)
            id_chunks.append(ids)
            offset_chunks.append(offsets[1:] + (offset_chunks[-1][-1] if offset_chunks else 0))
            texts.extend(batch)
            batch = []
            if len(offset_chunks) % 25 == 0:
                log.info("selection: %d sentences scanned", len(texts))
    flat = np.concatenate(id_chunks) if id_chunks else np.zeros(0, np.int32)
    offsets = np.concatenate([[0], *offset_chunks]).astype(np.int64)
    df = np.bincount(flat, minlength=tok.size)
    lengths = np.diff(offsets)
    usable = np.flatnonzero(lengths > 0)
    min_df = np.minimum.reduceat(df[flat], offsets[usable]) if usable.size else np.zeros(0, np.int64)
    keys = np.random.default_rng(seed).random(usable.size) * min_df
    chosen = usable[np.argsort(keys, kind="stable")[:max_sentences]]

    counts = np.zeros(tok.size, dtype=np.int32)
    kept: list[int] = []
    ids_out: list[np.ndarray] = []
    for s in chosen:
        ids = flat[offsets[s] : offsets[s + 1]]
        needed = ids[counts[ids] < per_word]
        if needed.size:
            counts[needed] += 1
            kept.append(int(s))
            ids_out.append(needed)
    kept_texts = [texts[s] for s in kept]
    positions = _first_positions(kept_texts, ids_out, tok)
    out_offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in ids_out], out=out_offsets[1:])
    return Selection(
        texts=kept_texts,
        word_ids=np.concatenate(ids_out).astype(np.int64) if ids_out else np.zeros(0, np.int64),
        positions=positions,
        offsets=out_offsets,
        scanned=len(texts),
    )


def serving_every_word(texts: list[str], tok: WordTokenizer, *, scanned: int) -> Selection:
    """A selection of ``texts`` in which each sentence serves every vocabulary word it contains.

    The vocabulary extension (``engine.staticbuild.extend``) chooses sentences for its new words but also wants the
    contextual vectors of the old words in them, to learn where contextual vectors land in the model's space.
    """
    ids, offsets = _incidence(texts, tok)
    wanted = [ids[offsets[i] : offsets[i + 1]] for i in range(len(texts))]
    return Selection(
        texts=texts,
        word_ids=ids.astype(np.int64),
        positions=_first_positions(texts, wanted, tok),
        offsets=offsets.astype(np.int64),
        scanned=scanned,
    )


def _first_positions(texts: list[str], wanted: list[np.ndarray], tok: WordTokenizer) -> np.ndarray:
    """Pre-token position of the first occurrence of each wanted word in its sentence."""
    out: list[np.ndarray] = []
    for start in range(0, len(texts), _SCAN_BATCH):
        flat, offsets = tok.encode_raw(texts[start : start + _SCAN_BATCH])
        for i, ids in enumerate(wanted[start : start + _SCAN_BATCH]):
            row = flat[offsets[i] : offsets[i + 1]]
            uniq, first = np.unique(row, return_index=True)
            out.append(first[np.searchsorted(uniq, ids)])
    return np.concatenate(out).astype(np.int64) if out else np.zeros(0, np.int64)


class Extraction:
    """Running sums of contextual vectors, resumable from a checkpoint file."""

    def __init__(self, n_ids: int, dim: int, n_texts: int) -> None:
        self.sums = np.zeros((n_ids, dim), dtype=np.float32)
        self.counts = np.zeros(n_ids, dtype=np.int32)
        self.sentences = np.zeros((n_texts, dim), dtype=np.float16)
        self.done = np.zeros(n_texts, dtype=bool)

    def save(self, path: Path) -> None:
        """Atomic checkpoint."""
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, sums=self.sums, counts=self.counts, sentences=self.sentences, done=self.done)
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> Extraction:
        """Resume from :meth:`save`."""
        with np.load(path) as d:
            ext = cls.__new__(cls)
            ext.sums, ext.counts, ext.sentences, ext.done = d["sums"], d["counts"], d["sentences"], d["done"]
            return ext

    def add_batch(self, sel: Selection, index: np.ndarray, hidden: torch.Tensor, word_ids: torch.Tensor) -> None:
        """Add the vectors of this batch's assigned words (sub-word vectors averaged) to the running sums.

        The averaging runs where ``hidden`` is (the GPU in a GPU build), so only the assigned words' vectors cross to
        the host: a 768-dimensional teacher's whole last layer would be ~100 GB over a build.
        """
        n_words = int(word_ids.max().item()) + 1 if word_ids.numel() else 0
        if n_words == 0:
            return
        batch_size, _, dim = hidden.shape
        device = hidden.device
        word_ids = word_ids.to(device)
        valid = word_ids >= 0
        seg = (torch.arange(batch_size, device=device).unsqueeze(1) * n_words + word_ids)[valid]
        word_sums = torch.zeros(batch_size * n_words, dim, device=device).index_add_(0, seg, hidden[valid])
        word_lens = torch.zeros(batch_size * n_words, device=device).index_add_(
            0, seg, torch.ones(seg.numel(), device=device))
        starts, ends = sel.offsets[index], sel.offsets[index + 1]
        rows = np.repeat(np.arange(batch_size), ends - starts)
        picks = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if rows.size else np.zeros(0, np.int64)
        positions = sel.positions[picks]
        # words beyond the teacher's truncation have no vector in this sentence
        inside = positions < n_words
        keys = torch.from_numpy(rows[inside] * n_words + positions[inside]).to(device)
        lens = word_lens[keys]
        seen = lens > 0
        vectors = (word_sums[keys][seen] / lens[seen].unsqueeze(1)).cpu()
        targets = torch.from_numpy(sel.word_ids[picks][inside][seen.cpu().numpy()])
        torch.from_numpy(self.sums).index_add_(0, targets, vectors)
        np.add.at(self.counts, targets.numpy(), 1)


def run_extraction(
    sel: Selection, teacher: Teacher, n_ids: int, checkpoint: Path, *, checkpoint_seconds: float = 300.0,
    budget_seconds: float | None = None,
) -> Extraction:
    """Encode every selected sentence once; checkpoint every few minutes so a killed build resumes.

    With ``budget_seconds`` the pass stops once that much time is spent (a CPU-only build must fit a working
    session); sentences are encoded shortest first, which is also the paper's preference (Sec. 4.1, footnote 6), and
    the later steps use only the encoded ones (``Extraction.done``). A later run without a budget continues.
    """
    ext = Extraction.load(checkpoint) if checkpoint.exists() else Extraction(n_ids, teacher.dim, len(sel.texts))
    todo = np.flatnonzero(~ext.done)
    log.info("extraction: %d of %d sentences left", todo.size, len(sel.texts))
    last_save = started = time.monotonic()
    encoded = 0
    texts = [sel.texts[i] for i in todo]
    for batch in teacher.encode(texts):
        if budget_seconds is not None and time.monotonic() - started > budget_seconds:
            log.info("extraction: time budget spent, %d of %d sentences encoded", int(ext.done.sum()), len(sel.texts))
            break
        index = todo[batch.index]
        ext.add_batch(sel, index, batch.hidden, batch.word_ids)
        ext.sentences[index] = batch.sentence
        ext.done[index] = True
        encoded += len(index)
        if time.monotonic() - last_save > checkpoint_seconds:
            ext.save(checkpoint)
            last_save = time.monotonic()
            rate = encoded / (last_save - started)
            log.info("extraction: %d/%d sentences, %.0f/s", int(ext.done.sum()), len(sel.texts), rate)
    if encoded or not checkpoint.exists():
        ext.save(checkpoint)
    return ext


def word_vectors(ext: Extraction, teacher: Teacher, words: list[str]) -> np.ndarray:
    """E(w) for every id (rows aligned with WordTokenizer ids); words never seen in context are encoded alone."""
    vectors = np.zeros_like(ext.sums)
    seen = ext.counts > 0
    vectors[seen] = ext.sums[seen] / ext.counts[seen, None]
    unseen = np.flatnonzero(~seen[FIRST_WORD_ID:]) + FIRST_WORD_ID
    if unseen.size:
        log.info("extraction: %d words never seen in context, encoded alone", unseen.size)
        vectors[unseen] = teacher.context_free([words[i - FIRST_WORD_ID] for i in unseen])
    return vectors
