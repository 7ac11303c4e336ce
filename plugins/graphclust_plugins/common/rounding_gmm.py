"""Gaussian-mixture rounding of an embedding (the mixture family)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture
from threadpoolctl import threadpool_limits

import graphclust
from graphclust.numerics import as_float, fit_rows, normalize_rows
from graphclust_plugins.common._labels import consecutive


@graphclust.part
class GMMRounding(graphclust.Rounding):
    """A Gaussian mixture (scikit-learn's :class:`~sklearn.mixture.GaussianMixture`,
    expectation-maximisation) fitted to the rows of the embedding; each row takes its
    most probable component.

    The mixture family: ``k`` Gaussians ``N(μ_c, Σ_c)`` with weights ``π_c`` fitted by
    EM (Dempster, Laird & Rubin 1977); a row ``x`` is labelled
    ``argmax_c π_c N(x; μ_c, Σ_c)`` (Bishop 2006, Eq. 9.23, the responsibility). With
    full covariances it separates overlapping elongated (anisotropic) clusters that
    k-means, which assumes equal spherical ones, cuts across. Run it on the raw features
    through the ``features`` solver, or on any embedding.

    Rules
    -----
    * ``min(n_clusters, n)`` components; ``n_init`` EM runs from k-means starts, the run
      with the highest likelihood kept (scikit-learn's rule), seeded from
      ``ctx.seed_for("rounding.gmm")``; EM is run single-threaded (thread-count-free sums).
    * ``reg_covar`` is added to every covariance diagonal (constant columns, e.g. pixels
      that are always 0, would make a full covariance singular).
    * Labels are made consecutive ``0..k'-1``; a component no row is most likely under is
      dropped, and :meth:`assign` gives a new row the most probable *kept* component.
    * ``normalize_rows=True`` scales rows to unit length first, in :meth:`round` and
      :meth:`assign` alike.
    * ``max_fit > 0`` and ``n > max_fit``: EM runs on ``max_fit`` rows drawn uniformly by
      global row index from ``ctx.rng("rounding.gmm.sample")`` (:meth:`sample_rows`), the
      components kept are those of the sample's labels, and every row is labelled by
      :meth:`assign` (row-local). The chunked execution gathers exactly those rows, so
      the labels are the same in memory and for every chunking.
    * Cost: ``O(n_init · max_iter · n · k · p²)`` time (``n`` the rows fitted on), memory
      ``O(n·k + k·p²)``.
    """

    name = "gmm"
    needs = graphclust.SolutionField.EMBEDDING
    chunkwise = True  # round() on a uniform sample of rows, assign() per block

    covariance_type: str = graphclust.param(
        "full", doc="Covariance of each component: 'full', 'tied', 'diag' or 'spherical'.",
        check=graphclust.one_of("full", "tied", "diag", "spherical"))
    n_init: int = graphclust.param(3, doc="EM runs (k-means starts); the most likely is kept.",
                                   check=graphclust.integer(1))
    max_iter: int = graphclust.param(200, doc="Maximum EM iterations per run.",
                                     check=graphclust.integer(1))
    reg_covar: float = graphclust.param(
        1e-6, doc="Added to each covariance diagonal (keeps it positive definite).",
        check=graphclust.real(0.0, None))
    normalize_rows: bool = graphclust.param(
        False, doc="Scale embedding rows to unit norm first, in round and assign.",
        check=graphclust.boolean)
    max_fit: int = graphclust.param(
        0, doc="Fit EM on at most this many rows, drawn by global row index (every row "
        "then labelled by predict); 0 = fit on all rows.", check=graphclust.integer(0))

    def sample_rows(self, n, n_clusters, ctx):
        """Sorted global row indices EM is fitted on, ``None`` for all rows."""
        return fit_rows(ctx.rng("rounding.gmm.sample"), n, self.max_fit)

    def _prepare(self, E) -> np.ndarray:
        E = normalize_rows(E) if self.normalize_rows else as_float(E)
        E = np.asarray(E, dtype=np.float64)
        return np.zeros((E.shape[0], 1)) if E.shape[1] == 0 else E

    def round(self, solution, n_clusters, ctx):
        if solution.embedding is None:
            raise ValueError("rounding 'gmm' needs a solution with an embedding")
        E = self._prepare(solution.embedding)
        idx = self.sample_rows(E.shape[0], n_clusters, ctx)
        if idx is not None:  # fitted on the sample, every row placed by assign
            self._fit(E[idx], n_clusters, ctx)
            return self._label(E)
        return self._fit(E, n_clusters, ctx)

    def _fit(self, E: np.ndarray, n_clusters: int, ctx) -> np.ndarray:
        """EM on the rows ``E``; their consecutive labels (the kept components set)."""
        k = int(min(n_clusters, E.shape[0]))
        gmm = GaussianMixture(n_components=k, covariance_type=self.covariance_type,
                              n_init=self.n_init, max_iter=self.max_iter,
                              reg_covar=self.reg_covar,
                              random_state=ctx.seed_for("rounding.gmm"))
        with threadpool_limits(limits=1), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gmm.fit(E)
            raw = gmm.predict(E)
        labels, kept = consecutive(raw)
        self.mixture_, self.kept_components_ = gmm, kept
        self.converged_ = bool(gmm.converged_)
        self.n_iter_ = int(gmm.n_iter_)
        return labels

    def assign(self, solution):
        if not hasattr(self, "mixture_"):
            raise RuntimeError("rounding 'gmm': call round() before assign()")
        if solution.embedding is None:
            raise ValueError("rounding 'gmm' needs a solution with an embedding")
        E = self._prepare(solution.embedding)
        if E.shape[1] != self.mixture_.means_.shape[1]:
            raise ValueError(f"rounding 'gmm': the embedding has {E.shape[1]} columns, the "
                             f"fitted one had {self.mixture_.means_.shape[1]}")
        return self._label(E)

    def probabilities(self, solution, labels):
        """The mixture's posterior over the kept components (Bishop 2006, Eq. 9.23)."""
        if not hasattr(self, "mixture_"):
            raise RuntimeError("rounding 'gmm': call round() before probabilities()")
        E = self._prepare(solution.embedding)
        with threadpool_limits(limits=1):
            post = self.mixture_.predict_proba(E)
        return post[:, self.kept_components_]

    def confidence(self, solution, labels):
        """The posterior probability of the row's own component (renormalised over the
        kept components)."""
        P = self.probabilities(solution, labels)
        s = P.sum(axis=1)
        labels = np.asarray(labels, dtype=np.int64)
        own = P[np.arange(labels.size), np.clip(labels, 0, P.shape[1] - 1)]
        return np.divide(own, s, out=np.zeros(labels.size), where=s > 0)

    def _label(self, E: np.ndarray) -> np.ndarray:
        """The most probable kept component of each row of the prepared ``E``."""
        with threadpool_limits(limits=1):
            post = self.mixture_.predict_proba(E)
        return np.asarray(post[:, self.kept_components_].argmax(axis=1), dtype=np.int64)
