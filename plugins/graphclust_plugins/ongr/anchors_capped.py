"""Anchor count capped at a fraction of n (the ONGR presets' "m = 1000, or n/10 when smaller")."""

from __future__ import annotations

import graphclust
import numpy as np
from sklearn.base import clone

__all__ = ["CappedAnchors"]


@graphclust.part
class CappedAnchors(graphclust.AnchorSelector):
    """Any anchor selector with m = min(n_anchors, ⌊max_fraction·n⌋) anchors.

    Wraps another selector (``base``, any selector with an ``n_anchors`` parameter, e.g.
    ``kmeans`` or ``random``) and sets its anchor count to
    ``max(1, min(n_anchors, floor(max_fraction · n)))`` for the data at hand. The ONGR
    presets use it for the paper-grid default "m = 1000, or n/10 when smaller" (the
    paper searches m in 100…1200; on small data sets a tenth of the points keeps the
    anchor graph sparse and the k-means anchors cheap).

    The base selector draws its randomness from the same context, so the anchors are
    those the base would pick with the capped ``n_anchors``.
    """

    name = "capped"
    chunkwise = True  # runs on a row sample; the cap is taken from all rows (for_rows)

    base: dict = graphclust.param(
        {"name": "kmeans"}, doc="The anchor selector to run (a spec table or a part); it must "
                                "have an n_anchors parameter.",
        check=graphclust.part_spec("anchors"))
    n_anchors: int = graphclust.param(1000, doc="Largest number of anchors m.",
                                      check=graphclust.integer(1))
    max_fraction: float = graphclust.param(
        0.1, doc="Largest fraction of the points used as anchors (m <= max_fraction·n).",
        check=graphclust.real(0, 1, low_open=True))

    def n_anchors_for(self, n: int) -> int:
        """The anchor count used for ``n`` points."""
        return int(max(1, min(int(self.n_anchors), int(np.floor(self.max_fraction * n)))))

    def for_rows(self, n: int):
        """This selector for a run on ``n`` rows of which ``select`` sees a sample (the
        chunked execution): the cap ``n_anchors_for(n)`` is fixed from all ``n`` rows, so
        the sample gets the in-memory number of anchors."""
        return clone(self).set_params(n_anchors=self.n_anchors_for(n), max_fraction=1.0)

    def select(self, X, ctx):
        base = graphclust.resolve_part(self.base, "anchors")
        if "n_anchors" not in base.get_params(deep=False):
            raise graphclust.InputError(
                f"anchors 'capped': the base selector {base.name!r} has no n_anchors parameter")
        m = self.n_anchors_for(X.shape[0])
        anchors = clone(base).set_params(n_anchors=m).select(X, ctx)
        info = dict(anchors.info)
        info.update({"capped_from": int(self.n_anchors), "base": base.name})
        return graphclust.Anchors(points=anchors.points, assignment=anchors.assignment, info=info,
                                  state=anchors.state)
