"""The ``anchor-level`` adapter chunk-wise: DCD on anchors (``bkhk-dcd``) and any other
affinity solver on the ``m x m`` graph ``ZᵀZ = Σ_b Z_bᵀ Z_b``, labels lifted per block.

The protocol tests (:class:`~graphclust.chunks.InMemoryChunks`) need no Dask; the
cluster tests run on the module's 2-worker ``LocalCluster`` and are skipped without the
``[dask]`` extra.
"""

from __future__ import annotations

import graphclust as gc
import numpy as np
import pytest
import scipy.sparse as sp
from graphclust import SpecError
from graphclust.chunks import InMemoryChunks
from graphclust._composer import compose
from graphclust._dask._refuse import check_chunkwise
from graphclust._parts import Context
from graphclust_plugins.common.adapter_anchor_level import AnchorLevelAdapter
from hypothesis import given, settings
from hypothesis import strategies as st

#: BKHK anchors + adaptive-neighbour anchor graph, as ``bkhk-dcd``, with fewer anchors
SMALL_SPEC = {"anchors": {"name": "bkhk", "n_anchors": 128},
              "graph": {"name": "adaptive-anchor", "n_neighbors": 5},
              "adapter": "anchor-level"}
SPECTRAL = {**SMALL_SPEC, "solver": {"name": "spectral"}, "rounding": {"name": "kmeans"}}
DCD = {**SMALL_SPEC, "solver": {"name": "dcd", "alphas": [1.2, 2.0, 5.0]},
       "rounding": {"name": "argmax"}}


def _random_Z(rng, n: int, m: int, s: int) -> sp.csr_array:
    """Row-stochastic ``n x m`` with ``s`` nonzeros a row (some anchors possibly unused)."""
    idx = np.stack([rng.choice(m, size=s, replace=False) for _ in range(n)])
    w = rng.random((n, s)) + 0.05
    w /= w.sum(axis=1, keepdims=True)
    return sp.csr_array((w.ravel(), idx.ravel(), np.arange(0, n * s + 1, s)), shape=(n, m))


@pytest.fixture(scope="module")
def digits_run(digits):
    """The in-memory run of the small anchor-level spectral spec on the digits."""
    X, _ = digits
    pipe = compose(SPECTRAL)
    ctx = Context(seed=0)
    return X, pipe, ctx, pipe.run(X, n_clusters=10, ctx=ctx)


# -- the protocol, in memory ------------------------------------------------------------

