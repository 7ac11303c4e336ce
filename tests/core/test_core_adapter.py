"""Adapters as parts: composer checks from declarations, a third-party adapter end to end."""

from typing import ClassVar

import graphclust as gc
import numpy as np
import pytest
from graphclust import IncompatiblePartsError, SpecError, UnknownPartError, compose
from graphclust._spec import merge_overrides
from sklearn.base import clone

pytestmark = pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")

ANCHOR = {"anchors": {"name": "toy-anchors", "n_anchors": 6},
          "graph": {"name": "toy-anchor-graph"}, "solver": {"name": "toy-solver"},
          "rounding": {"name": "toy-argmax"}}
AFFINITY = {"graph": {"name": "toy-affinity"}, "solver": {"name": "toy-solver"},
            "rounding": {"name": "toy-argmax"}}


@gc.part
class ToyAnchorSolver(gc.Solver):
    """Uniform soft assignment; works on anchor graphs only."""

    name: ClassVar[str] = "toy-anchor-solver"
    accepts: ClassVar[frozenset] = frozenset({"anchor"})
    provides: ClassVar[frozenset] = frozenset({"soft"})

    def solve(self, graph, X, n_clusters, ctx):
        return gc.Solution(soft=np.full((graph.n, n_clusters), 1.0 / n_clusters))


@gc.part
class ToyFeatureSolver(gc.Solver):
    """Needs features; on affinity graphs."""

    name: ClassVar[str] = "toy-feature-solver"
    accepts: ClassVar[frozenset] = frozenset({"affinity"})
    needs_features: ClassVar[bool] = True
    provides: ClassVar[frozenset] = frozenset({"soft"})

    def solve(self, graph, X, n_clusters, ctx):
        return gc.Solution(soft=np.ones((graph.n, n_clusters)))


@gc.part
class ToySpreadSolver(gc.Solver):
    """Soft assignment A E of a fixed one-hot E (i mod k): reads every graph entry."""

    name: ClassVar[str] = "toy-spread"
    accepts: ClassVar[frozenset] = frozenset({"affinity"})
    provides: ClassVar[frozenset] = frozenset({"soft"})

    def solve(self, graph, X, n_clusters, ctx):
        assert isinstance(graph, gc.AffinityGraph)
        E = np.zeros((graph.n, n_clusters))
        E[np.arange(graph.n), np.arange(graph.n) % n_clusters] = 1.0
        return gc.Solution(soft=graph.matvec(E) + 1e-12)


@pytest.fixture
def reg(toy_registry):
    toy_registry.solvers.add(ToyAnchorSolver)
    toy_registry.solvers.add(ToyFeatureSolver)
    toy_registry.solvers.add(ToySpreadSolver)
    return toy_registry


def problems(spec, registry):
    with pytest.raises(SpecError) as info:
        compose(spec, registry)
    return {p.loc: p.msg for p in info.value.problems}, info.value


# -- the spec ----------------------------------------------------------------------

def test_adapter_by_name_or_table_gives_the_same_part(reg):
    ToyExplicitW = reg.adapters.get("toy-explicit-w")
    by_name = compose({**ANCHOR, "adapter": "toy-explicit-w"}, reg)
    by_table = compose({**ANCHOR, "adapter": {"name": "toy-explicit-w", "scale": 2.0}}, reg)
    assert isinstance(by_name.adapter, ToyExplicitW) and by_name.adapter.scale == 1.0
    assert isinstance(by_table.adapter, ToyExplicitW) and by_table.adapter.scale == 2.0
    assert list(by_name.named_parts()) == ["anchors", "graph", "adapter", "solver", "rounding"]
    assert "adapter='toy-explicit-w'" in repr(by_name)
    assert compose(ANCHOR | {"solver": {"name": "toy-anchor-solver"}}, reg).adapter is None


def test_adapter_given_as_a_part_instance(reg):
    pipe = compose({**ANCHOR, "adapter": reg.adapters.get("toy-explicit-w")(scale=3.0)}, reg)
    assert pipe.adapter.scale == 3.0


def test_unknown_adapter_lists_registered_ones(reg):
    with pytest.raises(UnknownPartError) as info:
        compose({**ANCHOR, "adapter": "toy-explicit"}, reg)
    (p,) = info.value.problems
    assert p.loc == "adapter.name"
    assert "unknown adapter 'toy-explicit'" in p.msg and "did you mean 'toy-explicit-w'" in p.msg
    assert "toy-drop-loops" in p.msg


def test_adapter_parameters_are_checked_with_their_path(reg):
    found, _ = problems({**ANCHOR, "adapter": {"name": "toy-explicit-w", "scal": 2}}, reg)
    assert "did you mean 'scale'" in found["adapter.scal"]
    found, _ = problems({**ANCHOR, "adapter": {"name": "toy-explicit-w", "scale": -1}}, reg)
    assert "adapter.scale" in found
    found, _ = problems({**ANCHOR, "adapter": 3}, reg)
    assert "must be a table" in found["adapter"]
    found, _ = problems({**ANCHOR, "adapter": {"name": "os.path"}}, reg)
    assert "import path" in found["adapter.name"]


