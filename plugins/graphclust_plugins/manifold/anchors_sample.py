"""A seeded uniform sample of the rows, drawn by global row index (the fit-on-a-sample anchors)."""

from __future__ import annotations

import attrs
import numpy as np

import graphclust
from graphclust.numerics import as_dense_float, sample_rows

#: Default sample size ``S`` of the ``manifold`` preset (see :class:`SampleAnchors`).
DEFAULT_SAMPLE = 100_000


@attrs.frozen
class SampleState(graphclust.FittedState):
    """What ``sample`` keeps in ``Anchors.state``.

    Attributes
    ----------
    indices : ndarray of shape (S,) or None
        The drawn global row indices, ascending (``None``: every row, in order).
    n : int
        Rows the sample was drawn from.
    """

    indices: np.ndarray | None = attrs.field(eq=attrs.cmp_using(eq=np.array_equal))
    n: int = 0


@graphclust.part
class SampleAnchors(graphclust.AnchorSelector):
    """The anchors are ``S`` rows drawn uniformly without replacement (all rows when n ≤ S).

    The global step of a fit-on-a-sample pipeline (``on-sample``: a kNN graph, a layout
    and a density tree of the sample) runs on these rows; every other row is placed
    row-locally through its neighbours among them (``sample-knn``). Unlike ``random``
    (which clamps ``n_anchors > n`` with a warning), ``n_anchors`` here is a bound: with
    ``n <= n_anchors`` the sample is every row, in order, silently, and the pipeline is
    the in-memory fit on all rows.

    The rows are drawn by global row index from ``ctx.rng("anchors.sample")``
    (:func:`graphclust.numerics.sample_rows`, sorted), so they depend on ``n`` and the
    seed only. The chunk hook :meth:`sample_rows` names them, and the chunked execution
    gathers exactly those rows: the same anchors in memory, on every scheduler and for
    every chunking.

    Costs: ``O(n)`` time and memory for the draw (a permutation of the row indices),
    ``O(S·d)`` for the gathered rows.
    """

    name = "sample"
    chunkwise = True  # sample_rows(): the chunked execution gathers exactly these rows

    n_anchors: int = graphclust.param(
        DEFAULT_SAMPLE, doc="Sample size S: the rows the global step is fitted on (all rows "
        "when n <= S).", check=graphclust.integer(1))

    def sample_rows(self, n, ctx):
        """Sorted global row indices of the sample, ``None`` when ``n <= n_anchors``."""
        n = int(n)
        if n <= int(self.n_anchors):
            return None
        return sample_rows(ctx.rng("anchors.sample"), n, int(self.n_anchors)).astype(np.int64)

    def select(self, X, ctx):
        n = X.shape[0]
        idx = self.sample_rows(n, ctx)
        pts = as_dense_float(X if idx is None else X[idx])
        return graphclust.Anchors(points=pts, info={"sample_size": int(pts.shape[0]), "n": n},
                                  state=SampleState(indices=idx, n=n))
