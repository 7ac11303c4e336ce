"""Typed contracts: graph kinds and solution fields as enums, error classes from problem
kinds (never from message text), and the old name of a solver's ``provides``."""

import json
import warnings
from typing import ClassVar

import graphclust as gc
import graphclust._composer as composer
import numpy as np
import pytest
from graphclust import (
    GraphKind,
    IncompatiblePartsError,
    Problem,
    ProblemKind,
    SolutionField,
    SpecError,
    UnknownPartError,
)
from graphclust._errors import spec_error


# -- error classes come from problem kinds ---------------------------------------------
@pytest.mark.parametrize("kinds, expected", [
    ([ProblemKind.UNKNOWN_PART], UnknownPartError),
    ([ProblemKind.UNKNOWN_PART, ProblemKind.UNKNOWN_PART], UnknownPartError),
    ([ProblemKind.INCOMPATIBLE], IncompatiblePartsError),
    ([ProblemKind.INCOMPATIBLE, ProblemKind.INCOMPATIBLE], IncompatiblePartsError),
    ([ProblemKind.UNKNOWN_PART, ProblemKind.INCOMPATIBLE], SpecError),
    ([ProblemKind.INVALID_PARAMETER], SpecError),
    ([ProblemKind.UNKNOWN_PRESET], SpecError),
    ([ProblemKind.INVALID_SPEC, ProblemKind.UNKNOWN_PART], SpecError),
])
@pytest.mark.parametrize("wording", [
    "unknown solver 'x'",  # the words the old text match looked for ...
    "solver 'x' accepts anchor graphs, but graph builder 'y' produces an affinity graph",
    "rounding 'z' needs a solution with a soft",
    "Frobnicated beyond repair",  # ... and words it never knew
    "",
])
def test_the_error_class_follows_the_kinds_whatever_the_wording(kinds, expected, wording):
    problems = [Problem(f"section{i}.name", wording, kind) for i, kind in enumerate(kinds)]
    err = spec_error(problems)
    assert type(err) is expected
    assert err.problems == problems


def test_a_problem_defaults_to_invalid_spec_and_keeps_its_kind_when_moved():
    p = Problem("solver.name", "unknown solver 'nope'")
    assert p.kind is ProblemKind.INVALID_SPEC
    assert type(spec_error([p])) is SpecError  # text that looks "unknown" changes nothing
    q = Problem("name", "gone", ProblemKind.UNKNOWN_PART).at("ensemble.members[0].solver.name")
    assert q.loc == "ensemble.members[0].solver.name" and q.kind is ProblemKind.UNKNOWN_PART


def test_errors_still_subclass_builtins_and_a_string_takes_the_class_kind():
    assert issubclass(UnknownPartError, LookupError) and issubclass(UnknownPartError, ValueError)
    assert issubclass(IncompatiblePartsError, ValueError)
    assert UnknownPartError("no such part").problems[0].kind is ProblemKind.UNKNOWN_PART
    assert IncompatiblePartsError("x").problems[0].kind is ProblemKind.INCOMPATIBLE
    assert SpecError("x").problems[0].kind is ProblemKind.INVALID_SPEC


def test_rewording_the_unknown_name_message_keeps_unknown_part_error(toy_registry, monkeypatch):
    spec = {"graph": {"name": "toy-affinity"}, "solver": {"name": "no-such-solver"},
            "rounding": {"name": "toy-argmax"}}
    with pytest.raises(UnknownPartError):
        gc.compose(spec, toy_registry)
    monkeypatch.setattr(composer, "unknown_name_message",
                        lambda label, name, names: f"{name!r}: nobody registered that")
    with pytest.raises(UnknownPartError) as info:
        gc.compose(spec, toy_registry)
    assert info.value.problems[0].msg == "'no-such-solver': nobody registered that"
    assert info.value.problems[0].kind is ProblemKind.UNKNOWN_PART


def test_composer_sets_kinds_where_it_finds_problems(toy_registry):
    bad_param = {"graph": {"name": "toy-affinity"}, "solver": {"name": "toy-solver", "lam": -1},
                 "rounding": {"name": "toy-argmax"}}
    problems = gc.validate_spec(bad_param, toy_registry)
    assert [p.kind for p in problems] == [ProblemKind.INVALID_PARAMETER]
    incompatible = {"anchors": {"name": "toy-anchors"}, "graph": {"name": "toy-anchor-graph"},
                    "solver": {"name": "toy-solver"}, "rounding": {"name": "toy-kmeans"}}
    with pytest.raises(IncompatiblePartsError) as info:
        gc.compose(incompatible, toy_registry)
    assert {p.kind for p in info.value.problems} == {ProblemKind.INCOMPATIBLE}
    assert {p.loc for p in info.value.problems} == {"solver", "rounding"}


# -- graph kinds and solution fields -----------------------------------------------------
def test_kinds_are_string_enums_equal_to_their_strings():
    assert GraphKind.ANCHOR == "anchor" and hash(GraphKind.ANCHOR) == hash("anchor")
    assert "affinity" in frozenset({GraphKind.AFFINITY})
    assert GraphKind("anchor") is GraphKind.ANCHOR
    assert f"{SolutionField.SOFT}" == "soft" and str(SolutionField.EMBEDDING) == "embedding"
    assert json.dumps(sorted({SolutionField.SOFT, SolutionField.EMBEDDING})) == \
        '["embedding", "soft"]'
    assert gc.AffinityGraph.kind is GraphKind.AFFINITY and gc.AnchorGraph.kind is GraphKind.ANCHOR
    assert gc.Solution(soft=np.ones((2, 1))).provides == {SolutionField.SOFT}


