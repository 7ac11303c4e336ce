"""Fuzzing the user-facing entry points: random spec dicts, spec texts and ``--set`` strings.

The only outcomes allowed are a successful fit or one of graphclust's own errors
(:class:`~graphclust.SpecError` — including :class:`~graphclust.UnknownPartError` — or
:class:`~graphclust.InputError`). Any other exception (``AttributeError``,
``TypeError``, ``IndexError``...) is a bug. The default tier runs a few hundred
examples; ``--run-slow`` runs the ``slow`` variants with 10 000 each.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphclust as gc
from graphclust import GraphClustering, InputError, SpecError, compose
from graphclust.cli import main

ALLOWED = (SpecError, InputError)

_REG = gc.get_registry()
PART_NAMES = sorted({r.name for r in _REG.all_parts()})
PARAM_NAMES = sorted({f.name for r in _REG.all_parts() for f in r.cls.parameters()})
PRESETS = _REG.presets.names()
KEYS = ["n_clusters", "seed", "adapter", "metrics", "anchors", "graph", "solver", "rounding",
        "summary", "_target_"]

# Small numbers only: a valid random spec is fitted, and n_iter = 10**9 would be a
# (legitimately) long run, not a crash.
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 40), st.sampled_from([0.0, -1.0, 0.5, 1e-300,
                                                                     1e300, float("nan"),
                                                                     float("inf")]),
    st.floats(-5, 50, allow_nan=False), st.text(max_size=8),
    st.sampled_from(["exact", "approx", "gaussian", "binary", "or", "fw", "fast", "kmeans",
                     "random", "anchor-level", "similarity", "distance"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["name", *PARAM_NAMES[:20]]), inner, max_size=3)),
    max_leaves=6)


@st.composite
def sections(draw):
    if draw(st.integers(0, 9)) == 0:
        return draw(values)
    out = {}
    if draw(st.integers(0, 7)):
        out["name"] = draw(st.one_of(st.sampled_from(PART_NAMES), st.text(max_size=6),
                                     st.integers(), st.sampled_from(["os.system", "_x"])))
    for key in draw(st.lists(st.sampled_from(PARAM_NAMES), max_size=3)):
        out[key] = draw(values)
    if draw(st.integers(0, 12)) == 0:
        out[draw(st.one_of(st.text(max_size=5), st.integers(), st.none()))] = draw(values)
    return out


@st.composite
def spec_dicts(draw):
    if draw(st.booleans()):
        base = json.loads(json.dumps(_REG.presets.get(draw(st.sampled_from(PRESETS)))))
    else:
        base = {}
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=4)):
        if key in ("anchors", "graph", "solver", "rounding"):
            base[key] = draw(sections())
        elif key == "metrics":
            base[key] = draw(st.one_of(values, st.lists(sections(), max_size=2)))
        elif key == "adapter":
            base[key] = draw(st.one_of(st.just("anchor-level"), values))
        else:
            base[key] = draw(values)
    if draw(st.integers(0, 15)) == 0:  # the Python API allows keys JSON and TOML cannot
        base[draw(st.one_of(st.integers(), st.none(), st.booleans()))] = draw(values)
    for sec in draw(st.lists(st.sampled_from(["anchors", "graph", "solver", "rounding"]),
                             max_size=2)):
        if isinstance(base.get(sec), dict):
            base[sec][draw(st.sampled_from(PARAM_NAMES))] = draw(values)
    return base


KIND_OF = {"anchors": "anchors", "graph": "graph", "solver": "solver", "rounding": "rounding"}


@st.composite
def preset_mutations(draw):
    """A preset with a few changes that mostly stay valid: a part swapped for another of its
    kind (any bundle), a parameter of that part set to a small value, the adapter toggled."""
    spec = json.loads(json.dumps(_REG.presets.get(draw(st.sampled_from(PRESETS)))))
    for _ in range(draw(st.integers(1, 3))):
        sec = draw(st.sampled_from(list(KIND_OF)))
        catalog = _REG.parts(KIND_OF[sec])
        action = draw(st.integers(0, 4))
        if action == 0 or not isinstance(spec.get(sec), dict):
            spec[sec] = {"name": draw(st.sampled_from(catalog.names()))}
        elif action == 1:
            spec["adapter"] = draw(st.sampled_from([None, "anchor-level"]))
        elif action == 2:
            spec.pop(sec, None)
        else:
            name = spec[sec].get("name")
            if name in catalog:
                fields = [f.name for f in catalog.get(name).parameters()]
                if fields:
                    spec[sec][draw(st.sampled_from(fields))] = draw(values)
    return {k: v for k, v in spec.items() if v is not None}


spec_texts = st.one_of(
    st.text(max_size=40),
    values,  # not text at all: lists, numbers, None
    spec_dicts().map(lambda d: json.dumps(d, allow_nan=True)),
    st.builds(lambda a, b: f"{a} = {b}", st.sampled_from(KEYS), st.text(max_size=12)),
    st.builds(lambda s, k, v: f"[{s}]\n{k} = {v}\n", st.sampled_from(KEYS),
              st.sampled_from(["name", *PARAM_NAMES]),
              st.sampled_from(["1", "-1", "'knn'", "[1, 2]", "{a = 1}", "true", "1e999", "x"])),
)

set_strings = st.one_of(
    st.text(max_size=20),
    st.builds(lambda k, v: f"{k}={v}",
              st.one_of(st.sampled_from(KEYS),
                        st.builds(lambda s, p: f"{s}.{p}",
                                  st.sampled_from(KEYS), st.sampled_from(["name", *PARAM_NAMES])),
                        st.builds(lambda s, p, q: f"{s}.{p}.{q}", st.sampled_from(KEYS),
                                  st.sampled_from(PARAM_NAMES), st.sampled_from(["name", "x"])),
                        st.text(max_size=6)),
              st.one_of(st.sampled_from(["1", "0", "-2", "3.5", "nan", "inf", "true", "'kmeans'",
                                         "knn", "[1, 2]", "{ name = 'knn' }", "{", "", "[",
                                         "\"\"", "{ x = 1 }"]),
                        st.text(max_size=6))),
)

X_SMALL = np.random.default_rng(0).normal(size=(24, 3)) + np.repeat(np.eye(3) * 6, 8, axis=0)
#: (X, n_clusters) pairs: small blobs, a handful of points, one feature, duplicated rows,
#: large constant offsets (which change no distance, issue 30).
DATA = [
    (X_SMALL, 3),
    (X_SMALL[::4], 2),
    (X_SMALL[:7, :1], 3),
    (np.repeat(X_SMALL[::6], 4, axis=0), 4),
    (np.abs(X_SMALL[:30]).astype(np.float32), 5),
    (X_SMALL + 1e9, 3),
    (X_SMALL[::2] - 3e12, 2),
    (X_SMALL.astype(np.float32) + np.float32(1e4), 3),
]


def _fit_or_clean_error(spec, which: int = 0) -> None:
    X, k = DATA[which % len(DATA)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            GraphClustering(spec, n_clusters=k, random_state=0).fit(X)
    except ALLOWED:
        pass


def _compose_then_fit(spec, which: int = 0) -> None:
    try:
        compose(spec)
    except ALLOWED:
        return
    _fit_or_clean_error(spec, which)


FAST = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
SLOW = settings(max_examples=10_000, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


@FAST
@given(st.one_of(spec_dicts(), preset_mutations()), st.integers(0, len(DATA) - 1))
def test_random_spec_dicts_never_crash(spec, which):
    _compose_then_fit(spec, which)


@FAST
@given(spec_texts)
def test_random_spec_texts_never_crash(text):
    _compose_then_fit(text)


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "small.csv"
    np.savetxt(path, X_SMALL, delimiter=",")
    return str(path)


def _cli_set(csv: str, texts: list[str], capsys) -> None:
    argv = ["run", "--preset", "ncut", "--dataset", csv, "--n-clusters", "3", "--quiet"]
    for text in texts:
        argv += ["--set", text]
    capsys.readouterr()  # forget the previous example's output
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage error, e.g. `--set -x` (an option)
        code = exc.code
        assert code == 2 and "error:" in capsys.readouterr().err
        return
    err = capsys.readouterr().err
    assert code in (0, 2)
    if code == 2:
        assert err.startswith("error:") and "Traceback" not in err


@settings(FAST, max_examples=150)
@given(text=st.lists(set_strings, min_size=1, max_size=3))
def test_random_set_strings_never_crash(small_csv, text, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _cli_set(small_csv, text, capsys)


arrays = st.builds(
    lambda shape, fill: np.full(shape, fill),
    st.sampled_from([(3,), (24, 24), (24, 5), (5, 5), (24, 24, 2), (4, 3), (0, 3)]),
    st.sampled_from([0.0, 1.0, -1.0, float("nan"), "a"]))
override_dicts = st.dictionaries(
    st.one_of(st.sampled_from(KEYS), st.text(max_size=5)),
    st.one_of(values, arrays, st.builds(dict, name=st.sampled_from(PART_NAMES))), max_size=3)
set_param_dicts = st.dictionaries(
    st.one_of(st.builds(lambda s, p: f"{s}__{p}", st.sampled_from(KEYS + ["x"]),
                        st.sampled_from(PARAM_NAMES)),
              st.sampled_from(["spec", "n_clusters", "random_state", "overrides", "verbose",
                               "nosuch"]), st.sampled_from(KEYS)),
    st.one_of(values, arrays), max_size=3)


def _estimator_api(preset: str, overrides: dict, params: dict) -> None:
    try:
        model = GraphClustering(preset, n_clusters=3, random_state=0, overrides=overrides)
        model.set_params(**params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X_SMALL)
    except ALLOWED:
        pass


@settings(FAST, max_examples=150)
@given(st.sampled_from(PRESETS), override_dicts, set_param_dicts)
def test_random_estimator_overrides_and_set_params_never_crash(preset, overrides, params):
    _estimator_api(preset, overrides, params)


@pytest.mark.slow
@SLOW
@given(st.sampled_from(PRESETS), override_dicts, set_param_dicts)
def test_random_estimator_overrides_and_set_params_never_crash_slow(preset, overrides, params):
    _estimator_api(preset, overrides, params)


@pytest.mark.slow
@SLOW
@given(st.one_of(spec_dicts(), preset_mutations()), st.integers(0, len(DATA) - 1))
def test_random_spec_dicts_never_crash_slow(spec, which):
    _compose_then_fit(spec, which)


@pytest.mark.slow
@SLOW
@given(spec_texts)
def test_random_spec_texts_never_crash_slow(text):
    _compose_then_fit(text)


@pytest.mark.slow
@SLOW
@given(text=st.lists(set_strings, min_size=1, max_size=3))
def test_random_set_strings_never_crash_slow(small_csv, text, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _cli_set(small_csv, text, capsys)


@pytest.mark.parametrize("preset", ["ncer", "dlc"])
def test_an_all_zero_given_graph_is_a_clean_error(preset):
    """Found by the slow estimator fuzz (hypothesis seed 7): a given (24, 5) graph of
    zeros crashed ``ncer-embedding`` (an IndexError on its rank-0 basis) and made
    ``dlc`` raise a bare ValueError (no landmarks); both are InputErrors now."""
    model = GraphClustering(preset, n_clusters=3, random_state=0)
    model.set_params(graph=np.full((24, 5), 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError):
            model.fit(X_SMALL)


@pytest.mark.parametrize("which", [0, 3])
def test_a_vanishing_nystrom_bandwidth_is_not_nan(which):
    """Found by the slow spec fuzz: ``bandwidth = 1e-300`` underflowed ``2σ²`` to zero,
    the landmark kernel became NaN (``exp(-0/0)``) and ``eigh`` raised LinAlgError or a
    bare ValueError. The kernel now keeps 1 on coinciding pairs and 0 elsewhere."""
    spec = {"anchors": {"name": "random", "n_anchors": 500},
            "graph": {"name": "nystrom-landmarks", "n_neighbors": 5, "bandwidth": 1e-300},
            "solver": {"name": "nystrom"},
            "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True}}
    _compose_then_fit(spec, which)
