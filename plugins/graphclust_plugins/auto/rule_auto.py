"""The ``auto`` rule preset: a concrete spec from the data's profile.

The rules, argued in ``docs/auto.rst``:

1. **Units.** When the column ranges differ by more than :data:`UNIT_SPREAD` (after
   trimming 10 % at each end; the profile's ``range_spread``), the columns are measured
   in different units and Euclidean distances would be ruled by the widest one:
   ``scale = "standard"``. Otherwise the data are left as they are (pixels, counts and
   coordinates share one unit; standardising them blows up near-constant columns).
   Distances are translation invariant, so an offset alone changes nothing.
2. **Size.** Exact kNN spectral clustering costs ``n² · d`` multiply-adds for the
   search. Up to :data:`EXACT_BUDGET` (about 10 s on the reference machine) and
   :data:`EXACT_MAX_N` points ``auto`` runs it: a binary, symmetrised (mean) ``n_neighbors``-NN graph, Ncut embedding,
   k-means — it follows thin manifolds (moons, rings) that anchors blur.
3. Above the budget, nothing of size ``n²`` is ever touched: an anchor pipeline with
   ``m`` k-means anchors (:func:`n_anchors`, 10 Lloyd iterations), each point linked to
   its 5 nearest anchors by a Gaussian weight, the spectral embedding of
   ``W = Z Λ⁻¹ Zᵀ`` through the ``m x m`` Gram matrix (LSC; the trivial vector dropped
   only when the anchors form one component, as in rule 2), k-means. Cost
   ``O(n·m·d)`` for the anchors and the graph, row-local, memory ``O(n·(d + s + k))``.
4. **High dimension.** With ``d > HIGH_DIM`` dense features and
   ``n <= SAMPLED_ANCHORS_N`` (small ``n`` too: it replaces rule 2's graph there), the
   kNN graph is searched and weighed on
   the :data:`PCA_COMPONENTS` leading principal components (7 neighbours, self-tuning
   Gaussian, symmetrised by averaging; faiss HNSW when installed), spectral embedding
   with ARPACK tolerance :data:`EIG_TOL`, k-means. In many dimensions anchors average
   points that are far apart along the data's manifold (k-means centres of pixel images
   are blurs), while the nearest neighbours of a point in the leading components stay on
   it, and the binary graph of rule 2 weighs a near and a far neighbour alike where
   distances concentrate; the "too local" failure that bounds rule 2 is a
   low-dimensional one (a large noisy 2-d sample breaks into islands). Cost ``O(n·d·PCA_COMPONENTS)`` for the projection and an
   ``n log n`` search; memory ``O(n·(PCA_COMPONENTS + neighbours))``.
6. **Sparse, high-dimensional** (:func:`sparse_rule`): a ``scipy.sparse`` ``X`` with
   ``d > HIGH_DIM`` (tf-idf, bags of words) is never densified: the kNN graph is
   searched on the sparse rows themselves, after ``scale = "l2"`` when the data are
   nonnegative (cosine geometry: a document's length says nothing of its topic), exact
   by blocked sparse products up to :data:`EXACT_MAX_N` points and an ``n² · width``
   of :data:`EXACT_BUDGET` (width: the mean nonzeros per row, at least 200), pynndescent
   above;
   self-tuning Gaussian weights, averaged, spectral embedding, k-means. Measured on the
   generated 5 000 × 50 000 tf-idf corpus (docs/auto.rst): NMI .653 in 4 s, against .635
   in 35 s on 100 principal components (the LSA alternative) and .64 in 40 s for the
   k-means-anchor recipe of rule 3.
5. Above :data:`SAMPLED_ANCHORS_N` points the anchor step must not grow as ``n·m·d``
   per iteration: U-SPEC's hybrid representatives (k-means of ``10·m`` sampled
   candidates), each point's 5 nearest found coarse to fine (``O(n·√m·d)``), transfer
   cut, k-means.
"""

from __future__ import annotations

import math

from graphclust import DataProfile
from graphclust.numerics.distances import SPARSE_KNN_MIN_WIDTH

__all__ = [
    "DESCRIPTION",
    "EIG_TOL",
    "EXACT_BUDGET",
    "EXACT_MAX_N",
    "HIGH_DIM",
    "PCA_COMPONENTS",
    "SAMPLED_ANCHORS_N",
    "UNIT_SPREAD",
    "auto_rule",
    "choose_scale",
    "k_estimator",
    "n_anchors",
    "sizing_k",
    "n_neighbors",
    "sparse_rule",
]

