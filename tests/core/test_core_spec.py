"""Spec validation: every problem at once, each with its path."""

import json

import numpy as np
import pytest

import graphclust as gc
from graphclust import IncompatiblePartsError, SpecError, UnknownPartError, compose

GOOD = {"graph": {"name": "toy-affinity"}, "solver": {"name": "toy-solver", "lam": 2.0},
        "rounding": {"name": "toy-argmax"}}


def problems(spec, reg):
    with pytest.raises(SpecError) as info:
        compose(spec, reg)
    return {p.loc: p.msg for p in info.value.problems}, info.value


def test_good_spec_composes_from_dict_toml_json(toy_registry, tmp_path):
    pipe = compose(GOOD, toy_registry)
    assert pipe.solver.lam == 2.0 and pipe.rounding.name == "toy-argmax"
    toml = tmp_path / "s.toml"
    toml.write_text('[graph]\nname = "toy-affinity"\n[solver]\nname = "toy-solver"\n'
                    '[rounding]\nname = "toy-argmax"\n')
    assert compose(str(toml), toy_registry).graph.name == "toy-affinity"
    js = tmp_path / "s.json"
    js.write_text(json.dumps(GOOD))
    assert compose(str(js), toy_registry).solver.lam == 2.0
    assert compose(json.dumps(GOOD), toy_registry).solver.lam == 2.0
    assert compose("toy", toy_registry).solver.name == "toy-solver"


def test_compose_does_not_modify_the_callers_dict(toy_registry):
    spec = json.loads(json.dumps(GOOD))
    compose(spec, toy_registry)
    assert spec == GOOD


def test_all_problems_reported_with_paths(toy_registry):
    spec = {"graph": {"name": "toy-affinity"},
            "solver": {"name": "toy-solver", "lam": -1, "mode": "c", "lamda": 3},
            "rounding": {"name": "toy-argmx"}, "seed": -2, "n_clusters": 0, "sovler": {}}
    found, _ = problems(spec, toy_registry)
    assert "did you mean 'lam'" in found["solver.lamda"]
    assert "did you mean 'toy-argmax'" in found["rounding.name"]
    assert "toy-kmeans" in found["rounding.name"]  # lists the registered names
    assert "did you mean 'solver'" in found["sovler"]
    assert found["seed"].startswith("must be an integer in [0, 2**32)")
    assert found["n_clusters"].startswith("must be an integer >= 1")


def test_param_checks_name_path_and_value(toy_registry):
    spec = {**GOOD, "solver": {"name": "toy-solver", "lam": -1, "mode": "c"}}
    found, err = problems(spec, toy_registry)
    assert found["solver.lam"] == "must be a number > 0, got -1"
    assert "one of 'a', 'b'" in found["solver.mode"]
    assert "solver.lam: must be a number > 0, got -1" in str(err)
    # wrong type
    found, _ = problems({**GOOD, "solver": {"name": "toy-solver", "lam": "big"}}, toy_registry)
    assert "got 'big' (str)" in found["solver.lam"]


def test_unknown_part_is_lookup_error(toy_registry):
    with pytest.raises(UnknownPartError) as info:
        compose({**GOOD, "solver": {"name": "tooy-solver"}}, toy_registry)
    assert isinstance(info.value, LookupError) and isinstance(info.value, ValueError)
    assert "did you mean 'toy-solver'" in str(info.value)


@pytest.mark.parametrize("name", ["numpy.linalg:svd", "os.system", "sklearn.cluster.KMeans",
                                  "../evil"])
def test_import_paths_rejected(toy_registry, name):
    found, _ = problems({**GOOD, "solver": {"name": name}}, toy_registry)
    assert "registered name only" in found["solver.name"]


def test_target_key_rejected(toy_registry):
    found, _ = problems({**GOOD, "solver": {"name": "toy-solver", "_target_": "os.system"}},
                        toy_registry)
    assert "not allowed" in found["solver._target_"]


