"""The ``anchor-level`` adapter and the typed fitted state of the common parts."""

from __future__ import annotations

import copy
import pickle

import attrs
import graphclust
import numpy as np
import pytest
import scipy.sparse as sp
from graphclust_plugins.common.adapter_anchor_level import AnchorLevelAdapter
from graphclust_plugins.common.anchors_random import RandomAnchors, RandomAnchorState
from graphclust_plugins.common.graph_gaussian_anchor import GaussianAnchorGraph, GaussianAnchorState
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

pytestmark = pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")


def _random_Z(rng: np.random.Generator, n: int, m: int, s: int) -> sp.csr_array:
    """Row-stochastic n x m with s nonzeros a row (some anchors possibly unused)."""
    idx = np.stack([rng.choice(m, size=s, replace=False) for _ in range(n)])
    w = rng.random((n, s)) + 0.05
    w /= w.sum(axis=1, keepdims=True)
    return sp.csr_array((w.ravel(), idx.ravel(), np.arange(0, n * s + 1, s)), shape=(n, m))


def test_registered_in_common_with_its_declarations():
    reg = graphclust.get_registry()
    assert reg.adapters.get("anchor-level") is AnchorLevelAdapter
    assert reg.adapters.record("anchor-level").provider.bundle == "common"
    assert AnchorLevelAdapter.accepts == frozenset({"anchor"})
    assert AnchorLevelAdapter.produces == "affinity"
    assert AnchorLevelAdapter.provides_features and AnchorLevelAdapter.out_of_sample


def test_adapt_hands_the_dense_gram_the_anchors_and_clamped_k(rng):
    X = rng.standard_normal((50, 3))
    anchors = graphclust.Anchors(X[:7])
    graph = graphclust.AnchorGraph(_random_Z(rng, 50, 7, 3), anchors)
    adapted = AnchorLevelAdapter().adapt(graph, X, 10, graphclust.Context())
    Zd = graph.Z.toarray()
    np.testing.assert_allclose(adapted.graph.to_dense(), Zd.T @ Zd, atol=1e-14)
    np.testing.assert_allclose(adapted.graph.degrees, Zd.sum(axis=0), atol=1e-12)  # = Λ
    assert adapted.X is anchors.points
    assert adapted.n_clusters == 7  # min(k, m)
    bare = graphclust.AnchorGraph(graph.Z)  # a precomputed Z has no anchors: no features
    assert AnchorLevelAdapter().adapt(bare, X, 3, graphclust.Context()).X is None


def test_adapt_refuses_an_affinity_graph():
    with pytest.raises(graphclust.InputError, match="adapter 'anchor-level' needs an anchor"):
        AnchorLevelAdapter().adapt(graphclust.AffinityGraph(np.ones((3, 3))), None, 2,
                                   graphclust.Context())


@settings(max_examples=40, deadline=None)
@given(n=st.integers(5, 40), m=st.integers(2, 12), k=st.integers(1, 5),
       seed=st.integers(0, 2**31 - 1), with_embedding=st.booleans())
def test_lift_is_Z_times_per_anchor_values_and_keeps_the_simplex(n, m, k, seed,
                                                                 with_embedding):
    rng = np.random.default_rng(seed)
    graph = graphclust.AnchorGraph(_random_Z(rng, n, m, min(3, m)))
    F = rng.random((m, k)) + 1e-3
    F /= F.sum(axis=1, keepdims=True)
    E = rng.standard_normal((m, 2)) if with_embedding else None
    sol = graphclust.Solution(soft=F, embedding=E, n_iter=7, converged=False,
                              objective=np.arange(3.0), info={"kl": 1.5})
    adapter = AnchorLevelAdapter()
    adapted = adapter.adapt(graph, None, k, graphclust.Context())
    lifted = adapter.lift(sol, graph, adapted, graphclust.Context())
    Zd = graph.Z.toarray()
    np.testing.assert_allclose(lifted.soft, Zd @ F, atol=1e-12)
    np.testing.assert_allclose(lifted.soft.sum(axis=1), 1.0, atol=1e-12)
    assert lifted.soft.min() >= 0
    if with_embedding:
        np.testing.assert_allclose(lifted.embedding, Zd @ E, atol=1e-12)
        np.testing.assert_array_equal(lifted.anchor_embedding, E)
    else:
        assert lifted.embedding is None and lifted.anchor_embedding is None
    np.testing.assert_array_equal(lifted.anchor_soft, F)
    assert lifted.extendable
    assert (lifted.n_iter, lifted.converged) == (7, False)
    np.testing.assert_array_equal(lifted.objective, np.arange(3.0))
    assert lifted.info == {"kl": 1.5, "adapter": "anchor-level", "anchor_graph_n": m}
    # a new point placed on an existing point's anchor row gets that point's lifted row
    new = lifted.extend(graph.Z[[0]], None)
    np.testing.assert_allclose(new.soft, lifted.soft[[0]], atol=1e-12)


