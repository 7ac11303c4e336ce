"""``auto``'s rule 8: in low dimension with ``k`` given, cheap diagnostics of the
profile's sample choose the family — a Gaussian mixture, the density tree, Genie, or
(when none wins) the spectral rules after it (docs/auto.rst, rule 8).

The diagnostics read only the profile's sample (the same rows in memory and chunked)
and use the fixed seed 0 (the rule sees no seed), so the choice is the same for every
seed. The rule table computes them once, when rule 8 first asks
(:func:`low_dim_provider`).
"""

from __future__ import annotations

import numpy as np

import graphclust
from graphclust import DataProfile, Rule
from graphclust_plugins.auto import _rules_base as base
from graphclust_plugins.auto._rules_density import density_size, density_tree
from graphclust_plugins.auto._rules_spectral import exact_spec

__all__ = ["GENIE_SAMPLE", "GINI_THRESHOLD", "KERNEL_Z", "LOW_DIM", "MIXTURE_GAIN", "MIXTURE_SAMPLE",
           "MIXTURE_ROWS_PER_PARAMETER", "RULE_LOW_DIM", "genie_labels", "low_dim_choice",
           "low_dim_diagnostics", "low_dim_provider"]

#: Low dimension: up to this many dense features ``auto`` runs the diagnostics of rule 8
#: (Genie's minimum spanning tree and a full-covariance mixture stay cheap there).
LOW_DIM = 16
#: Rule 8a: largest held-out gain (nats per row) of 2k over k Gaussians for a mixture.
MIXTURE_GAIN = 0.05
#: Rule 8a: fewest training rows of the gain test (half the sample) per free parameter
#: of the 2k-component full-covariance mixture it fits (the 5 : 1 rule of thumb for
#: maximum-likelihood fits, Bentler & Chou 1987). With fewer the 2k model overfits its
#: half and the held-out gain turns negative on data that are no mixture: the 10-D data
#: of benchmarks/dask_scaling.py (1 319 parameters) gain -0.17 to -0.19 at 1.5 training rows per
#: parameter, +0.028 at 3.8 and +0.097 at 7.6 (docs/auto.rst).
MIXTURE_ROWS_PER_PARAMETER = 5
#: Rule 8a: a kernel density estimate that predicts held-out rows better than the k
#: Gaussians by more than this many standard errors of the paired per-row difference
#: says the clusters are not Gaussian (the one-sided test at about 2.3 %): no mixture.
KERNEL_Z = 2.0
#: Rule 8b: Genie's Gini cap (genieclust's default).
GINI_THRESHOLD = 0.3
#: Rule 8a: rows the Gaussian mixture is fitted on (all rows up to it; every row is then
#: labelled by the mixture's ``predict``); the chunked rounding sample's floor.
MIXTURE_SAMPLE = 100_000
#: Rule 8b: rows Genie runs on (all rows up to it; every other row takes its nearest
#: sample row's label); the ``genie`` rounding's ``max_exact``.
GENIE_SAMPLE = 20_000


def _spectral_labels(S: np.ndarray, k: int) -> np.ndarray:
    """Rule 2's recipe (exact binary kNN graph, Ncut embedding, k-means) on the sample."""
    sp = DataProfile(n=S.shape[0], d=S.shape[1], k=k)
    est = graphclust.GraphClustering(exact_spec(sp), n_clusters=k, random_state=0)
    return np.asarray(est.fit(S).labels_)


def genie_labels(S: np.ndarray, k: int) -> np.ndarray:
    """Genie (Gini cap :data:`GINI_THRESHOLD`, plain distance, one thread) of the sample:
    the registered ``genie`` rounding, taken from the public registry, on the sample as
    its embedding (exact Genie: the sample has fewer rows than its ``max_exact``)."""
    part = graphclust.resolve_part({"name": "genie", "gini_threshold": GINI_THRESHOLD},
                                   "rounding", registry=graphclust.get_registry())
    return np.asarray(part.round(graphclust.Solution(embedding=S), k, graphclust.Context(0)))


def _density_labels(S: np.ndarray, k: int) -> np.ndarray:
    """The ``density`` rounding's tree of the sample cut to ``k`` (noise voted in), at
    the resolution of rules 8b and 9 (:func:`density_size`)."""
    part = graphclust.resolve_part({"name": "density",
                                    "min_cluster_size": density_size(S.shape[0])},
                                   "rounding", registry=graphclust.get_registry())
    return np.asarray(part.round(graphclust.Solution(embedding=S), k, graphclust.Context(0)))


