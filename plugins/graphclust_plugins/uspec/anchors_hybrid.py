"""Hybrid representative selection of U-SPEC (random candidates, then k-means)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

import graphclust
from graphclust.numerics import clamp_anchors, float_rows


@graphclust.part
class HybridAnchors(graphclust.AnchorSelector):
    """Hybrid representatives: k-means of ``p' = 10·p`` random candidates (U-SPEC Sec. 3.1).

    U-SPEC (Huang et al., IEEE TKDE 2020, Sec. 3.1) draws ``p'`` candidate points at
    random, cheap but noisy, and runs a short k-means on them only, so the ``p``
    representatives are k-means quality at ``O(p'·p·d·t)`` cost, independent of ``n``.
    The candidates are drawn without replacement from ``ctx.rng("anchors.hybrid")``; the
    k-means (scikit-learn, initialised with ``p`` random candidates as the authors'
    ``litekmeans`` is, ``tol = 0``) runs ``max_iter`` Lloyd iterations with a seed
    from ``ctx.seed_for("anchors.hybrid")``.

    Rules for small ``n``:

    * ``p = n_anchors`` is clamped to ``n`` with a warning;
    * ``p' = candidate_factor · p`` is clamped to ``n`` silently (all points become
      candidates, e.g. ``p' = n`` for every data set below 10 000 points at ``p = 1000``;
      the authors' reference runs used ``p = 1000`` on 1 797 and 9 298 points too);
    * when ``p' = p`` the candidates are the representatives (no k-means);
    * with fewer distinct candidates than ``p``, scikit-learn returns duplicate centres
      (legal: duplicates share weight in the bipartite graph).

    ``Anchors.assignment`` is ``None``: the representatives summarise the candidates,
    not a partition of all points.
    """

    name = "hybrid"
    chunkwise = True  # select() runs on a uniform row sample
    accepts_sparse = True  # the candidate k-means runs on CSR rows (dense centres)

    n_anchors: int = graphclust.param(1000, doc="Number of representatives p (U-SPEC: 1000).",
                                      check=graphclust.integer(1))
    candidate_factor: int = graphclust.param(
        10, doc="Candidates drawn at random per representative, p' = factor·p (U-SPEC: 10).",
        check=graphclust.integer(1))
    max_iter: int = graphclust.param(10, doc="Lloyd iterations of the candidate k-means.",
                                     check=graphclust.integer(1))

    def select(self, X, ctx) -> graphclust.Anchors:
        X = float_rows(X)
        n = X.shape[0]
        p = clamp_anchors(int(self.n_anchors), n, who="anchors 'hybrid'")
        n_cand = int(min(n, int(self.candidate_factor) * p))
        rng = ctx.rng("anchors.hybrid")
        cand = np.sort(rng.choice(n, size=n_cand, replace=False)) if n_cand < n else None
        C = X[cand] if cand is not None else X
        info = {"n_candidates": n_cand}
        if n_cand == p:
            points = C.toarray() if sp.issparse(C) else np.array(C, copy=True)
            return graphclust.Anchors(points, info={**info, "n_iter": 0})
        if sp.issparse(C):  # one fit, one OpenMP thread: no per-iteration or per-thread
            km, n_iter = _sparse_lloyd(C, p, int(self.max_iter),  # copy of the p x d centres
                                       ctx.seed_for("anchors.hybrid"))
        else:
            km, n_iter = _lloyd_by_iteration(C, p, int(self.max_iter),
                                             ctx.seed_for("anchors.hybrid"), ctx.progress)
        return graphclust.Anchors(np.asarray(km.cluster_centers_, dtype=C.dtype),
                                  info={**info, "n_iter": n_iter,
                                        "inertia": float(km.inertia_)})


def _sparse_lloyd(C, p: int, max_iter: int, seed: int):
    """The k-means of :func:`_lloyd_by_iteration` on sparse candidates as one fit (the
    same Lloyd iterations from the same random start, stopping on the same strict
    convergence), with one OpenMP thread: the dense ``p x d`` centres are the memory of
    this step (400 MB for 1 000 representatives of 50 000 terms), and every iteration's
    refit or thread would hold another copy of them."""
    from threadpoolctl import threadpool_limits

    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="openmp"):
        warnings.simplefilter("ignore", SkConvergenceWarning)  # duplicate candidates
        km = KMeans(n_clusters=p, init="random", n_init=1, max_iter=max_iter, tol=0.0,
                    random_state=seed).fit(C)
    return km, int(km.n_iter_)


def _lloyd_by_iteration(C, p: int, max_iter: int, seed: int, progress):
    """scikit-learn's k-means (random init, ``tol = 0``) one Lloyd iteration per fit, each
    started from the previous centres, so ``progress`` gets one step per iteration.

    The centres are those of one ``KMeans(max_iter=max_iter)`` fit: an iteration is the
    same E-step and M-step from the same centres, and the iterations stop when the
    centres no longer change (scikit-learn's strict convergence: labels unchanged).
    Returns the last fitted ``KMeans`` and the number of iterations run.
    """
    progress.start(max_iter, f"k-means of {C.shape[0]} candidates into {p} representatives")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkConvergenceWarning)  # duplicate candidates
        km = KMeans(n_clusters=p, init="random", n_init=1, max_iter=1, tol=0.0,
                    random_state=seed).fit(C)
        it = 1
        progress.step(it, max_iter, f"inertia {km.inertia_:.6g}")
        while it < max_iter:
            prev = km.cluster_centers_
            km = KMeans(n_clusters=p, init=prev, n_init=1, max_iter=1, tol=0.0,
                        random_state=seed).fit(C)
            it += 1
            progress.step(it, max_iter, f"inertia {km.inertia_:.6g}")
            if np.array_equal(km.cluster_centers_, prev):
                break
    progress.end()  # an early convergence closes the bar at the iteration reached
    return km, it