def test_composer_offers_the_adapter_for_an_affinity_only_solver():
    reg = graphclust.get_registry()
    affinity_only = [r.name for r in reg.solvers.records() if r.cls.accepts == {"affinity"}]
    if not affinity_only:
        pytest.skip("no installed solver accepts affinity graphs only")
    spec = {"anchors": {"name": "random", "n_anchors": 10},
            "graph": {"name": "gaussian-anchor"}, "solver": {"name": affinity_only[0]},
            "rounding": {"name": "argmax"}}
    problems = {p.loc: p.msg for p in graphclust.validate_spec(spec)}
    assert 'set adapter = "anchor-level" (runs the solver on the m x m anchor-level graph' \
        in problems["solver"]
    assert "graph builder 'gaussian-anchor' produces an anchor graph" in problems["solver"]
    spec["adapter"] = {"name": "anchor-level"}
    assert "solver" not in {p.loc for p in graphclust.validate_spec(spec)}
    spec["graph"], spec["anchors"] = {"name": "knn"}, None
    problems = {p.loc: p.msg for p in graphclust.validate_spec(spec)}
    assert "adapter 'anchor-level' accepts anchor graphs, but graph builder 'knn'" \
        in problems["adapter"]
    assert "remove the adapter" in problems["adapter"]


def test_pipeline_given_an_adapter_name_is_refused_and_points_to_a_part():
    with pytest.raises(TypeError, match="must be an Adapter part.*graphclust.compose"):
        graphclust.Pipeline(adapter="anchor-level")
    pipe = graphclust.Pipeline(adapter=graphclust.resolve_part({"name": "anchor-level"},
                                                               "adapter"))
    assert isinstance(pipe.adapter, AnchorLevelAdapter)


# -- typed fitted state ---------------------------------------------------------------

def test_state_fields_are_typed_and_frozen(rng):
    X = rng.standard_normal((40, 3))
    a = RandomAnchors(n_anchors=8).select(X, graphclust.Context(seed=2))
    g = GaussianAnchorGraph(n_neighbors=3).build(X, a, graphclust.Context())
    assert isinstance(a.state, RandomAnchorState)
    assert isinstance(g.state, GaussianAnchorState)
    assert g.state.n_neighbors == 3 and g.state.sigma > 0
    assert "sigma" not in g.info and "indices" not in a.info
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        g.state.sigma = 1.0
    with pytest.raises(TypeError, match="must be a graphclust.FittedState"):
        graphclust.AnchorGraph(g.Z, a, state={"sigma": 1.0})
    assert RandomAnchorState(np.arange(3)) == RandomAnchorState(np.arange(3))
    assert RandomAnchorState(np.arange(3)) != RandomAnchorState(np.arange(1, 4))


def test_transform_without_the_state_names_the_part(rng):
    X = rng.standard_normal((20, 2))
    a = graphclust.Anchors(X[:4])
    g = GaussianAnchorGraph().build(X, a, graphclust.Context())
    foreign = graphclust.AnchorGraph(g.Z, a)  # built elsewhere: no GaussianAnchorState
    with pytest.raises(graphclust.InputError,
                       match="graph 'gaussian-anchor'.*no fitted state.*GaussianAnchorState"):
        GaussianAnchorGraph().transform(X, foreign)


def test_transform_uses_the_fitted_sigma_not_a_recomputed_one(rng):
    X = rng.standard_normal((60, 3))
    a = RandomAnchors(n_anchors=10).select(X, graphclust.Context(seed=0))
    g = GaussianAnchorGraph(n_neighbors=4).build(X, a, graphclust.Context())
    far = X[:5] * 50  # would change a mean-distance bandwidth if it were recomputed
    got = GaussianAnchorGraph(n_neighbors=4).transform(far, g).toarray()
    want = GaussianAnchorGraph(n_neighbors=4, sigma=g.state.sigma).build(
        far, a, graphclust.Context()).Z.toarray()
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_state_round_trips_through_predict_pickle_and_clone(rng):
    X = np.vstack([rng.normal(c, 0.3, (40, 2)) for c in (0, 3, 6)])
    X_new = rng.normal(3, 2, (25, 2))
    model = graphclust.GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                                       anchors={"name": "random", "n_anchors": 30}).fit(X)
    state = model.graph_.state
    assert isinstance(state, GaussianAnchorState)
    assert isinstance(model.anchors_.state, RandomAnchorState)
    pred = model.predict(X_new)
    for twin in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        assert twin.graph_.state == state
        np.testing.assert_array_equal(twin.predict(X_new), pred)
    refit = clone(model).fit(X)
    assert refit.graph_.state == state
    assert refit.anchors_.state == model.anchors_.state
    np.testing.assert_array_equal(refit.predict(X_new), pred)
    # the state, not the builder's parameters, places new points: a different sigma param
    # on the fitted builder leaves predict unchanged
    model.pipeline_.graph.sigma = 123.0
    np.testing.assert_array_equal(model.predict(X_new), pred)
