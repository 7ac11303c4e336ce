"""ONGR's solver on row chunks (:meth:`OngrSolver.solve_chunked`) against the in-memory
solve, on blocks in memory (:class:`graphclust.chunks.InMemoryChunks`; no Dask)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from graphclust.chunks import BlockState, InMemoryChunks, split_kept
from graphclust._composer import compose
from graphclust._parts import Context
from graphclust._plugins import get_registry
from graphclust.numerics import random_block_rows
from graphclust_plugins.ongr._chunkwise import RFactor, polar_step
from graphclust_plugins.ongr._start import canonical_eigenbasis, complete_orthonormal
from graphclust_plugins.ongr.solver_ongr import OngrSolver, _polar
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits

N = 700  # digits rows: 70 capped anchors, ~0.1 s a solve


@pytest.fixture(scope="module")
def fitted():
    """The ``ongr-k`` graph of the first ``N`` digits, and in-memory solves by solver
    parameters (cached)."""
    X = load_digits().data[:N]
    pipe = compose(dict(get_registry().presets.get("ongr-k")))
    res = pipe.run(X, n_clusters=10, ctx=Context(seed=0))
    cache = {}

    def solve(**params):
        key = tuple(sorted(params.items()))
        if key not in cache:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cache[key] = OngrSolver(**params).solve(res.graph, None, 10, Context(seed=0))
        return cache[key]

    return X, res.graph, solve


def _chunked(X, graph, rows, k=10, seed=0, **params):
    chunks = InMemoryChunks(X, graph.Z, block_rows=rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = OngrSolver(**params).solve_chunked(chunks, k, Context(seed=seed))
    assert sol.n == 0
    sol, kept = split_kept(sol)
    parts = [OngrSolver(**params).lift_rows(sol, b) for b in chunks.blocks(kept)]
    return sol, np.vstack([p.soft for p in parts]), np.vstack([p.embedding for p in parts])


def _assert_same(ref, sol, soft, emb):
    np.testing.assert_array_equal(soft.argmax(axis=1), ref.soft.argmax(axis=1))
    np.testing.assert_allclose(soft, ref.soft, atol=1e-10)
    np.testing.assert_allclose(emb, ref.embedding, atol=1e-10)
    np.testing.assert_allclose(sol.anchor_soft, ref.anchor_soft, atol=1e-10)
    np.testing.assert_allclose(sol.anchor_embedding, ref.anchor_embedding, atol=1e-10)
    assert sol.n_iter == ref.n_iter and sol.converged == ref.converged
    np.testing.assert_array_equal(sol.history["label_change"], ref.history["label_change"])
    np.testing.assert_allclose(sol.objective, ref.objective, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(sol.history["objective_after_G"],
                               ref.history["objective_after_G"], rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(sol.history["fg_gap"], ref.history["fg_gap"], rtol=1e-9,
                               atol=1e-9)
    assert sol.info["n_zero_rows"] == ref.info["n_zero_rows"]


@pytest.mark.parametrize("init", ["svd", "random", "spectral-kmeans"])
@pytest.mark.parametrize("positive_part", ["max", "abs"])
@pytest.mark.parametrize("rows", [N, 233, 699])  # one block; 3 + a 1-row block; 1 + 1 row
def test_chunked_equals_in_memory(fitted, init, positive_part, rows):
    """Labels identical, soft / embedding / per-anchor values / every trace equal to
    round-off, for each start, positive part and cut (incl. 1-row remainder blocks)."""
    X, graph, solve = fitted
    params = {"init": init, "positive_part": positive_part}
    ref = solve(**params)
    _assert_same(ref, *_chunked(X, graph, rows, **params))


def test_without_objective_and_capped_iterations(fitted):
    """``track_objective=False`` records no objective; ``max_iter`` stops both alike."""
    X, graph, solve = fitted
    params = {"track_objective": False, "max_iter": 3, "tol": 0.0, "init": "svd"}
    ref = solve(**params)
    sol, soft, emb = _chunked(X, graph, 100, **params)
    assert sol.objective.size == 0 and sol.n_iter == ref.n_iter == 3
    np.testing.assert_array_equal(soft.argmax(axis=1), ref.soft.argmax(axis=1))
    np.testing.assert_allclose(emb, ref.embedding, atol=1e-10)


@settings(max_examples=8, deadline=None)
@given(rows=st.integers(20, N), seed=st.integers(0, 3))
def test_block_size_does_not_change_the_result(fitted, rows, seed):
    """Property: any block size gives the one-block result (labels equal, rows to
    round-off), for the presets' start."""
    X, graph, _ = fitted
    one = _chunked(X, graph, N, seed=seed, init="spectral-kmeans", max_iter=10)
    cut = _chunked(X, graph, rows, seed=seed, init="spectral-kmeans", max_iter=10)
    np.testing.assert_array_equal(cut[1].argmax(axis=1), one[1].argmax(axis=1))
    np.testing.assert_allclose(cut[1], one[1], atol=1e-10)
    np.testing.assert_allclose(cut[2], one[2], atol=1e-10)


