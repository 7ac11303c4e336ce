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
4. **High dimension.** With ``d > HIGH_DIM`` dense features, fewer than
   :data:`MANIFOLD_PER_CLUSTER` points per cluster (rule 7) and an exact search on the
   principal components within :data:`EXACT_BUDGET` (``n <= 63 245``; small ``n`` too:
   it replaces rule 2's graph there; above it rule 3), the
   kNN graph is searched and weighed on
   the :data:`PCA_COMPONENTS` leading principal components (7 neighbours, self-tuning
   Gaussian, symmetrised by averaging; exact search, never faiss), spectral embedding
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
   cut, k-means (unless rule 7 holds: the manifold family runs on a sample there too).
7. **Manifold family** (``auto`` v2). Dense ``d > HIGH_DIM`` with at least
   :data:`MANIFOLD_PER_CLUSTER` points per asked cluster: UMAP+HDBSCAN (the ``manifold``
   preset: fuzzy 15-NN graph searched by NN-descent, 10-d layout, condensed tree cut to
   exactly ``k`` clusters, every point labelled). The layout pulls each class of a
   high-dimensional manifold (digits) into a dense lump that the density tree cuts
   cleanly, where a spectral embedding of ``k`` vectors leaves classes touching; the
   density tree needs many points per cluster (its smallest cluster is ``max(15, n/50)``),
   hence the per-cluster bound.
8. **Low dimension** (``d <= LOW_DIM``, dense, ``k >= 2``): cheap diagnostics of the
   profile's sample (at most 4 000 rows, scaled as rule 1 says;
   :mod:`graphclust_plugins.auto._diagnostics`) choose the family:

   a. *Mixture*: when ``2k`` Gaussians predict held-out sample rows no better than ``k``
      Gaussians (:func:`~graphclust_plugins.auto._diagnostics.mixture_gain` ``<=``
      :data:`MIXTURE_GAIN` nats per row) and the test's training half has at least
      :data:`MIXTURE_ROWS_PER_PARAMETER` rows per parameter of the ``2k``-component
      full-covariance mixture it fits (otherwise the larger model overfits and the test
      says nothing), the data are a mixture of ellipsoids: a Gaussian mixture (full
      covariances) on the scaled features (``gmm`` rounding).
   b. *Density tree or MST*: otherwise three partitions of the sample compete by their
      normalised cut of the sample's 10-NN graph — the very objective spectral
      clustering relaxes: the density tree (HDBSCAN at 1 % of the rows, cut to ``k``,
      noise voted in), Genie and the spectral recipe of rule 2. The density tree
      (``density`` rounding on the scaled features) when its cut is strictly the
      lowest; else Genie (``genie`` rounding, Gini cap 0.3) when its cut is lower than
      spectral's.
   c. otherwise rules 2–3 as before (rule 5 above :data:`SAMPLED_ANCHORS_N` points or on
      chunked input).

   Rule 8 holds at every size and on Dask: the diagnostics read only the profile's
   sample (the same rows in memory and chunked), the mixture is fitted on
   :data:`MIXTURE_SAMPLE` rows drawn by global row index and labels every row by its
   ``predict`` (row-local), Genie runs on :data:`GENIE_SAMPLE` such rows and every row
   takes the label of its nearest sample row; up to those sizes the fit sees every row.
   The chunked execution gathers exactly the drawn rows, so the labels are the same in
   memory and for every chunking.

   All diagnostics use the fixed seed 0 (the rule sees no seed), so the choice is the
   same for every seed; what the fit then does is seeded as usual.
9. **Low dimension without k** (dense, no ``k``, and as many rows as a density estimate
   needs in ``d`` dimensions — Silverman's Table 4.2, :data:`DENSITY_ROWS_NEEDED`: 19 in
   2-d, 223 in 4-d, 10 700 in 7-d, so ``d <= 7``; :func:`_density_low_dim`): the density tree of the
   scaled features both counts and draws the clusters — HDBSCAN's excess of mass
   (Campello, Moulavi & Sander 2013, §4) at ``min_cluster_size`` = 1 % of the rows it is
   built on (:data:`DENSITY_SIZE_DIVISOR`; at least :data:`DENSITY_MIN_CLUSTER`), on at
   most :data:`DENSITY_SAMPLE` rows drawn by global row index, every other row labelled
   as its nearest sample row (in memory and chunk-wise alike); on one column the core
   distance is over ``⌈rows^(4/5)/2⌉`` rows (:func:`line_core_neighbours`: on a line
   every random dip of the estimate splits the support). In a few dimensions a
   density estimate is reliable and the stable clusters of its tree are the data's
   count; the normalised spectrum of a kNN graph of chained shapes (moons, spirals, a
   ring around a blob) has no gap at their ``k``. The estimate and the labels come from
   one tree, so the clusters counted are the clusters returned; noise points join
   their neighbours' cluster. No structure (``k = 1``, with the warning) when the
   selection's stability is at most :data:`DENSITY_STRUCTURE_RATIO` of the root's: the
   root of a ring of two circles is stable over nearly the whole range of densities
   its rings are, so hdbscan's own rule (ratio 1) calls such data one cluster.
