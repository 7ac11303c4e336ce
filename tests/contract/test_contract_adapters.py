"""Every registered adapter honours the adapter contract.

The contract-test kit (:mod:`graphclust.testing.adapter`) checks the adapter kind with
every other kind; this module states the same contract as plain assertions, an
independent second reading of it, and runs it over every installed adapter, on the
kit's fixture graphs and with the kit's solver and roundings:

* declarations: subclasses :class:`graphclust.Adapter`, decorated with
  :func:`graphclust.part`, a valid name and a summary; ``accepts`` a non-empty frozenset
  of graph kinds, ``produces`` one graph kind, ``provides_features`` and
  ``out_of_sample`` bools; ``adapt`` and ``lift`` implemented;
* ``adapt`` on every accepted kind: an :class:`graphclust.Adapted` whose graph is of the
  declared kind, features with one row per vertex (present when ``provides_features``
  and the graph has anchors), ``1 <= n_clusters <= min(k, vertices)``; the input graph is
  not modified; the same input gives the same result;
* ``lift``: one row per point of the input graph, the same solution parts as the
  solver's (embedding and/or soft), a soft part still nonnegative; with
  ``out_of_sample`` the lifted solution is extendable and ``predict`` runs end to end.
"""

from __future__ import annotations

import attrs
import graphclust
import numpy as np
import pytest
from graphclust._registry import NAME_PATTERN
from graphclust.testing import (
    KitAnchorGraph,
    KitAnchors,
    KitArgmaxRounding,
    KitSolver,
    make_fixture,
)

ADAPTERS = graphclust.get_registry().adapters.records()
pytestmark = pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")


@pytest.mark.parametrize("record", ADAPTERS, ids=[r.name for r in ADAPTERS])
def test_adapter_declarations(record):
    cls = record.cls
    assert issubclass(cls, graphclust.Adapter) and cls.kind == "adapter"
    assert NAME_PATTERN.match(cls.name) and cls.name == record.name
    assert attrs.has(cls) and "__attrs_attrs__" in cls.__dict__
    assert cls.summary()
    assert cls.adapt is not graphclust.Adapter.adapt
    assert cls.lift is not graphclust.Adapter.lift
    assert isinstance(cls.accepts, frozenset) and cls.accepts
    assert cls.accepts <= {"affinity", "anchor"}
    assert cls.produces in ("affinity", "anchor")
    assert isinstance(cls.provides_features, bool) and isinstance(cls.out_of_sample, bool)


def _graph_state(graph):
    data = graph.Z if isinstance(graph, graphclust.AnchorGraph) else graph.adjacency
    return data.data.copy(), data.indices.copy()


@pytest.mark.parametrize("record", ADAPTERS, ids=[r.name for r in ADAPTERS])
def test_adapter_adapts_and_lifts_every_accepted_kind(record):
    fx = make_fixture()
    for kind in sorted(record.cls.accepts):
        graph = fx.graph(kind)
        before = _graph_state(graph)
        adapter = record.cls()
        adapted = adapter.adapt(graph, fx.X, fx.n_clusters, graphclust.Context(seed=0))
        again = record.cls().adapt(graph, fx.X, fx.n_clusters, graphclust.Context(seed=0))
        after = _graph_state(graph)
        assert all(np.array_equal(a, b) for a, b in zip(before, after)), "adapt modified it"
        assert isinstance(adapted, graphclust.Adapted)
        assert adapted.graph.kind == record.cls.produces
        np.testing.assert_array_equal(adapted.graph.to_dense(), again.graph.to_dense())
        n_vertices = adapted.graph.n
        if adapted.X is not None:
            assert adapted.X.shape[0] == n_vertices
        if record.cls.provides_features and getattr(graph, "anchors", True) is not None:
            assert adapted.X is not None
        assert 1 <= adapted.n_clusters <= min(fx.n_clusters, n_vertices)
        sol = KitSolver().solve(adapted.graph, adapted.X, adapted.n_clusters,
                                graphclust.Context(seed=0))
        lifted = adapter.lift(sol, graph, adapted, graphclust.Context(seed=0))
        assert isinstance(lifted, graphclust.Solution)
        assert lifted.n == graph.n
        assert lifted.provides == sol.provides
        if lifted.soft is not None:
            assert lifted.soft.min() >= 0
        if record.cls.out_of_sample:
            assert lifted.extendable


@pytest.mark.parametrize("record", [r for r in ADAPTERS if "anchor" in r.cls.accepts],
                         ids=[r.name for r in ADAPTERS if "anchor" in r.cls.accepts])
def test_adapter_runs_in_an_estimator_and_predicts_when_it_says_so(record):
    fx = make_fixture()
    spec = {"anchors": KitAnchors(n_anchors=12), "graph": KitAnchorGraph(),
            "adapter": record.cls(), "solver": KitSolver(), "rounding": KitArgmaxRounding()}
    model = graphclust.GraphClustering(spec, n_clusters=fx.n_clusters, random_state=0)
    model.fit(fx.X)
    assert model.labels_.shape == (fx.X.shape[0],)
    assert hasattr(model, "predict") == record.cls.out_of_sample
    if record.cls.out_of_sample:
        assert model.predict(fx.X[:9]).shape == (9,)