def test_fewer_anchors_than_directions(fitted):
    """``m = 6 < k + 1``: the eigen directions missing are random orthonormal ones,
    drawn row-keyed, so the chunked start and result equal the in-memory ones."""
    _, graph, _ = fitted
    Z = sp.csr_array(graph.Z[:, :6])
    Z = sp.csr_array(Z[np.flatnonzero(np.diff(Z.indptr))])  # rows that kept an anchor
    from graphclust import AnchorGraph

    small = AnchorGraph(Z)
    for init in ("svd", "spectral-kmeans"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = OngrSolver(init=init).solve(small, None, 10, Context(seed=0))
        _assert_same(ref, *_chunked(np.zeros((small.n, 1)), small, 37, init=init))


def test_random_rows_do_not_depend_on_the_cut():
    whole = random_block_rows(7, 0, 5000, 3)
    parts = [random_block_rows(7, a, min(a + 777, 5000), 3) for a in range(0, 5000, 777)]
    np.testing.assert_array_equal(np.vstack(parts), whole)
    assert not np.allclose(random_block_rows(8, 0, 10, 3), whole[:10])


def test_canonical_eigenbasis_ignores_the_rotation():
    """Any orthonormal basis of a repeated eigenvalue maps to the same basis."""
    rng = np.random.default_rng(0)
    V = np.linalg.qr(rng.normal(size=(30, 4)))[0]
    vals = np.array([1.0, 1.0, 1.0 - 1e-12, 0.5])
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    W = V.copy()
    W[:, :3] = V[:, :3] @ R
    a, b = canonical_eigenbasis(vals, V), canonical_eigenbasis(vals, W)
    np.testing.assert_allclose(a, b, atol=1e-12)
    np.testing.assert_allclose(a.T @ a, np.eye(4), atol=1e-12)
    np.testing.assert_array_equal(a[:, 3], V[:, 3])  # a simple eigenvalue is left alone


def test_complete_orthonormal_is_cut_free():
    rng = np.random.default_rng(1)
    K = np.linalg.qr(rng.normal(size=(50, 2)))[0]
    U = np.hstack([K, np.zeros((50, 3))])
    keep = np.array([True, True, False, False, False])
    outs = []
    for rows in (50, 7):
        chunks = InMemoryChunks(np.zeros((50, 0)), block_rows=rows)
        state = BlockState([U[s:s + rows] for s in range(0, 50, rows)])
        outs.append(np.vstack(complete_orthonormal(chunks, state, keep, seed=3).values))
    np.testing.assert_allclose(outs[0], outs[1], atol=1e-12)
    np.testing.assert_allclose(outs[0].T @ outs[0], np.eye(5), atol=1e-12)
    np.testing.assert_array_equal(outs[0][:, :2], K)


def test_tsqr_r_factor():
    """Σ over blocks of :class:`RFactor` is the R of all rows up to row signs."""
    Y = np.random.default_rng(2).normal(size=(40, 4))
    chunks = InMemoryChunks(Y, block_rows=6)
    R = chunks.sum(lambda b: RFactor.of(b.X)).R
    R0 = np.linalg.qr(Y, mode="r")
    np.testing.assert_allclose(np.abs(R), np.abs(R0), atol=1e-12)
    np.testing.assert_allclose(R.T @ R, Y.T @ Y, atol=1e-10)


def _polar_case(G, rows):
    """``polar_step`` with ``Q = 0`` (so ``Y = λ G``, ``λ = 1``) over blocks of ``rows``."""
    n, k = G.shape
    Z = sp.csr_array(np.eye(n)[:, :1])
    chunks = InMemoryChunks(np.zeros((n, 0)), Z, block_rows=rows)
    state = BlockState([{"F": np.zeros((len(g), k)), "G": g, "labels": None}
                        for g in (G[s:s + rows] for s in range(0, n, rows))])
    C = G.T @ G
    new, _ = polar_step(chunks, state, np.ones(1), np.zeros((1, k)), 1.0, C, False, 5)
    return np.vstack([v["F"] for v in new.values])


@pytest.mark.parametrize("rows", [60, 13])
def test_polar_fallback(rows):
    """Ill-conditioned ``Y``: full rank gives the in-memory QR route's polar factor;
    a vanished column (rank deficient) gives an orthonormal ``F`` maximising
    ``Tr(FᵀY)`` (its nuclear norm) — the completion is free, so it may differ."""
    rng = np.random.default_rng(4)
    G = np.abs(rng.normal(size=(60, 4)))
    G[:, 2] *= 1e-7
    F = _polar_case(G, rows)
    np.testing.assert_allclose(F, _polar(G), atol=1e-7)
    G[:, 2] = 0.0
    F = _polar_case(G, rows)
    np.testing.assert_allclose(F.T @ F, np.eye(4), atol=1e-10)
    assert np.trace(F.T @ G) == pytest.approx(np.linalg.svd(G, compute_uv=False).sum(),
                                              rel=1e-10)


def test_sampled_kmeans_start_does_not_depend_on_the_cut(fitted, monkeypatch):
    """Above the rounding sample's floor (lowered here to 300 of 700 rows) the start's
    k-means is fitted on a uniform row sample and assigned per block: the result then
    differs from memory as with another seed, but not between cuts of the rows."""
    import graphclust.chunks as chunked  # the module the ONGR bundle reads them from

    X, graph, _ = fitted
    monkeypatch.setattr(chunked, "ROUNDING_SAMPLE_MIN", 300)
    monkeypatch.setattr(chunked, "ROUNDING_SAMPLE_PER_CLUSTER", 30)
    seen = []
    on_sample = InMemoryChunks.on_sample

    def spy(self, fn, reduce, rows, *args, **kw):
        seen.append(None if rows is None else len(rows))
        return on_sample(self, fn, reduce, rows, *args, **kw)

    monkeypatch.setattr(InMemoryChunks, "on_sample", spy)
    one = _chunked(X, graph, N, init="spectral-kmeans")
    cut = _chunked(X, graph, 233, init="spectral-kmeans")
    np.testing.assert_array_equal(cut[1].argmax(axis=1), one[1].argmax(axis=1))
    np.testing.assert_allclose(cut[2], one[2], atol=1e-10)
    assert seen == [300, 300]
    assert len(np.unique(one[1].argmax(axis=1))) >= 8