@pytest.mark.parametrize("rows", [1797, 600, 211, 7])
def test_chunked_gram_equals_anchor_level(rows, digits_run):
    """``adapt_chunked`` over any cut of the rows gives the dense reference ``ZᵀZ``
    (:meth:`AnchorGraph.anchor_level`), the anchors as features and ``min(k, m)``."""
    X, pipe, ctx, res = digits_run
    graph = res.graph
    template = pipe.graph.prepare_chunked(res.anchors, InMemoryChunks(X, block_rows=rows), ctx)
    assert template.n == 0
    chunks = InMemoryChunks(X, graph.Z, block_rows=rows)
    adapted = pipe.adapter.adapt_chunked(template, chunks, 10, ctx)
    Zd = graph.Z.toarray()
    np.testing.assert_allclose(adapted.graph.to_dense(), Zd.T @ Zd, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(adapted.graph.to_dense(), graph.anchor_level().to_dense(),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(adapted.X, res.anchors.points)
    assert adapted.n_clusters == 10
    assert pipe.adapter.adapt_chunked(template, chunks, 500, ctx).n_clusters == 128


@pytest.mark.parametrize("rows", [1797, 211])
def test_lift_rows_equal_the_in_memory_lift(rows, digits_run):
    """``lift`` on the zero-row graph keeps the per-anchor values, and ``lift_rows`` of
    every block stacks to the in-memory lifted solution ``Z F``."""
    X, pipe, ctx, res = digits_run
    template = pipe.graph.prepare_chunked(res.anchors, InMemoryChunks(X, block_rows=rows), ctx)
    chunks = InMemoryChunks(X, res.graph.Z, block_rows=rows)
    adapted = pipe.adapter.adapt_chunked(template, chunks, 10, ctx)
    inner = pipe.solver.solve(adapted.graph, adapted.X, adapted.n_clusters, ctx)
    zero = pipe.adapter.lift(inner, template, adapted, ctx)
    assert zero.n == 0 and zero.anchor_embedding.shape == (128, inner.embedding.shape[1])
    rows_ = np.vstack([pipe.adapter.lift_rows(zero, b).embedding for b in chunks.blocks()])
    np.testing.assert_allclose(rows_, res.solution.embedding, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), m=st.integers(2, 12), s=st.integers(1, 4),
       rows=st.integers(1, 70), seed=st.integers(0, 2**16))
def test_property_block_sums_are_the_anchor_level_graph(n, m, s, rows, seed):
    """For any row-stochastic ``Z`` and any block size: ``Σ_b Z_bᵀ Z_b = ZᵀZ`` (dense
    reference), symmetric and nonnegative, with degrees ``Zᵀ1`` (rows of Z sum to one);
    the lifted rows stack to ``Z F``."""
    rng = np.random.default_rng(seed)
    Z = _random_Z(rng, n, m, min(s, m))
    X = rng.normal(size=(n, 2))
    adapter = AnchorLevelAdapter()
    template = gc.AnchorGraph(sp.csr_array((0, m)), anchors=gc.Anchors(rng.normal(size=(m, 2))))
    adapted = adapter.adapt_chunked(template, InMemoryChunks(X, Z, block_rows=rows), 3,
                                    Context(seed=0))
    G = adapted.graph.to_dense()
    Zd = Z.toarray()
    np.testing.assert_allclose(G, Zd.T @ Zd, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(G, G.T, atol=1e-14)
    assert (G >= 0).all()
    np.testing.assert_allclose(adapted.graph.degrees, Zd.sum(axis=0), rtol=1e-10, atol=1e-14)
    assert adapted.n_clusters == min(3, m)
    F = rng.random((m, 3))
    zero = gc.Solution(soft=np.zeros((0, 3)), anchor_soft=F)
    lifted = np.vstack([adapter.lift_rows(zero, b).soft
                        for b in InMemoryChunks(X, Z, block_rows=rows).blocks()])
    np.testing.assert_allclose(lifted, Zd @ F, atol=1e-12)


# -- what is refused, and what is not --------------------------------------------------

class _PlainLevel(AnchorLevelAdapter):
    """The anchor-level adapter without its chunk-wise form."""

    name = "plain-level"
    chunkwise = False


def test_adapter_without_chunked_form_is_refused_by_name():
    pipe = compose(DCD)
    check_chunkwise(pipe)  # anchor-level + dcd (not chunk-wise itself) runs
    pipe.adapter = _PlainLevel()
    with pytest.raises(SpecError) as err:
        check_chunkwise(pipe)
    msg = str(err.value)
    assert "adapter 'plain-level' does not run chunk-wise" in msg
    assert "chunk-wise adapters: anchor-level" in msg
    assert ("chunk-wise solvers work on the anchor graph directly: features, ongr, "
            "spectral, tcut, ulge") in msg
    assert "solver 'dcd'" not in msg  # the adapter is the one problem named


def test_still_refused_with_an_adapter():
    """The adapter does not lift the other stages' rules: a non-chunk-wise anchor
    selector or rounding is still named."""
    pipe = compose(DCD)
    pipe.rounding = type("Spa", (gc.Rounding,), {"name": "spa-like", "needs": "soft"})()
    with pytest.raises(SpecError, match="rounding 'spa-like' does not run on row chunks"):
        check_chunkwise(pipe)


def test_describe_shows_the_adapter_chunkwise(capsys):
    from graphclust.cli import main

    assert main(["describe", "anchor-level", "--kind", "adapter"]) == 0
    assert "chunkwise: True" in capsys.readouterr().out


# -- on a real distributed LocalCluster -------------------------------------------------

def _pair(spec, X, Xd, k=10, seed=0, **kw):
    mem = gc.GraphClustering(spec, n_clusters=k, random_state=seed, **kw).fit(X)
    chunked = gc.GraphClustering(spec, n_clusters=k, random_state=seed, **kw).fit(Xd)
    return mem, chunked


@pytest.mark.slow  # 3.5 s
def test_bkhk_dcd_preset_equals_in_memory(digits, as_dask, dask_client):
    """The ``bkhk-dcd`` preset as it is (1024 BKHK anchors, DCD on ``ZᵀZ``, argmax) on
    six chunks: the in-memory labels, soft rows to round-off, m-sized state on the
    client, and ``predict`` on NumPy and Dask input giving the fitted labels."""
    import dask.array as da

    X, _ = digits
    Xd = as_dask(X, 300)
    mem, chunked = _pair("bkhk-dcd", X, Xd)
    assert isinstance(chunked.labels_, da.Array) and chunked.labels_.chunks == (Xd.chunks[0],)
    labels = chunked.labels_.compute()
    np.testing.assert_array_equal(labels, mem.labels_)
    np.testing.assert_array_equal(chunked.anchors_.points, mem.anchors_.points)
    np.testing.assert_allclose(chunked.embedding_.compute(), mem.embedding_, atol=1e-9)
    sol = chunked.solution_
    assert sol.soft.shape[0] == 0 and sol.anchor_soft.shape == mem.solution_.anchor_soft.shape
    np.testing.assert_allclose(sol.anchor_soft, mem.solution_.anchor_soft, atol=1e-9)
    assert sol.info["adapter"] == "anchor-level" and sol.info["anchor_graph_n"] == 1024
    assert {"anchors", "graph", "adapter", "solver", "rounding"} <= set(chunked.timings_)
    np.testing.assert_array_equal(chunked.predict(X), labels)
    np.testing.assert_array_equal(chunked.predict(Xd).compute(), labels)


def test_anchor_level_spectral_equals_in_memory(digits, as_dask, dask_client):
    """Any affinity solver runs on the chunk-summed ``m x m`` graph: LSC's spectral
    solver with k-means rounding gives the in-memory labels and embedding."""
    X, _ = digits
    mem, chunked = _pair(SPECTRAL, X, as_dask(X, 250))
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)
    np.testing.assert_allclose(chunked.embedding_.compute(), mem.embedding_, atol=1e-9)
    np.testing.assert_allclose(chunked.solution_.anchor_embedding,
                               mem.solution_.anchor_embedding, atol=1e-9)


@pytest.mark.parametrize("scale", ["standard", "l2"])
def test_small_dcd_with_scale_and_uneven_chunks(scale, digits, dask_client):
    """The small DCD spec with a column or row ``scale`` on uneven chunks (one of a
    single row): the in-memory labels."""
    import dask.array as da

    X, _ = digits
    Xd = da.from_array(X, chunks=((1, 700, 96, 1000), (64,)))
    mem, chunked = _pair({**DCD, "scale": scale}, X, Xd)
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)


