"""UMAP layout of any affinity graph (a nonlinear node embedding)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

import graphclust
from graphclust_plugins.manifold._curve import fit_ab, scaled_start
from graphclust_plugins.manifold._layout import optimize_layout
from graphclust_plugins.manifold._projections import leading_projection, scores

#: umap-learn's warning when its spectral start falls back to random (the rules of
#: ``UMAPLayout._init`` avoid the cases; the warning is silenced where they cannot).
_SPECTRAL_FALLBACK = ".*[Ss]pectral initialisation failed.*"


def _default_epochs(n: int) -> int:
    """umap-learn's epochs when none are given: 500 up to 10 000 points, 200 above."""
    return 500 if n <= 10000 else 200


@graphclust.part
class UMAPLayout(graphclust.Solver):
    """UMAP layout: a nonlinear node embedding of any affinity graph.

    McInnes, Healy & Melville (2018), UMAP, arXiv:1802.03426, Sec. 3.2: points are
    placed in ``n_components`` dimensions so that the low-dimensional similarities
    ``(1 + a‖y_i − y_j‖^{2b})^{-1}`` match the graph's weights under the fuzzy-set
    cross-entropy, by stochastic gradient descent over ``n_epochs`` epochs: each edge is
    sampled in proportion to its weight (attraction), each sample followed by
    ``negative_sample_rate`` random vertices (repulsion). ``a`` and ``b`` are fitted to
    ``min_dist`` and ``spread`` (as umap-learn's ``find_ab_params``, by ``_curve.fit_ab``).
    For clustering, ``min_dist = 0`` packs the points of a cluster tightly and ~10
    dimensions keep more structure than 2 (the EVoC / UMAP+HDBSCAN recipe).

    The graph may come from any graph part (``fuzzy-knn``, ``knn``, ``poly-knn``...):
    its symmetric weights are the edge probabilities (UMAP scales them by their
    maximum; edges below ``max / n_epochs`` are never sampled and are dropped, as in
    umap-learn).

    Descent (``engine``): ``"blocks"`` (default) is this framework's
    (``graphclust_plugins.manifold._layout``): umap-learn's gradients, clipping, edge
    sampling and step schedule, with the rows moved in fixed blocks on all of numba's
    threads, so the layout is the same whatever the thread count; ``"umap-learn"`` runs
    umap-learn's public ``umap.umap_.simplicial_set_embedding`` on one thread (its
    multi-threaded descent is not reproducible and is not used). Both start from
    umap-learn's starts below; on MNIST-70k (``auto``'s rule 7) the two give the same
    accuracy (.969), and its 60 epochs take 5.7 s on two threads (9 s on one) where
    ``"umap-learn"`` takes 14 s (docs/auto.rst).

    Initialisation: ``"spectral"`` (UMAP's default: eigenvectors of the normalized
    Laplacian, each connected component laid out apart), ``"pca"`` (the features'
    leading ``n_components`` principal components, scaled to ``[-10, 10]``: umap-learn's
    ``"pca"`` start, by :func:`graphclust.numerics.fit_pca`, or the leading components of
    the projection the graph's search fitted on the same rows when it has one
    (``manifold._projections``); no eigensolve on the graph — the spectral start's iterative
    eigensolve was measured at about half of a 60-epoch layout of MNIST-70k; random
    when the solver has no dense features with at least ``n_components`` rows and
    columns) or ``"random"`` (uniform in ``[-10, 10]``). Spectral falls back to random, recorded in ``solution.info["init"]``,
    when the graph is too small for it (``n <= n_components + 1``) or has more than
    ``2 · n_components`` components and the solver is given no features (umap-learn
    places many components from the data). A graph with no edges keeps its random
    start.

    Determinism and threads: the generator is seeded from the run
    (``ctx.seed_for("solver.umap-layout")``), and with either engine a seed fixes the
    embedding whatever the thread count. The first call in a process compiles the numba
    kernels (cached on disk afterwards).

    Costs: ``O(n_epochs · nnz · (1 + negative_sample_rate) · n_components)`` time,
    ``O(nnz + n · n_components)`` memory; the spectral start is an iterative
    eigensolve on the sparse graph. Nothing ``n x n``. No out-of-sample extension
    (``predict`` is not offered).
    """

    name = "umap-layout"
    accepts = frozenset({"affinity"})
    needs_features = False
    accepts_sparse = True  # X only to place components; sparse X: random init
    provides = frozenset({"embedding"})
    uses_k = False  # the layout has n_components columns whatever k is

    n_components: int = graphclust.param(
        10, doc="Embedding dimension (10 keeps more cluster structure than UMAP's 2).",
        check=graphclust.integer(1))
    n_epochs: int | None = graphclust.param(
        None, doc="Epochs of edge sampling; None = umap-learn's rule (500 up to "
        "n = 10 000, 200 above).", check=graphclust.optional(graphclust.integer(1)))
    init: str = graphclust.param(
        "spectral", doc="Start: spectral layout, the features' leading principal "
        "components (pca), or uniform random.",
        check=graphclust.one_of("spectral", "pca", "random"))
    min_dist: float = graphclust.param(
        0.0, doc="Smallest distance of points in the layout (fits a, b); 0 for clustering.",
        check=graphclust.real(0.0))
    spread: float = graphclust.param(1.0, doc="Scale of the layout (fits a, b with min_dist).",
                                     check=graphclust.real(0.0, low_open=True))
    negative_sample_rate: int = graphclust.param(
        5, doc="Negative samples per positive edge sample.", check=graphclust.integer(0))
    learning_rate: float = graphclust.param(1.0, doc="Initial SGD step α (decays linearly).",
                                            check=graphclust.real(0.0, low_open=True))
    repulsion_strength: float = graphclust.param(
        1.0, doc="Weight γ of the negative samples.", check=graphclust.real(0.0))
    engine: str = graphclust.param(
        "blocks", doc="Descent: this framework's block-parallel one (threads, the same "
        "result on any thread count) or umap-learn's sequential one.",
        check=graphclust.one_of("blocks", "umap-learn"))

    def _check_extra(self):
        real = (int, float)
        if (isinstance(self.min_dist, real) and isinstance(self.spread, real)
                and not isinstance(self.min_dist, bool) and self.min_dist > self.spread):
            return [("min_dist", f"must be at most spread = {self.spread}, got {self.min_dist}")]
        return []

    def solve(self, graph, X, n_clusters, ctx):
        n = graph.n
        dim = int(self.n_components)
        random_state = np.random.RandomState(ctx.seed_for("solver.umap-layout"))
        comps = graph.n_components() if n else 0
        init, why = self._init(graph, X, dim, comps)
        A = sp.coo_matrix(graph.adjacency, dtype=np.float32, copy=True)
        A.setdiag(0.0)
        A.eliminate_zeros()
        if n < 2 or A.nnz == 0:
            start = random_state.uniform(-10.0, 10.0, size=(n, dim))
            return graphclust.Solution(embedding=start, info={"init": "random (no edges)",
                                                              "n_epochs": 0})
        a, b = fit_ab(self.spread, self.min_dist)
        epochs = self.n_epochs if self.n_epochs is not None else _default_epochs(n)
        info = {"init": why, "n_epochs": int(epochs), "a": float(a), "b": float(b),
                "engine": self.engine}
        data = None  # umap-learn reads the data only to place many components
        if (init == "spectral" and comps > 2 * dim) or init == "pca":
            data = np.asarray(X, dtype=np.float64 if init == "spectral" else None)
        # the stage's total is the epochs (the start, spectral or PCA, comes first)
        progress = ctx.progress
        progress.start(int(epochs), f"{why} start")
        if self.engine == "umap-learn":
            emb = self._umap_learn(data, A, dim, a, b, init, random_state)
            progress.step(int(epochs), int(epochs))  # umap-learn reports no epochs
        else:
            emb = self._blocks(data, A, dim, a, b, init, int(epochs), random_state,
                               lambda done: progress.step(done, int(epochs)))
        progress.end()
        return graphclust.Solution(embedding=np.asarray(emb, dtype=np.float64),
                                   n_iter=int(epochs), info=info)

    def _umap_learn(self, data, A, dim, a, b, init, random_state):
        from umap.umap_ import simplicial_set_embedding

        with warnings.catch_warnings():
            # umap-learn warns about its own spectral fallback; the rule above avoids it
            warnings.filterwarnings("ignore", message=_SPECTRAL_FALLBACK)
            emb, _ = simplicial_set_embedding(
                data, A, dim, float(self.learning_rate), float(a), float(b),
                float(self.repulsion_strength), int(self.negative_sample_rate),
                self.n_epochs, init, random_state, "euclidean", {}, False, {}, False,
                parallel=False, verbose=False)
        return emb

    def _blocks(self, data, A, dim, a, b, init, epochs, random_state, on_epoch=None):
        """umap-learn's start and edge pruning, then the block descent of ``_layout``."""
        A = A.tocsr()
        A.sum_duplicates()
        # umap-learn's pruning: below max / epochs, or max / its default for <= 10 epochs
        cut = epochs if epochs > 10 else _default_epochs(A.shape[0])
        A.data[A.data < A.data.max() / float(cut)] = 0.0
        A.eliminate_zeros()
        start = _start(data, A, dim, init, random_state)
        lo, hi = start.min(axis=0), start.max(axis=0)
        Y = np.ascontiguousarray(10.0 * (start - lo) / np.where(hi > lo, hi - lo, 1.0),
                                 dtype=np.float32)
        seed = int(random_state.randint(np.iinfo(np.int32).max))
        return optimize_layout(Y, sp.csr_array(A), epochs, a, b,
                               gamma=float(self.repulsion_strength),
                               initial_alpha=float(self.learning_rate),
                               negative_sample_rate=int(self.negative_sample_rate), seed=seed,
                               on_epoch=on_epoch)

    def _init(self, graph, X, dim, comps) -> tuple[str, str]:
        if self.init == "random":
            return "random", "random"
        if self.init == "pca":
            if X is None or sp.issparse(X) or min(np.shape(X)) < dim:
                return "random", "random (pca needs dense features with n, d >= n_components)"
            return "pca", "pca"
        if graph.n <= dim + 1:
            return "random", f"random (spectral needs n > n_components + 1 = {dim + 1})"
        if comps > 2 * dim and (X is None or sp.issparse(X)):
            return "random", (f"random ({comps} components > 2·n_components and no "
                              "features to place them)")
        return "spectral", "spectral"


def _start(data, A, dim, init, random_state) -> np.ndarray:
    """umap-learn's starts: uniform, leading principal components or spectral, scaled to ±10."""
    if init == "random":
        return random_state.uniform(-10.0, 10.0, size=(A.shape[0], dim)).astype(np.float32)
    if init == "pca":  # the graph's projection of these rows when it has one (module)
        coords = scores(leading_projection(data, dim), data)
    else:
        from umap.spectral import spectral_layout

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_SPECTRAL_FALLBACK)
            coords = spectral_layout(data, sp.coo_matrix(A), dim, random_state,
                                     metric="euclidean", metric_kwds={})
    return scaled_start(np.asarray(coords, dtype=np.float32), random_state)