# third-party style parts declaring plain strings
@gc.part
class PlainGraph(gc.GraphBuilder):
    """Plain-string affinity graph (complete)."""

    name = "plain-graph"
    produces = "affinity"

    def build(self, X, anchors, ctx):
        n = X.shape[0]
        return gc.AffinityGraph(np.ones((n, n)) - np.eye(n))


@gc.part
class PlainAdapter(gc.Adapter):
    """Plain-string adapter."""

    name = "plain-adapter"
    accepts = frozenset({"anchor"})
    produces = "affinity"


@gc.part
class PlainSolver(gc.Solver):
    """Plain-string solver."""

    name = "plain-solver"
    accepts = frozenset({"affinity"})
    provides = frozenset({"soft"})

    def solve(self, graph, X, n_clusters, ctx):
        soft = np.zeros((graph.n, n_clusters))
        soft[np.arange(graph.n), np.arange(graph.n) % n_clusters] = 1
        return gc.Solution(soft=soft)


@gc.part
class PlainRounding(gc.Rounding):
    """Plain-string rounding."""

    name = "plain-argmax"
    needs = "soft"

    def round(self, solution, n_clusters, ctx):
        return np.asarray(solution.soft).argmax(1)


def test_plain_string_declarations_are_coerced_when_the_class_is_defined():
    assert PlainGraph.produces is GraphKind.AFFINITY
    assert PlainAdapter.accepts == {GraphKind.ANCHOR}
    assert all(isinstance(k, GraphKind) for k in PlainAdapter.accepts)
    assert PlainAdapter.produces is GraphKind.AFFINITY
    assert all(isinstance(k, GraphKind) for k in PlainSolver.accepts)
    assert all(isinstance(f, SolutionField) for f in PlainSolver.provides)
    assert PlainRounding.needs is SolutionField.SOFT


def test_a_misspelt_declaration_is_left_for_the_checks_to_name():
    @gc.part
    class Misspelt(gc.GraphBuilder):
        """Misspelt."""

        name = "misspelt"
        produces = "anchorr"

    @gc.part
    class HalfKnown(gc.Solver):
        """Half known."""

        name = "half-known"
        accepts = frozenset({"anchor", "nonsense"})

    assert Misspelt.produces == "anchorr" and not isinstance(Misspelt.produces, GraphKind)
    assert HalfKnown.accepts == frozenset({"anchor", "nonsense"})


def test_plain_string_parts_compose_with_typed_ones(toy_registry):
    toy_registry.graphs.add(PlainGraph)
    toy_registry.solvers.add(PlainSolver)
    toy_registry.roundings.add(PlainRounding)
    # plain-string graph, solver and rounding run together; a plain-string solver is refused
    # after an anchor graph exactly as a typed one
    pipe = gc.compose({"graph": {"name": "plain-graph"}, "solver": {"name": "plain-solver"},
                       "rounding": {"name": "toy-argmax"}}, toy_registry)
    labels = pipe.run(np.arange(12.0).reshape(6, 2), n_clusters=2).labels
    assert labels.shape == (6,)
    with pytest.raises(IncompatiblePartsError) as info:
        gc.compose({"anchors": {"name": "toy-anchors"}, "graph": {"name": "toy-anchor-graph"},
                    "solver": {"name": "plain-solver"}, "rounding": {"name": "plain-argmax"}},
                   toy_registry)
    assert "produces an anchor graph" in str(info.value)


# -- the old name of a solver's provides ------------------------------------------------
def test_a_solver_declaring_produces_is_read_as_provides_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="declares 'produces'.*'provides'") as record:
        @gc.part
        class OldSolver(gc.Solver):
            """Declares the old attribute."""

            name = "old-solver"
            accepts = frozenset({"affinity"})
            produces = frozenset({"soft"})

            def solve(self, graph, X, n_clusters, ctx):  # pragma: no cover - not run
                raise NotImplementedError

    assert record[0].filename == __file__  # points at the class statement
    assert OldSolver.provides == {SolutionField.SOFT}
    assert all(isinstance(f, SolutionField) for f in OldSolver.provides)
    reg = gc.Registry()
    reg.solvers.add(OldSolver)
    reg.graphs.add(PlainGraph)
    reg.roundings.add(PlainRounding)
    # the composer checks the rounding against the fields the old attribute declared
    gc.compose({"graph": {"name": "plain-graph"}, "solver": {"name": "old-solver"},
                "rounding": {"name": "plain-argmax"}}, reg)


def test_a_solver_declaring_provides_does_not_warn_and_reading_produces_does():
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @gc.part
        class NewSolver(gc.Solver):
            """Declares the new attribute."""

            name = "new-solver"
            provides: ClassVar[frozenset] = frozenset({SolutionField.EMBEDDING})

    with pytest.warns(DeprecationWarning, match=r"NewSolver\.produces is deprecated"):
        assert NewSolver.produces == {SolutionField.EMBEDDING}
    with pytest.warns(DeprecationWarning):
        assert NewSolver().produces == {SolutionField.EMBEDDING}


def test_describe_json_lists_plain_strings(capsys):
    from graphclust.cli import main

    assert main(["describe", "spectral", "--kind", "solver", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["accepts"] == ["affinity", "anchor"] and info["provides"] == ["embedding"]
    assert "produces" not in info
    assert main(["describe", "anchor-level", "--kind", "adapter", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["produces"] == "affinity" and type(info["produces"]) is str
