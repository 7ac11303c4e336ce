"""The auto rule preset: which pipeline for which profile (synthetic profiles, no data)."""

import math

import attrs
import graphclust as gc
import pytest
from graphclust._rules import DataProfile
from graphclust_plugins.auto._rules_base import sparse_rows
from graphclust_plugins.auto.rule_auto import (
    MANIFOLD_CLUSTER_DIVISOR,
    MANIFOLD_EPOCHS,
    MANIFOLD_MIN_SAMPLES,
    MANIFOLD_SAMPLE,
    MANIFOLD_SAMPLE_DIVISOR,
    MANIFOLD_SAMPLE_MAX,
    MANIFOLD_SAMPLED_NEGATIVES,
    ANCHORS_PER_CLUSTER,
    EIG_TOL,
    EXACT_BUDGET,
    EXACT_MAX_N,
    HIGH_DIM,
    MANIFOLD_PER_CLUSTER,
    MAX_ANCHORS,
    MIN_ANCHORS,
    PCA_COMPONENTS,
    SAMPLED_ANCHORS_N,
    UNIT_SPREAD,
    auto_rule,
    manifold_sample_size,
    n_anchors,
)
from graphclust.numerics.distances import SPARSE_KNN_MIN_WIDTH
from hypothesis import given, settings
from hypothesis import strategies as st


def profile(n=1000, d=10, k=3, **kw):
    return DataProfile(n=n, d=d, k=k, **kw)


def test_auto_is_a_registered_rule_preset():
    reg = gc.get_registry()
    assert "auto" in reg.rules and "auto" not in reg.presets
    assert "auto" in reg.preset_names()
    assert reg.rules.get("auto").provider.bundle == "auto"


@pytest.mark.parametrize("n,d,sparse", [(150, 4, False), (1000, 2, False), (EXACT_MAX_N, 2, False),
                                        (EXACT_MAX_N, HIGH_DIM, False), (1440, 40, True),
                                        (5000, HIGH_DIM, True)])
def test_small_low_dimensional_or_sparse_work_runs_the_exact_knn_graph(n, d, sparse):
    spec = auto_rule(profile(n, d, k=10, sparse=sparse))
    assert spec["graph"]["name"] == "knn" and spec["graph"]["method"] == "exact"
    assert spec["graph"]["weight"] == "binary" and spec["graph"]["symmetrize"] == "mean"
    assert "anchors" not in spec
    assert spec["solver"] == {"name": "spectral", "drop_trivial": "connected",
                              "normalize_rows": True}


@pytest.mark.parametrize("n,d,sparse", [(200_000, 8, False), (SAMPLED_ANCHORS_N, HIGH_DIM, False),
                                        (EXACT_MAX_N + 1, 2, False), (20_000, 2, False),
                                        (20_000, 40, True)])
