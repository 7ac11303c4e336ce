"""Parts the user hands the estimator as arrays: anchors and a precomputed graph.

They are not registered: :func:`graphclust._plan.estimator_spec` builds them from the
estimator's ``anchors=`` (an ``(m, d)`` array) and ``graph=`` (a sparse ``n x n``
affinity or ``n x m`` matrix ``Z``) parameters.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from graphclust._contracts import GraphKind
from graphclust._errors import InputError
from graphclust._graphs import AffinityGraph, Anchors, AnchorGraph
from graphclust._parts import AnchorSelector, GraphBuilder, part

__all__ = ["GivenAnchors", "GivenGraph", "PrecomputedGraph", "is_array_like"]


@part
class GivenAnchors(AnchorSelector):
    """Anchors given by the user as an array (not registered; built by the estimator)."""

    name: ClassVar[str] = "given"
    chunkwise: ClassVar[bool] = True  # needs nothing of X but its dtype and width
    accepts_sparse: ClassVar[bool] = True  # reads nothing of X but its shape and dtype
    points: Any = None

    def select(self, X, ctx):
        raw = self.points.toarray() if sp.issparse(self.points) else np.asarray(self.points)
        if raw.dtype.kind not in "biuf":
            raise InputError(f"given anchors must be numeric, got dtype {raw.dtype}")
        pts = raw.astype(X.dtype if X.dtype == np.float32 else np.float64, copy=False)
        if pts.ndim != 2 or pts.shape[0] == 0 or pts.shape[1] != X.shape[1]:
            raise InputError(f"given anchors must have shape (m, {X.shape[1]}) with m >= 1, "
                             f"got {pts.shape}")
        if not np.all(np.isfinite(pts)):
            raise InputError("given anchors must be finite (NaN or inf found)")
        return Anchors(pts, info={"given": True})


@part
class GivenGraph(GraphBuilder):
    """A precomputed graph: a sparse ``n x n`` affinity or ``n x m`` anchor matrix ``Z``."""

    name: ClassVar[str] = "precomputed"
    accepts_sparse: ClassVar[bool] = True  # reads nothing of X but its shape and dtype
    needs_features: ClassVar[bool] = False  # ... and runs without X (graph="precomputed")
    given: ClassVar[bool] = True  # the user's own graph: only the user can connect it
    matrix: Any = None

    @property
    def produces(self) -> GraphKind:  # type: ignore[override]
        shape = np.shape(self.matrix)
        square = len(shape) == 2 and shape[0] == shape[1]
        return GraphKind.AFFINITY if square else GraphKind.ANCHOR

    def check_matrix(self) -> None:
        """Raise :class:`InputError` unless the matrix is a 2-D, numeric, finite and
        nonnegative graph."""
        M = self.matrix
        dtype = M.dtype if sp.issparse(M) else np.asarray(M).dtype
        if len(np.shape(M)) != 2:
            raise InputError(f"a precomputed graph must be a 2-D (sparse) matrix, got shape "
                             f"{np.shape(M)}")
        if dtype.kind not in "biuf":
            raise InputError(f"a precomputed graph must be numeric, got dtype {dtype}")
        values = M.data if sp.issparse(M) else np.asarray(M)
        if values.size and not np.all(np.isfinite(values)):
            raise InputError("a precomputed graph must have finite entries (NaN or inf found)")
        if values.size and values.min() < 0:
            raise InputError("a precomputed graph must be nonnegative")

    def build(self, X, anchors, ctx):
        if X is not None and self.matrix.shape[0] != X.shape[0]:
            raise InputError(f"the precomputed graph has {self.matrix.shape[0]} rows but X has "
                             f"{X.shape[0]} samples")
        if self.produces == GraphKind.AFFINITY:
            A = sp.csr_array(self.matrix)
            if abs(A - A.T).sum() > 1e-8 * max(1.0, abs(A).sum()):
                raise InputError("a precomputed n x n graph must be symmetric")
            return AffinityGraph(A, info={"precomputed": True})
        return AnchorGraph(sp.csr_array(self.matrix), None, info={"precomputed": True})


@part
class PrecomputedGraph(GivenGraph):
    """The graph handed to ``fit`` itself (``graph="precomputed"``): an ``n x n`` affinity.

    Its ``matrix`` is the cleaned CSR matrix (:func:`graphclust._ongraph.graph_matrix`),
    set by the fit; composed without data (``get_params``) it holds ``None``."""

    @property
    def produces(self) -> GraphKind:  # type: ignore[override]
        return GraphKind.AFFINITY

    def build(self, X, anchors, ctx):
        return AffinityGraph(sp.csr_array(self.matrix), info={"precomputed": True})

    def get_params(self, deep: bool = True) -> dict:
        """No ``matrix``: it is the data of the fit, not a setting (a resolved spec stays
        a plain spec, ``{"name": "precomputed"}``)."""
        params = super().get_params(deep)
        params.pop("matrix", None)
        return params


def is_array_like(value) -> bool:
    """Whether an estimator section parameter is data (an array) rather than a spec."""
    return sp.issparse(value) or isinstance(value, np.ndarray)
