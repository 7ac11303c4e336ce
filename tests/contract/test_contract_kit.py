"""The contract-test kit passes good parts and catches deliberately broken ones."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import scipy.sparse as sp

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import graphclust
from graphclust import Registry
from graphclust.testing import (
    ContractViolation,
    KindCheck,
    KindContract,
    KitAnchorGraph,
    KitAnchors,
    KitArgmaxRounding,
    KitKMeansRounding,
    KitKnnGraph,
    KitSolver,
    check_part,
    iter_checks,
    kind_contract,
    make_blobs,
    make_fixture,
    parametrize_parts,
    parametrize_with_checks,
    register_kind,
    registered_kinds,
    registered_parts,
    Variant,
)


# -- good parts pass, one test per (part, check) ---------------------------------------
KIT_PARTS = [KitAnchors, KitAnchorGraph, KitKnnGraph, KitSolver, KitKMeansRounding,
             KitArgmaxRounding]


@parametrize_with_checks(KIT_PARTS + [(KitAnchorGraph, {"n_neighbors": 2})])
def test_kit_fixture_parts_pass(check):
    check()


def test_check_part_passes_the_kit_parts():
    check_part(KitArgmaxRounding)


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
    failures = getattr(info.value, "failures", [info.value])
    assert contract in [f.check for f in failures], str(info.value)
    msg = str(next(f for f in failures if f.check == contract))
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


@graphclust.part
class SparseClaimGraph(KitKnnGraph):
    """Declares accepts_sparse = True but refuses a sparse X."""

    name = "broken-sparse"
    accepts_sparse = True

    def build(self, X, anchors, ctx):
        if not isinstance(X, np.ndarray):
            raise TypeError("dense X only")
        return super().build(X, anchors, ctx)


@graphclust.part
class UnclampedAnchors(KitAnchors):
    """Draws n_anchors rows with replacement instead of clamping to n."""

    name = "broken-unclamped"

    def select(self, X, ctx):
        X = np.asarray(X)
        idx = ctx.rng("x").choice(X.shape[0], int(self.n_anchors), replace=True)
        return graphclust.Anchors(X[np.sort(idx)].astype(np.float64))


@graphclust.part
class NoSingleClusterSolver(KitSolver):
    """Refuses k = 1."""

    name = "broken-one-cluster"

    def solve(self, graph, X, n_clusters, ctx):
        if n_clusters < 2:
            raise ValueError("need two clusters")
        return super().solve(graph, X, n_clusters, ctx)


@graphclust.part
class SingleClusterCrashRounding(KitArgmaxRounding):
    """Refuses k = 1."""

    name = "broken-one-cluster-rounding"

    def round(self, solution, n_clusters, ctx):
        if n_clusters < 2:
            raise ValueError("need two clusters")
        return super().round(solution, n_clusters, ctx)


@graphclust.part
class BadAssignRounding(KitArgmaxRounding):
    """assign() returns one label too few."""

    name = "broken-assign"

    def assign(self, solution):
        return super().assign(solution)[:-1]


@graphclust.part
class InvertedMetric(graphclust.Metric):
    """Disagreement rate, but says greater is better."""

    name = "broken-direction"

    def score(self, labels, y_true=None, graph=None):
        return float(np.mean(np.asarray(labels) != np.asarray(y_true)))


@graphclust.part
class BadSolverDeclarations(KitSolver):
    """Lists instead of frozensets; a string flag."""

    name = "broken-declarations"
    accepts = ["affinity"]
    needs_features = "no"


@graphclust.part
class TransformingAffinityGraph(KitKnnGraph):
    """An affinity-graph builder with a transform()."""

    name = "broken-affinity-transform"

    def transform(self, X_new, graph):
        return np.zeros((np.asarray(X_new).shape[0], 1))


@graphclust.part
class FloatTruthMetric(graphclust.Metric):
    """needs_truth as a number."""

    name = "broken-truth-flag"
    needs_truth = 1

    def score(self, labels, y_true=None, graph=None):
        return 1.0


@graphclust.part
class MutatingFloat32Graph(KitKnnGraph):
    """Two independent faults: centres X in place and refuses float32."""

    name = "broken-two-ways"

    def build(self, X, anchors, ctx):
        if X.dtype != np.float64:
            raise TypeError("float64 only")
        X -= X.mean(axis=0)
        return super().build(X, anchors, ctx)


# Each broken part fails exactly these checks (all reported together by check_part).
BROKEN = [
    (WrongShapeAnchors, {"work", "float32", "pipeline"}, "work", r"shape \(m, 4\)"),
    (ShortSolver, {"work", "float32", "one-cluster", "out-of-sample", "pipeline"}, "work",
     r"n = 60 rows"),
    (MutatingGraph, {"no-mutation"}, "no-mutation", r"modified"),
    (MutatingRounding, {"no-mutation"}, "no-mutation", r"round\(\) modified its input"),
    (UnseededAnchors, {"determinism"}, "determinism", r"differ"),
    (WrongKindGraph, {"work", "float32"}, "work", r"produces='anchor'.*AnchorGraph"),
    (OverclaimingSolver, {"work", "float32", "one-cluster", "out-of-sample"}, "work",
     r"no soft"),
    (SilentExtensionSolver, {"out-of-sample"}, "out-of-sample",
     r"does not declare out_of_sample"),
    (NoExtensionSolver, {"out-of-sample"}, "out-of-sample", r"declares out_of_sample=True"),
    (AsymmetricGraph, {"work", "float32"}, "work", r"symmetric"),
    (OffByOneRounding, {"work", "float32", "one-cluster", "pipeline"}, "work", r"\[0, k\)"),
    (StringMetric, {"work"}, "work", r"must return a float"),
    (ValidatingInit, {"parameters"}, "parameters", r"__init__ must not validate"),
    (UndocumentedParam, {"parameters"}, "parameters", r"'extra' has no doc"),
    (BadDefault, {"parameters", "pipeline"}, "parameters", r"default of parameter 'extra'"),
    (BadName, {"declarations"}, "declarations", r"not valid"),
    (Undecorated, {"declarations"}, "declarations", r"@graphclust.part"),
    (Float32Crash, {"float32"}, "float32", r"float32 X raised TypeError"),
    (FewerColumnsTransform, {"transform", "pipeline"}, "transform", r"transform\(\)"),
    (SparseClaimGraph, {"sparse"}, "sparse", r"sparse X raised"),
    (UnclampedAnchors, {"clamp"}, "clamp", r"clamped to n = 60"),
    (NoSingleClusterSolver, {"one-cluster"}, "one-cluster", r"n_clusters = 1|raised"),
    # its assign() calls round(solution, 0, ...), so assign breaks too
    (SingleClusterCrashRounding, {"one-cluster", "assign"}, "one-cluster", r"raised ValueError"),
    (BadAssignRounding, {"assign"}, "assign", r"assign\(\) must return labels"),
    (InvertedMetric, {"truth"}, "truth", r"greater_is_better=True"),
    (BadSolverDeclarations, {"declarations"}, "declarations",
     r"accepts must be.*needs_features must be a bool"),
    (TransformingAffinityGraph, {"declarations", "transform"}, "declarations",
     r"only anchor-graph builders"),
    (FloatTruthMetric, {"declarations"}, "declarations", r"needs_truth must be a bool"),
]


def _failed_checks(cls) -> dict[str, ContractViolation]:
    failed = {}
    for check in iter_checks(cls):
        try:
            check()
        except ContractViolation as exc:
            failed[check.name] = exc
    return failed


@pytest.mark.parametrize("cls, failing, contract, pattern", BROKEN,
                         ids=[b[0].__name__ for b in BROKEN])
def test_kit_catches_broken_part(cls, failing, contract, pattern):
    failed = _failed_checks(cls)
    assert set(failed) == failing, {k: str(v) for k, v in failed.items()}
    msg = str(failed[contract])
    assert f"{cls.name!r}" in msg and cls.__qualname__ in msg, msg
    assert f"'{contract}' contract" in msg, msg
    assert re.search(pattern, msg), msg


def test_check_part_reports_every_failed_check_together():
    with pytest.raises(ContractViolation) as info:
        check_part(MutatingFloat32Graph)
    exc = info.value
    assert sorted(f.check for f in exc.failures) == ["float32", "no-mutation"]
    msg = str(exc)
    assert msg.startswith("graph builder 'broken-two-ways'") and "fails 2 of" in msg, msg
    assert "'no-mutation' contract" in msg and "'float32' contract" in msg, msg
    assert isinstance(exc.__cause__, ContractViolation)


def test_single_failure_is_raised_as_it_is():
    with pytest.raises(ContractViolation) as info:
        check_part(MutatingGraph)
    assert info.value.check == "no-mutation" and info.value.failures == [info.value]


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
    import graphclust._executors as executors

    monkeypatch.setattr(executors, "check_input", lambda X, k=None: np.asarray(X))
    monkeypatch.setattr(executors, "validate_rows", lambda est, X, **kw: np.asarray(X))
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


# -- which checks apply, and their ids -------------------------------------------------
@pytest.mark.parametrize("cls, names", [
    (KitAnchors, ["work", "no-mutation", "determinism", "float32", "clamp", "pipeline"]),
    (KitAnchorGraph, ["work", "no-mutation", "determinism", "float32", "transform",
                      "pipeline"]),
    (KitKnnGraph, ["work", "no-mutation", "determinism", "float32", "pipeline"]),
    (SparseClaimGraph, ["work", "no-mutation", "determinism", "float32", "sparse",
                        "pipeline"]),
    (KitSolver, ["work", "no-mutation", "determinism", "float32", "one-cluster",
                 "out-of-sample", "pipeline"]),
    (KitKMeansRounding, ["work", "no-mutation", "determinism", "float32", "one-cluster",
                         "assign", "pipeline"]),
    (Undecorated, ["work", "no-mutation", "determinism", "float32", "one-cluster",
                   "pipeline"]),
    (StringMetric, ["work", "no-mutation", "determinism", "truth", "pipeline"]),
])
def test_iter_checks_yields_the_applicable_checks(cls, names):
    checks = list(iter_checks(cls))
    assert [c.name for c in checks] == ["declarations", "parameters"] + names
    kind = cls.kind
    assert [c.id for c in checks][:3] == [f"{kind}[{cls.name}]-declarations",
                                          f"{kind}[{cls.name}]-parameters",
                                          f"{kind}[{cls.name}]-work"]
    assert all(c.doc and c.part is cls and c.kind == kind for c in checks)


def test_parametrize_with_checks_ids():
    reg = Registry()
    reg.solvers.add(KitSolver, name="spectral-kit")
    mark = parametrize_with_checks(registry=reg)
    ids = [p.id for p in mark.args[1]]
    assert mark.args[0] == "check"
    assert ids[0] == "solver[spectral-kit]-declarations"
    assert "solver[spectral-kit]-determinism" in ids and len(ids) == len(set(ids))
    mark = parametrize_with_checks([(KitAnchorGraph, {"n_neighbors": 2}), KitKnnGraph(n_neighbors=4)])
    ids = [p.id for p in mark.args[1]]
    assert "graph[kit-anchor-graph(n_neighbors=2)]-transform" in ids
    assert "graph[kit-knn]-work" in ids
    with pytest.raises(TypeError, match="either parts or"):
        parametrize_with_checks([KitSolver], kinds="solver")
    with pytest.raises(TypeError, match="no parameter"):
        parametrize_with_checks([(KitSolver, {"n_iter": 3})])


def test_checks_are_independent_of_order():
    # the checks of one part share the first run, whichever check triggers it
    checks = {c.name: c for c in iter_checks(MutatingGraph)}
    with pytest.raises(ContractViolation, match="modified"):
        checks["no-mutation"]()
    checks["work"]()
    checks["determinism"]()


# -- selection by distribution -----------------------------------------------------------
def _registry_with_distributions() -> Registry:
    from graphclust._registry import Provider

    reg = Registry()
    reg.bind(Provider("kit-a", "graphclust-kit-a", "1.0"))
    reg.solvers.add(KitSolver)
    reg.graphs.add(KitKnnGraph)
    reg.bind(Provider("kit-b", "graphclust_kit.b", "2.0"))
    reg.roundings.add(KitArgmaxRounding)
    reg.bind(Provider("<direct>"))
    reg.anchors.add(KitAnchors)
    return reg


def test_registered_parts_by_distribution():
    reg = _registry_with_distributions()
    assert [r.name for r in registered_parts(registry=reg, distribution="graphclust-kit-a")] \
        == ["kit-knn", "kit-spectral"]
    # pip's name normalisation: case, '-', '_' and '.' do not matter
    assert [r.name for r in registered_parts(registry=reg, distribution="GraphClust-Kit-B")] \
        == ["kit-argmax"]
    assert [r.name for r in registered_parts("solver", registry=reg,
                                             distribution="graphclust_kit_a")] == ["kit-spectral"]
    assert len(registered_parts(registry=reg)) == 4
    with pytest.raises(LookupError, match="graphclust-kit-a, graphclust_kit.b"):
        registered_parts(registry=reg, distribution="graphclust-kit-c")
    mark = parametrize_parts(registry=reg, distribution="graphclust-kit-a")
    assert mark.kwargs["ids"] == ["graph:kit-knn", "solver:kit-spectral"]
    checks = parametrize_with_checks(registry=reg, distribution="graphclust-kit-b").args[1]
    assert {p.id.split("-", 1)[0] for p in checks} == {"rounding[kit"}


def test_installed_contrib_parts_carry_their_distribution():
    records = registered_parts(distribution="graphclust-nystrom")
    assert sorted((r.kind, r.name) for r in records) == [("graph", "nystrom-landmarks"),
                                                         ("solver", "nystrom")]
    assert all(r.distribution == "graphclust-nystrom" for r in records)


# -- kinds: one module and one registration each ------------------------------------------
def test_a_kind_without_a_contract_module_is_reported_not_passed(monkeypatch):
    from graphclust.testing import _contract

    monkeypatch.delitem(_contract._KINDS, "rounding")
    assert "rounding" not in registered_kinds()
    checks = list(iter_checks(KitArgmaxRounding))
    assert [c.name for c in checks] == ["declarations", "parameters", "work"]
    assert "no contract module for kind 'rounding'" in checks[-1].skip
    mark = parametrize_with_checks([KitArgmaxRounding])
    assert [m.name for m in mark.args[1][-1].marks] == ["skip"]
    with pytest.warns(UserWarning, match="no contract module"):
        check_part(KitArgmaxRounding)


def test_register_kind_plugs_a_new_contract_in(monkeypatch):
    from graphclust.testing import _contract, rounding

    class StrictRoundingContract(rounding.RoundingContract):
        """A stricter rounding contract: every cluster must be used."""

        def extra_checks(self, cls):
            def all_used(session):
                out, _ = session.call("all-used", Variant())
                if len(np.unique(out)) != 3:
                    raise ContractViolation("not every cluster used", check="all-used")

            return super().extra_checks(cls) + [KindCheck("all-used", "k labels.", all_used)]

    monkeypatch.delitem(_contract._KINDS, "rounding")
    register_kind(StrictRoundingContract())
    names = [c.name for c in iter_checks(KitArgmaxRounding)]
    assert names[-2:] == ["all-used", "pipeline"]
    check_part(KitArgmaxRounding)
    with pytest.raises(ValueError, match="already has a contract"):
        register_kind(StrictRoundingContract())


def test_register_kind_refuses_an_unknown_kind():
    class NoKind(KindContract):
        kind = "sampler"

    with pytest.raises(ValueError, match="not a part kind"):
        register_kind(NoKind())


def test_every_kind_has_a_contract_module():
    assert registered_kinds() == list(graphclust._parts.PART_KINDS)


def test_plugin_guide_lists_every_declared_attribute():
    from pathlib import Path

    guide = (Path(__file__).parents[2] / "docs" / "plugin-guide.rst").read_text()
    table = guide[guide.index(".. list-table:: What each part kind declares"):]
    table = table[:re.search(r"\n\n(?=\S)", table).start()]
    for kind in registered_kinds():
        row = table[table.index(f"* - ``{kind}``"):]
        row = row[:row.index("* - ", 4)] if "* - " in row[4:] else row
        for attr, _ in kind_contract(kind).attributes:
            assert re.search(rf"``{attr}(``|\()", row), (kind, attr)


# -- properties of the fixture and the snapshots -------------------------------------------
@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 80), d=st.integers(1, 6), k=st.integers(1, 5), seed=st.integers(0, 99))
def test_make_blobs_properties(n, d, k, seed):
    k = min(k, n)
    X, y = make_blobs(n, d, k, seed=seed)
    assert X.shape == (n, d) and y.shape == (n,) and X.dtype == np.float64
    assert X.min() >= 0.5 - 1e-12 and np.all(np.isfinite(X))
    counts = np.bincount(y, minlength=k)
    assert counts.size == k and counts.max() - counts.min() <= 1
    X2, y2 = make_blobs(n, d, k, seed=seed, dtype=np.float32)
    assert X2.dtype == np.float32 and np.array_equal(y, y2)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 4)),
              elements=st.floats(-1e6, 1e6)),
       st.integers(0, 23), st.floats(1e-3, 10.0))
def test_differs_finds_any_change(A, where, delta):
    from graphclust.testing._snapshot import differs, snapshot

    sol = graphclust.Solution(embedding=A.copy())
    assert differs(snapshot(sol), snapshot(graphclust.Solution(embedding=A.copy()))) is None
    B = A.copy()
    B.flat[where % B.size] += delta * max(1.0, abs(B.flat[where % B.size]))
    assert differs(snapshot(sol), snapshot(graphclust.Solution(embedding=B))) is not None
    assert differs(snapshot(sp.csr_array(A)), snapshot(sp.csr_array(B))) is not None
    assert differs(snapshot(A), snapshot(A[:, :0])) is not None  # shape


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 25), st.integers(1, 3)),
              elements=st.floats(-100, 100).map(lambda v: round(v, 2))),
       st.integers(1, 5), st.integers(0, 9))
def test_kit_kmeans_is_a_lloyd_fixed_point(E, k, seed):
    from graphclust.testing._fixture import _kmeans, _sqdist

    labels, C = _kmeans(E, k, seed)
    kk = min(k, E.shape[0])
    assert labels.shape == (E.shape[0],) and C.shape == (kk, E.shape[1])
    assert labels.min() >= 0 and labels.max() < kk
    d2 = _sqdist(E, C)  # every point sits at a nearest centre
    assert np.all(d2[np.arange(E.shape[0]), labels] <= d2.min(axis=1) + 1e-9)
    for j in np.unique(labels):  # every used centre is the mean of its points
        np.testing.assert_allclose(C[j], E[labels == j].mean(axis=0), atol=1e-8)
    again, _ = _kmeans(E, k, seed)
    np.testing.assert_array_equal(labels, again)


@pytest.mark.parametrize("seed", range(5))
def test_kit_kmeans_recovers_blobs(seed):
    from sklearn.metrics import adjusted_rand_score

    from graphclust.testing._fixture import _kmeans

    X, y = make_blobs(90, 5, 4, seed=seed)
    assert adjusted_rand_score(y, _kmeans(X, 4, seed)[0]) == 1.0
