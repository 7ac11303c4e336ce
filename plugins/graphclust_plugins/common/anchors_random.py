"""Random anchors."""

from __future__ import annotations

import attrs
import numpy as np

import graphclust
from graphclust.numerics import as_dense_float, clamp_anchors, sample_rows


@attrs.frozen
class RandomAnchorState(graphclust.FittedState):
    """What ``random`` keeps in ``Anchors.state``.

    Attributes
    ----------
    indices : ndarray of shape (m,)
        The drawn row indices of the training data, ascending.
    """

    indices: np.ndarray = attrs.field(eq=attrs.cmp_using(eq=np.array_equal))


@graphclust.part
class RandomAnchors(graphclust.AnchorSelector):
    """Anchors drawn uniformly at random from the data, without replacement.

    The cheap landmark choice of landmark-based spectral clustering (Cai & Chen 2015).
    ``n_anchors > n`` is clamped to ``n`` with a warning (every point is an anchor).
    The drawn row indices are kept in ``Anchors.state`` (a :class:`RandomAnchorState`);
    no assignment.
    """

    name = "random"
    chunkwise = True  # select() runs on a uniform row sample
    accepts_sparse = True  # only the m drawn rows are densified (the anchors)

    n_anchors: int = graphclust.param(1000, doc="Number of anchors m.",
                                      check=graphclust.integer(1))

    def select(self, X, ctx):
        n = X.shape[0]
        m = clamp_anchors(self.n_anchors, n, who="anchors 'random'")
        idx = sample_rows(ctx.rng("anchors.random"), n, m)
        pts = as_dense_float(X[idx])
        return graphclust.Anchors(points=pts, state=RandomAnchorState(indices=idx))