def _diagnostics_apply(p: DataProfile) -> bool:
    """A sample, dense, ``d <= LOW_DIM``, ``k >= 2``, enough rows and finite values (a
    chunked input is profiled before the fit checks its values; the fit reports it)."""
    k = base.asked_k(p)
    return not (p.sample is None or p.sparse or p.d > LOW_DIM or k is None or k < 2
                or min(p.n, p.sample.shape[0]) < max(base.DIAGNOSTIC_MIN_N, 4 * k)
                or not np.isfinite(p.sample).all())


def low_dim_diagnostics(p: DataProfile, scale: str) -> dict | None:
    """Rule 8's diagnostics of the profile's sample, or None when they do not apply
    (no sample, ``d > LOW_DIM``, sparse, ``k`` not given or below 2, too few rows, or a
    value that is not finite)."""
    from graphclust_plugins.auto import _diagnostics as D

    if not _diagnostics_apply(p):
        return None
    k = base.asked_k(p)
    S = base.scaled_sample(p, scale)
    idx, dist = D.knn_indices(S, 10)
    params = D.mixture_parameters(2 * k, p.d)
    out = {"rows": int(S.shape[0]),
           "two_nn_dimension": D.two_nn_dimension(S, (idx[:, :2], dist[:, :2])),
           "mixture_parameters": params,
           "mixture_fits_size": S.shape[0] // 2 >= MIXTURE_ROWS_PER_PARAMETER * params}
    out["mixture_gain"] = D.mixture_gain(S, k) if out["mixture_fits_size"] else float("nan")
    # the shape test only where the gain test passed (it costs one more mixture fit)
    gain_ok = bool(out["mixture_fits_size"] and out["mixture_gain"] <= MIXTURE_GAIN)
    out["kernel_z"] = D.kernel_excess(S, k) if gain_ok else float("nan")
    out["mixture"] = bool(gain_ok and not out["kernel_z"] > KERNEL_Z)
    if not out["mixture"]:
        A = D.knn_graph(idx)
        out["ncut_genie"] = D.normalized_cut(A, genie_labels(S, k))
        out["ncut_spectral"] = D.normalized_cut(A, _spectral_labels(S, k))
        out["ncut_density"] = D.normalized_cut(A, _density_labels(S, k))
    return out


def low_dim_provider(p: DataProfile, ctx) -> dict | None:
    """The rule table's ``low_dim`` diagnostic: :func:`low_dim_diagnostics` of the
    sample scaled as the scale step says."""
    return low_dim_diagnostics(p, ctx["scale"][0]["scale"])


def _head(p: DataProfile, diag: dict) -> str:
    return (f"d = {p.d} <= {LOW_DIM}; sample of {diag['rows']} rows, two-NN dimension "
            f"{diag['two_nn_dimension']:.2f}")


def _mixture(p: DataProfile, diag: dict) -> tuple[dict, str]:
    """Rule 8a: a Gaussian mixture on the scaled features."""
    where = base.fitted_on(p, MIXTURE_SAMPLE, "every row labelled by its predict")
    return base.features_pipeline({"name": "gmm", "n_init": 3, "max_fit": MIXTURE_SAMPLE}), (
        f"{_head(p, diag)}; 2k Gaussians gain {diag['mixture_gain']:.3f} <= {MIXTURE_GAIN:g} "
        f"nats per held-out row over k ({diag['rows'] // 2} training rows >= "
        f"{MIXTURE_ROWS_PER_PARAMETER} x {diag['mixture_parameters']} parameters) and a "
        f"kernel density estimate predicts them no better ({_kernel(diag)} <= "
        f"{KERNEL_Z:g} standard errors): Gaussian mixture (full covariances; {where})")


def _kernel(diag: dict) -> str:
    return f"{diag['kernel_z']:+.2f}"


def _why_no_mixture(diag: dict) -> str:
    if diag["mixture_fits_size"] and diag["mixture_gain"] <= MIXTURE_GAIN:
        return (f"2k Gaussians gain {diag['mixture_gain']:.3f} <= {MIXTURE_GAIN:g} but a "
                f"kernel density estimate predicts held-out rows {_kernel(diag)} > "
                f"{KERNEL_Z:g} standard errors better than k Gaussians: not Gaussian")
    if diag["mixture_fits_size"]:
        return f"2k Gaussians gain {diag['mixture_gain']:.3f} > {MIXTURE_GAIN:g}"
    return (f"{diag['rows'] // 2} training rows < {MIXTURE_ROWS_PER_PARAMETER} per "
            f"parameter of 2k Gaussians ({diag['mixture_parameters']}): no mixture test")


def _lowest_cut(p: DataProfile, diag: dict) -> tuple[dict | None, str]:
    """Rule 8b: the density tree when its cut is strictly the lowest, else Genie when its
    cut is lower than spectral's, else nothing (and why)."""
    head = f"{_head(p, diag)}; {_why_no_mixture(diag)}"
    genie, spectral, tree_cut = diag["ncut_genie"], diag["ncut_spectral"], diag["ncut_density"]
    if tree_cut < min(genie, spectral):
        spec, tree = density_tree(p)
        return spec, (f"{head}; normalised cuts of the sample's 10-NN graph: Genie "
                      f"{genie:.4f}, spectral {spectral:.4f}, density tree {tree_cut:.4f}: "
                      f"the density tree's is the lowest — {tree} cut to k")
    if genie < spectral:
        where = base.fitted_on(p, GENIE_SAMPLE, "every other row labelled as its nearest "
                               "sample row")
        return base.features_pipeline({"name": "genie", "gini_threshold": GINI_THRESHOLD,
                                       "max_fit": GENIE_SAMPLE}), (
            f"{head}; Genie's normalised cut of the sample's 10-NN graph {genie:.4f} < "
            f"spectral's {spectral:.4f}: Genie (Gini cap {GINI_THRESHOLD:g}) on the "
            f"features; {where}")
    return None, (f"{head}; Genie's normalised cut {genie:.4f} >= spectral's "
                  f"{spectral:.4f} (the density tree's {tree_cut:.4f})")


def low_dim_choice(p: DataProfile, diag: dict) -> tuple[dict | None, str]:
    """Rule 8's family from its diagnostics: ``(spec, why)``, or ``(None, why not)``
    when the spectral rules after it decide."""
    return _mixture(p, diag) if diag["mixture"] else _lowest_cut(p, diag)


def _applies(p: DataProfile, ctx) -> str | None:
    diag = ctx["low_dim"]
    if diag is None:
        return None
    spec, why = low_dim_choice(p, diag)
    if spec is None:
        ctx.note(why)  # what the diagnostics said leads the summary of the rule that wins
        return None
    return why


RULE_LOW_DIM = Rule(
    8, f"dense d <= {LOW_DIM}, k >= 2: diagnostics of the sample choose a Gaussian mixture, "
    "the density tree or Genie (else the rules after it)",
    _applies, lambda p, ctx: low_dim_choice(p, ctx["low_dim"])[0],
    details="at every n and on Dask: diagnostics of at most 4000 evenly spaced rows (scaled "
            "by the scale\nstep; fixed seed). A Gaussian mixture (full covariances) on the "
            f"features when 2k Gaussians\npredict held-out rows no better than k (gain <= "
            f"{MIXTURE_GAIN:g} nats per row), the test's half-sample\nhaving "
            f"{MIXTURE_ROWS_PER_PARAMETER} rows per parameter of the 2k mixture, and a kernel "
            "density\nestimate (bandwidth by likelihood cross-validation) predicts them "
            f"no more than {KERNEL_Z:g} standard\nerrors better than k Gaussians; else the "
            "partition of the sample with\nthe lowest normalised cut of its 10-NN graph: the "
            "density tree (HDBSCAN at 1 % of the\nrows, cut to k) when strictly lowest, else "
            f"Genie (Gini cap {GINI_THRESHOLD:g}) when lower than the\nspectral recipe's. The "
            f"mixture is fitted on at most {MIXTURE_SAMPLE} rows drawn by global row\nindex "
            f"and labels every row by predict; Genie runs on at most {GENIE_SAMPLE} such rows "
            "and the\ndensity tree on at most 20000, every other row taking its nearest "
            "sample row's label.")