def test_incompatible_graph_and_solver_suggests_adapter(toy_registry):
    spec = {"anchors": {"name": "toy-anchors"}, "graph": {"name": "toy-anchor-graph"},
            "solver": {"name": "toy-solver"}, "rounding": {"name": "toy-argmax"}}
    with pytest.raises(IncompatiblePartsError) as info:
        compose(spec, toy_registry)
    msg = str(info.value)
    assert "toy-solver" in msg and "toy-anchor-graph" in msg
    assert 'set adapter = "toy-explicit-w"' in msg and "toy-drop-loops" not in msg
    assert "toy-affinity" in msg  # what would fit
    pipe = compose({**spec, "adapter": "toy-explicit-w"}, toy_registry)
    assert pipe.adapter.name == "toy-explicit-w"


def test_incompatible_rounding_names_both(toy_registry):
    found, _ = problems({**GOOD, "rounding": {"name": "toy-kmeans"}}, toy_registry)
    msg = found["rounding"]
    assert "toy-kmeans" in msg and "toy-solver" in msg and "toy-argmax" in msg


def test_anchor_sections_consistency(toy_registry):
    found, _ = problems({**GOOD, "graph": {"name": "toy-anchor-graph"},
                         "adapter": "toy-explicit-w"}, toy_registry)
    assert "needs an [anchors] section" in found["anchors"]
    found, _ = problems({**GOOD, "anchors": {"name": "toy-anchors"}}, toy_registry)
    assert "does not use anchors" in found["anchors"]


def test_nested_pipeline_param_is_composed(toy_registry):
    nested = {"solver": {"name": "toy-solver"}, "rounding": {"name": "toy-argmax"}}
    pipe = compose({**GOOD, "solver": {"name": "toy-solver", "init": nested}}, toy_registry)
    assert isinstance(pipe.solver.init, gc.Pipeline)
    found, _ = problems({**GOOD, "solver": {"name": "toy-solver",
                                            "init": {"solver": {"name": "toy-solver", "lam": 0},
                                                     "rounding": {"name": "nope"}}}},
                        toy_registry)
    assert "solver.init.solver.lam" in found and "solver.init.rounding.name" in found


def test_bad_text_and_missing_file(toy_registry):
    with pytest.raises(SpecError, match="cannot parse TOML"):
        compose("graph = [", toy_registry)
    with pytest.raises(SpecError, match="does not exist"):
        compose("nowhere.toml", toy_registry)


def test_pipeline_runs_with_adapter_and_lifts(toy_registry):
    spec = {"anchors": {"name": "toy-anchors", "n_anchors": 6},
            "graph": {"name": "toy-anchor-graph"}, "solver": {"name": "toy-solver"},
            "rounding": {"name": "toy-argmax"}, "adapter": "toy-explicit-w"}
    pipe = compose(spec, toy_registry)
    X = np.random.default_rng(0).standard_normal((30, 2))
    with pytest.warns(gc.DisconnectedGraphWarning):
        res = pipe.run(X, n_clusters=3)
    assert res.solution.anchor_soft.shape == (6, 3)
    assert res.solution.soft.shape == (30, 3)
    assert set(res.timings) >= {"anchors", "graph", "adapter", "solver", "rounding", "total"}
    assert pipe.can_predict()
    assert pipe.predict(X[:5], res).shape == (5,)


def test_resolve_part(toy_registry):
    part = gc.resolve_part({"name": "toy-solver", "lam": 3.0}, "solver", toy_registry)
    assert part.lam == 3.0
    assert gc.resolve_part(part, "solver") is part
    with pytest.raises(SpecError, match="solver.lam"):
        gc.resolve_part({"name": "toy-solver", "lam": -3.0}, "solver", toy_registry)


def test_optional_nested_part_is_still_composed(toy_registry):
    check = gc.optional(gc.part_spec("pipeline"))
    assert getattr(check, "_part_kind") == "pipeline"
    assert check(None) is None and check({"name": "x"}) is None and check(3)


def test_given_graph_is_not_rechecked_for_components(toy_registry, recwarn):
    pipe = compose(GOOD, toy_registry)
    A = np.zeros((6, 6))
    A[0, 1] = A[1, 0] = 1.0  # disconnected on purpose
    res = pipe.run(None, n_clusters=2, graph=gc.AffinityGraph(A))
    assert res.n_components is None
    assert not [w for w in recwarn if issubclass(w.category, gc.DisconnectedGraphWarning)]
