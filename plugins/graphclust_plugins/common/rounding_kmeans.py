"""k-means rounding of an embedding."""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans

import graphclust
from graphclust.numerics import as_float, fixed_threads, normalize_rows, same_partition
from graphclust_plugins.common._labels import consecutive


@graphclust.part
class KMeansRounding(graphclust.Rounding):
    """k-means (scikit-learn) on the rows of the embedding.

    The usual last step of spectral clustering (Ng, Jordan & Weiss 2001; Shi & Malik
    2000) and of landmark-based spectral clustering (Cai & Chen 2015, k-means with 10
    replicates). Runs scikit-learn's :class:`~sklearn.cluster.KMeans` (k-means++
    seeding, Lloyd iterations) with a seed from ``ctx.seed_for("rounding.kmeans")``.

    Rules
    -----
    * ``normalize_rows=True`` scales each row to unit length first (an all-zero row
      stays zero).
    * Labels are made consecutive ``0..k'-1``; ``k' < k`` only happens when the
      embedding has fewer than ``k`` distinct rows.
    * A float32 embedding is clustered in float32 (scikit-learn keeps the dtype), any
      other in float64.
    * ``cluster_centers_`` (``k' x p``) is kept so :meth:`assign` labels new rows by the
      nearest centre (after the same row normalisation).
    * Memory: scikit-learn copies the embedding to centre it. ``copy_x=False`` centres
      it in place during the fit and restores it afterwards instead (scikit-learn's
      ``copy_x=False``), so the rounding needs one n×p array less (1.6 GB for DLC's
      codes at n = 630 000); the restored values may then differ from the solver's in
      the last bit, so this is opt-in (the ``slc``/``dlc`` presets set it). A read-only
      embedding is always copied.
    """

    name = "kmeans"
    needs = graphclust.SolutionField.EMBEDDING
    chunkwise = True  # round() on a uniform sample of rows, assign() per block

    n_init: int = graphclust.param(10, doc="Number of k-means restarts; the best inertia is kept.",
                                   check=graphclust.integer(1))
    init: str = graphclust.param(
        "k-means++", doc="Initial centres of each restart: 'k-means++' (scikit-learn's "
        "default) or 'random' (k distinct rows drawn at random, as MATLAB's litekmeans).",
        check=graphclust.one_of("k-means++", "random"))
    max_iter: int = graphclust.param(300, doc="Maximum Lloyd iterations per restart.",
                                     check=graphclust.integer(1))
    copy_x: bool = graphclust.param(
        True, doc="False: centre the embedding in place and restore it (no n×p copy; "
        "last-bit changes to solution.embedding).", check=graphclust.boolean)
    normalize_rows: bool = graphclust.param(
        False, doc="Scale embedding rows to unit norm before k-means (Ng-Jordan-Weiss).",
        check=graphclust.boolean)

    def _prepare(self, E: np.ndarray) -> np.ndarray:
        # float32 embeddings (e.g. dense codes at scale) stay float32: scikit-learn's
        # k-means runs in float32 too, so no float64 copy of an n x p array is made.
        return normalize_rows(E) if self.normalize_rows else as_float(E)

    def round(self, solution, n_clusters, ctx):
        if solution.embedding is None:
            raise ValueError("rounding 'kmeans' needs a solution with an embedding")
        E = self._prepare(solution.embedding)
        n = E.shape[0]
        k = int(min(n_clusters, n))
        if E.shape[1] == 0:
            E = np.zeros((n, 1))
        with fixed_threads():  # thread-count-free sums (graphclust.numerics.threads)
            km = self._restarts(E, k, ctx)
        raw = km.labels_
        labels, kept = consecutive(raw)
        self.cluster_centers_ = km.cluster_centers_[kept]
        self.inertia_ = float(km.inertia_)
        # the isotropic variance of the Gaussian mixture k-means is the limit of, by
        # maximum likelihood from the fit (probabilities' temperature, docs/confidence.rst)
        self.variance_ = float(km.inertia_) / max(n * max(E.shape[1], 1), 1)
        self.n_iter_ = int(km.n_iter_)
        return labels

    def _restarts(self, E: np.ndarray, k: int, ctx) -> KMeans:
        """``n_init`` single k-means runs drawing their seeds from one stream, keeping the
        best as scikit-learn's ``KMeans(n_init=...)`` does (lower inertia and a different
        partition), so each restart can be reported; the result is that of one
        ``KMeans(n_init=self.n_init, random_state=seed)`` fit."""
        stream = np.random.RandomState(ctx.seed_for("rounding.kmeans"))
        in_place = not (self.copy_x or not E.flags.writeable)
        mean = None
        if in_place:  # centre once, as scikit-learn would, and restore at the end
            mean = E.mean(axis=0)
            E -= mean
        best = None
        ctx.progress.start(self.n_init, "k-means restarts")
        try:
            for i in range(self.n_init):
                km = KMeans(n_clusters=k, init=self.init, n_init=1, max_iter=self.max_iter,
                            copy_x=not in_place,
                            random_state=stream).fit(E)
                if best is None or (km.inertia_ < best.inertia_
                                    and not same_partition(km.labels_, best.labels_)):
                    best = km
                ctx.progress.step(i + 1, self.n_init, f"inertia {best.inertia_:.6g}")
        finally:
            if in_place:
                E += mean
        if mean is not None:
            best.cluster_centers_ += mean
        return best

    def _distances(self, solution) -> np.ndarray:
        """Squared distances of the prepared rows to the fitted centres (``n x k'``)."""
        if not hasattr(self, "cluster_centers_"):
            raise RuntimeError("rounding 'kmeans': call round() before assign()")
        if solution.embedding is None:
            raise ValueError("rounding 'kmeans' needs a solution with an embedding")
        E = np.asarray(self._prepare(solution.embedding), dtype=np.float64)
        C = np.asarray(self.cluster_centers_, dtype=np.float64)
        if E.shape[1] == 0:
            E = np.zeros((E.shape[0], C.shape[1]))
        d = (E * E).sum(1)[:, None] - 2.0 * E @ C.T + (C * C).sum(1)[None, :]
        return np.maximum(d, 0.0)

    def confidence(self, solution, labels):
        """The margin in the embedding: ``1 − d_own / d_rival``, the Euclidean distance to
        the row's own centre over that to the nearest other centre (0 on the boundary
        between two centres, 1 at its own centre; 1 with a single centre)."""
        d = np.sqrt(self._distances(solution))
        labels = np.asarray(labels, dtype=np.int64)
        n, k = d.shape
        if k < 2:
            return np.ones(n)
        rows = np.arange(n)
        own = d[rows, np.clip(labels, 0, k - 1)]
        d[rows, np.clip(labels, 0, k - 1)] = np.inf
        rival = d.min(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.clip(1.0 - np.where(rival > 0, own / rival, 1.0), 0.0, 1.0)

    def probabilities(self, solution, labels):
        """The posterior of the equal-weight isotropic Gaussian mixture whose limit is
        k-means: ``∝ exp(−‖e − c‖² / 2σ²)`` with ``σ²`` the fit's within-cluster variance
        per coordinate (``inertia / (n p)``); its argmax is the nearest centre."""
        d = self._distances(solution)
        var = max(getattr(self, "variance_", 0.0), np.finfo(np.float64).tiny)
        logits = -(d - d.min(axis=1, keepdims=True)) / (2.0 * var)
        return np.exp(logits)

    def assign(self, solution):
        if not hasattr(self, "cluster_centers_"):
            raise RuntimeError("rounding 'kmeans': call round() before assign()")
        if solution.embedding is None:
            raise ValueError("rounding 'kmeans' needs a solution with an embedding")
        E = self._prepare(solution.embedding)
        C = self.cluster_centers_
        if E.shape[1] == 0:
            E = np.zeros((E.shape[0], C.shape[1]))
        d = (E * E).sum(1)[:, None] - 2.0 * E @ C.T + (C * C).sum(1)[None, :]
        return np.asarray(d.argmin(axis=1), dtype=np.int64)
