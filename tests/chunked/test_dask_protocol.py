"""The chunk-wise protocol without Dask: every chunk-wise part's chunked form equals its
in-memory form on blocks in memory (:class:`graphclust.chunks.InMemoryChunks`)."""

from __future__ import annotations

import graphclust as gc
import numpy as np
import pytest
import scipy.sparse as sp
from graphclust.chunks import (ANCHOR_SAMPLE_MIN, ANCHOR_SAMPLE_PER_ANCHOR, InMemoryChunks,
                                 add_sums, sample_size)
from graphclust._composer import compose
from graphclust._parts import Context
from graphclust._plugins import get_registry
from hypothesis import given, settings
from hypothesis import strategies as st

PRESETS = ["ulge", "oulge", "anchor-spectral", "uspec"]


def _fit(preset, X, k=10, seed=0, **over):
    spec = dict(get_registry().presets.get(preset))
    spec["anchors"] = dict(spec["anchors"], n_anchors=120)
    spec["starts"] = 1  # the parts of one run, compared with their chunked forms at ctx
    for key, value in over.items():
        spec[key] = {**spec[key], **value}
    pipe = compose(spec)
    ctx = Context(seed=seed)
    return pipe, ctx, pipe.run(X, n_clusters=k, ctx=ctx)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("rows", [1797, 211])
def test_chunked_parts_equal_in_memory(preset, rows, digits):
    """Graph rows from ``prepare_chunked`` + ``transform`` and the solution from
    ``solve_chunked`` + ``lift_rows`` equal :meth:`build` and :meth:`solve` (the slow
    obvious reference: everything at once) for one block, several, and many small ones."""
    X, _ = digits
    pipe, ctx, res = _fit(preset, X)
    template = pipe.graph.prepare_chunked(res.anchors, InMemoryChunks(X, block_rows=rows), ctx)
    assert template.n == 0
    Z = sp.vstack([pipe.graph.transform(X[i:i + rows], template)
                   for i in range(0, X.shape[0], rows)]).toarray()
    np.testing.assert_allclose(Z, res.graph.Z.toarray(), rtol=1e-10, atol=1e-13)
    chunks = InMemoryChunks(X, sp.csr_array(Z), block_rows=rows)
    sol = pipe.solver.solve_chunked(chunks, 10, ctx)
    assert sol.n == 0
    emb = np.vstack([pipe.solver.lift_rows(sol, b).embedding for b in chunks.blocks()])
    ref = res.solution.embedding
    if preset == "oulge":  # Eq. 24's orthonormal basis comes from an SVD: signs are free
        emb = emb * np.sign(np.sum(emb * ref, axis=0) + (np.sum(emb * ref, axis=0) == 0))
    np.testing.assert_allclose(emb, ref, atol=1e-9)


def test_spectral_with_rows_not_summing_to_one(digits):
    """knr-bipartite's unnormalised rows make LSC scale by ``D^{-1/2}``: the chunked sums
    decide that globally as :meth:`solve` does."""
    X, _ = digits
    pipe, ctx, res = _fit("uspec", X, solver={"name": "spectral"},
                          rounding={"name": "kmeans", "normalize_rows": True})
    chunks = InMemoryChunks(X, res.graph.Z, block_rows=400)
    sol = pipe.solver.solve_chunked(chunks, 10, ctx)
    assert sol.info["chunked"]["scale_degrees"]
    emb = np.vstack([pipe.solver.lift_rows(sol, b).embedding for b in chunks.blocks()])
    np.testing.assert_allclose(emb, res.solution.embedding, atol=1e-9)


def test_given_sigma_needs_no_pass(digits):
    """A given bandwidth is used as is: the chunks are never summed."""
    X, _ = digits

    class NoSums(InMemoryChunks):
        def sum(self, fn, *args):
            raise AssertionError("summed")

    pipe, ctx, res = _fit("anchor-spectral", X, graph={"sigma": 2.5})
    template = pipe.graph.prepare_chunked(res.anchors, NoSums(X), ctx)
    assert template.state.sigma == 2.5


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=8), st.integers(0, 2**31 - 1))
def test_block_sums_do_not_depend_on_the_cut(sizes, seed):
    """Σ over any cut of the rows into blocks is the sum over all rows (to round-off), for
    arrays, sparse matrices, numbers and tuples/dicts of them (:func:`add_sums`)."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    X = rng.normal(size=(n, 3))
    Z = sp.random_array((n, 5), density=0.4, rng=rng, format="csr")

    def stats(block):
        return {"x": block.X.sum(axis=0), "g": sp.csr_array(block.Z.T @ block.Z),
                "pair": (block.X.shape[0], float((block.X ** 2).sum()))}

    total = None
    start = 0
    for size in sizes:
        chunk = InMemoryChunks(X[start:start + size], Z[start:start + size], block_rows=size)
        value = chunk.sum(stats)
        total = value if total is None else add_sums(total, value)
        start += size
    np.testing.assert_allclose(total["x"], X.sum(axis=0), atol=1e-12)
    np.testing.assert_allclose(total["g"].toarray(), (Z.T @ Z).toarray(), atol=1e-12)
    assert total["pair"][0] == n
    assert np.isclose(total["pair"][1], float((X ** 2).sum()), rtol=1e-12)


def test_sample_size_rule():
    """``min(n, max(per_unit·units, minimum))``: all rows up to the floor, then linear in
    the units, never more than n."""
    assert sample_size(1_000, 1000, per_unit=20, minimum=50_000) == 1_000
    assert sample_size(70_000, 1000, per_unit=20, minimum=50_000) == 50_000
    assert sample_size(10**7, 4000, per_unit=20, minimum=50_000) == 80_000
    assert sample_size(10**7, 10, per_unit=1000, minimum=100_000) == 100_000
    anchors = {"per_unit": ANCHOR_SAMPLE_PER_ANCHOR, "minimum": ANCHOR_SAMPLE_MIN}
    assert sample_size(70_000, 1000, **anchors) == 70_000  # MNIST-70k: every row
    assert sample_size(2 * 10**7, 1000, **anchors) == 100_000
    assert sample_size(2 * 10**7, 8000, **anchors) == 160_000


def test_kinds_declare_chunkwise():
    """Every part kind has the class variable (default False); the built-in chunk-wise
    parts are the documented ones."""
    registry = get_registry()
    declared = {kind: sorted(r.name for r in registry.parts(kind).records()
                             if r.cls.chunkwise)
                for kind in ("anchors", "graph", "adapter", "solver", "rounding", "consensus")}
    assert declared["graph"] == ["adaptive-anchor", "gaussian-anchor", "knr-bipartite",
                                 "one-anchor", "ongr-anchor", "sample-knn"]
    assert declared["solver"] == ["features", "ongr", "spectral", "tcut", "ulge"]
    assert {"bkhk", "capped", "hybrid", "kmeans", "random", "sample"} <= set(declared["anchors"])
    assert {"kmeans", "argmax", "genie", "gmm"} <= set(declared["rounding"])
    assert declared["consensus"] == ["tcut"]
    assert declared["adapter"] == ["anchor-level", "on-sample"]
    assert not any(r.cls.chunkwise for r in registry.parts("metric").records())
    assert gc.Part.chunkwise is False
