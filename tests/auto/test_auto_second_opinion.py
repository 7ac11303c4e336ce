"""auto's rule 12: "no structure" only when a second test says it too.

When the rule that decided answers ``k = 1``, the spec's ``second_opinion`` (rule 2's
exact 10-NN graph, its eigengap) is fitted; with ``k >= 2`` that passes the null test
(its ``λ_k`` at most ``NULL_RATIO`` of a Gaussian reference's,
graphclust.numerics.null_reference) its fit is the fit (graphclust._ksecond,
docs/auto.rst rule 12).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import graphclust as gc
from graphclust import DataProfile, NoClusterStructureWarning, SpecError
from graphclust._ksecond import fit_with_second_opinion
from graphclust.numerics.null_reference import (NULL_RATIO, gaussian_reference, null_ratio,
                                                null_test, uniform_reference)
from graphclust_plugins.auto.rule_auto import auto_rule, exact_spec


def _fit(spec, X, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = gc.GraphClustering(spec, random_state=0, **kw).fit(X)
    return model, [w.category for w in caught]


@pytest.mark.slow  # about 1 s on an idle machine, the density tree's first fit compiles
def test_three_blobs_the_tree_calls_one_cluster_get_k_3_from_the_second_opinion():
    X, y = make_blobs(300, 4, centers=3, cluster_std=2.0, random_state=0)
    model, warned = _fit("auto", X)
    sel = model.k_selection_
    first = sel.details["first"]
    assert (first["k"], first["method"], first["structure"]) == (1, "density-tree", False)
    assert first["candidates"] and first["rule"]  # the first selection is kept whole
    assert model.n_clusters_ == 3 and sel.method == "eigengap" and sel.structure
    assert "second opinion" in sel.rule and "rule 12" in sel.details["second_opinion"]
    assert "rule 9" in model.resolved_spec_["summary"]
    assert "rule 12" in model.resolved_spec_["summary"]
    assert NoClusterStructureWarning not in warned
    assert adjusted_rand_score(y, model.labels_) > 0.9
    assert "k" in model.timings_  # the first fit's seconds
    test = sel.details["null_test"]  # touching blobs: λ_3 well below the reference's
    assert test["accepted"] and 0.2 < test["ratio"] <= NULL_RATIO
    # the fit is the second spec's own fit on the same data and seed
    second = auto_rule(model.profile_)["second_opinion"]
    direct, _ = _fit(second, X)
    assert np.array_equal(direct.labels_, model.labels_)


def _structureless(d: int) -> np.ndarray:
    """A structureless draw whose eigengap answers k >= 2 in 2 and 3 dimensions (an
    elongated Gaussian: a disc's second and third modes sit below a gap)."""
    rng = np.random.default_rng(0)
    X2 = rng.normal(size=(300, 2)) * [1, 5]
    X3 = rng.normal(size=(300, 3)) * [1, 3, 5]
    return {2: X2, 3: X3}.get(d, rng.normal(size=(400, d)))


@pytest.mark.slow
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_a_structureless_draw_stays_one_cluster_with_one_warning(d):
    """In 2 and 3 dimensions the second opinion's eigengap says 2 and the null test
    refuses it (its λ_2 is about the reference's); in 4-d it answers 1 itself; in one
    column it is not asked (a column's kNN graph sees gaps, not density)."""
    X = _structureless(d)
    model, warned = _fit("auto", X)
    assert model.n_clusters_ == 1 and not model.k_selection_.structure
    assert warned.count(NoClusterStructureWarning) == 1
    assert np.all(model.labels_ == 0)
    if d == 1:
        assert "second_opinion" not in model.k_selection_.details
        assert "second_opinion" not in auto_rule(model.profile_)
        return
    heard = model.k_selection_.details["second_opinion"]
    assert "rule 12" in heard["spec"]
    if d == 4:
        assert heard["k"] == 1 and "null_test" not in heard
    else:
        test = heard["null_test"]
        assert heard["k"] >= 2 and not test["accepted"]
        assert test["ratio"] > NULL_RATIO and test["ratio"] > 0.9
        assert test["ratio"] == pytest.approx(test["lambda_k"] / test["reference_lambda_k"])
        assert test["ratio"] == max(test["ratios"].values())


@pytest.mark.slow  # about 5 s: 2 500 rows, the exact graph fitted twice
def test_spirals_the_tree_calls_one_cluster_are_found_through_the_null_test():
    """Three interleaved spirals (the battery's shape, uniform along each arm): the
    density tree sees no dense core and answers 1; the exact graph's eigengap finds arms
    joined by few edges, far below the Gaussian reference's λ_k."""
    from benchmarks.generated_shapes import spirals

    X, y = spirals(np.random.default_rng(SPIRAL_SEED), 3, 2.25, 2500, 0.05)
    model, warned = _fit("auto", X)
    sel = model.k_selection_
    assert (sel.details["first"]["k"], sel.details["first"]["method"]) == (1, "density-tree")
    test = sel.details["null_test"]
    assert test["accepted"] and test["ratio"] < 0.05 <= NULL_RATIO
    assert model.n_clusters_ >= 2 and sel.structure
    assert NoClusterStructureWarning not in warned
    assert adjusted_rand_score(y, model.labels_) > 0.5


#: The seed of the spirals above (their parameters are the battery's spirals').
SPIRAL_SEED = 0


@pytest.mark.parametrize("reference", [gaussian_reference, uniform_reference])
def test_the_reference_is_a_function_of_the_seed_with_the_datas_mean_and_covariance(
        reference):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20_000, 3)) @ np.array([[2.0, 0, 0], [1.0, 1.0, 0], [0, 0.5, 0.2]])
    X += [5.0, -1.0, 0.0]
    R1 = reference(X, np.random.default_rng(7))
    R2 = reference(X, np.random.default_rng(7))
    assert np.array_equal(R1, R2) and R1.shape == X.shape
    assert not np.array_equal(R1, reference(X, np.random.default_rng(8)))
    assert np.allclose(R1.mean(axis=0), X.mean(axis=0), atol=0.05)
    assert np.allclose(np.cov(R1, rowvar=False), np.cov(X, rowvar=False), atol=0.08)
    # a constant column stays constant (a zero spread, not a NaN)
    Xc = np.c_[X[:100, :2], np.full(100, 3.0)]
    assert np.allclose(reference(Xc, np.random.default_rng(0))[:, 2], 3.0)


