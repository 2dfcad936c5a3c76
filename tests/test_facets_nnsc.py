"""The NNSC solver (Eq. 1), clustering and the set distance SC (Eq. 5), on synthetic vectors."""

from __future__ import annotations

import numpy as np

from engine.facets import nnsc


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def _objective(centres, words, weights, codes, lam=nnsc.LAMBDA):
    return nnsc.reconstruction_error(centres, words, weights, codes) + lam * codes.sum(axis=(1, 2))


def _planted(rng, topics, per_topic, dim=24, noise=0.15):
    """Words scattered around ``topics`` random directions."""
    axes = _unit(rng.normal(size=(topics, dim)))
    words = _unit(np.repeat(axes, per_topic, axis=0) + noise * rng.normal(size=(topics * per_topic, dim)))
    return axes, words


def test_codes_respect_the_constraints_and_ignore_padding():
    rng = np.random.default_rng(1)
    words = np.linalg.qr(rng.normal(size=(6, 16, 9)))[0].transpose(0, 2, 1).astype(np.float32)  # orthonormal
    # half-length copies of four words: unconstrained, their coefficients would be 2, so the bound M <= 1 must bite
    centres = 0.5 * words[:, :4]
    weights = np.ones((6, 9), np.float32)
    weights[:, 7:] = 0  # padding
    codes = nnsc.solve_codes(centres, words, weights)
    assert codes.shape == (6, 4, 9)
    assert codes.min() >= 0.0 and codes.max() <= 1.0
    assert np.all(codes[:, :, 7:] == 0)
    assert np.all(codes[:, np.arange(4), np.arange(4)] == 1.0)


def test_codes_approach_the_optimum_of_eq1():
    rng = np.random.default_rng(2)
    centres = _unit(rng.normal(size=(3, 5, 12)))
    words = _unit(centres[:, rng.integers(0, 5, size=8)] + 0.3 * rng.normal(size=(3, 8, 12)))
    weights = np.ones((3, 8), np.float32)
    codes = nnsc.solve_codes(centres, words, weights)
    # reference: projected gradient descent with a safe step size, run to convergence
    ref = np.zeros_like(codes)
    step = 1.0 / (2 * np.linalg.eigvalsh(centres @ centres.transpose(0, 2, 1)).max())
    for _ in range(2000):
        grad = 2 * (centres @ centres.transpose(0, 2, 1) @ ref - centres @ words.transpose(0, 2, 1)) + nnsc.LAMBDA
        ref = np.clip(ref - step * grad, 0, 1)
    ours, best = _objective(centres, words, weights, codes), _objective(centres, words, weights, ref)
    assert np.all(ours <= best * 1.03 + 1e-3), (ours, best)
    assert np.all(ours < _objective(centres, words, weights, np.zeros_like(codes)))


def test_cluster_finds_planted_facets_and_their_mass():
    rng = np.random.default_rng(3)
    axes, words = _planted(rng, topics=3, per_topic=6)
    weights = np.ones(18, np.float32)
    weights[:6] = 0.5  # the first topic's words weigh half as much
    result = nnsc.cluster(words[None], weights[None], k=3)
    centres = _unit(result.centres[0])
    best = (axes @ centres.T).max(axis=1)
    assert np.all(best > 0.9), best
    owner = (axes @ centres.T).argmax(axis=1)
    assert len(set(owner.tolist())) == 3
    assert result.mass[0, owner[0]] < result.mass[0, owner[1]]


def test_cluster_is_deterministic_and_batch_independent():
    rng = np.random.default_rng(4)
    _, a = _planted(rng, topics=2, per_topic=5)
    _, b = _planted(rng, topics=3, per_topic=3)
    words = np.zeros((2, 10, 24), np.float32)
    weights = np.zeros((2, 10), np.float32)
    words[0, :10], weights[0, :10] = a, 1.0
    words[1, :9], weights[1, :9] = b, 1.0
    batch = nnsc.cluster(words, weights, k=4)
    again = nnsc.cluster(words, weights, k=4)
    alone = nnsc.cluster(words[1:, :9], weights[1:, :9], k=4)
    assert np.array_equal(batch.centres, again.centres) and np.array_equal(batch.mass, again.mass)
    np.testing.assert_allclose(batch.centres[1], alone.centres[0], atol=1e-4)
    np.testing.assert_allclose(batch.mass[1], alone.mass[0], atol=1e-4)


def test_fewer_words_than_facets_leaves_empty_facets():
    rng = np.random.default_rng(5)
    words = _unit(rng.normal(size=(1, 2, 8)))
    result = nnsc.cluster(words, np.ones((1, 2), np.float32), k=5)
    assert (result.mass[0] > 0).sum() <= 2
    assert np.all(result.mass[0, 2:] == 0)


def test_set_distance_is_symmetric_and_smallest_for_the_same_set():
    rng = np.random.default_rng(6)
    a = _unit(rng.normal(size=(1, 4, 16)))
    near = _unit(a + 0.1 * rng.normal(size=a.shape))
    far = _unit(rng.normal(size=(1, 4, 16)))
    ones = np.ones((1, 4), np.float32)
    same = nnsc.set_distance(a, a, ones, ones)[0]
    d_near = nnsc.set_distance(a, near, ones, ones)[0]
    d_far = nnsc.set_distance(a, far, ones, ones)[0]
    assert same < d_near < d_far
    np.testing.assert_allclose(nnsc.set_distance(far, a, ones, ones)[0], d_far, rtol=1e-5)