"""

from __future__ import annotations

import math

import numpy as np

from graphclust import DataProfile
from graphclust.numerics.distances import SPARSE_KNN_MIN_WIDTH

__all__ = [
    "DENSITY_MIN_CLUSTER",
    "DENSITY_ROWS_NEEDED",
    "DENSITY_SAMPLE",
    "DENSITY_SIZE_DIVISOR",
    "DENSITY_STRUCTURE_RATIO",
    "DESCRIPTION",
    "EIG_TOL",
    "EXACT_BUDGET",
    "EXACT_MAX_N",
    "HIGH_DIM",
    "LOW_DIM",
    "MANIFOLD_PER_CLUSTER",
    "MANIFOLD_CLUSTER_DIVISOR",
    "MANIFOLD_EPOCHS",
    "MANIFOLD_NEGATIVES",
    "MANIFOLD_SAMPLED_NEGATIVES",
    "MANIFOLD_SAMPLED_STARTS",
    "MANIFOLD_SEARCH_COMPONENTS",
    "MANIFOLD_MULTISTART_MAX_N",
    "MANIFOLD_MIN_SAMPLES",
    "MANIFOLD_SAMPLE",
    "MIXTURE_GAIN",
    "MIXTURE_SAMPLE",
    "GENIE_SAMPLE",
    "MIXTURE_ROWS_PER_PARAMETER",
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
#: Low dimension: up to this many dense features ``auto`` runs the diagnostics of rule 8
#: (Genie's minimum spanning tree and a full-covariance mixture stay cheap there).
LOW_DIM = 16
#: Fewest points (and sample rows) for the diagnostics of rule 8.
DIAGNOSTIC_MIN_N = 50
#: Rule 8a: largest held-out gain (nats per row) of 2k over k Gaussians for a mixture.
MIXTURE_GAIN = 0.05
#: Rule 8a: fewest training rows of the gain test (half the sample) per free parameter
#: of the 2k-component full-covariance mixture it fits (the 5 : 1 rule of thumb for
#: maximum-likelihood fits, Bentler & Chou 1987). With fewer the 2k model overfits its
#: half and the held-out gain turns negative on data that are no mixture: the 10-D data
#: of benchmarks/dask_scaling.py (1 319 parameters) gain -0.17 to -0.19 at 1.5 training rows per
#: parameter, +0.028 at 3.8 and +0.097 at 7.6 (docs/auto.rst).
MIXTURE_ROWS_PER_PARAMETER = 5
#: Rule 8b: Genie's Gini cap (genieclust's default).
GINI_THRESHOLD = 0.3
#: Rule 8a: rows the Gaussian mixture is fitted on (all rows up to it; every row is then
#: labelled by the mixture's ``predict``); the chunked rounding sample's floor.
MIXTURE_SAMPLE = 100_000
#: Rule 8b: rows Genie runs on (all rows up to it; every other row takes its nearest
#: sample row's label); the ``genie`` rounding's ``max_exact``.
GENIE_SAMPLE = 20_000
#: Rule 9: rows a density estimate needs in d dimensions — Silverman (1986), *Density
#: Estimation for Statistics and Data Analysis*, Table 4.2: the sample size for which a
#: kernel estimate of the standard normal density at its centre has a relative mean
#: squared error below 0.1, for d = 1..10. Rule 9 holds where the rows its tree is built
#: on reach it (d <= 7 at DENSITY_SAMPLE rows).
DENSITY_ROWS_NEEDED = {1: 4, 2: 19, 3: 67, 4: 223, 5: 768, 6: 2790, 7: 10700, 8: 43700,
                       9: 187000, 10: 842000}
#: Rule 9: rows the density tree is built on without k (all rows up to it; every other
#: row takes its nearest sample row's label); the ``density`` rounding's ``max_fit``.
DENSITY_SAMPLE = 20_000
#: Rule 9: the tree's smallest cluster is the rows it is built on over this (1 %).
DENSITY_SIZE_DIVISOR = 100
#: Rule 9: ... and at least this many rows.
DENSITY_MIN_CLUSTER = 5
#: Rule 9: no structure (k = 1) when excess of mass's selection holds at most this share
#: of the root's stability; on data without clusters (uniform, Gaussian, Student t3;
#: d = 2..10, n >= 1000, 6 seeds) the share reached .19 (docs/choosing-k.rst).
DENSITY_STRUCTURE_RATIO = 0.25
#: Rule 9 on one column: the core distance's neighbours are this share of rows^(4/5)
#: (:func:`line_core_neighbours`). On a line any dip of the estimated density splits the
#: support, and the core distance over 1 % of the rows dips at random (uniform, Gaussian
#: and t3 columns gave 15-20 clusters at 1 000 rows); of the shares 1, 1/2 and 1/4 tried
#: (6 one-column shapes x 3 seeds x 1 000 and 3 000 rows), 1 merged a cluster of n/6
#: rows and 1/4 split Gaussians, 1/2 gave the right k on all 36.
LINE_CORE_SHARE = 0.5
#: Rule 7: fewest points per cluster asked for the manifold family.
MANIFOLD_PER_CLUSTER = 500
#: Rule 7: rows of the sample the manifold family is fitted on (the ``manifold`` preset's
#: S; beyond it rows are placed through their sample neighbours, docs/dask.rst).
MANIFOLD_SAMPLE = 100_000
#: Rule 7: epochs of the layout, started from the features' principal components.
MANIFOLD_EPOCHS = 60
#: Rule 7 above MANIFOLD_SAMPLE rows (the layout fitted on a sample, a fixed cost beside
#: the placement of all n rows): negative samples per edge sample of the layout
#: (umap-learn's default 5 below), and layouts from independent starts of which the one
#: whose density partition is the most modular on the sample's graph is kept
#: (``on-sample``'s ``n_starts``; docs/auto.rst, rule 7).
MANIFOLD_SAMPLED_NEGATIVES = 20
MANIFOLD_SAMPLED_STARTS = 3
#: Rule 7 up to MANIFOLD_SAMPLE rows (the layout of every row): negative samples per edge
#: sample. A layout's cost is about proportional to ``1 +`` this; 2 instead of umap-learn's
#: 5 halves it, with the same ARI on the rule's image sets (docs/auto.rst, rule 7).
MANIFOLD_NEGATIVES = 2
#: Rule 7 up to MANIFOLD_SAMPLE rows with ``d > 2 ·`` this: NN-descent searches the
#: rows' leading principal components and the candidates it finds are measured on the
#: features (``fuzzy-knn``'s ``distances="features"``): the search's distances cost
#: ``d / MANIFOLD_SEARCH_COMPONENTS`` times less (docs/auto.rst, rule 7).
MANIFOLD_SEARCH_COMPONENTS = 64
#: Rule 7 at or below this many rows: the layout from MANIFOLD_SAMPLED_STARTS starts as
#: well, where three layouts cost seconds (one start merged two MNIST-test digits on 4 of
#: 10 seeds, three starts on none; docs/auto.rst, rule 7).
MANIFOLD_MULTISTART_MAX_N = 30_000
#: Rule 7: HDBSCAN's min_samples (core-distance neighbours) of the density tree — the
#: graph's 15 neighbours; the part's default (min_cluster_size = n/50) costs n²/50 memory.
MANIFOLD_MIN_SAMPLES = 15
#: Rule 7 with k given: the density tree's smallest cluster is the sample's rows over
#: ``MANIFOLD_CLUSTER_DIVISOR · k`` (half an average cluster) — the resolution at which
#: the estimate without k counts its leaves (``n // k_max``), with ``k_max = 2k``.
MANIFOLD_CLUSTER_DIVISOR = 2
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
    "manifold": "density-tree (adapter 'on-sample': its rounding 'density', HDBSCAN's "
                "excess of mass in the tree of the sample's layout)",
    "density": "density-tree (rounding 'density': HDBSCAN's excess of mass in the tree "
               "of the scaled features, rule 9)",
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


def _high_dim_fits(p: DataProfile) -> bool:
    """Rule 4's exact search on the principal components is within the budget."""
    return float(p.n) ** 2 * min(p.d, PCA_COMPONENTS) <= EXACT_BUDGET


