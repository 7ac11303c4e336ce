"""The value objects that flow between parts: anchors and the two graph kinds.

Two graph kinds exist.

* :class:`AffinityGraph` holds an explicit sparse symmetric nonnegative ``n x n``
  adjacency ``A``.
* :class:`AnchorGraph` holds a sparse row-stochastic ``n x m`` matrix ``Z`` linking
  points to ``m`` anchors. The implied point graph ``W = Z Λ⁻¹ Zᵀ`` with
  ``Λ = diag(Zᵀ1)`` is **never formed**: it is applied as ``Z (Λ⁻¹ (Zᵀ F))``.

Degenerate cases follow fixed rules instead of dividing by zero:

* an isolated vertex (zero degree) gets ``0`` in ``D^{-1/2}``, so its row of the
  normalized adjacency is zero;
* an anchor that no point chose (``Λ_jj = 0``) gets ``0`` in ``Λ^{-1}``, so it
  contributes nothing to ``W``.

Typed fitted state: what a part keeps to place new points later (a bandwidth, candidate
lists, drawn indices) is a frozen attrs subclass of :class:`FittedState` defined in that
part's module, carried in the ``state`` field of the object the part returns (anchors or
graph). ``info`` holds free-form diagnostics only; no part reads another part's ``info``.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import attrs
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from graphclust._contracts import GraphKind
from graphclust.numerics.rows import safe_inverse

__all__ = ["Anchors", "AffinityGraph", "AnchorGraph", "Graph", "FittedState", "fitted_state",
           "modularity"]

S = TypeVar("S", bound="FittedState")


def _as_csr(matrix: Any) -> sp.csr_array:
    csr = sp.csr_array(matrix)
    if csr.dtype.kind != "f":
        csr = csr.astype(np.float64)
    csr.sum_duplicates()
    csr.sort_indices()
    return csr


@attrs.frozen
class FittedState:
    """Base of the typed state a part keeps in its output for later work (``predict``).

    A part that needs something at ``transform``/``predict`` time beyond its own
    parameters declares a frozen attrs subclass in its module, with one documented field
    per value, and returns it in the ``state`` field of its anchors or graph::

        @attrs.frozen
        class GaussianAnchorState(graphclust.FittedState):
            '''What ``gaussian-anchor`` keeps to place new points.'''

            sigma: float    #: the fitted bandwidth σ
            n_neighbors: int  #: anchors kept per point, after clamping

    It reads it back with :func:`fitted_state`, which names the part when the object was
    built by something else (a precomputed graph, another builder).
    """


def _check_state(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and not isinstance(value, FittedState):
        raise TypeError(f"{type(instance).__name__}.state must be a graphclust.FittedState "
                        f"(a frozen attrs class of the part that built it) or None, got "
                        f"{type(value).__name__}")


def fitted_state(obj: Any, state_cls: type[S], who: str) -> S:
    """The typed state ``state_cls`` carried by anchors or a graph, for the part ``who``.

    Parameters
    ----------
    obj : Anchors, AffinityGraph or AnchorGraph
    state_cls : type
        The :class:`FittedState` subclass the part stored at fit time.
    who : str
        The part, e.g. ``"graph 'gaussian-anchor'"``, named in the error.

    Raises
    ------
    InputError
        When ``obj`` carries no state of that class (it was built by another part, or
        given precomputed).
    """
    from graphclust._errors import InputError

    state = getattr(obj, "state", None)
    if not isinstance(state, state_cls):
        got = "no fitted state" if state is None else f"a {type(state).__name__}"
        raise InputError(f"{who}: the {type(obj).__name__} carries {got}, not the "
                         f"{state_cls.__name__} {who} stores when it builds one; place new "
                         f"points with the part that built it")
    return state


@attrs.frozen
class Anchors:
    """Anchor points chosen by an :class:`~graphclust.AnchorSelector`.

    Attributes
    ----------
    points : ndarray of shape (m, d)
        The anchors.
    assignment : ndarray of shape (n,) or None
        For selectors that partition the training points (k-means, BKHK leaves),
        the index of the anchor each training point belongs to; ``None`` otherwise.
    info : dict
        Free-form diagnostics (e.g. number of BKHK levels); no part reads it.
    state : FittedState or None
        The selector's typed fitted state (e.g. the drawn row indices of ``random``).
    """

    points: np.ndarray = attrs.field(converter=np.asarray)
    assignment: np.ndarray | None = None
    info: dict = attrs.field(factory=dict)
    state: FittedState | None = attrs.field(default=None, validator=_check_state)

    @points.validator
    def _check_points(self, attribute, value):
        if value.ndim != 2 or value.shape[0] == 0:
            raise ValueError(f"anchors must be a non-empty 2-D array, got shape {value.shape}")

    @property
    def n_anchors(self) -> int:
        return int(self.points.shape[0])


@attrs.frozen(eq=False)
class AffinityGraph:
    """A sparse symmetric nonnegative ``n x n`` affinity graph.

    Attributes
    ----------
    adjacency : scipy.sparse.csr_array of shape (n, n)
        Symmetric, nonnegative; the diagonal is kept as given.
    info : dict
        Free-form diagnostics of the builder (bandwidth, neighbour counts...); no part
        reads it.
    state : FittedState or None
        The builder's typed fitted state, when it keeps any.
    """

    kind: ClassVar[GraphKind] = GraphKind.AFFINITY

    adjacency: sp.csr_array = attrs.field(converter=_as_csr)
    info: dict = attrs.field(factory=dict)
    state: FittedState | None = attrs.field(default=None, validator=_check_state)
    _cache: dict = attrs.field(factory=dict, init=False, repr=False)

    @adjacency.validator
    def _check(self, attribute, value):
        n, n2 = value.shape
        if n != n2:
            raise ValueError(f"an affinity graph must be square, got shape {value.shape}")
        if value.nnz and value.data.min() < 0:
            raise ValueError("an affinity graph must be nonnegative")
        if not np.all(np.isfinite(value.data)):
            raise ValueError("an affinity graph must have finite entries")

    @property
    def n(self) -> int:
        return int(self.adjacency.shape[0])

    @property
    def nnz(self) -> int:
        return int(self.adjacency.nnz)

    @property
    def degrees(self) -> np.ndarray:
        """Row sums ``d = A 1``."""
        if "degrees" not in self._cache:
            self._cache["degrees"] = np.asarray(self.adjacency.sum(axis=1)).ravel()
        return self._cache["degrees"]

    def matvec(self, F: np.ndarray) -> np.ndarray:
        """``A @ F``."""
        return self.adjacency @ F

    def normalized_adjacency(self) -> sp.csr_array:
        """``D^{-1/2} A D^{-1/2}`` (isolated vertices give zero rows)."""
        if "normalized" not in self._cache:
            s = sp.dia_array((safe_inverse(self.degrees, 0.5)[None, :], [0]), shape=(self.n, self.n))
            self._cache["normalized"] = _as_csr(s @ self.adjacency @ s)
        return self._cache["normalized"]

    def isolated(self) -> np.ndarray:
        """Indices of vertices with zero degree."""
        return np.flatnonzero(self.degrees <= 0)

    def n_components(self) -> int:
        """Number of connected components."""
        return int(connected_components(self.adjacency, directed=False)[0])

    def to_dense(self) -> np.ndarray:
        """Dense copy, for tests and tiny problems only."""
        return self.adjacency.toarray()

    def modularity(self, labels: np.ndarray) -> float:
        """Newman–Girvan modularity of a partition of the points (:func:`modularity`)."""
        from graphclust.numerics.csr_rows import row_blocks

        codes, k = _cluster_codes(labels, self.n)
        A = self.adjacency
        within = np.zeros(k)
        for lo, hi in row_blocks(A.indptr):  # O(block) scratch, not a COO copy of A
            start, stop = A.indptr[lo], A.indptr[hi]
            rows = np.repeat(codes[lo:hi], np.diff(A.indptr[lo:hi + 1]))
            same = rows == codes[A.indices[start:stop]]
            within += np.bincount(rows[same], weights=A.data[start:stop][same], minlength=k)
        return _modularity(within, np.bincount(codes, weights=self.degrees, minlength=k))


@attrs.frozen(eq=False)
class AnchorGraph:
    """A point-to-anchor graph: sparse row-stochastic ``Z`` of shape ``(n, m)``.

    It stands for the point graph ``W = Z Λ⁻¹ Zᵀ`` with ``Λ = diag(Zᵀ 1)``, which is
    never formed; :meth:`matvec` applies it as ``Z (Λ⁻¹ (Zᵀ F))`` in ``O(nnz(Z)·k)``.

    Attributes
    ----------
    Z : scipy.sparse.csr_array of shape (n, m)
        Nonnegative; each row usually sums to one.
    anchors : Anchors or None
        The anchors the graph was built on (``None`` for a precomputed ``Z``).
    info : dict
        Free-form diagnostics of the builder; no part reads it.
    state : FittedState or None
        The builder's typed fitted state: what its ``transform`` needs to place new
        points (e.g. ``GaussianAnchorState`` with the fitted bandwidth).
    """

    kind: ClassVar[GraphKind] = GraphKind.ANCHOR

    Z: sp.csr_array = attrs.field(converter=_as_csr)
    anchors: Anchors | None = None
    info: dict = attrs.field(factory=dict)
    state: FittedState | None = attrs.field(default=None, validator=_check_state)
    _cache: dict = attrs.field(factory=dict, init=False, repr=False)

    @Z.validator
    def _check(self, attribute, value):
        if value.ndim != 2:
            raise ValueError("Z must be 2-D")
        if value.nnz and value.data.min() < 0:
            raise ValueError("Z must be nonnegative")
        if not np.all(np.isfinite(value.data)):
            raise ValueError("Z must have finite entries")

    @property
    def n(self) -> int:
        return int(self.Z.shape[0])

    @property
    def n_anchors(self) -> int:
        return int(self.Z.shape[1])

    @property
    def nnz(self) -> int:
        return int(self.Z.nnz)

    @property
    def anchor_degrees(self) -> np.ndarray:
        """``λ = Zᵀ 1``, the diagonal of Λ (zero for an anchor no point chose)."""
        if "lam" not in self._cache:
            self._cache["lam"] = np.asarray(self.Z.sum(axis=0)).ravel()
        return self._cache["lam"]

    @property
    def degrees(self) -> np.ndarray:
        """Row sums of ``W``: ``W 1 = Z Λ⁻¹ Zᵀ 1`` (ones when rows of Z sum to one)."""
        if "degrees" not in self._cache:
            lam = self.anchor_degrees
            self._cache["degrees"] = self.Z @ (safe_inverse(lam) * lam)
        return self._cache["degrees"]

    def matvec(self, F: np.ndarray) -> np.ndarray:
        """``W @ F = Z (Λ⁻¹ (Zᵀ F))`` without forming ``W``."""
        inv = safe_inverse(self.anchor_degrees)
        ZtF = self.Z.T @ F
        ZtF = inv[:, None] * ZtF if ZtF.ndim == 2 else inv * ZtF
        return self.Z @ ZtF

    def B(self) -> sp.csr_array:
        """``B = Z Λ^{-1/2}``, so that ``W = B Bᵀ``."""
        if "B" not in self._cache:
            scale = sp.dia_array(
                (safe_inverse(self.anchor_degrees, 0.5)[None, :], [0]),
                shape=(self.n_anchors, self.n_anchors),
            )
            self._cache["B"] = _as_csr(self.Z @ scale)
        return self._cache["B"]

    def anchor_level(self) -> AffinityGraph:
        """The ``m x m`` anchor-level graph ``Zᵀ Z``.

        Its degrees are ``Zᵀ Z 1 = Λ`` when rows of Z sum to one, so its normalized
        adjacency ``Λ^{-1/2} Zᵀ Z Λ^{-1/2} = Bᵀ B`` shares its spectrum with ``W``.
        """
        if "gram" not in self._cache:
            self._cache["gram"] = AffinityGraph(self.Z.T @ self.Z)
        return self._cache["gram"]

    def lift(self, values: np.ndarray) -> np.ndarray:
        """Carry per-anchor values (``m x k``) to the points: ``Z @ values``.

        Rows of a per-anchor soft assignment on the simplex stay on the simplex when
        rows of ``Z`` sum to one.
        """
        return self.Z @ np.asarray(values)

    def lift_labels(self, anchor_labels: np.ndarray, n_labels: int | None = None) -> np.ndarray:
        """Label each point by the label carrying the largest ``Z`` weight among its anchors."""
        anchor_labels = np.asarray(anchor_labels)
        n_labels = int(anchor_labels.max()) + 1 if n_labels is None else n_labels
        onehot = sp.csr_array(
            (np.ones(self.n_anchors), (np.arange(self.n_anchors), anchor_labels)),
            shape=(self.n_anchors, n_labels),
        )
        return np.asarray((self.Z @ onehot).toarray().argmax(axis=1))

    def n_components(self) -> int:
        """Connected components of ``W`` over the points (anchors no point chose ignored)."""
        n, m = self.Z.shape
        bip = sp.block_array([[None, self.Z], [self.Z.T, None]], format="csr")
        labels = connected_components(bip, directed=False)[1]
        return int(np.unique(labels[:n]).size)

    def isolated(self) -> np.ndarray:
        """Indices of points with no anchor at all (an all-zero row of Z)."""
        return np.flatnonzero(np.diff(self.Z.indptr) == 0)

    def to_dense(self) -> np.ndarray:
        """Dense ``W``, for tests and tiny problems only."""
        Zd = self.Z.toarray()
        return Zd @ np.diag(safe_inverse(self.anchor_degrees)) @ Zd.T

    def modularity(self, labels: np.ndarray) -> float:
        """Newman–Girvan modularity of a partition of the points on ``W`` (:func:`modularity`),
        without forming ``W``: the weight inside cluster ``c`` is
        ``1_cᵀ Z Λ⁻¹ Zᵀ 1_c = Σ_j (Zᵀ 1_c)_j² / λ_j``."""
        codes, k = _cluster_codes(labels, self.n)
        H = sp.csr_array((np.ones(self.n), (np.arange(self.n), codes)), shape=(self.n, k))
        return anchor_modularity((self.Z.T @ H).toarray())


Graph = AffinityGraph | AnchorGraph


def _cluster_codes(labels: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """Labels as codes ``0..k-1`` (``-1``, noise, is one more cluster) and ``k``."""
    labels = np.asarray(labels).ravel()
    if labels.shape[0] != n:
        raise ValueError(f"labels must have one entry per point ({n}), got {labels.shape[0]}")
    uniq, codes = np.unique(labels, return_inverse=True)
    return codes.astype(np.int64), int(uniq.size)


def _modularity(within: np.ndarray, volume: np.ndarray) -> float:
    total = float(volume.sum())
    if total <= 0.0:
        return 0.0
    return float(np.sum(within / total - (volume / total) ** 2))


def anchor_modularity(S: np.ndarray) -> float:
    """Modularity of a partition on ``W = Z Λ⁻¹ Zᵀ`` from ``S = Zᵀ H`` alone (``m x k``,
    ``H`` the one-hot labels): ``λ = S 1``, ``w_c = Σ_j S_jc² / λ_j`` and, since the
    degree of a point is the share of its row on chosen anchors,
    ``vol(c) = Σ_{j: λ_j > 0} S_jc``. ``S`` is a sum over rows, so the chunked execution
    adds it up block by block and gets the in-memory value."""
    S = np.asarray(S, dtype=np.float64)
    lam = S.sum(axis=1)
    used = lam > 0
    within = (S[used] ** 2 / lam[used, None]).sum(axis=0)
    return _modularity(within, S[used].sum(axis=0))


def modularity(graph: Graph, labels: np.ndarray) -> float:
    """Newman–Girvan modularity of a partition of a graph's points.

    Newman & Girvan (2004), *Finding and evaluating community structure in networks*,
    Phys. Rev. E 69, 026113: the share of the edge weight that falls inside clusters
    minus the share expected if edges joined points at random with the same degrees,

    ``Q = Σ_c [ w_c / vol(V) − (vol(c) / vol(V))² ]``,

    with ``w_c = 1_cᵀ W 1_c`` the weight inside cluster ``c`` (an edge between two
    points counted from both ends, a self loop once), ``vol(c) = Σ_{i ∈ c} d_i`` and
    ``vol(V) = Σ_i d_i``. ``Q`` is at most 1, 0 for a single cluster (and for a graph
    with no edges), and does not change when clusters are renamed. ``-1`` labels
    (noise) count as one more cluster, as in the metrics. ``O(nnz)`` for both graph
    kinds; ``W`` of an anchor graph is not formed.
    """
    return graph.modularity(labels)