#: Largest ``n² · d`` for which ``auto`` runs an exact kNN graph (≈ 10 s of search at
#: the 1.9e10 multiply-adds per second of ``graphclust.numerics.knn_size``).
EXACT_BUDGET = 2e11
#: Largest ``n`` for which ``auto`` runs an exact kNN graph: above it a 10-NN graph is
#: too local (its scale shrinks with n) and elongated clusters are cut across.
EXACT_MAX_N = 5000
#: ``range_spread`` from which the columns count as measured in different units.
UNIT_SPREAD = 10.0
#: Above this many points the anchors come from a sample (U-SPEC's hybrid
#: representatives: k-means of 10·m random candidates) and each point's nearest ones
#: from the coarse-to-fine approximate search, so no step costs n·m·d per iteration.
SAMPLED_ANCHORS_N = 200_000
#: Dense data with more features than this (and more than EXACT_MAX_N points) get the
#: kNN graph on their leading principal components.
HIGH_DIM = 50
#: Principal components of that graph's search.
PCA_COMPONENTS = 50
#: Its neighbours per point.
HIGH_DIM_NEIGHBORS = 7
#: ARPACK tolerance of its spectral solve: the eigenvectors only feed k-means; 1e-3 was
#: measured to change labels, 1e-5 not (docs/auto.rst).
EIG_TOL = 1e-5
#: Representatives: at least this many, ...
MIN_ANCHORS = 1000
#: ... and this many per cluster, ...
ANCHORS_PER_CLUSTER = 50
#: ... but never more than this many, nor more than a tenth of the points.
MAX_ANCHORS = 4000


def choose_scale(p: DataProfile) -> tuple[str, str]:
    """The ``scale`` stage for profile ``p`` and the reason in words."""
    if p.range_spread > UNIT_SPREAD:
        return "standard", (f"column ranges differ {p.range_spread:.3g}x (> {UNIT_SPREAD:g}): "
                            "standardised")
    return "none", f"column ranges within {UNIT_SPREAD:g}x ({p.range_spread:.3g}x): unscaled"


def n_neighbors(p: DataProfile) -> int:
    """Neighbours of the exact kNN graph: 10, clamped to ``n - 1``."""
    return int(max(1, min(10, p.n - 1)))


def sizing_k(p: DataProfile) -> int:
    """The ``k`` that sizes what depends on it (``n_anchors``): the asked ``k``, else
    ``k_max`` when ``k`` is estimated at fit, so the anchors can resolve every ``k``
    searched (docs/choosing-k.rst)."""
    return int(p.k if p.k is not None else p.k_max)


#: How each family of ``auto`` estimates ``k`` when none is given (docs/choosing-k.rst):
#: the part of its pipeline that declares ``estimates_k``.
K_ESTIMATORS = {
    "spectral": "eigengap (graph builder: normalised spectrum of the graph)",
    "manifold": "density-tree (rounding 'density': HDBSCAN's excess of mass)",
    "genie": "eigengap (graph builder), unless its rounding declares estimates_k",
    "mixture": "eigengap (graph builder), unless its rounding declares estimates_k",
}


def k_estimator(family: str) -> str:
    """Which estimator of ``k`` a family of ``auto`` uses (see :data:`K_ESTIMATORS`)."""
    return K_ESTIMATORS.get(family, "eigengap (graph builder)")


