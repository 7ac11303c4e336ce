"""The contract-test kit passes good parts and catches deliberately broken ones."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import scipy.sparse as sp

import graphclust
from graphclust import Registry
from graphclust.testing import (
    KitAnchorGraph,
    KitAnchors,
    KitArgmaxRounding,
    KitKMeansRounding,
    KitKnnGraph,
    KitSolver,
    check_part,
    make_blobs,
    make_fixture,
    parametrize_parts,
)


# -- good parts pass ------------------------------------------------------------------
@pytest.mark.parametrize("cls", [KitAnchors, KitAnchorGraph, KitKnnGraph, KitSolver,
                                 KitKMeansRounding, KitArgmaxRounding])
def test_kit_fixture_parts_pass(cls):
    check_part(cls)


def test_options_are_used_and_unknown_options_refused():
    check_part(KitAnchorGraph, n_neighbors=2)
    with pytest.raises(TypeError, match="no parameter"):
        check_part(KitAnchorGraph, n_neigbors=2)


def test_instance_is_accepted():
    check_part(KitKnnGraph(n_neighbors=4))


def test_fixture_data():
    X, y = make_blobs()
    assert X.shape == (60, 4) and X.min() >= 0 and np.bincount(y).tolist() == [20, 20, 20]
    fx = make_fixture()
    assert fx.anchor_graph.Z.shape == (60, fx.anchors.n_anchors)
    A = fx.affinity_graph.adjacency
    assert abs(A - A.T).max() == 0
    assert fx.solution.embedding.shape == (60, 3) and fx.solution.soft.shape == (60, 3)


# -- broken parts fail, with a message naming the part and the contract ---------------
def _fails(cls, contract: str, pattern: str = "", **options) -> str:
    with pytest.raises(AssertionError) as info:
        check_part(cls, **options)
    msg = str(info.value)
    assert f"{cls.name!r}" in msg and cls.__qualname__ in msg, msg
    assert f"'{contract}' contract" in msg, msg
    if pattern:
        assert re.search(pattern, msg), msg
    return msg


@graphclust.part
class WrongShapeAnchors(graphclust.AnchorSelector):
    """Anchors with one feature too few."""

    name = "broken-shape"

    def select(self, X, ctx):
        return graphclust.Anchors(np.asarray(X)[:5, :-1])


@graphclust.part
class ShortSolver(KitSolver):
    """A solver that drops the last row."""

    name = "broken-short"

    def solve(self, graph, X, n_clusters, ctx):
        sol = super().solve(graph, X, n_clusters, ctx)
        return graphclust.Solution(embedding=sol.embedding[:-1], soft=sol.soft[:-1])


@graphclust.part
class MutatingGraph(KitKnnGraph):
    """Centres X in place before building."""

    name = "broken-mutates"

    def build(self, X, anchors, ctx):
        X -= X.mean(axis=0)
        return super().build(X, anchors, ctx)


@graphclust.part
class MutatingRounding(KitKMeansRounding):
    """Normalises the embedding in place."""

    name = "broken-mutates-solution"

    def round(self, solution, n_clusters, ctx):
        solution.embedding /= np.linalg.norm(solution.embedding, axis=1, keepdims=True)
        return super().round(solution, n_clusters, ctx)


@graphclust.part
class UnseededAnchors(graphclust.AnchorSelector):
    """Random rows from the OS entropy pool instead of ctx.rng."""

    name = "broken-unseeded"
    n_anchors: int = graphclust.param(10, doc="Anchors m.", check=graphclust.integer(1))

    def select(self, X, ctx):
        rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
        m = min(self.n_anchors, X.shape[0])
        return graphclust.Anchors(np.asarray(X)[rng.choice(X.shape[0], m, replace=False)])


@graphclust.part
class WrongKindGraph(KitKnnGraph):
    """Declares an anchor graph but builds an affinity graph."""

    name = "broken-kind"
    produces = "anchor"
    needs_anchors = True


@graphclust.part
class OverclaimingSolver(KitSolver):
    """Declares a soft assignment it never sets."""

    name = "broken-claims"

    def solve(self, graph, X, n_clusters, ctx):
        return graphclust.Solution(embedding=super().solve(graph, X, n_clusters, ctx).embedding)


@graphclust.part
class SilentExtensionSolver(KitSolver):
    """Places new points but does not say so."""

    name = "broken-silent-extension"
    out_of_sample = False


@graphclust.part
class NoExtensionSolver(KitSolver):
    """Says it places new points but sets no per-anchor values."""

    name = "broken-no-extension"

    def solve(self, graph, X, n_clusters, ctx):
        sol = super().solve(graph, X, n_clusters, ctx)
        return graphclust.Solution(embedding=sol.embedding, soft=sol.soft)


@graphclust.part
class AsymmetricGraph(KitKnnGraph):
    """Keeps a directed kNN graph."""

    name = "broken-asym"

    def build(self, X, anchors, ctx):
        A = super().build(X, anchors, ctx).adjacency.tolil()
        A[0, 1], A[1, 0] = 5.0, 0.0
        return graphclust.AffinityGraph(sp.csr_array(A))


@graphclust.part
class OffByOneRounding(KitKMeansRounding):
    """Labels 1..k instead of 0..k-1."""

    name = "broken-labels"

    def round(self, solution, n_clusters, ctx):
        return super().round(solution, n_clusters, ctx) + 1


@graphclust.part
class StringMetric(graphclust.Metric):
    """Returns the score as text."""

    name = "broken-metric"

    def score(self, labels, y_true=None, graph=None):
        return f"{np.mean(labels == y_true):.3f}"


@graphclust.part
class ValidatingInit(KitAnchors):
    """Validates in __init__."""

    name = "broken-init"

    def __attrs_post_init__(self):
        if not isinstance(self.n_anchors, int) or self.n_anchors < 1:
            raise ValueError("n_anchors must be positive")


@graphclust.part
class UndocumentedParam(KitAnchors):
    """A parameter without doc."""

    name = "broken-doc"
    extra: int = graphclust.param(1, doc="", check=graphclust.integer(0))


@graphclust.part
class BadDefault(KitAnchors):
    """A default its own check refuses."""

    name = "broken-default"
    extra: int = graphclust.param(0, doc="An extra count.", check=graphclust.integer(1))


@graphclust.part
class BadName(KitAnchors):
    """An upper-case name."""

    name = "Broken Name"


class Undecorated(graphclust.Rounding):
    """Not decorated with @graphclust.part."""

    name = "broken-undecorated"
    needs = "soft"

    def round(self, solution, n_clusters, ctx):
        return solution.soft.argmax(1)


@graphclust.part
class Float32Crash(KitKnnGraph):
    """Refuses float32 data."""

    name = "broken-float32"

    def build(self, X, anchors, ctx):
        if X.dtype != np.float64:
            raise TypeError("float64 only")
        return super().build(X, anchors, ctx)


@graphclust.part
class FewerColumnsTransform(KitAnchorGraph):
    """transform() forgets the last anchor column."""

    name = "broken-transform"

    def transform(self, X_new, graph):
        return super().transform(X_new, graph)[:, :-1]


@pytest.mark.parametrize("cls, contract, pattern", [
    (WrongShapeAnchors, "work", r"shape \(m, 4\)"),
    (ShortSolver, "work", r"n = 60 rows"),
    (MutatingGraph, "no-mutation", r"modified"),
    (MutatingRounding, "no-mutation", r"round\(\) modified its input"),
    (UnseededAnchors, "determinism", r"differ"),
    (WrongKindGraph, "work", r"produces='anchor'.*AnchorGraph"),
    (OverclaimingSolver, "work", r"no soft"),
    (SilentExtensionSolver, "work", r"does not declare out_of_sample"),
    (NoExtensionSolver, "work", r"declares out_of_sample=True"),
    (AsymmetricGraph, "work", r"symmetric"),
    (OffByOneRounding, "work", r"\[0, k\)"),
    (StringMetric, "work", r"must return a float"),
    (ValidatingInit, "parameters", r"__init__ must not validate"),
    (UndocumentedParam, "parameters", r"'extra' has no doc"),
    (BadDefault, "parameters", r"default of parameter 'extra'"),
    (BadName, "declarations", r"not valid"),
    (Undecorated, "declarations", r"@graphclust.part"),
    (Float32Crash, "float32", r"float32 X raised TypeError"),
    (FewerColumnsTransform, "work", r"transform\(\)"),
])
def test_kit_catches_broken_part(cls, contract, pattern):
    _fails(cls, contract, pattern)


def test_part_exception_is_chained():
    with pytest.raises(AssertionError) as info:
        check_part(Float32Crash)
    assert isinstance(info.value.__cause__, TypeError)


def test_required_parameter_without_value_is_reported():
    @graphclust.part
    class Required(KitAnchors):
        """Needs a value."""

        name = "needs-value"
        scale: float = graphclust.param(doc="A scale.", check=graphclust.real(0))

    msg = _fails(Required, "parameters", r"no default")
    assert "scale=" in msg
    check_part(Required, scale=1.0)


def test_pipeline_contract_catches_missing_input_checks(monkeypatch):
    # with input validation switched off, NaN data reaches the parts and the kit notices
    import graphclust._estimator as est

    monkeypatch.setattr(est, "check_input", lambda X, k=None: np.asarray(X))
    monkeypatch.setattr(est, "validate_data", lambda self, X, **kw: np.asarray(X))
    with pytest.raises(AssertionError, match="'pipeline' contract"):
        check_part(KitArgmaxRounding)


# -- the pytest helper ---------------------------------------------------------------
def test_parametrize_parts_ids_and_kinds():
    reg = Registry()
    reg.solvers.add(KitSolver)
    reg.graphs.add(KitKnnGraph)
    reg.graphs.add(KitAnchorGraph)
    mark = parametrize_parts(registry=reg)
    assert mark.args[0] == "part_record"
    ids = mark.kwargs["ids"]
    assert ids == ["graph:kit-anchor-graph", "graph:kit-knn", "solver:kit-spectral"]
    only = parametrize_parts("solver", registry=reg, argname="rec")
    assert only.args[0] == "rec" and [r.cls for r in only.args[1]] == [KitSolver]
    with pytest.raises(ValueError, match="kinds"):
        parametrize_parts(["solvers"], registry=reg)


def test_parametrize_parts_covers_the_installed_registry():
    mark = parametrize_parts()
    registry = graphclust.get_registry()
    assert len(mark.args[1]) == len(registry.all_parts())


def test_instance_with_required_parameter():
    @graphclust.part
    class Required2(KitAnchors):
        """Needs a value."""

        name = "needs-value-2"
        scale: float = graphclust.param(doc="A scale.", check=graphclust.real(0))

    check_part(Required2(scale=2.0))