# -- the contract kit's 'chunked' check --------------------------------------------------

@gc.part
class _FirstBlockOnly(AnchorLevelAdapter):
    """An anchor-level adapter whose chunked graph forgets every block but the first."""

    name = "first-block-only"

    def adapt_chunked(self, graph, chunks, n_clusters, ctx):
        first = next(iter(chunks.blocks()))
        return super().adapt_chunked(graph, InMemoryChunks(first.X, first.Z,
                                                           block_rows=first.X.shape[0]),
                                     n_clusters, ctx)


def test_contract_kit_checks_a_chunkwise_adapter():
    """The kit runs 'chunked' for a chunk-wise adapter: passes for ``anchor-level``, and
    names the check for one whose block sum is wrong."""
    from graphclust.testing import ContractViolation, iter_checks

    checks = {c.name: c for c in iter_checks(AnchorLevelAdapter)}
    assert "chunked" in checks
    checks["chunked"]()
    broken = {c.name: c for c in iter_checks(_FirstBlockOnly)}
    with pytest.raises(ContractViolation, match="adapt_chunked\\(\\) differs from adapt"):
        broken["chunked"]()


def test_ensemble_of_dcd_on_anchors_members(digits, as_dask, dask_client):
    """An ensemble whose members are DCD on anchors (the adapter inside each chunked
    member) under the tcut consensus: every member's labels and the consensus labels
    equal the in-memory run."""
    X, _ = digits
    spec = {"ensemble": {"members": [{"preset": "bkhk-dcd", "count": 2,
                                      "n_clusters": [8, 14], "metrics": [],
                                      "anchors": {"n_anchors": 64},
                                      "solver": {"alphas": [2.0]}}],
                         "consensus": {"name": "tcut"}}}
    mem, chunked = _pair(spec, X, as_dask(X, 400))
    for got, want in zip(chunked.result_.members, mem.result_.members, strict=True):
        np.testing.assert_array_equal(got.labels.compute(), want.labels)
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)


def test_precomputed_anchor_graph_with_the_adapter_is_refused(digits, as_dask):
    """A given ``Z`` cannot be cut into chunks: the graph is named (the adapter and the
    solver behind it are not), before anything runs."""
    X, _ = digits
    Z = _random_Z(np.random.default_rng(0), X.shape[0], 50, 3)
    model = gc.GraphClustering({"adapter": "anchor-level", "solver": {"name": "dcd"},
                                "rounding": {"name": "argmax"}}, graph=Z, n_clusters=10)
    model.fit(X)  # in memory it runs
    with pytest.raises(SpecError) as err:
        model.fit(as_dask(X, 300))
    msg = str(err.value)
    assert "(1 problem)" in msg and "- graph: a precomputed graph cannot be split" in msg
