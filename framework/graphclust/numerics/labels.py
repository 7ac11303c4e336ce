"""Comparisons of labellings shared by parts and the testing kit."""

from __future__ import annotations

import numpy as np

__all__ = ["same_partition"]


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two labellings of the same points are one partition up to renaming.

    True exactly when the pairs ``(a[i], b[i])`` define a one-to-one map between the
    labels of ``a`` and those of ``b``.
    """
    pairs = np.unique(np.stack([np.asarray(a), np.asarray(b)]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))
