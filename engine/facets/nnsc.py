"""Non-negative sparse coding (Chang et al., 2021, Eq. 1), batched over many word sets at once.

Every function works on a batch: ``B`` problems, each with up to ``K`` centres and ``J`` words in an ``E``-dimensional
space, padded to the batch maximum. Padding words carry weight 0 and padding centres are zero rows, so one numpy
expression solves thousands of small problems; indexing depends on that (the 20% time budget of issue 7).

The coefficients ``M`` are found the authors' way (github.com/iesl/NSD_for_sentence_embedding, see NOTES.md): RMSprop
with lr 0.05 on ``||C M - W||^2 + lambda ||M||_1``, clamped to [0, 1] after every step, lambda 0.4. Each word's term
is scaled by its weight (SIF, Arora et al. 2017), so rare words decide where the centres go.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

LAMBDA = 0.4  # paper Sec. C.1
LEARNING_RATE = 0.05  # authors' code
# torch.optim.RMSprop defaults, which the authors' solver used.
RMS_DECAY = 0.99
RMS_EPS = 1e-8
# Coefficient steps per solve. The authors used 60 while training and more at test time; here each solve starts
# from the previous round's coefficients, and 20 steps x 4 solves reached the objective of 40 x 4 within 0.4% on
# real sentence contexts (tests/test_facets_nnsc.py checks the solve against a converged reference).
CODE_STEPS = 20
# Alternations of coefficient solve and centre update when clustering (like k-means' assign/update).
CLUSTER_ROUNDS = 3
# Ridge on the centre update's K x K system: keeps it solvable when a centre explains no word.
RIDGE = 1e-4


def solve_codes(centres: np.ndarray, words: np.ndarray, weights: np.ndarray, *, steps: int = CODE_STEPS,
                lam: float = LAMBDA, init: np.ndarray | None = None) -> np.ndarray:
    """The coefficients of Eq. 1: argmin_M sum_j weights_j ||C m_j - w_j||^2 + lam ||M||_1, 0 <= M <= 1.

    Parameters:
        centres: (B, K, E) centre rows ``C``; zero rows are unused centres.
        words: (B, J, E) word rows ``W``.
        weights: (B, J) per-word weights; 0 marks padding.
        init: (B, K, J) starting coefficients (default 0).
    Returns:
        (B, K, J) float32 ``M``.
    """
    gram = centres @ centres.transpose(0, 2, 1)  # (B, K, K)
    target = centres @ words.transpose(0, 2, 1)  # (B, K, J)
    # d/dM of weights_j ||C m_j - w_j||^2 is 2 w_j (G m_j - C^T w_j); spelled out per centre, as broadcasting the
    # (B, 1, J) weights in every step costs three times a plain product
    scale = np.repeat((2.0 * weights)[:, None, :].astype(np.float32), target.shape[1], axis=1)
    codes = np.zeros_like(target) if init is None else init.astype(np.float32, copy=True)
    square = np.zeros_like(codes)
    # Indexing runs this on thousands of problems at once, so every step works in place on preallocated buffers:
    # the arithmetic is the torch RMSprop update, without a temporary array per operator.
    grad, step = np.empty_like(codes), np.empty_like(codes)
    for _ in range(steps):
        np.matmul(gram, codes, out=grad)
        grad -= target
        grad *= scale
        grad += lam
        square *= RMS_DECAY
        np.multiply(grad, grad, out=step)
        step *= 1.0 - RMS_DECAY
        square += step
        np.sqrt(square, out=step)
        step += RMS_EPS
        np.divide(grad, step, out=step)
        step *= LEARNING_RATE
        codes -= step
        np.clip(codes, 0.0, 1.0, out=codes)
    codes *= weights[:, None, :] > 0  # padding words have no coefficients
    return codes


def reconstruction_error(centres: np.ndarray, words: np.ndarray, weights: np.ndarray,
                         codes: np.ndarray | None = None) -> np.ndarray:
    """Er of Eq. 1 per problem: sum_j weights_j ||C m_j - w_j||^2 at the NNSC coefficients (B,)."""
    if codes is None:
        codes = solve_codes(centres, words, weights)
    residual = codes.transpose(0, 2, 1) @ centres - words  # (B, J, E)
    return np.einsum("bje,bje,bj->b", residual, residual, weights)


def set_distance(a: np.ndarray, b: np.ndarray, a_weights: np.ndarray, b_weights: np.ndarray) -> np.ndarray:
    """SC of Eq. 5: each set's normalised centres reconstruct the other's, errors of both directions summed.

    ``a`` (B, Ka, E) and ``b`` (B, Kb, E) hold normalised centres; the weights (1 for a real centre, 0 for padding)
    mark which rows exist. Lower is more similar.
    """
    return reconstruction_error(a, b, b_weights) + reconstruction_error(b, a, a_weights)


@dataclass(frozen=True)
class Clusters:
    """Result of :func:`cluster`: ``centres`` (B, K, E), ``mass`` (B, K) = weighted coefficient sum per centre."""

    centres: np.ndarray
    mass: np.ndarray


def _inverse(system: np.ndarray) -> np.ndarray:
    """Inverses of a batch of small symmetric positive definite matrices (B, K, K), by Gauss-Jordan elimination.

    One numpy pass per column over the whole batch: ``np.linalg.solve`` calls LAPACK once per 5 x 5 matrix, which
    cost more than the clustering arithmetic. No pivoting is needed: the ridge keeps every pivot positive.
    """
    b, k, _ = system.shape
    a = system.astype(np.float64)  # K Gauss-Jordan steps in float32 lose digits the centre update needs
    inverse = np.broadcast_to(np.eye(k), (b, k, k)).copy()
    for i in range(k):
        pivot = a[:, i, i, None].copy()
        a[:, i] /= pivot
        inverse[:, i] /= pivot
        factor = a[:, :, i, None].copy()
        factor[:, i] = 0.0
        a -= factor * a[:, i, None, :]
        inverse -= factor * inverse[:, i, None, :]
    return inverse.astype(np.float32)


def _seed(words: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """K starting centres per problem, chosen among its words: heaviest first, then weighted farthest-point.

    Deterministic (no random restarts), so the same text always gets the same facets. A problem with fewer than K
    distinct words gets zero rows for the rest.
    """
    b, _, e = words.shape
    rows = np.arange(b)
    centres = np.zeros((b, k, e), dtype=np.float32)
    distance = np.where(weights > 0, 1.0, 0.0).astype(np.float32)  # to the nearest chosen centre (1 - cosine)
    for i in range(k):
        score = weights * distance
        pick = score.argmax(axis=1)
        alive = score[rows, pick] > 1e-6
        centres[:, i] = words[rows, pick] * alive[:, None]
        cosine = np.matmul(words, centres[:, i, :, None])[:, :, 0]
        np.minimum(distance, np.where(alive[:, None], 1.0 - cosine, distance), out=distance)
        np.maximum(distance, 0.0, out=distance)
    return centres


def cluster(words: np.ndarray, weights: np.ndarray, k: int, *, rounds: int = CLUSTER_ROUNDS,
            steps: int = CODE_STEPS) -> Clusters:
    """NNSC clustering of each problem's weighted word set into at most ``k`` centres (Eq. 1 over C and M).

    Alternates the coefficient solve with the exact centre update C = (W^T S M^T)(M S M^T)^-1, as k-means alternates
    assignment and means (the paper's "NNSC clustering" baseline, Appendix B.2). A centre that ends up explaining no
    word keeps its place and gets mass 0; callers drop it.
    """
    words = np.ascontiguousarray(words, dtype=np.float32)
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    centres = _seed(words, weights, k)
    alive = np.abs(centres).sum(axis=2) > 0  # (B, K)
    codes = None
    eye = RIDGE * np.eye(k, dtype=np.float32)
    for _ in range(rounds):
        codes = solve_codes(centres, words, weights, steps=steps, init=codes)
        weighted = codes * weights[:, None, :]  # M S
        system = weighted @ codes.transpose(0, 2, 1) + eye  # (B, K, K)
        updated = _inverse(system) @ (weighted @ words)  # (B, K, E)
        keep = (weighted.sum(axis=2) > 1e-6) & alive
        centres = np.where(keep[:, :, None], updated, centres).astype(np.float32)
    codes = solve_codes(centres, words, weights, steps=steps, init=codes)
    mass = (codes * weights[:, None, :]).sum(axis=2) * alive
    return Clusters(centres=centres, mass=mass.astype(np.float32))