def test_the_uniform_reference_is_flat_and_bounded_on_the_principal_axes():
    X = np.random.default_rng(2).normal(size=(5_000, 2)) * [1.0, 4.0]
    R = uniform_reference(X, np.random.default_rng(0))
    z = (R - R.mean(axis=0)) / R.std(axis=0)
    assert np.all(np.abs(z) <= np.sqrt(3.0) * 1.02)  # a box of half-width √3 spreads
    assert np.allclose((z ** 4).mean(axis=0), 1.8, atol=0.1)  # a uniform's kurtosis


def test_the_null_ratio_is_inf_when_the_reference_has_no_lambda_k():
    assert null_ratio([0.0, 0.01, 0.2], [0.0, 0.04, 0.3], 2) == pytest.approx(0.25)
    assert null_ratio([0.0, -1e-15, 0.2], [0.0, 0.04, 0.3], 2) == 0.0
    assert null_ratio([0.0, 0.01, 0.2], [0.0, 1e-12, 0.3], 2) == float("inf")


_PIPE = {"graph": {"name": "knn", "n_neighbors": 10, "weight": "binary",
                   "symmetrize": "mean", "method": "exact"},
         "solver": {"name": "spectral"}, "rounding": {"name": "kmeans"}, "k_from": "parts"}


def _laplacian_values(X: np.ndarray) -> np.ndarray:
    """The slow obvious spectrum: binary 10-NN graph by brute force, averaged with its
    transpose, dense normalised Laplacian, all its eigenvalues (ascending)."""
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(D2, np.inf)
    B = np.zeros_like(D2)
    B[np.arange(len(X))[:, None], np.argsort(D2, axis=1, kind="stable")[:, :10]] = 1.0
    A = 0.5 * (B + B.T)
    s = 1.0 / np.sqrt(A.sum(axis=1))
    return np.linalg.eigvalsh(np.eye(len(X)) - s[:, None] * A * s[None, :])


@pytest.mark.slow  # about 1.4 s under load: three fits and three dense spectra
def test_the_null_test_against_a_slow_obvious_computation():
    X = make_blobs(150, 2, centers=3, cluster_std=1.0, random_state=0)[0]
    refs = []

    def fit_spec(R):
        refs.append(R)
        return _fit(_PIPE, R)[0].k_selection_

    sel = _fit(_PIPE, X)[0].k_selection_
    assert sel.k >= 2 and sel.details["tiny_group_eigenvalues"] == 0
    test = null_test(sel, X, np.random.default_rng(3), fit_spec)
    rng = np.random.default_rng(3)  # the references, drawn in turn from one generator
    assert np.array_equal(refs[0], gaussian_reference(X, rng))
    assert np.array_equal(refs[1], uniform_reference(X, rng))
    k = sel.k
    lam_d = _laplacian_values(X)[k - 1]
    lam_r = [_laplacian_values(R)[k - 1] for R in refs]
    assert test["lambda_k"] == pytest.approx(lam_d, rel=1e-6, abs=1e-9)
    assert test["reference_lambda_k"] == pytest.approx(min(lam_r), rel=1e-6, abs=1e-9)
    for name, lam in zip(("gaussian", "uniform"), lam_r):
        assert test["ratios"][name] == pytest.approx(lam_d / lam, rel=1e-6, abs=1e-9)
    assert test["ratio"] == pytest.approx(lam_d / min(lam_r), rel=1e-6, abs=1e-9)
    assert test["accepted"] is bool(test["ratio"] <= NULL_RATIO)