def test_merge_overrides_expands_the_name_shorthand():
    spec = {"adapter": "anchor-level"}
    assert merge_overrides(spec, {"adapter": {"scale": 2}}) == {
        "adapter": {"name": "anchor-level", "scale": 2}}
    assert merge_overrides(spec, {"adapter": "other"}) == {"adapter": {"name": "other"}}
    assert merge_overrides(spec, {"adapter": None}) == {}
    assert spec == {"adapter": "anchor-level"}


# -- compatibility from declarations ---------------------------------------------

def test_adapter_refuses_a_graph_kind_it_does_not_accept(reg):
    with pytest.raises(IncompatiblePartsError) as info:
        compose({**AFFINITY, "adapter": "toy-explicit-w"}, reg)
    (p,) = info.value.problems
    assert p.loc == "adapter"
    assert "adapter 'toy-explicit-w' accepts anchor graphs" in p.msg
    assert "graph builder 'toy-affinity' produces an affinity graph" in p.msg
    assert "remove the adapter" in p.msg  # toy-solver takes the affinity graph as it is
    assert "Adapters that fit: toy-drop-loops" in p.msg


def test_solver_refuses_what_the_adapter_produces(reg):
    spec = {**ANCHOR, "solver": {"name": "toy-anchor-solver"}, "adapter": "toy-explicit-w"}
    with pytest.raises(IncompatiblePartsError) as info:
        compose(spec, reg)
    (p,) = info.value.problems
    assert p.loc == "solver"
    assert ("solver 'toy-anchor-solver' accepts anchor graphs, but adapter 'toy-explicit-w' "
            "turns the anchor graph of graph builder 'toy-anchor-graph' into an affinity "
            "graph") in p.msg
    assert "remove the adapter" in p.msg and "Adapters that fit: (none)" in p.msg


def test_solver_needing_features_refuses_an_adapter_without_them(reg):
    spec = {**AFFINITY, "solver": {"name": "toy-feature-solver"}, "adapter": "toy-drop-loops"}
    found, exc = problems(spec, reg)
    assert isinstance(exc, IncompatiblePartsError)
    assert "needs features, but adapter 'toy-drop-loops' hands it none" in found["solver"]
    assert "Adapters that fit: toy-explicit-w" in found["solver"]
    compose({**ANCHOR, "solver": {"name": "toy-feature-solver"}, "adapter": "toy-explicit-w"},
            reg)


def test_no_adapter_is_suggested_when_none_bridges(reg):
    found, _ = problems({**AFFINITY, "solver": {"name": "toy-anchor-solver"}}, reg)
    assert "set adapter" not in found["solver"]
    assert "Graph builders that fit: toy-anchor-graph" in found["solver"]


def test_a_third_party_adapter_kind_is_checked_generically(reg):
    @gc.part
    class AffinityToAnchor(gc.Adapter):
        """Pretends to turn an affinity graph into an anchor graph."""

        name: ClassVar[str] = "toy-to-anchor"
        accepts: ClassVar[frozenset] = frozenset({"affinity"})
        produces: ClassVar[str] = "anchor"

    reg.adapters.add(AffinityToAnchor)
    found, _ = problems({**AFFINITY, "solver": {"name": "toy-anchor-solver"}}, reg)
    assert 'set adapter = "toy-to-anchor" (pretends to turn an affinity graph' in found["solver"]
    compose({**AFFINITY, "solver": {"name": "toy-anchor-solver"}, "adapter": "toy-to-anchor"},
            reg)


def test_registry_refuses_a_non_adapter_in_the_adapter_catalog():
    with pytest.raises(TypeError, match="graphclust.Adapter"):
        gc.Registry().adapters.add(ToyAnchorSolver)


# -- running ------------------------------------------------------------------------

def _dense_reference(X, anchors_m, k, scale, X_new):
    """W = Z Λ⁻¹ Zᵀ formed densely; soft = W E; new rows z Λ⁻¹ Zᵀ soft."""
    U = X[:anchors_m]
    Zd = np.zeros((X.shape[0], anchors_m))
    Zd[np.arange(X.shape[0]), ((X[:, None, :] - U[None]) ** 2).sum(-1).argmin(1)] = 1
    lam = Zd.sum(0)
    inv = np.where(lam > 0, 1 / np.where(lam > 0, lam, 1), 0)
    W = scale * Zd @ np.diag(inv) @ Zd.T
    E = np.zeros((X.shape[0], k))
    E[np.arange(X.shape[0]), np.arange(X.shape[0]) % k] = 1
    soft = W @ E + 1e-12
    Zn = np.zeros((X_new.shape[0], anchors_m))
    Zn[np.arange(X_new.shape[0]), ((X_new[:, None, :] - U[None]) ** 2).sum(-1).argmin(1)] = 1
    return soft.argmax(1), (Zn @ (inv[:, None] * (Zd.T @ soft))).argmax(1)