def test_large_low_dimensional_or_sparse_work_runs_the_anchor_pipeline(n, d, sparse):
    spec = auto_rule(profile(n, d, k=10, sparse=sparse))
    assert spec["anchors"] == {"name": "kmeans", "n_anchors": min(1000, n // 10),
                               "max_iter": 10, "n_init": 1}
    assert spec["graph"] == {"name": "gaussian-anchor", "n_neighbors": 5}
    assert spec["solver"] == {"name": "spectral", "drop_trivial": "connected",
                              "normalize_rows": True}


@pytest.mark.parametrize("n,d", [(70_000, 784), (67_557, 126), (9_298, 256), (10_000, 784),
                                 (EXACT_MAX_N + 1, HIGH_DIM + 1), (SAMPLED_ANCHORS_N, 51)])
def test_high_dimensional_dense_data_with_many_points_per_cluster_run_the_manifold_family(n, d):
    spec = auto_rule(profile(n, d, k=10))
    # the sample-aware pipeline (every row is the sample up to MANIFOLD_SAMPLE rows);
    # pynndescent (a base dependency), never faiss: the result does not depend on extras
    assert spec["anchors"]["name"] == "sample"
    assert ("all rows" in spec["summary"]) == (n <= MANIFOLD_SAMPLE)
    # NN-descent on the leading components where d is large, the candidates measured on
    # the features (distances on 50 components merged two MNIST digits); all of d else
    from graphclust_plugins.auto.rule_auto import (MANIFOLD_NEGATIVES,
                                                   MANIFOLD_SEARCH_COMPONENTS)
    on_components = d > 2 * MANIFOLD_SEARCH_COMPONENTS
    components = {"pca_components": MANIFOLD_SEARCH_COMPONENTS} if on_components else {}
    assert spec["adapter"]["graph"] == {
        "name": "fuzzy-knn", "n_neighbors": 15, "method": "approx",
        **({**components, "distances": "features"} if on_components else {})}
    assert (f"on {MANIFOLD_SEARCH_COMPONENTS} principal components" in spec["summary"]
            ) == on_components
    # above the sample, the rows walk graphclust's NN-descent graph of the sample, in the
    # space the sample's graph was searched in (one NN-descent, thread-count-free)
    assert spec["graph"] == {"name": "sample-knn", "n_neighbors": 15, **(
        {"method": "descent", **components} if n > MANIFOLD_SAMPLE else {})}
    assert spec["solver"] == {"name": "umap-layout", "n_components": 10, "min_dist": 0.0,
                              "init": "pca", "n_epochs": MANIFOLD_EPOCHS,
                              "negative_sample_rate": (MANIFOLD_NEGATIVES
                                                       if n <= MANIFOLD_SAMPLE else
                                                       MANIFOLD_SAMPLED_NEGATIVES)}
    # k given: the tree's smallest cluster is half an average cluster of the sample
    assert spec["adapter"]["rounding"] == {
        "name": "density", "estimate": "leaf", "min_samples": MANIFOLD_MIN_SAMPLES,
        "min_cluster_size": max(15, manifold_sample_size(n) // (MANIFOLD_CLUSTER_DIVISOR * 10))}
    # three starts, the most modular kept, where layouts are cheap; the sample's own count
    # above the sample (its layout a fixed cost beside the placement of n rows)
    from graphclust_plugins.auto.rule_auto import (MANIFOLD_MULTISTART_MAX_N,
                                                   MANIFOLD_MULTISTART_STARTS,
                                                   MANIFOLD_SAMPLED_STARTS)
    starts = (MANIFOLD_SAMPLED_STARTS if n > MANIFOLD_SAMPLE else
              MANIFOLD_MULTISTART_STARTS if n <= MANIFOLD_MULTISTART_MAX_N else 1)
    assert spec["adapter"].get("n_starts", 1) == starts
    assert (f"the most modular of {starts} starts" in spec["summary"]) == (starts > 1)
    # without k: the same sample-aware spec, the tree's size left to the estimate (n // k_max)
    no_k = auto_rule(profile(n, d, k=None))
    assert no_k["adapter"].get("n_starts", 1) == starts
    assert {key: no_k[key] for key in ("anchors", "graph", "solver", "rounding")
            } == {key: spec[key] for key in ("anchors", "graph", "solver", "rounding")}
    assert no_k["adapter"]["rounding"] == {"name": "density", "estimate": "leaf",
                                           "min_samples": MANIFOLD_MIN_SAMPLES}
    assert no_k["adapter"]["graph"] == spec["adapter"]["graph"]
    assert f"n/k = {n / 10:.0f} >= {MANIFOLD_PER_CLUSTER}" in spec["summary"]
    # fewer points per cluster: the spectral graph on principal components (rule 4)
    fewer = auto_rule(profile(n, d, k=int(n // MANIFOLD_PER_CLUSTER) + 1))
    assert fewer["graph"]["name"] in ("knn", "gaussian-anchor") and "UMAP" not in fewer["summary"]


@pytest.mark.parametrize("n,d", [(9_298, 256), (4_000, 20_000), (1797, 64), (1440, 1024),
                                 (60, 51), (63_245, 51)])
def test_high_dimensional_dense_work_runs_the_knn_graph_on_principal_components(n, d):
    spec = auto_rule(profile(n, d, k=max(10, int(n // MANIFOLD_PER_CLUSTER) + 1)))
    assert "anchors" not in spec
    graph = spec["graph"]
    assert graph["name"] == "knn" and graph["pca_components"] == PCA_COMPONENTS
    assert graph["n_neighbors"] == min(7, n - 1) and graph["weight"] == "gaussian"
    assert graph["symmetrize"] == "mean"
    assert graph["method"] == "exact"  # never faiss HNSW (an extra) in auto
    assert spec["solver"] == {"name": "spectral", "drop_trivial": "connected",
                              "normalize_rows": True, "eig_tol": EIG_TOL}


@pytest.mark.parametrize("n,d", [(SAMPLED_ANCHORS_N + 1, 50), (1_000_000, 50),
                                 (10**8, 3)])
def test_very_large_n_samples_its_anchors(n, d):
    spec = auto_rule(profile(n, d, k=10))
    assert spec["anchors"] == {"name": "hybrid", "n_anchors": 1000, "candidate_factor": 10}
    assert spec["graph"] == {"name": "knr-bipartite", "n_neighbors": 5, "search": "approx",
                             "candidates": 10}
    assert spec["solver"]["name"] == "tcut"


@pytest.mark.parametrize("n", [500, 70_000, 1_000_000])
def test_chunked_input_takes_the_chunkwise_sampled_recipe_scaled_by_the_same_rule(n):
    spec = auto_rule(profile(n, 20, k=5, chunked=True, range_spread=100.0))
    assert spec["anchors"]["name"] == "hybrid" and spec["solver"]["name"] == "tcut"
    assert spec["scale"] == "standard" and "chunked" in spec["summary"]
    assert auto_rule(profile(n, 20, k=5, chunked=True))["scale"] == "none"


def test_budget_boundary_is_n_squared_d():
    n = EXACT_MAX_N
    d_at = int(EXACT_BUDGET // (n * n))
    k = n // MANIFOLD_PER_CLUSTER + 1  # too few points per cluster for the manifold rule
    assert auto_rule(profile(n, d_at, k=k))["graph"]["name"] == "knn"
    above = auto_rule(profile(n, d_at + 1, k=k))["graph"]
    assert above["name"] == "knn" and above["pca_components"] == PCA_COMPONENTS
    assert auto_rule(profile(n + 1, HIGH_DIM))["graph"]["name"] == "gaussian-anchor"


@pytest.mark.parametrize("spread,kind", [(1.0, "none"), (2.7, "none"), (UNIT_SPREAD, "none"),
                                         (UNIT_SPREAD * 1.01, "standard"), (75.0, "standard"),
                                         (1e6, "standard")])
def test_scale_follows_the_column_range_spread(spread, kind):
    assert auto_rule(profile(range_spread=spread))["scale"] == kind
    assert auto_rule(profile(n=100_000, d=100, range_spread=spread))["scale"] == kind


def test_scale_ignores_the_std_spread_and_the_offset():
    """Pixels: one unit, very unequal column stds (near-constant borders), far from 0."""
    assert auto_rule(profile(std_spread=1e4, offset=50.0, range_spread=1.0))["scale"] == "none"


@pytest.mark.parametrize("n,k,m", [(1_000_000, 2, MIN_ANCHORS), (1_000_000, 10, MIN_ANCHORS),
                                   (1_000_000, 40, 40 * ANCHORS_PER_CLUSTER),
                                   (1_000_000, 500, MAX_ANCHORS), (30_000, 100, 3000),
                                   (5_000, 3, 500)])
def test_anchor_count_grows_with_k_and_is_capped(n, k, m):
    assert n_anchors(profile(n=n, d=50, k=k)) == m


def test_summary_says_why():
    spec = auto_rule(profile(n=100_000, d=50, k=10, range_spread=20.0))
    assert "1000 k-means anchors" in spec["summary"] and "standardised" in spec["summary"]


profiles = st.builds(
    DataProfile, n=st.integers(2, 10**8), d=st.integers(1, 10**5), k=st.integers(1, 1000),
    sparse=st.booleans(), zero_fraction=st.floats(0, 1),
    dtype=st.sampled_from(["float32", "float64"]),
    range_spread=st.floats(1, 1e12), std_spread=st.floats(1, 1e12),
    constant_fraction=st.floats(0, 1), nonnegative=st.booleans(), offset=st.floats(0, 1e6))


def _exact_steps(spec: dict, p: DataProfile) -> list[tuple[str, float]]:
    """The sections of a spec that compare every point with every other, with their work
    ``n² · d`` (``d`` the searched dimension: the principal components when projected)."""
    out = []
    members = [m for m in spec.get("ensemble", {}).get("members", []) if isinstance(m, dict)]
    for s in [spec, *members]:
        graph = s.get("graph") or {}
        if graph.get("name") in ("knn", "poly-knn") and graph.get("method", "auto") != "approx":
            d = min(p.d, graph.get("pca_components") or p.d)
            if sparse_rows(p) and not graph.get("pca_components"):  # a pair costs its width
                d = max(SPARSE_KNN_MIN_WIDTH, math.ceil((1 - p.zero_fraction) * p.d))
            out.append((graph["name"], float(p.n) ** 2 * d))
    return out


@settings(max_examples=300, deadline=None)
@given(profiles)
def test_no_exact_n_squared_step_above_the_budget(p):
    spec = auto_rule(p)
    steps = _exact_steps(spec, p)
    if p.n > EXACT_MAX_N:  # only rule 4's search on principal components, within budget
        assert all(spec["graph"].get("pca_components") for _ in steps)
    assert all(work <= EXACT_BUDGET for _, work in steps)
    manifold = p.d > HIGH_DIM and not sparse_rows(p) and p.n >= MANIFOLD_PER_CLUSTER * p.k
    if p.n <= EXACT_MAX_N and not p.chunked and not manifold and (
            p.exact_work <= EXACT_BUDGET or (p.d > HIGH_DIM and not sparse_rows(p))):
        assert [name for name, _ in steps] == ["knn"]


@settings(max_examples=60, deadline=None)
@given(profiles)
def test_every_decision_is_a_valid_spec_and_deterministic(p):
    spec = auto_rule(p)
    assert spec == auto_rule(attrs.evolve(p))
    gc.compose({**spec, "n_clusters": p.k})  # raises SpecError when invalid
    if "anchors" in spec and spec["anchors"]["name"] == "sample":  # the manifold's sample
        assert spec["anchors"]["n_anchors"] == manifold_sample_size(p.n)
    elif "anchors" in spec:
        assert 1 <= spec["anchors"]["n_anchors"] <= max(p.n // 10, 2 * p.k, 1)


@pytest.mark.parametrize("n, d, sparse, held, not_held", [
    (50_000, 8, False, "n = 50000 > 5000", "n²·d"),  # the work is within budget
    (70_000, HIGH_DIM, False, "n = 70000 > 5000 and n²·d = 2.45e+11 > 2e+11", "or"),
])
def test_anchor_summary_states_only_the_conditions_that_held(n, d, sparse, held, not_held):
    summary = auto_rule(profile(n=n, d=d, k=10, sparse=sparse))["summary"]
    assert "k-means anchors" in summary
    assert summary.startswith("auto: rule 3: ")
    why = summary.split(":")[2]
    assert held in why and not_held not in why.replace(held, "")


@pytest.mark.parametrize("n, zero_fraction, method", [
    (1_000, 0.99, "exact"), (EXACT_MAX_N, 0.999, "exact"),
    # 2 500 nonzeros a row (the fewest zeros of sparse rows): n²·width within the budget
    (EXACT_MAX_N, 0.95, "exact"),
    (EXACT_MAX_N + 1, 0.999, "approx"), (1_000_000, 0.999, "approx")])
def test_sparse_high_dimensional_data_get_the_knn_graph_on_their_rows(n, zero_fraction,
                                                                     method):
    p = profile(n=n, d=50_000, k=10, sparse=True, nonnegative=True,
                zero_fraction=zero_fraction)
    spec = auto_rule(p)
    assert spec["scale"] == "l2" and "anchors" not in spec
    assert spec["graph"] == {"name": "knn", "n_neighbors": 10, "weight": "gaussian",
                             "symmetrize": "mean", "method": method}
    assert spec["solver"]["name"] == "spectral" and "never densified" in spec["summary"]
    signed = auto_rule(attrs.evolve(p, nonnegative=False))  # no cosine: the scale rule
    assert signed["scale"] == "none" and signed["graph"] == spec["graph"]


@pytest.mark.parametrize("chunked,n", [(True, 70_000), (True, 10**7), (False, 630_000)])
def test_high_dimensional_dense_data_beyond_memory_run_the_manifold_family_on_a_sample(
        chunked, n):
    from graphclust_plugins.auto.rule_auto import (MANIFOLD_SAMPLE, MANIFOLD_SAMPLED_NEGATIVES,
                                                   MANIFOLD_SAMPLED_STARTS)

    spec = auto_rule(profile(n, 784, k=10, chunked=chunked))
    # the sample: every row up to MANIFOLD_SAMPLE, a third of 630 000, the bound at 10**7
    assert spec["anchors"] == {"name": "sample", "n_anchors": {
        70_000: 70_000, 630_000: 210_000, 10**7: MANIFOLD_SAMPLE_MAX}[n]}
    assert spec["anchors"]["n_anchors"] == manifold_sample_size(n)
    assert spec["graph"]["name"] == "sample-knn" and spec["adapter"]["name"] == "on-sample"
    assert spec["adapter"]["rounding"]["min_cluster_size"] == max(
        15, manifold_sample_size(n) // (MANIFOLD_CLUSTER_DIVISOR * 10))
    assert (f"fitted on a sample of {manifold_sample_size(n)} rows" in spec["summary"]) == (
        n > MANIFOLD_SAMPLE)
    # a sample: one search space for the placement and the sample's graph (one shared
    # NN-descent); every row the sample: no placement search
    sampled = n > MANIFOLD_SAMPLE
    assert spec["graph"].get("method") == ("descent" if sampled else None)
    assert spec["adapter"]["graph"]["pca_components"] == 64
    assert spec["graph"].get("pca_components") == (64 if sampled else None)
    assert spec["solver"]["name"] == "umap-layout"
    # the sample's layout: its own negatives and starts (a fixed cost beside n rows)
    from graphclust_plugins.auto.rule_auto import MANIFOLD_NEGATIVES
    assert spec["solver"].get("negative_sample_rate") == (
        MANIFOLD_SAMPLED_NEGATIVES if sampled else MANIFOLD_NEGATIVES)
    starts = MANIFOLD_SAMPLED_STARTS if sampled else 1
    assert spec["adapter"].get("n_starts", 1) == starts
    assert (f"the most modular of {starts} starts" in spec["summary"]) == (starts > 1)
    assert ("chunked input" in spec["summary"]) == chunked
    assert ("placed by their 15 nearest sample rows" in spec["summary"]) == (
        n > MANIFOLD_SAMPLE)
    # without k: the same spec, k estimated by the density tree of the sample's layout
    no_k = auto_rule(profile(n, 784, k=None, chunked=chunked))
    assert no_k["adapter"]["graph"] == spec["adapter"]["graph"]
    assert no_k["anchors"] == spec["anchors"]
    assert "min_cluster_size" not in no_k["adapter"]["rounding"]
    assert no_k["solver"]["name"] == "umap-layout"


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**9))
def test_the_manifold_sample_is_every_row_then_a_share_of_them_within_its_bound(n):
    S = manifold_sample_size(n)
    # every row up to MANIFOLD_SAMPLE (the route at and below it is unchanged), a sample
    # beyond it: at least MANIFOLD_SAMPLE rows, at most the bound, never all rows
    assert S == n if n <= MANIFOLD_SAMPLE else MANIFOLD_SAMPLE <= S < n
    assert S <= MANIFOLD_SAMPLE_MAX
    # up to DIVISOR * MANIFOLD_SAMPLE rows the sample is MANIFOLD_SAMPLE, as before
    if MANIFOLD_SAMPLE < n <= MANIFOLD_SAMPLE_DIVISOR * MANIFOLD_SAMPLE:
        assert S == MANIFOLD_SAMPLE
    # in between, the placed share of the rows is the same at every n
    if n // MANIFOLD_SAMPLE_DIVISOR >= MANIFOLD_SAMPLE and S < MANIFOLD_SAMPLE_MAX:
        assert S == n // MANIFOLD_SAMPLE_DIVISOR
    # more rows never shrink the sample
    assert manifold_sample_size(n + 1) >= S


@pytest.mark.slow  # a UMAP layout (numba): 25 s; the identity itself is also tested in
# tests/manifold/test_manifold_sample.py on the preset
def test_the_manifold_family_in_memory_is_the_sample_aware_spec_equal_to_the_whole_fit():
    from sklearn.datasets import make_blobs

    from graphclust import GraphClustering

    X, _ = make_blobs(600, 60, centers=2, random_state=1)
    spec = auto_rule(profile(1200, 60, k=2))
    whole = {key: spec[key] for key in ("scale",)} | {
        "graph": spec["adapter"]["graph"], "solver": spec["solver"],
        "rounding": spec["adapter"]["rounding"]}
    assert spec["anchors"]["name"] == "sample"
    labels = GraphClustering(spec, n_clusters=2, random_state=0).fit_predict(X)
    assert (labels == GraphClustering(whole, n_clusters=2, random_state=0)
            .fit_predict(X)).all()
