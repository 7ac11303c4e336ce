"""Deprecated alias of :mod:`graphclust.numerics.distances` (kept because earlier docs
named ``graphclust.neighbors``); import from :mod:`graphclust.numerics` instead."""

import warnings

from graphclust.numerics.distances import clamp_anchors, default_block_size, knn, nearest_anchors

__all__ = ["nearest_anchors", "knn", "clamp_anchors", "default_block_size"]

warnings.warn("graphclust.neighbors is deprecated; use graphclust.numerics "
              "(nearest_anchors, knn, clamp_anchors, default_block_size)",
              DeprecationWarning, stacklevel=2)