def n_anchors(p: DataProfile) -> int:
    """Representatives of the anchor pipeline:
    ``clip(max(MIN_ANCHORS, ANCHORS_PER_CLUSTER · k), ..., min(MAX_ANCHORS, n / 10))``,
    ``k`` from :func:`sizing_k`."""
    k = sizing_k(p)
    m = max(MIN_ANCHORS, ANCHORS_PER_CLUSTER * k)
    return int(max(min(m, MAX_ANCHORS, p.n // 10), min(p.n, 2 * k)))


def _exact(p: DataProfile) -> dict:
    return {
        "graph": {"name": "knn", "n_neighbors": n_neighbors(p), "weight": "binary",
                  "symmetrize": "mean", "method": "exact"},
        "solver": {"name": "spectral", "drop_trivial": "connected", "normalize_rows": True},
        "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True},
    }


def _anchor(p: DataProfile) -> dict:
    m = n_anchors(p)
    return {
        "anchors": {"name": "kmeans", "n_anchors": m, "max_iter": 10, "n_init": 1},
        "graph": {"name": "gaussian-anchor", "n_neighbors": 5},
        "solver": {"name": "spectral", "drop_trivial": "connected", "normalize_rows": True},
        "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True},
    }


def _have_faiss() -> bool:
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


def _high_dim_search(p: DataProfile) -> str:
    """The search of rule 4's graph: exact up to :data:`EXACT_MAX_N` points (its work
    ``n² · PCA_COMPONENTS`` is then far below the budget, and the graph is the same on
    every machine), else faiss HNSW when installed, else the kNN size rule."""
    if p.n <= EXACT_MAX_N:
        return "exact"
    return "approx" if _have_faiss() else "auto"


def _high_dim(p: DataProfile) -> dict:
    return {
        "graph": {"name": "knn", "n_neighbors": int(max(1, min(HIGH_DIM_NEIGHBORS, p.n - 1))),
                  "weight": "gaussian",
                  "symmetrize": "mean", "method": _high_dim_search(p),
                  "pca_components": PCA_COMPONENTS},
        "solver": {"name": "spectral", "drop_trivial": "connected", "normalize_rows": True,
                   "eig_tol": EIG_TOL},
        "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True},
    }


def _sampled(p: DataProfile) -> dict:
    m = n_anchors(p)
    return {
        "anchors": {"name": "hybrid", "n_anchors": m, "candidate_factor": 10},
        "graph": {"name": "knr-bipartite", "n_neighbors": 5, "search": "approx",
                  "candidates": 10},
        "solver": {"name": "tcut"},
        "rounding": {"name": "kmeans", "n_init": 3, "max_iter": 100, "normalize_rows": True},
    }


def _exact_limits_exceeded(p: DataProfile) -> str:
    """The limits of the exact branch that ``p`` exceeds, as true statements (one or
    both: n above its cap, the n²·d work above its budget)."""
    held = []
    if p.n > EXACT_MAX_N:
        held.append(f"n = {p.n} > {EXACT_MAX_N}")
    if p.exact_work > EXACT_BUDGET:
        held.append(f"n²·d = {p.exact_work:.3g} > {EXACT_BUDGET:.0e}")
    return " and ".join(held)


def sparse_rule(p: DataProfile) -> tuple[dict, str] | None:
    """Rule 6, sparse high-dimensional data: ``(spec, why)``, or ``None`` when it does
    not apply (dense, chunked, or at most :data:`HIGH_DIM` columns, where the dense
    rules apply unchanged: all their parts take sparse rows)."""
    if not p.sparse or p.chunked or p.d <= HIGH_DIM:
        return None
    if p.nonnegative:
        scale, why_scale = "l2", "nonnegative sparse rows: unit length (cosine geometry)"
    else:
        scale, why_scale = choose_scale(p)
    # the width the exact sparse search costs per pair (graphclust.numerics.distances)
    width = max(SPARSE_KNN_MIN_WIDTH, math.ceil((1.0 - p.zero_fraction) * p.d))
    exact = p.n <= EXACT_MAX_N and float(p.n) ** 2 * width <= EXACT_BUDGET
    spec = {
        "scale": scale,
        "graph": {"name": "knn", "n_neighbors": n_neighbors(p), "weight": "gaussian",
                  "symmetrize": "mean", "method": "exact" if exact else "approx"},
        "solver": {"name": "spectral", "drop_trivial": "connected", "normalize_rows": True,
                   "eig_tol": EIG_TOL},
        "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True},
    }
    search = ("exact search" if exact else
              f"approximate search (pynndescent; n = {p.n} > {EXACT_MAX_N} or "
              f"n²·width = {float(p.n) ** 2 * width:.3g} > {EXACT_BUDGET:.0e})")
    why = (f"sparse, d = {p.d} > {HIGH_DIM}, {100 * (1 - p.zero_fraction):.2g} % nonzero: "
           f"{spec['graph']['n_neighbors']}-NN graph on the sparse rows (never densified, "
           f"{search}), spectral embedding; {why_scale}")
    return spec, why


def auto_rule(p: DataProfile) -> dict:
    """The concrete spec ``auto`` runs on data of profile ``p`` (see the module notes)."""
    sparse = sparse_rule(p)
    if sparse is not None:
        spec, why = sparse
        return {"summary": f"auto: {why}", **spec}
    scale, why_scale = choose_scale(p)
    if p.n > SAMPLED_ANCHORS_N or p.chunked:
        spec = _sampled(p)
        why = (("chunked input" if p.chunked else f"n = {p.n} > {SAMPLED_ANCHORS_N}")
               + ": "
               f"{spec['anchors']['n_anchors']} hybrid representatives, approximate "
               "K-nearest-representative graph, transfer cut")
    elif p.d > HIGH_DIM and not p.sparse:
        spec = _high_dim(p)
        why = (f"d = {p.d} > {HIGH_DIM}, dense, n = {p.n} <= {SAMPLED_ANCHORS_N}: "
               f"{spec['graph']['n_neighbors']}-NN graph on {PCA_COMPONENTS} principal "
               "components, spectral embedding")
    elif p.exact_work <= EXACT_BUDGET and p.n <= EXACT_MAX_N:
        spec = _exact(p)
        why = (f"n = {p.n} <= {EXACT_MAX_N} and n²·d = {p.exact_work:.3g} <= "
               f"{EXACT_BUDGET:.0e}: exact {spec['graph']['n_neighbors']}-NN spectral")
    else:
        spec = _anchor(p)
        why = (f"{_exact_limits_exceeded(p)}: "
               f"{spec['anchors']['n_anchors']} k-means anchors, 5-nearest-anchor "
               "Gaussian graph, spectral embedding")
    return {"summary": f"auto: {why}; {why_scale}", "scale": scale, **spec}


DESCRIPTION = f"""\
auto decides the pipeline from the data's profile (n, d, k, sparsity, column scales),
never from labels or per-data-set values:

- scale: "standard" when the column ranges differ by more than {UNIT_SPREAD:g}x (trimmed
  ratio of the largest to the smallest non-constant column range: columns in
  different units); otherwise "none" (one unit: pixels, counts, coordinates).
- n <= {EXACT_MAX_N} and n²·d <= {EXACT_BUDGET:.0e} (exact search about 10 s): exact kNN
  spectral clustering —
  binary 10-NN graph symmetrised by averaging, Ncut embedding of k vectors (the
  trivial one dropped when the graph is connected, kept when it has several
  components, where it tells them apart), rows normalised, k-means with 10
  restarts. Follows thin manifolds.
- otherwise (a 10-NN graph on more points is too local: its scale shrinks with n and
  long clusters are cut across; anchors fix the graph's resolution): no n x n step. m = clip(max({MIN_ANCHORS}, {ANCHORS_PER_CLUSTER}·k),
  upper min({MAX_ANCHORS}, n/10)) k-means anchors (10 iterations), each point linked to
  its 5 nearest anchors (Gaussian weights), spectral embedding of the anchor graph
  (m x m Gram matrix; the trivial vector dropped only when the anchors form one
  component), k-means. Row-local; memory O(n·(d + s + k)).
- but d > {HIGH_DIM} dense features (and n <= {SAMPLED_ANCHORS_N}, small n included): instead
  of both recipes above, the kNN graph
  searched on the {PCA_COMPONENTS} leading principal components ({HIGH_DIM_NEIGHBORS} neighbours,
  self-tuning Gaussian, averaged; approximate search when faiss is installed), spectral
  embedding (ARPACK tolerance {EIG_TOL:g}), k-means. In many dimensions anchors average
  points far apart on the data's manifold; neighbours in the leading components stay on it.
- n > {SAMPLED_ANCHORS_N} as well: the anchors come from a sample (U-SPEC hybrid
  representatives: k-means of 10·m random candidates), each point's 5 nearest found
  coarse to fine (approximate), transfer cut, k-means: no step costs n·m·d per
  iteration.
- sparse X (scipy.sparse) with d > {HIGH_DIM} (tf-idf, bags of words): never densified.
  scale "l2" when nonnegative (cosine geometry; else the scale rule above), the 10-NN
  graph searched on the sparse rows (exact blocked sparse products up to {EXACT_MAX_N}
  points and n²·max(200, nonzeros per row) <= {EXACT_BUDGET:.0e}, pynndescent above),
  self-tuning Gaussian, averaged, spectral embedding,
  k-means. Sparse X with few columns follows the dense rules (their parts take sparse
  rows).
- Dask input (chunked): always the sampled-anchor recipe above (it runs chunk-wise);
  the scale rule as for data in memory (column statistics are sums over chunks).
- no k given: k is estimated at fit by the pipeline's part that declares it (the
  eigengap of the graph's normalised spectrum for these spectral recipes), and what
  depends on k (the anchor count) is sized for k_max instead.
- The chosen spec is in the fitted estimator's resolved_spec_ (with a summary saying
  why) and printed by 'graphclust fill auto --dataset X'.
- predict/transform are available when the chosen pipeline places new points (the
  anchor pipeline does; the exact kNN graph does not).
"""
