"""The ``general`` battery: ranking maths, generated data sets, the new peers, the suite."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import datasets, peers, report
from benchmarks.ranking import average_ranks, battery_rows, wins_losses
from benchmarks.suite import cells, load_suites

# scores with many ties and failures (None, NaN)
_SCORE = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0, -0.1]), st.none(), st.just(math.nan))


def _brute_rank(scores: list, i: int) -> float:
    """1 + the number strictly better + half the others tied with ``i`` (failures = -inf)."""
    v = [-math.inf if s is None or (isinstance(s, float) and math.isnan(s)) else s
         for s in scores]
    better = sum(x > v[i] for x in v)
    tied = sum(x == v[i] for j, x in enumerate(v) if j != i)
    return 1 + better + tied / 2


@settings(max_examples=200, deadline=None)
@given(st.lists(_SCORE, max_size=12))
def test_average_ranks_match_brute_force(scores):
    ranks = average_ranks(scores)
    assert ranks.tolist() == [_brute_rank(scores, i) for i in range(len(scores))]
    n = len(scores)
    assert math.isclose(ranks.sum(), n * (n + 1) / 2)


def test_average_ranks_examples():
    assert average_ranks([0.9, 0.5, 0.9, None]).tolist() == [1.5, 3.0, 1.5, 4.0]
    assert average_ranks([None, math.nan]).tolist() == [1.5, 1.5]
    assert average_ranks([]).size == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_SCORE, _SCORE), max_size=10))
def test_wins_losses_match_brute_force_and_are_antisymmetric(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    w, l, t = wins_losses(a, b)
    assert (w, l, t) == (sum(_brute_rank([x, y], 0) == 1 for x, y in pairs),
                         sum(_brute_rank([x, y], 0) == 2 for x, y in pairs),
                         sum(_brute_rank([x, y], 0) == 1.5 for x, y in pairs))
    assert wins_losses(b, a) == (l, w, t) and w + l + t == len(pairs)


def test_wins_losses_need_paired_scores():
    with pytest.raises(ValueError, match="different lengths"):
        wins_losses([0.1], [0.1, 0.2])


def _rows(table: dict[str, dict[str, float | None]]) -> list[dict]:
    return [{"method": m, "dataset": ds, "kind": "peer" if m.startswith("p") else "preset",
             "ari": s, "ami": s, "acc": s, "status": "ok" if s is not None else "over cap"}
            for ds, scores in table.items() for m, s in scores.items()]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.fixed_dictionaries({"a": _SCORE, "b": _SCORE, "p1": _SCORE}),
                min_size=1, max_size=6))
def test_battery_rows_mean_rank_and_versus_against_brute_force(tables):
    rows = _rows({f"d{i}": t for i, t in enumerate(tables)})
    out = {r["method"]: r for r in battery_rows(rows, ["p1"])}
    for name in ("a", "b", "p1"):
        expect = np.mean([_brute_rank([t[m] for m in ("a", "b", "p1")], ("a", "b", "p1")
                                      .index(name)) for t in tables])
        assert math.isclose(out[name]["mean_rank"], expect)
        assert out[name]["datasets"] == len(tables)
    assert out["a"]["versus"]["p1"] == wins_losses([t["a"] for t in tables],
                                                   [t["p1"] for t in tables])
    assert "p1" not in out["p1"]["versus"]
    ranks = [r["mean_rank"] for r in battery_rows(rows, ["p1"])]
    assert ranks == sorted(ranks)


def test_battery_rows_means_skip_failures_and_a_method_missing_on_a_data_set():
    rows = _rows({"d0": {"a": 0.8, "b": None, "p1": 0.4},
                  "d1": {"a": 0.2, "b": 0.6, "p1": 0.4},
                  "d2": {"a": 0.5, "p1": 0.5}})
    out = {r["method"]: r for r in battery_rows(rows, ["p1"])}
    assert out["b"]["scored"] == 1 and out["b"]["datasets"] == 2
    assert out["b"]["mean_ari"] == 0.6 and out["b"]["mean_rank"] == (3 + 1) / 2
    assert out["a"]["mean_rank"] == (1 + 3 + 1.5) / 3 and out["a"]["median_ari"] == 0.5
    assert out["a"]["versus"]["p1"] == (1, 1, 1)
    assert out["b"]["versus"]["p1"] == (1, 1, 0)
    table = report.battery_markdown(rows)
    assert "| `a` | preset | 3/3 | 50.0 | 50.0 |" in table and "vs p1 W–L" in table


# --------------------------------------------------------------------------------------
# Data sets, peers, the suite
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("fam", datasets.GENERATED + datasets.SHAPES)
def test_generated_families_are_deterministic_and_sized(fam):
    X, y = datasets.load(f"{fam}@1000")
    X2, y2 = datasets.load(f"{fam}@1000")
    assert X.shape == (1000, 2) and np.array_equal(X, X2) and np.array_equal(y, y2)
    assert np.isfinite(X).all() and set(np.unique(y)) == set(range(y.max() + 1))
    assert datasets.load(f"{fam}@3000")[0].shape == (3000, 2)


def test_unequal_blobs_are_unequal_and_unknown_family_is_named():
    y = datasets.load("blobs-unequal@1000")[1]
    counts = np.sort(np.bincount(y))
    assert counts[-1] > 10 * counts[0]
    with pytest.raises(ValueError, match="unknown generated family 'cubes'"):
        datasets.generated("cubes", 100)


def test_hdbscan_peer_picks_the_size_closest_to_k_without_labels():
    X, y = datasets.load("blobs-unequal@1000")
    est = peers.make_peer("sk-hdbscan", 5, 0).fit(X)
    found = len(np.unique(est.labels_))
    assert est.labels_.min() >= 0 and est.labels_.shape == y.shape
    from sklearn.cluster import HDBSCAN

    gaps = {}
    for f in peers.HDBSCAN_SIZES:
        size = max(5, int(f * 1000))
        lab = HDBSCAN(min_cluster_size=size, copy=True).fit_predict(X)
        gaps[size] = abs(len(set(lab.tolist()) - {-1}) - 5)
    assert gaps[est.min_cluster_size_] == min(gaps.values())
    assert found >= 5 - gaps[est.min_cluster_size_]


@pytest.mark.parametrize("name", ["sk-gmm", "genie", "sk-hdbscan",
                                  pytest.param("umap-kmeans", marks=pytest.mark.slow),
                                  pytest.param("umap-hdbscan", marks=pytest.mark.slow),
                                  pytest.param("evoc", marks=pytest.mark.slow)])
def test_new_peers_label_every_point(name):
    pytest.importorskip({"genie": "genieclust", "umap-kmeans": "umap", "umap-hdbscan": "umap",
                         "evoc": "evoc"}.get(name, "sklearn"))
    from sklearn.metrics import adjusted_rand_score

    # EVoC 0.3.2 raises on 2-d input (its start asks PCA for 4 components): digits for it
    X, y = datasets.load("digits") if name == "evoc" else datasets.load("moons@300")
    k = int(np.unique(y).size)
    labels = np.asarray(peers.make_peer(name, k, 0).fit(X).labels_)
    assert labels.shape == (len(y),) and labels.min() >= 0
    # the density peers find their own count (noise is one more cluster)
    assert name in ("sk-hdbscan", "umap-hdbscan", "evoc") or np.unique(labels).size == k
    assert adjusted_rand_score(y, labels) > 0.2  # far above chance


def test_missing_peer_package_names_the_bench_extra():
    with pytest.raises(ImportError, match="install the bench extra"):
        peers._need("graphclust_no_such_module", "nosuch")


def test_general_suite_covers_every_preset_and_peer_with_image_seeds():
    import graphclust

    suite = load_suites()["general"]
    assert suite.battery
    names = {m.name for m in suite.methods}
    assert set(graphclust.get_registry().presets.names()) <= names
    assert {"sk-kmeans", "sk-gmm", "sk-spectral", "sk-hdbscan", "genie", "umap-kmeans",
            "umap-hdbscan", "evoc"} <= names
    seeds = {}
    for c in cells(suite):
        seeds.setdefault((c.method, c.dataset), set()).add(c.seed)
    assert {len(s) for (m, d), s in seeds.items() if d in ("usps", "mnist")} == {3}
    assert {len(s) for (m, d), s in seeds.items() if d in ("iris", "moons@20000")} == {1}
    expected = {"usps", "pendigits", "mnist_test", "mnist", "letter", "connect4", "coil20",
                "digits", "iris", "wine", "breast_cancer"} | {
        f"{g}@{n}" for g in datasets.GENERATED + datasets.SHAPES for n in (1000, 20000)}
    assert {d for _, d in seeds} == expected


def test_shapes_are_what_their_docstring_says():
    y = datasets.load("moons-unequal@1000")[1]
    assert np.bincount(y).tolist() == [875, 125]
    X, y = datasets.load("ring-blob@3000")
    r = np.hypot(*X.T)
    assert np.median(r[y == 1]) == pytest.approx(5.0, abs=0.1) and np.median(r[y == 0]) < 1.5
    X, y = datasets.load("bridge@2000")
    bridge = np.abs(X[:, 1]) < 0.3
    assert (y[(X[:, 0] < -1) & bridge] == 0).all() and (y[(X[:, 0] > 1) & bridge] == 1).all()
    assert np.unique(datasets.load("nested-noise@1000")[1]).size == 4
    assert np.unique(datasets.load("aniso-overlap@1000")[1]).size == 3
    assert datasets.load("spirals@1000")[1].tolist() == [0] * 500 + [1] * 500


def test_families_suite_runs_auto_beside_evoc_kmeans_genie_and_the_mixture():
    suite = load_suites()["families"]
    pairs = {(c.method, c.dataset) for c in cells(suite)}
    assert {("auto", "mnist"), ("evoc", "mnist"), ("sk-kmeans-1", "mnist")} <= pairs
    for fam in datasets.SHAPES:
        assert {("auto", f"{fam}@20000"), ("genie", f"{fam}@1000"),
                ("sk-gmm", f"{fam}@20000")} <= pairs