def test_registered_third_party_adapter_fits_and_predicts(reg):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 2))
    X_new = rng.standard_normal((9, 2))
    spec = {**ANCHOR, "solver": {"name": "toy-spread"},
            "adapter": {"name": "toy-explicit-w", "scale": 2.0}}
    pipe = compose(spec, reg)
    res = pipe.run(X, n_clusters=3)
    labels, new = _dense_reference(X, 6, 3, 2.0, X_new)
    np.testing.assert_array_equal(res.labels, labels)
    assert pipe.can_predict()
    np.testing.assert_array_equal(pipe.predict(X_new, res), new)
    assert res.timings["adapter"] >= 0 and "adapter" in res.timings


def test_adapter_out_of_sample_decides_predict(reg):
    assert not compose({**AFFINITY, "adapter": "toy-drop-loops"}, reg).can_predict()
    # toy-solver is out_of_sample, but after an adapter the adapter's lifted solution counts
    assert compose({**ANCHOR, "adapter": "toy-explicit-w"}, reg).can_predict()


def test_adapter_refuses_a_given_graph_of_the_wrong_kind(reg):
    pipe = compose({**ANCHOR, "adapter": "toy-explicit-w"}, reg)
    graph = gc.AffinityGraph(np.ones((5, 5)))
    with pytest.raises(gc.InputError, match="adapter 'toy-explicit-w' accepts anchor graphs"):
        pipe.run(np.zeros((5, 2)), n_clusters=2, graph=graph)


def test_estimator_fits_and_predicts_with_an_adapter_instance(reg):
    X = np.random.default_rng(2).standard_normal((30, 2))
    spec = {sec: reg.parts(sec).get(ps["name"])() for sec, ps in ANCHOR.items()}
    spec["anchors"].set_params(n_anchors=6)
    spec["adapter"] = reg.adapters.get("toy-explicit-w")()
    model = gc.GraphClustering(spec, n_clusters=3, random_state=0).fit(X)
    assert model.pipeline_.adapter.name == "toy-explicit-w"
    assert model.predict(X[:7]).shape == (7,)
    params = model.get_params()
    assert params["adapter__scale"] == 1.0


def test_estimator_adapter_params_set_and_clone(monkeypatch, reg):
    import graphclust._plugins as plugins

    monkeypatch.setattr(plugins, "get_registry", lambda: reg)
    X = np.random.default_rng(3).standard_normal((30, 2))
    model = gc.GraphClustering({**ANCHOR, "adapter": "toy-explicit-w"}, n_clusters=3,
                               random_state=0)
    assert model.get_params()["adapter__scale"] == 1.0
    model.set_params(adapter__scale=4.0)
    assert model.get_params()["adapter__scale"] == 4.0
    twin = clone(model)
    assert twin.get_params()["adapter__scale"] == 4.0
    a, b = model.fit(X), twin.fit(X)
    assert a.pipeline_.adapter.scale == b.pipeline_.adapter.scale == 4.0
    np.testing.assert_array_equal(a.labels_, b.labels_)
    # None in a section parameter means "as the spec says"; overrides drop a section
    model.set_params(adapter="toy-drop-loops", graph={"name": "toy-affinity"},
                     overrides={"anchors": None})
    assert model._compose().adapter.name == "toy-drop-loops"
    model.set_params(adapter=None, overrides={"anchors": None, "adapter": None})
    assert model._compose().adapter is None
    with pytest.raises(SpecError):
        gc.GraphClustering(AFFINITY, adapter="nope").fit(X)


def test_dropping_loops_reaches_the_solver(reg):
    seen = {}

    @gc.part
    class Spy(gc.Solver):
        """Records the graph it gets."""

        name: ClassVar[str] = "spy"
        accepts: ClassVar[frozenset] = frozenset({"affinity"})
        provides: ClassVar[frozenset] = frozenset({"soft"})

        def solve(self, graph, X, n_clusters, ctx):
            seen["graph"], seen["X"] = graph, X
            return gc.Solution(soft=np.ones((graph.n, n_clusters)))

    reg.solvers.add(Spy)
    pipe = compose({**AFFINITY, "solver": {"name": "spy"}, "adapter": "toy-drop-loops"}, reg)
    pipe.run(np.zeros((4, 1)), n_clusters=2,
             graph=gc.AffinityGraph(np.ones((4, 4))))
    np.testing.assert_array_equal(seen["graph"].to_dense(), np.ones((4, 4)) - np.eye(4))
    assert seen["X"] is None
