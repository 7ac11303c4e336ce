"""MER for separable NMF (Mizutani, Section 4.3): ER without the ``Σ_r`` factor."""

from __future__ import annotations

import graphclust
from graphclust_plugins.ncer.solver_er import ErEmbedding

__all__ = ["MerEmbedding"]


@graphclust.part
class MerEmbedding(ErEmbedding):
    """MER steps 1–2 (Section 4.3): ER with B = V_rᵀ, so NCER with p = m equals it (Corollary 1).

    Same as ``er`` but without the ``Σ_r`` factor in step 1. With ``degree_scaling=True``
    and the ``ellipsoid`` rounding it returns the clusters of NCER with the inner-product
    kernel and ``p = m`` (Corollary 1).
    """

    name = "mer"
    _modified = True
