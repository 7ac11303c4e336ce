"""Hybrid representative selection of U-SPEC (random candidates, then k-means)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

import graphclust
from graphclust.numerics import clamp_anchors, fixed_threads, float_rows


@graphclust.part
class HybridAnchors(graphclust.AnchorSelector):
    """Hybrid representatives: k-means of ``p' = 10·p`` random candidates (U-SPEC Sec. 3.1).

    U-SPEC (Huang et al., IEEE TKDE 2020, Sec. 3.1) draws ``p'`` candidate points at
    random, cheap but noisy, and runs a short k-means on them only, so the ``p``
    representatives are k-means quality at ``O(p'·p·d·t)`` cost, independent of ``n``.
    The candidates are drawn without replacement from ``ctx.rng("anchors.hybrid")``; the
    k-means (initialised with ``p`` random candidates as the authors' ``litekmeans`` is)
    runs at most ``max_iter`` Lloyd iterations with a seed from
    ``ctx.seed_for("anchors.hybrid")`` (scikit-learn, ``tol = 0``), as one fit on one
    BLAS/OpenMP thread, so the representatives do not depend on the thread count.

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
        # one scikit-learn fit on one BLAS/OpenMP thread: its Lloyd step adds per-thread
        # partial sums in the order threads finish, and the unconverged k-means amplifies
        # them; sparse candidates keep one p x d copy of the centres (400 MB for 1 000
        # representatives of 50 000 terms)
        ctx.progress.start(1, f"k-means of {n_cand} candidates into {p} representatives")
        km, n_iter = _lloyd(C, p, int(self.max_iter), ctx.seed_for("anchors.hybrid"))
        ctx.progress.step(1, 1, f"{n_iter} iterations, inertia {km.inertia_:.6g}")
        ctx.progress.end()
        return graphclust.Anchors(np.asarray(km.cluster_centers_, dtype=C.dtype),
                                  info={**info, "n_iter": n_iter,
                                        "inertia": float(km.inertia_)})


def _lloyd(C, p: int, max_iter: int, seed: int):
    """scikit-learn's k-means (random init, ``tol = 0``, at most ``max_iter`` Lloyd
    iterations, stopping on strict convergence) as one fit on one BLAS and one OpenMP
    thread (:func:`graphclust.numerics.fixed_threads`).

    Until issue 48 the dense fit ran one ``max_iter = 1`` fit per iteration, each from
    the previous centres, to report every iteration: the same centres (checked bit for
    bit on MNIST-70k's candidates) at twice the CPU time (3.05 s against 1.51 s), each
    refit validating and re-normalising the candidates again.
    """
    with warnings.catch_warnings(), fixed_threads():
        warnings.simplefilter("ignore", SkConvergenceWarning)  # duplicate candidates
        km = KMeans(n_clusters=p, init="random", n_init=1, max_iter=max_iter, tol=0.0,
                    random_state=seed).fit(C)
    return km, int(km.n_iter_)
