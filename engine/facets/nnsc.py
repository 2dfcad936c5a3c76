"""Non-negative sparse coding (Chang et al., 2021, Eq. 1), batched over many word sets at once.

Every function works on a batch: ``B`` problems, each with up to ``K`` centres and ``J`` words in an ``E``-dimensional
space, padded to the batch maximum. Padding words carry weight 0 and padding centres are zero rows, so one numpy
expression solves thousands of small problems; indexing depends on that (the 20% time budget of issue 7).

The coefficients ``M`` are found the authors' way (their code, github.com/iesl/NSD_for_sentence_embedding; the loss
is the paper's Sec. 2.2): RMSprop with lr 0.05 on ``||C M - W||^2 + lambda ||M||_1``, clamped to [0, 1] after every
step, lambda 0.4. Each word's term is scaled by its weight (SIF, Arora et al. 2017), so rare words decide where the centres go.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property

import numpy as np

log = logging.getLogger(__name__)

LAMBDA = 0.4  # paper Sec. C.1
LEARNING_RATE = 0.05  # authors' code
# torch.optim.RMSprop defaults, which the authors' solver used.
RMS_DECAY = 0.99
RMS_EPS = 1e-8
# Most coefficient steps per solve: the authors' 60 (training; more at test time). Few are needed in practice: a
# problem stops once its objective moves by less than TOLERANCE x its value at M = 0 over CHECK_EVERY steps, which
# on Wikipedia sentence contexts happens after about 6 steps on average (tests/test_facets_nnsc.py checks the result
# against a solve run to convergence). Each problem stops on its own, so a text's facets do not depend on the batch
# it came in.
CODE_STEPS = 60
CHECK_EVERY = 3
TOLERANCE = 1e-2
# Alternations of coefficient solve and centre update when clustering (like k-means' assign/update). More rounds
# lower Eq. 1's objective a little for a quarter more time each (docs/decisions/0048-facet-extraction-settings.md).
CLUSTER_ROUNDS = 1
# Ridge on the centre update's K x K system: keeps it solvable when a centre explains no word.
RIDGE = 1e-4


def solve_codes(centres: np.ndarray, words: np.ndarray, weights: np.ndarray, *, steps: int = CODE_STEPS,
                lam: float = LAMBDA, init: np.ndarray | None = None, tol: float = TOLERANCE) -> np.ndarray:
    """The coefficients of Eq. 1: argmin_M sum_j weights_j ||C m_j - w_j||^2 + lam ||M||_1, 0 <= M <= 1.

    Parameters:
        centres: (B, K, E) centre rows ``C``; zero rows are unused centres.
        words: (B, J, E) word rows ``W``, unit length.
        weights: (B, J) per-word weights; 0 marks padding.
        init: (B, K, J) starting coefficients (default 0).
        tol: stop a problem early (see ``TOLERANCE``); 0 runs every step.
    Returns:
        (B, K, J) float32 ``M``.
    """
    gram = centres @ centres.transpose(0, 2, 1)  # (B, K, K)
    target = centres @ words.transpose(0, 2, 1)  # (B, K, J)
    state = None if init is None else (init, np.zeros_like(init, dtype=np.float32))
    return _descend(gram, target, weights, steps=steps, lam=lam, state=state, tol=tol)[0]


def _descend(gram: np.ndarray, target: np.ndarray, weights: np.ndarray, *, steps: int, lam: float,
             state: tuple[np.ndarray, np.ndarray] | None, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """RMSprop on Eq. 1 given only C C^T (B, K, K) and C W^T (B, K, J): all the solve needs of C and W.

    ``state`` is (coefficients, RMSprop's running mean of squared gradients) to continue from, and both are
    returned. Continuing with the running mean matters: RMSprop started afresh takes steps of ten times the
    learning rate at first (the mean starts at 0), which would throw a good starting point away.

    The objective is checked every ``CHECK_EVERY`` steps; problems that have settled are written out and dropped
    from the working arrays, so the remaining steps cost only what is left to solve.
    """
    weights = weights.astype(np.float32, copy=False)
    # d/dM of weights_j ||C m_j - w_j||^2 + lam m_kj is 2 w_j ((G M)_kj - T_kj) + lam = scale (G M) - offset, with
    # scale = 2 w_j spelled out per centre (broadcasting the (B, 1, J) weights in every step costs three times a plain
    # product) and offset = scale T - lam fixed for the solve
    scale = np.repeat((2.0 * weights)[:, None, :], target.shape[1], axis=1)
    offset = scale * target - lam
    if state is None:
        codes, squares = np.zeros_like(target), np.zeros_like(target)
    else:
        codes, squares = (a.astype(np.float32, copy=True) for a in state)
    # the objective at M = 0 (unit words): the yardstick of the stopping test
    yardstick = tol * weights.sum(axis=1)
    live = np.arange(codes.shape[0])
    work, square = codes, squares
    # Indexing runs this on thousands of problems at once, so every step works in place on preallocated buffers:
    # the arithmetic is the torch RMSprop update, without a temporary array per operator.
    grad, step = np.empty_like(codes), np.empty_like(codes)
    previous = None
    for n in range(steps):
        np.matmul(gram, work, out=grad)
        grad *= scale
        grad -= offset
        if tol > 0 and n % CHECK_EVERY == 0:
            # the objective up to a constant, sum_kj m_kj (w_j ((G M)_kj - 2 T_kj) + lam), is this
            value = 0.5 * np.einsum("bkj,bkj->b", work, grad - offset)
            if previous is not None:
                settled = np.abs(previous - value) <= yardstick
                if settled.any():
                    codes[live[settled]], squares[live[settled]] = work[settled], square[settled]
                    left = ~settled
                    live, work, square, grad = live[left], work[left], square[left], grad[left]
                    gram, scale, offset, yardstick = gram[left], scale[left], offset[left], yardstick[left]
                    value, step = value[left], np.empty_like(grad)
                    if live.size == 0:
                        break
            previous = value
        square *= RMS_DECAY
        np.multiply(grad, grad, out=step)
        step *= 1.0 - RMS_DECAY
        square += step
        np.sqrt(square, out=step)
        step += RMS_EPS
        np.divide(grad, step, out=step)
        step *= LEARNING_RATE
        work -= step
        np.clip(work, 0.0, 1.0, out=work)
    if live.size:
        codes[live], squares[live] = work, square
    codes *= weights[:, None, :] > 0  # padding words have no coefficients
    return codes, squares


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
    """Result of :func:`cluster`, heaviest centre first: ``mix`` (B, K, J), each unit centre as a mixture of the
    problem's words (C = A W), and ``mass`` (B, K), the weighted coefficient sum per centre (0 for an unused one,
    whose mixture row is 0). ``words`` are the (B, J, E) word rows the mixtures combine.

    The mixtures are what an index stores (``engine.facets.extract``): J coefficients per centre instead of E
    dimensions, and an exact description of the centre rather than a quantised copy.
    """

    mix: np.ndarray
    mass: np.ndarray
    words: np.ndarray

    @cached_property
    def centres(self) -> np.ndarray:
        """The unit centres (B, K, E): computed only where they are read (queries, explanations), not when indexing."""
        return self.mix @ self.words


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


def _seed(gram: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """K starting centres per problem, chosen among its words: heaviest first, then weighted farthest-point.

    Returned as word mixtures (B, K, J): one-hot rows picking the seed words (see :func:`cluster`). Deterministic
    (no random restarts), so the same text always gets the same facets. A problem with fewer than K distinct words
    gets zero rows for the rest.
    """
    b, j, _ = gram.shape
    rows = np.arange(b)
    mix = np.zeros((b, k, j), dtype=np.float32)
    distance = np.where(weights > 0, 1.0, 0.0).astype(np.float32)  # to the nearest chosen centre (1 - cosine)
    for i in range(k):
        score = weights * distance
        pick = score.argmax(axis=1)
        alive = score[rows, pick] > 1e-6
        mix[rows, i, pick] = alive
        cosine = gram[rows, pick]  # the picked word's cosines with every word
        np.minimum(distance, np.where(alive[:, None], 1.0 - cosine, distance), out=distance)
        np.maximum(distance, 0.0, out=distance)
    return mix


def cluster(words: np.ndarray, weights: np.ndarray, k: int, *, rounds: int = CLUSTER_ROUNDS,
            steps: int = CODE_STEPS, tol: float = TOLERANCE) -> Clusters:
    """NNSC clustering of each problem's weighted word set into at most ``k`` centres (Eq. 1 over C and M).

    Alternates the coefficient solve with the exact centre update C = (M S M^T)^-1 M S W, as k-means alternates
    assignment and means (the paper's "NNSC clustering" baseline, Appendix B.2). A centre that ends up explaining no
    word keeps its place and gets mass 0; callers drop it.

    Seeds are words and every update mixes words, so each centre stays a mixture of its problem's words, C = A W.
    The whole alternation therefore runs on A (B, K, J) and the words' cosines W W^T (B, J, J), with C C^T = A W W^T
    A^T and C W^T = A W W^T: J-wide products instead of E-wide ones (J, the context words, is some ten times
    smaller than E, the dimensions), and W is touched twice, for its cosines and for the final centres.
    """
    words = np.ascontiguousarray(words, dtype=np.float32)
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    cosines = words @ words.transpose(0, 2, 1)  # (B, J, J)
    mix = _seed(cosines, weights, k)
    alive = mix.any(axis=2)  # (B, K)
    state = None
    eye = RIDGE * np.eye(k, dtype=np.float32)
    for round_ in range(rounds + 1):
        target = mix @ cosines  # C W^T
        state = _descend(target @ mix.transpose(0, 2, 1), target, weights, steps=steps, lam=LAMBDA, state=state,
                         tol=tol)
        codes = state[0]
        if round_ == rounds:
            break
        weighted = codes * weights[:, None, :]  # M S
        system = weighted @ codes.transpose(0, 2, 1) + eye  # (B, K, K)
        updated = _inverse(system) @ weighted  # (B, K, J)
        keep = (weighted.sum(axis=2) > 1e-6) & alive
        mix = np.where(keep[:, :, None], updated, mix).astype(np.float32)
    mass = ((codes * weights[:, None, :]).sum(axis=2) * alive).astype(np.float32)
    # heaviest first and unit length (Eq. 5 compares normalised centres), both applied to the mixtures so that the
    # E-wide product runs once: |c_k|^2 is the diagonal of A (W W^T) A^T, A W W^T being the last round's target
    norms = np.sqrt(np.maximum(np.einsum("bkj,bkj->bk", target, mix), 0.0))
    order = np.argsort(-mass, axis=1, kind="stable")
    mass, norms = np.take_along_axis(mass, order, axis=1), np.take_along_axis(norms, order, axis=1)[:, :, None]
    mix = np.take_along_axis(mix, order[:, :, None], axis=1)
    np.divide(mix, norms, out=mix, where=norms > 0)
    return Clusters(mix=mix, mass=mass, words=words)