def test_the_second_opinions_null_test_is_the_same_on_every_fit():
    """Two fits with the same seed draw the same reference and record the same test;
    the record sits where the estimator says (kept fit or refused second opinion)."""
    X = make_blobs(150, 2, centers=3, cluster_std=1.0, random_state=0)[0]
    spec = {**_PIPE, "k_max": 1, "second_opinion": _PIPE}
    a, _ = _fit(spec, X)
    b, _ = _fit(spec, X)
    rec = a.k_selection_.details.get("null_test") or \
        a.k_selection_.details["second_opinion"]["null_test"]
    again = b.k_selection_.details.get("null_test") or \
        b.k_selection_.details["second_opinion"]["null_test"]
    assert rec == again and rec["threshold"] == NULL_RATIO
    assert (a.n_clusters_ >= 2) is rec["accepted"]
    assert np.array_equal(a.labels_, b.labels_)


def test_with_k_given_no_second_opinion_is_built_or_fitted(monkeypatch):
    X = make_blobs(300, 2, centers=3, random_state=0)[0]
    assert "second_opinion" not in auto_rule(DataProfile(n=300, d=2, k=3))
    import graphclust._ksecond as ksecond

    def refuse(*args, **kwargs):
        raise AssertionError("the second opinion ran with k given")

    monkeypatch.setattr(ksecond, "_second_plan", refuse)
    model, _ = _fit("auto", X, n_clusters=1)
    assert model.n_clusters_ == 1 and model.k_selection_.method == "given"


@pytest.mark.parametrize("profile,has", [
    (DataProfile(n=300, d=4, k=None), True),  # rule 9 decides: the exact graph re-asks
    (DataProfile(n=300, d=3, k=None), True),  # d >= 2: its k >= 2 faces the null test
    (DataProfile(n=300, d=2, k=None), True),
    (DataProfile(n=300, d=1, k=None), False),  # one column: its kNN graph sees gaps only
    (DataProfile(n=1000, d=20, k=None), False),  # rule 2 decides: the same estimate twice
    (DataProfile(n=6000, d=20, k=None), False),  # above rule 2's n: not bounded by it
    (DataProfile(n=1000, d=2, k=None, chunked=True), False),
    (DataProfile(n=1000, d=500, k=None, sparse=True, zero_fraction=0.99), False),
])
def test_the_table_adds_the_second_opinion_only_where_rule_2_is_bounded(profile, has):
    spec = auto_rule(profile)
    assert ("second_opinion" in spec) is has
    if has:
        second = spec["second_opinion"]
        assert second["graph"] == exact_spec(profile)["graph"]
        assert second["k_from"] == "parts" and second["scale"] == spec["scale"]
        assert second["summary"].startswith("auto: rule 12: ")


def test_a_spec_that_is_not_a_pipeline_is_refused_before_any_work(monkeypatch):
    import graphclust._ksecond as ksecond

    monkeypatch.setattr(ksecond, "fit_with_second_opinion",
                        lambda *a: pytest.fail("work started"))
    X = make_blobs(60, 2, centers=2, random_state=0)[0]
    base = {"graph": {"name": "knn"}, "solver": {"name": "spectral"},
            "rounding": {"name": "kmeans"}}
    bad = [({"graph": {"name": "knn"}}, "second_opinion.solver"),
           ({**base, "n_clusters": 2}, "second_opinion.n_clusters"),
           ({**base, "second_opinion": base}, "second_opinion.second_opinion"),
           ("knn", "second_opinion"),
           ({**base, "graph": {"name": "no-such-graph"}}, "second_opinion.graph")]
    for second, where in bad:
        with pytest.raises(SpecError, match=where.replace(".", r"\.")):
            gc.GraphClustering({**base, "second_opinion": second}).fit(X)


def test_a_users_spec_gets_its_second_opinion_too():
    """The key is the framework's, not auto's: a spec whose eigengap may only answer 1
    (``k_max = 1``) on three separated blobs is re-asked by its second opinion, which
    finds them; without it the fit stays at one cluster."""
    X, y = make_blobs(90, 2, centers=[(0, 0), (20, 0), (0, 20)], random_state=0)
    pipe = {"graph": {"name": "knn", "n_neighbors": 5}, "solver": {"name": "spectral"},
            "rounding": {"name": "kmeans"}, "k_from": "parts"}
    model, warned = _fit({**pipe, "k_max": 1, "second_opinion": pipe}, X)
    assert model.n_clusters_ == 3 and model.k_selection_.details["first"]["k"] == 1
    assert adjusted_rand_score(y, model.labels_) == 1.0
    assert NoClusterStructureWarning not in warned
    plain, _ = _fit({**pipe, "k_max": 1}, X)  # (k_max = 1: nothing to warn about)
    assert plain.n_clusters_ == 1 and not plain.k_selection_.structure


def test_the_runner_leaves_a_plan_without_second_opinion_alone():
    X = make_blobs(60, 2, centers=2, random_state=0)[0]
    est = gc.GraphClustering("ncut", n_clusters=2, random_state=0)
    from graphclust._plan import make_plan

    plan = make_plan(est, X)
    assert plan.second_opinion is None
    same, result = fit_with_second_opinion(est, plan)
    assert same is plan and result.labels.shape == (60,)