def _high_dim(p: DataProfile) -> dict:
    return {
        "graph": {"name": "knn", "n_neighbors": int(max(1, min(HIGH_DIM_NEIGHBORS, p.n - 1))),
                  "weight": "gaussian",
                  "symmetrize": "mean",
                  # exact: rule 4 applies while n² · PCA_COMPONENTS is within the budget, and
                  # the approximate search of 'knn' is faiss, an extra (auto must not change
                  # with what else is installed)
                  "method": "exact",
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
        # the uspec preset's rounding (issue 27): best of 10 k-means++ runs
        "rounding": {"name": "kmeans", "n_init": 10, "max_iter": 100, "normalize_rows": True,
                     "init": "k-means++"},
    }


def _k(p: DataProfile) -> int | None:
    """The number of clusters asked for, or None when it is to be estimated."""
    k = getattr(p, "k", None)
    return None if k is None else int(k)


def _per_cluster(p: DataProfile) -> float:
    """Points per asked cluster (``inf`` when k is not given)."""
    k = _k(p)
    return float("inf") if not k else p.n / k


def _features(rounding: dict) -> dict:
    """A pipeline whose rounding works on the (scaled) features themselves: the
    ``features`` solver over a one-anchor graph (``O(n)``, no distance computed, and
    ``predict`` works). The anchor is one row drawn by global index, so on Dask the
    anchor stage reads one chunk and the graph pass computes no distance."""
    return {"anchors": {"name": "sample", "n_anchors": 1},
            "graph": {"name": "one-anchor"},
            "solver": {"name": "features"}, "rounding": rounding}


def _manifold(p: DataProfile) -> dict:
    """Rule 7: the ``manifold`` family, neighbours from graphclust's NN-descent (seeded;
    the same lists on any thread count) and, above the sample, a pynndescent index of the
    sample (a base dependency; seeded, one thread), so that no extra changes the graph.

    Up to :data:`MANIFOLD_SAMPLE` rows with ``d > 2 ·`` :data:`MANIFOLD_SEARCH_COMPONENTS`,
    NN-descent searches the rows' leading :data:`MANIFOLD_SEARCH_COMPONENTS` principal
    components and the candidates it finds are measured and re-sorted on the features
    (a search *and* distances on 50 components merged two MNIST digits on 4 of 5 layouts
    measured; with the features' distances the image sets keep their ARI); the layout
    starts from the features' principal components, runs :data:`MANIFOLD_EPOCHS` epochs
    with :data:`MANIFOLD_NEGATIVES` negative samples per edge sample; the density tree's
    core distances use :data:`MANIFOLD_MIN_SAMPLES` neighbours (docs/auto.rst, rule 7,
    for the measured effect of each).

    With ``k`` given it is the sample-aware pipeline of the ``manifold`` preset: the
    graph, layout and density tree fitted on at most :data:`MANIFOLD_SAMPLE` rows drawn
    by global row index, every other row labelled by the membership-weighted vote of its
    15 nearest sample rows (row-local; the placement's NNDescent index of the sample is
    the one the sample's graph is read from). Up to :data:`MANIFOLD_SAMPLE` rows the
    sample is every row and the labels are those of the fit on all rows; the same spec
    runs chunk-wise on Dask with the same labels. Without ``k`` it is the same spec: the
    ``on-sample`` adapter estimates ``k`` by its rounding's density tree of the sample's
    layout (docs/choosing-k.rst), in memory and on Dask alike.

    Above :data:`MANIFOLD_SAMPLE` rows the sample's layout draws
    :data:`MANIFOLD_SAMPLED_NEGATIVES` negative samples per edge sample and runs from
    :data:`MANIFOLD_SAMPLED_STARTS` starts, keeping the start whose density partition is
    the most modular on the sample's graph: there the layout is a fixed cost while
    placing the rows grows with ``n``, and a layout with umap-learn's 5 negative samples
    landed in a merged-classes arrangement on about two seeds in three on MNIST-extend;
    with 10, every start of some samples still did (docs/auto.rst, rule 7). At or below
    :data:`MANIFOLD_MULTISTART_MAX_N` rows the layout runs from
    :data:`MANIFOLD_SAMPLED_STARTS` starts too: there a layout costs about a second, and
    one start merged two classes on 4 of 10 seeds of MNIST-test."""
    graph = {"name": "fuzzy-knn", "n_neighbors": 15, "method": "approx"}
    sampled = p.n > MANIFOLD_SAMPLE  # the layout of a sample: a fixed cost beside n rows
    starts = sampled or p.n <= MANIFOLD_MULTISTART_MAX_N  # layouts cheap beside the rest
    if not sampled and p.d > 2 * MANIFOLD_SEARCH_COMPONENTS:  # the search on components
        graph.update(pca_components=MANIFOLD_SEARCH_COMPONENTS, distances="features")
    solver = {"name": "umap-layout", "n_components": 10, "min_dist": 0.0, "init": "pca",
              "n_epochs": MANIFOLD_EPOCHS,
              "negative_sample_rate": (MANIFOLD_SAMPLED_NEGATIVES if sampled
                                       else MANIFOLD_NEGATIVES)}
    # without k: the leaves of the tree at n // k_max (docs/choosing-k.rst)
    density = {"name": "density", "min_samples": MANIFOLD_MIN_SAMPLES, "estimate": "leaf"}
    if _k(p) is not None:  # the tree at half an average cluster (docs/auto.rst, rule 7)
        density["min_cluster_size"] = int(max(
            15, min(MANIFOLD_SAMPLE, p.n) // (MANIFOLD_CLUSTER_DIVISOR * _k(p))))
    return {"anchors": {"name": "sample", "n_anchors": int(min(MANIFOLD_SAMPLE, p.n))},
            "graph": {"name": "sample-knn", "n_neighbors": 15},
            "adapter": {"name": "on-sample", "graph": graph, "rounding": density,
                        **({"n_starts": MANIFOLD_SAMPLED_STARTS} if starts else {})},
            "solver": solver,
            "rounding": {"name": "argmax"}}


def _manifold_fits(p: DataProfile) -> bool:
    """Rule 7 holds: dense ``d > HIGH_DIM`` with at least :data:`MANIFOLD_PER_CLUSTER`
    points per asked cluster (any ``n``, in memory or chunked: the sample-aware pipeline,
    with ``k`` given or estimated on the sample)."""
    return not (p.d <= HIGH_DIM or p.sparse or _per_cluster(p) < MANIFOLD_PER_CLUSTER)


def _large(p: DataProfile) -> tuple[dict, str]:
    """Rule 5 (above the in-memory sizes, or chunked input, when neither rule 7 nor rule
    8 holds): U-SPEC's recipe, which runs chunk-wise; rule 8's spectral fallback there."""
    spec = _sampled(p)
    why = (("chunked input" if p.chunked else f"n = {p.n} > {SAMPLED_ANCHORS_N}") + ": "
           f"{spec['anchors']['n_anchors']} hybrid representatives, approximate "
           "K-nearest-representative graph, transfer cut")
    return spec, why


def _scaled_sample(p: DataProfile, scale: str) -> np.ndarray:
    """The profile's sample, standardised with its own column statistics when rule 1
    standardises the data (constant columns left at 0)."""
    S = np.array(p.sample, dtype=np.float64)
    if scale == "standard":
        sd = S.std(axis=0)
        S = (S - S.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return S


def _spectral_labels(S: np.ndarray, k: int) -> np.ndarray:
    """Rule 2's recipe (exact binary kNN graph, Ncut embedding, k-means) on the sample."""
    import graphclust

    sp = DataProfile(n=S.shape[0], d=S.shape[1], k=k)
    est = graphclust.GraphClustering(_exact(sp), n_clusters=k, random_state=0)
    return np.asarray(est.fit(S).labels_)


def _genie_labels(S: np.ndarray, k: int) -> np.ndarray:
    """Genie (Gini cap :data:`GINI_THRESHOLD`, plain distance ``M = 1``, one thread)."""
    import genieclust
    from threadpoolctl import threadpool_limits

    P = np.ascontiguousarray(S if S.shape[1] > 1 else np.c_[S, np.zeros(S.shape[0])])
    with threadpool_limits(limits=1, user_api="openmp"):
        return np.asarray(genieclust.Genie(n_clusters=k, gini_threshold=GINI_THRESHOLD,
                                           M=1).fit_predict(P))


def _density_size(rows: int) -> int:
    """The density tree's smallest cluster on ``rows`` rows: 1 % of them
    (:data:`DENSITY_SIZE_DIVISOR`), at least :data:`DENSITY_MIN_CLUSTER`."""
    return int(max(DENSITY_MIN_CLUSTER, int(rows) // DENSITY_SIZE_DIVISOR))


def _density_labels(S: np.ndarray, k: int) -> np.ndarray:
    """The ``density`` rounding's tree of the sample cut to ``k`` (noise voted in), at
    the resolution of rules 8b and 9 (:func:`_density_size`)."""
    import graphclust

    part = graphclust.resolve_part({"name": "density",
                                    "min_cluster_size": _density_size(S.shape[0])},
                                   "rounding")
    return np.asarray(part.round(graphclust.Solution(embedding=S), k, graphclust.Context(0)))


def low_dim_diagnostics(p: DataProfile, scale: str) -> dict | None:
    """Rule 8's diagnostics of the profile's sample, or None when they do not apply
    (no sample, ``d > LOW_DIM``, sparse, ``k`` not given or below 2, too few rows, or a
    value that is not finite: a chunked input is profiled before the fit checks its
    values, and the fit then reports it)."""
    from graphclust_plugins.auto import _diagnostics as D

    k = _k(p)
    if (p.sample is None or p.sparse or p.d > LOW_DIM or k is None or k < 2
            or min(p.n, p.sample.shape[0]) < max(DIAGNOSTIC_MIN_N, 4 * k)
            or not np.isfinite(p.sample).all()):
        return None
    S = _scaled_sample(p, scale)
    idx, dist = D.knn_indices(S, 10)
    params = D.mixture_parameters(2 * k, p.d)
    out = {"rows": int(S.shape[0]),
           "two_nn_dimension": D.two_nn_dimension(S, (idx[:, :2], dist[:, :2])),
           "mixture_parameters": params,
           "mixture_fits_size": S.shape[0] // 2 >= MIXTURE_ROWS_PER_PARAMETER * params}
    out["mixture_gain"] = D.mixture_gain(S, k) if out["mixture_fits_size"] else float("nan")
    out["mixture"] = bool(out["mixture_fits_size"] and out["mixture_gain"] <= MIXTURE_GAIN)
    if not out["mixture"]:
        A = D.knn_graph(idx)
        out["ncut_genie"] = D.normalized_cut(A, _genie_labels(S, k))
        out["ncut_spectral"] = D.normalized_cut(A, _spectral_labels(S, k))
        out["ncut_density"] = D.normalized_cut(A, _density_labels(S, k))
    return out


def _fitted_on(p: DataProfile, size: int, placed: str) -> str:
    """Where rule 8's family is fitted, in words."""
    where = "chunked input: " if p.chunked else ""
    if p.n <= size:
        return f"{where}fitted on all rows"
    return f"{where}fitted on a sample of {size} rows, {placed}"


def _low_dim(p: DataProfile, diag: dict) -> tuple[dict, str] | None:
    """Rule 8: a mixture or Genie pipeline, or None (rules 2–3, or 5, decide)."""
    head = (f"d = {p.d} <= {LOW_DIM}; sample of {diag['rows']} rows, two-NN dimension "
            f"{diag['two_nn_dimension']:.2f}")
    if diag["mixture"]:
        where = _fitted_on(p, MIXTURE_SAMPLE, "every row labelled by its predict")
        return _features({"name": "gmm", "n_init": 3, "max_fit": MIXTURE_SAMPLE}), (
            f"{head}; 2k Gaussians gain {diag['mixture_gain']:.3f} <= {MIXTURE_GAIN:g} nats "
            f"per held-out row over k ({diag['rows'] // 2} training rows >= "
            f"{MIXTURE_ROWS_PER_PARAMETER} x {diag['mixture_parameters']} parameters): "
            "Gaussian mixture (full covariances; "
            f"{where})")
    why_mix = (f"2k Gaussians gain {diag['mixture_gain']:.3f} > {MIXTURE_GAIN:g}"
               if diag["mixture_fits_size"] else
               f"{diag['rows'] // 2} training rows < {MIXTURE_ROWS_PER_PARAMETER} per "
               f"parameter of 2k Gaussians ({diag['mixture_parameters']}): no mixture test")
    cuts = (f"normalised cuts of the sample's 10-NN graph: Genie {diag['ncut_genie']:.4f}, "
            f"spectral {diag['ncut_spectral']:.4f}, density tree {diag['ncut_density']:.4f}")
    if diag["ncut_density"] < min(diag["ncut_genie"], diag["ncut_spectral"]):
        spec, tree = _density_tree(p)
        return spec, (f"{head}; {why_mix}; {cuts}: the density tree's is the lowest — "
                      f"{tree} cut to k")
    if diag["ncut_genie"] < diag["ncut_spectral"]:
        where = _fitted_on(p, GENIE_SAMPLE, "every other row labelled as its nearest "
                           "sample row")
        return _features({"name": "genie", "gini_threshold": GINI_THRESHOLD,
                          "max_fit": GENIE_SAMPLE}), (
            f"{head}; {why_mix}; Genie's normalised cut of the sample's 10-NN graph "
            f"{diag['ncut_genie']:.4f} < spectral's {diag['ncut_spectral']:.4f}: Genie "
            f"(Gini cap {GINI_THRESHOLD:g}) on the features; {where}")
    return None, (f"{head}; {why_mix}; Genie's normalised cut {diag['ncut_genie']:.4f} >= "
                  f"spectral's {diag['ncut_spectral']:.4f} (the density tree's "
                  f"{diag['ncut_density']:.4f})")


def _density_fits(p: DataProfile) -> bool:
    """Rule 9 holds: no ``k``, dense, at least :data:`DIAGNOSTIC_MIN_N` rows, and the
    rows the tree is built on (``min(n, DENSITY_SAMPLE)``) reach the sample size a
    density estimate needs in ``d`` dimensions (:data:`DENSITY_ROWS_NEEDED`); any ``n``,
    in memory or chunked."""
    need = DENSITY_ROWS_NEEDED.get(int(p.d))
    return (_k(p) is None and not p.sparse and need is not None
            and min(p.n, DENSITY_SAMPLE) >= max(need, DIAGNOSTIC_MIN_N))


def _density_tree(p: DataProfile, **params) -> tuple[dict, str]:
    """The ``density`` rounding on the scaled features at the resolution of rules 8b and
    9 (:func:`_density_size` of the rows it is built on, at most :data:`DENSITY_SAMPLE`
    drawn by global row index), with ``params`` added; the spec and its words."""
    rows = int(min(p.n, DENSITY_SAMPLE))
    size = _density_size(rows)
    spec = _features({"name": "density", "min_cluster_size": size, **params,
                      "max_fit": DENSITY_SAMPLE})
    where = _fitted_on(p, DENSITY_SAMPLE, "every other row labelled as its nearest "
                       "sample row")
    return spec, (f"HDBSCAN's tree of the features (min_cluster_size = {size}, 1 % of "
                  f"{rows} rows), noise points joining their neighbours' cluster; {where}")


def line_core_neighbours(rows: int) -> int:
    """Rule 9 on one column: the core distance's neighbours, ``⌈rows^(4/5) / 2⌉`` — the
    order of the mean-squared-error optimal neighbour count of a kNN density estimate in
    one dimension, ``n^(4/(d+4))`` (Mack & Rosenblatt 1979), halved
    (:data:`LINE_CORE_SHARE`; docs/choosing-k.rst, "One column")."""
    return int(np.ceil(LINE_CORE_SHARE * float(rows) ** 0.8))


def _density_low_dim(p: DataProfile) -> tuple[dict, str]:
    """Rule 9: the density tree of the features counts and draws the clusters (on one
    column with the core distance of :func:`line_core_neighbours`)."""
    rows = int(min(p.n, DENSITY_SAMPLE))
    line = {"min_samples": line_core_neighbours(rows)} if int(p.d) == 1 else {}
    spec, tree = _density_tree(p, estimate="eom", structure_ratio=DENSITY_STRUCTURE_RATIO,
                               **line)
    if line:
        tree += (f"; one column: core distance over {line['min_samples']} rows "
                 "(rows^(4/5) / 2: on a line every dip of the density splits it)")
    need = DENSITY_ROWS_NEEDED[int(p.d)]
    return spec, (f"d = {p.d}, no k, {rows} rows >= the {need} a "
                  "density estimate needs in d dimensions (Silverman's Table 4.2): excess "
                  f"of mass in {tree} counts and draws the clusters")


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
    diag = low_dim_diagnostics(p, scale)  # the profile's sample: any n, in memory or chunked
    low = _low_dim(p, diag) if diag is not None else (None, "")
    if _manifold_fits(p):
        spec = _manifold(p)
        where = ("chunked input, " if p.chunked else "") + (
            f"fitted on a sample of {MANIFOLD_SAMPLE} rows, the others placed by their "
            "15 nearest sample rows" if "anchors" in spec and p.n > MANIFOLD_SAMPLE
            else "fitted on all rows")
        comps = spec["adapter"]["graph"].get("pca_components")
        search = ("pynndescent's index of the sample" if p.n > MANIFOLD_SAMPLE
                  else "NN-descent" + (f" on {comps} principal components, distances "
                                       "on the features" if comps else ""))
        starts = spec["adapter"].get("n_starts", 1)
        negatives = spec["solver"].get("negative_sample_rate")
        layout = (f"{spec['solver']['n_epochs']} epochs"
                  + (f", {negatives} negative samples" if negatives else "")
                  + (f", the most modular of {starts} starts" if starts > 1 else ""))
        why = (f"d = {p.d} > {HIGH_DIM}, dense, n/k = {_per_cluster(p):.0f} >= "
               f"{MANIFOLD_PER_CLUSTER} points per cluster: UMAP+HDBSCAN (fuzzy 15-NN graph "
               f"by {search}, 10-d layout from a PCA start ({layout}), "
               f"density tree cut to k; {where})")
    elif low[0] is not None:  # rule 8, at every size and on Dask
        spec, why = low
    elif _density_fits(p):  # rule 9, at every size and on Dask
        spec, why = _density_low_dim(p)
    elif p.n > SAMPLED_ANCHORS_N or p.chunked:
        spec, why = _large(p)
    elif p.d > HIGH_DIM and not p.sparse and _high_dim_fits(p):
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
    if low[1] and low[0] is None and spec.get("graph", {}).get("name") != "fuzzy-knn":
        why = f"{low[1]}; {why}"
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
- but d > {HIGH_DIM} dense features and at least {MANIFOLD_PER_CLUSTER} points per cluster:
  the manifold family, UMAP+HDBSCAN — fuzzy 15-NN graph (NN-descent; with d >
  {2 * MANIFOLD_SEARCH_COMPONENTS}, on the {MANIFOLD_SEARCH_COMPONENTS} leading principal
  components, the distances on the features), 10-d UMAP layout ({MANIFOLD_EPOCHS} epochs,
  {MANIFOLD_NEGATIVES} negative samples per edge, from the features' principal
  components), HDBSCAN condensed tree ({MANIFOLD_MIN_SAMPLES} core neighbours) cut to
  exactly k clusters, every point labelled. It is fitted on a sample of at most {MANIFOLD_SAMPLE} rows (all
  rows up to that; the others placed by their 15 nearest sample rows), also above
  {SAMPLED_ANCHORS_N} points and on Dask; without k the density tree of the sample's
  layout estimates it. Above {MANIFOLD_SAMPLE} rows the sample's layout draws
  {MANIFOLD_SAMPLED_NEGATIVES} negative samples per edge and runs from
  {MANIFOLD_SAMPLED_STARTS} starts, keeping the one whose partition is the most modular on
  the sample's graph; at or below {MANIFOLD_MULTISTART_MAX_N} rows it also runs from
  {MANIFOLD_SAMPLED_STARTS} starts (where a layout costs about a second).
- d > {HIGH_DIM} dense with fewer points per cluster, while an exact search on
  {PCA_COMPONENTS} components fits the budget: instead of both spectral recipes, the kNN
  graph searched exactly on the {PCA_COMPONENTS} leading principal components
  ({HIGH_DIM_NEIGHBORS} neighbours, self-tuning Gaussian, averaged), spectral embedding
  (ARPACK tolerance {EIG_TOL:g}), k-means. In many dimensions anchors average points far
  apart on the data's manifold; neighbours in the leading components stay on it.
- d <= {LOW_DIM} dense and k >= 2, at every n and on Dask: diagnostics of at most 4000
  evenly spaced rows (scaled as above; fixed seed) choose the family first —
  a Gaussian mixture (full covariances) on the features when 2k Gaussians predict
  held-out rows no better than k (gain <= {MIXTURE_GAIN:g} nats per row), the test's
  half-sample having {MIXTURE_ROWS_PER_PARAMETER} rows per parameter of the 2k mixture; else the partition of the
  sample with the lowest normalised cut of its 10-NN graph: the density tree (HDBSCAN
  at 1 % of the rows, cut to k) when strictly lowest, else Genie (Gini cap
  {GINI_THRESHOLD:g}) when lower than the spectral recipe's; else the
  spectral recipes above (the sampled-anchor one above {SAMPLED_ANCHORS_N} points and on
  Dask). The mixture is fitted on at most {MIXTURE_SAMPLE} rows drawn by global row index
  and labels every row by predict; Genie runs on at most {GENIE_SAMPLE} such rows and
  every other row takes its nearest sample row's label; the density tree runs on at most
  {DENSITY_SAMPLE} such rows, labelled the same way.
- dense, no k, and at least the rows a density estimate needs in d dimensions
  (Silverman 1986, Table 4.2: 19 in 2-d, 223 in 4-d, 10 700 in 7-d; so d <= 7), at
  every n and on Dask: the density tree of the features counts and draws the clusters — HDBSCAN's
  excess of mass at min_cluster_size = 1 % of the rows it is built on (at least
  {DENSITY_MIN_CLUSTER}), on at most {DENSITY_SAMPLE} rows drawn by global row index;
  noise points join their neighbours' cluster, every other row takes its nearest sample
  row's label. In a few dimensions the stable clusters of a density tree count chained
  shapes the graph spectrum has no gap for.
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
- Dask input (chunked): the rules as in memory on the same profile (its rows gathered by
  global row index): the manifold family and rule 8's mixture and Genie run on a sample
  there too; the spectral recipes become the sampled-anchor recipe above (it runs
  chunk-wise); the scale rule as for data in memory (column statistics are sums over
  chunks).
- no k given: k is estimated at fit by the pipeline's part that declares it (the
  eigengap of the graph's normalised spectrum for the spectral recipes, the density
  tree for the manifold family and in low dimension), and what
  depends on k (the anchor count) is sized for k_max instead.
- No choice depends on the installed extras (no faiss in any branch).
- The chosen spec is in the fitted estimator's resolved_spec_ (with a summary saying
  why) and printed by 'graphclust fill auto --dataset X'.
- predict/transform are available when the chosen pipeline places new points (the
  anchor pipeline does; the exact kNN graph does not).
"""
