"""Hybrid representative selection of U-SPEC (random candidates, then k-means)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

import graphclust
from graphclust.numerics import clamp_anchors, float_rows
from graphclust_plugins.uspec._lloyd import lloyd_representatives


@graphclust.part
class HybridAnchors(graphclust.AnchorSelector):
    """Hybrid representatives: k-means of ``p' = 10·p`` random candidates (U-SPEC Sec. 3.1).

    U-SPEC (Huang et al., IEEE TKDE 2020, Sec. 3.1) draws ``p'`` candidate points at
    random, cheap but noisy, and runs a short k-means on them only, so the ``p``
    representatives are k-means quality at ``O(p'·p·d·t)`` cost, independent of ``n``.
    The candidates are drawn without replacement from ``ctx.rng("anchors.hybrid")``; the
    k-means (initialised with ``p`` random candidates as the authors' ``litekmeans`` is)
    runs at most ``max_iter`` Lloyd iterations with a seed from
    ``ctx.seed_for("anchors.hybrid")``, stopping when an assignment repeats. Dense
    candidates: :func:`graphclust_plugins.uspec._lloyd.lloyd_representatives` (the
    assignment a BLAS product on every thread, decided on exact distances; the update a
    fixed-order sum); sparse ones: scikit-learn on one OpenMP thread. Either way the
    representatives do not depend on the thread count.

    Rules for small ``n``:

    * ``p = n_anchors`` is clamped to ``n`` with a warning;
    * ``p' = candidate_factor · p`` is clamped to ``n`` silently (all points become
      candidates, e.g. ``p' = n`` for every data set below 10 000 points at ``p = 1000``;
      the authors' reference runs used ``p = 1000`` on 1 797 and 9 298 points too);
    * when ``p' = p`` the candidates are the representatives (no k-means);
    * with fewer distinct candidates than ``p``, duplicate centres are returned (legal:
      duplicates share weight in the bipartite graph); a centre no candidate chose
      keeps its previous value.

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
            return graphclust.Anchors(np.asarray(km.cluster_centers_, dtype=C.dtype),
                                      info={**info, "n_iter": n_iter,
                                            "inertia": float(km.inertia_)})
        # dense: the assignment on every BLAS thread, decided on exact distances, and a
        # fixed-order update, so the centres do not depend on the thread count
        centres, n_iter, inertia = lloyd_representatives(
            np.asarray(C), p, int(self.max_iter), ctx.seed_for("anchors.hybrid"),
            ctx.progress)
        return graphclust.Anchors(centres, info={**info, "n_iter": n_iter,
                                                 "inertia": inertia})


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
