"""k-means anchors."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

import graphclust
from graphclust.numerics import clamp_anchors, float_rows


@graphclust.part
class KMeansAnchors(graphclust.AnchorSelector):
    """Anchors = centres of a short k-means run (scikit-learn ``KMeans``).

    Landmark selection of landmark-based spectral clustering (Cai & Chen 2015) and of
    the Anchor Graph line (Liu et al. 2010): a *rough* k-means is enough. Defaults are
    one replicate, random-sample initialisation (as the LSC reference code) and 10
    Lloyd iterations.

    Deviation: the LSC reference runs only 5 iterations; we default to 10 (a
    ``max_iter`` parameter), which costs little more and gives steadier anchors.
    No convergence warning is raised: the short run is intended.

    ``n_anchors > n`` is clamped to ``n`` with a warning. The assignment of every
    training point to its centre is recorded in ``Anchors.assignment``. With fewer
    distinct points than anchors, scikit-learn returns duplicate centres (legal; a
    duplicate anchor simply shares weight in the graphs).
    """

    name = "kmeans"
    chunkwise = True  # select() runs on a uniform row sample
    accepts_sparse = True  # scikit-learn's KMeans runs on CSR rows (dense centres)

    n_anchors: int = graphclust.param(1000, doc="Number of anchors m.",
                                      check=graphclust.integer(1))
    max_iter: int = graphclust.param(10, doc="Lloyd iterations (LSC: 5).",
                                     check=graphclust.integer(1))
    n_init: int = graphclust.param(1, doc="k-means replicates (best inertia kept).",
                                   check=graphclust.integer(1))
    init: str = graphclust.param("random", doc="Initial centres: random samples (LSC) or "
                                 "k-means++ (better, O(n·m·d·log m)).",
                                 check=graphclust.one_of("random", "k-means++"))
    copy_x: bool = graphclust.param(
        True, doc="False: centre X in place during the fit and restore it afterwards "
        "(scikit-learn's copy_x=False) instead of copying it; saves one copy of X, may "
        "change X in the last bit. For arrays a pipeline owns (DLC's later layers).",
        check=graphclust.boolean)

    def select(self, X, ctx):
        X = float_rows(X)
        n = X.shape[0]
        m = clamp_anchors(self.n_anchors, n, who="anchors 'kmeans'")
        km = KMeans(n_clusters=m, init=self.init, n_init=self.n_init, max_iter=self.max_iter,
                    tol=0.0, copy_x=self.copy_x or sp.issparse(X) or not X.flags.writeable,
                    random_state=ctx.seed_for("anchors.kmeans"))
        with warnings.catch_warnings():
            # duplicate points: fewer distinct clusters than m is a documented, legal case
            warnings.simplefilter("ignore", SkConvergenceWarning)
            # One OpenMP thread: scikit-learn's Lloyd step sums centres in per-thread
            # buffers, so their last bits (and, downstream, nearest-anchor choices)
            # would depend on the thread count. BLAS threads do not change the result.
            with threadpool_limits(limits=1, user_api="openmp"):
                km.fit(X)
        return graphclust.Anchors(points=np.asarray(km.cluster_centers_),
                                  assignment=np.asarray(km.labels_, dtype=np.int64),
                                  info={"inertia": float(km.inertia_), "n_iter": int(km.n_iter_)})
