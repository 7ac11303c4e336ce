"""Resolving the anchor selector of DLC's later layers."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning

import graphclust

__all__ = ["layer_selector", "LayerKMeans", "LAYER_KMEANS_ITER"]

LAYER_KMEANS_ITER = 10
"""k-means iterations for the landmarks of later layers ("e.g., 10", paper Section 3.5)."""


@graphclust.part
class LayerKMeans(graphclust.AnchorSelector):
    """k-means landmarks with few iterations (fallback used when the common ``kmeans``
    anchor selector is not registered; not registered itself).

    One run of Lloyd's algorithm from ``n_anchors`` distinct random samples,
    ``max_iter`` iterations (the DLC paper uses about 10).
    """

    name = "dlc-layer-kmeans"

    n_anchors: int = graphclust.param(1000, doc="Number of landmarks m.",
                                      check=graphclust.integer(1))
    max_iter: int = graphclust.param(LAYER_KMEANS_ITER, doc="Lloyd iterations.",
                                     check=graphclust.integer(1))

    def select(self, X, ctx):
        X = np.asarray(X)
        m = graphclust.clamp_anchors(self.n_anchors, X.shape[0], who="dlc layer k-means")
        rng = ctx.rng("anchors.dlc-layer-kmeans")
        init = X[np.sort(rng.choice(X.shape[0], size=m, replace=False))]
        km = KMeans(n_clusters=m, init=init, n_init=1, max_iter=self.max_iter,
                    copy_x=not X.flags.writeable,
                    random_state=ctx.seed_for("anchors.dlc-layer-kmeans.km"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SkConvergenceWarning)
            with threadpool_limits(limits=1, user_api="openmp"):  # thread-count-free sums
                km.fit(X)
        return graphclust.Anchors(km.cluster_centers_, assignment=km.labels_.astype(np.int64),
                                  info={"n_iter": int(km.n_iter_)})


def _default_selector(n_anchors: int) -> graphclust.AnchorSelector:
    """The common ``kmeans`` selector with ~10 iterations, or :class:`LayerKMeans`."""
    try:
        registry = graphclust.get_registry()
        cls = registry.anchors.get("kmeans") if "kmeans" in registry.anchors else None
    except Exception:  # pragma: no cover - registry unavailable
        cls = None
    if cls is None:
        return LayerKMeans(n_anchors=n_anchors)
    names = {f.name for f in cls.parameters()}
    kwargs = {}
    if "n_anchors" in names:
        kwargs["n_anchors"] = n_anchors
    for key in ("max_iter", "n_iter"):
        if key in names:
            kwargs[key] = LAYER_KMEANS_ITER
            break
    if "n_init" in names:
        kwargs["n_init"] = 1
    if "copy_x" in names:
        kwargs["copy_x"] = False  # the later layers' inputs are the solver's own arrays
    return cls(**kwargs)


def layer_selector(value, n_anchors: int) -> graphclust.AnchorSelector:
    """The anchor selector for a later layer.

    ``value`` is ``None`` (k-means with :data:`LAYER_KMEANS_ITER` iterations and as
    many landmarks as the first layer), a part instance (cloned), or a spec table
    ``{"name": ..., ...}`` resolved through the registry.
    """
    if value is None:
        return _default_selector(n_anchors)
    if isinstance(value, graphclust.Part):
        from sklearn.base import clone

        return clone(value)
    resolve = getattr(graphclust, "resolve_part", None)
    if resolve is not None:
        return resolve(dict(value), "anchors")
    spec = dict(value)  # pragma: no cover - older core without resolve_part
    cls = graphclust.get_registry().anchors.get(spec.pop("name"))
    return cls(**spec)
