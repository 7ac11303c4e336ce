"""The kit's fixture data and its own tiny parts.

The parts here (``kit-anchors``, ``kit-anchor-graph``, ``kit-knn``, ``kit-spectral``,
``kit-kmeans``, ``kit-argmax``) synthesise the inputs of every kind and fill the other
stages of the minimal pipelines, so the kit depends on no bundle. They are dense and
meant for the tiny fixture data only.
"""

from __future__ import annotations

import copy
import functools

import attrs
import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from graphclust.numerics import (gaussian_anchor_rows, nearest_anchors, safe_inverse,
                                 self_tuning_sigma)
from graphclust import integer
from graphclust import GraphKind, SolutionField
from graphclust import AffinityGraph, Anchors, AnchorGraph, FittedState, fitted_state
from graphclust import AnchorSelector, Context, GraphBuilder, Rounding, Solver, param, part
from graphclust import Solution

__all__ = ["make_blobs", "make_fixture", "shared_fixture", "Fixture", "KitAnchors",
           "KitAnchorGraph", "KitKnnGraph", "KitSolver", "KitKMeansRounding",
           "KitArgmaxRounding"]


def make_blobs(n: int = 60, d: int = 4, k: int = 3, *, seed: int = 0,
               dtype: type = np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Well-separated Gaussian blobs ``(X, y)``: ``k`` classes of (almost) equal size.

    Centres are ``k`` points spaced 8 apart along random directions, noise 0.5; every
    feature is shifted to be at least 0.5 (methods for nonnegative data accept it).
    """
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rng.shuffle(y)
    centres = rng.normal(size=(k, d))
    centres *= 8.0 / np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
    centres += 8.0 * np.eye(k, d) if d >= k else 0.0
    X = centres[y] + 0.5 * rng.normal(size=(n, d))
    X -= X.min(axis=0) - 0.5  # nonnegative features (pixel-like), as some methods assume
    return X.astype(dtype), y.astype(np.int64)


def _anchor_rows(X: np.ndarray, U: np.ndarray, s: int,
                 sigma: float | None = None) -> tuple[sp.csr_array, float]:
    """Gaussian weights on the ``s`` nearest anchors, rows summing to one (the core's
    numerics: blocked nearest anchors, self-tuning bandwidth)."""
    X = np.asarray(X, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    idx, d2 = nearest_anchors(X, U, min(s, U.shape[0]))
    if sigma is None:
        sigma = self_tuning_sigma(d2)
    return gaussian_anchor_rows(idx, d2, U.shape[0], sigma * sigma), sigma


@part
class KitAnchors(AnchorSelector):
    """Kit fixture: ``n_anchors`` distinct training rows drawn at random."""

    name = "kit-anchors"
    n_anchors: int = param(12, doc="Number of anchors m.", check=integer(1))

    def select(self, X: np.ndarray, ctx: Context) -> Anchors:
        X = np.asarray(X)
        m = min(int(self.n_anchors), X.shape[0])
        idx = np.sort(ctx.rng("kit-anchors").choice(X.shape[0], m, replace=False))
        U = X[idx].astype(np.float64)
        _, assign = _anchor_rows(X, U, 1)[0].nonzero()
        return Anchors(U, assignment=np.asarray(assign, dtype=np.int64))


@attrs.frozen
class KitAnchorState(FittedState):
    """What ``kit-anchor-graph`` keeps to place new points: its bandwidth σ."""

    sigma: float


@part
class KitAnchorGraph(GraphBuilder):
    """Kit fixture: Gaussian weights on the ``s`` nearest anchors, rows summing to one."""

    name = "kit-anchor-graph"
    produces = GraphKind.ANCHOR
    needs_anchors = True
    n_neighbors: int = param(3, doc="Nearest anchors per point s.", check=integer(1))

    def build(self, X: np.ndarray, anchors: Anchors | None, ctx: Context) -> AnchorGraph:
        Z, sigma = _anchor_rows(X, anchors.points, self.n_neighbors)
        return AnchorGraph(Z, anchors=anchors, state=KitAnchorState(sigma=sigma))

    def transform(self, X_new: np.ndarray, graph: AnchorGraph) -> sp.csr_array:
        state = fitted_state(graph, KitAnchorState, f"graph {self.name!r}")
        return _anchor_rows(X_new, graph.anchors.points, self.n_neighbors, state.sigma)[0]


@part
class KitKnnGraph(GraphBuilder):
    """Kit fixture: symmetric Gaussian kNN affinity graph (dense distances; tiny n only)."""

    name = "kit-knn"
    produces = GraphKind.AFFINITY
    n_neighbors: int = param(6, doc="Neighbours per point.", check=integer(1))

    def build(self, X: np.ndarray, anchors: Anchors | None, ctx: Context) -> AffinityGraph:
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        k = max(1, min(int(self.n_neighbors), n - 1))
        if n == 1:
            return AffinityGraph(sp.csr_array((1, 1)))
        d2 = np.maximum((X * X).sum(1)[:, None] - 2 * X @ X.T + (X * X).sum(1)[None, :], 0.0)
        np.fill_diagonal(d2, np.inf)
        idx = np.argsort(d2, axis=1, kind="stable")[:, :k]
        dd = np.take_along_axis(d2, idx, axis=1)
        sigma2 = float(np.mean(dd)) or 1.0
        A = sp.csr_array((np.exp(-dd / sigma2).ravel(), idx.ravel(),
                          np.arange(0, n * k + 1, k)), shape=(n, n))
        return AffinityGraph(A.maximum(A.T))


def _sqdist(E: np.ndarray, C: np.ndarray) -> np.ndarray:
    return np.maximum((E * E).sum(1)[:, None] - 2 * E @ C.T + (C * C).sum(1)[None, :], 0.0)


def _kmeans(E: np.ndarray, k: int, seed: int, *, n_init: int = 3,
            max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's k-means from k-means++ seeds, best of ``n_init`` by inertia (tiny n only).

    Returns labels in ``[0, k)`` (``k`` clamped to ``n``) assigning every row to its
    nearest centre, and the centres; a centre that loses all its points stays put.
    Dense and unblocked on purpose: the kit's parts run on the 60-point fixture, where
    this is a hundred times faster than scikit-learn's ``KMeans`` set-up.
    """
    E = np.asarray(E, dtype=np.float64)
    n = E.shape[0]
    k = max(1, min(int(k), n))
    rng = np.random.default_rng(seed)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for _ in range(n_init):
        C = E[[rng.integers(n)]]
        for _ in range(1, k):  # k-means++: next seed with probability ~ squared distance
            d2 = _sqdist(E, C).min(axis=1)
            total = d2.sum()
            i = rng.choice(n, p=d2 / total) if total > 0 else rng.integers(n)
            C = np.vstack([C, E[i]])
        labels = np.full(n, -1)
        for _ in range(max_iter):
            new = _sqdist(E, C).argmin(axis=1)
            if np.array_equal(new, labels):
                break
            labels = new
            for j in range(k):
                members = labels == j
                if members.any():
                    C[j] = E[members].mean(axis=0)
        d2 = _sqdist(E, C)
        labels = d2.argmin(axis=1)
        inertia = float(d2[np.arange(n), labels].sum())
        if best is None or inertia < best[0]:
            best = (inertia, labels, C)
    return best[1].astype(np.int64), best[2]


@part
class KitSolver(Solver):
    """Kit fixture: dense spectral embedding of the normalised graph plus a k-means soft part."""

    name = "kit-spectral"
    accepts = frozenset({GraphKind.AFFINITY, GraphKind.ANCHOR})
    provides = frozenset({SolutionField.EMBEDDING, SolutionField.SOFT})
    out_of_sample = True

    def solve(self, graph: AffinityGraph | AnchorGraph, X: np.ndarray | None,
              n_clusters: int, ctx: Context) -> Solution:
        k = max(1, int(n_clusters))
        anchor_emb = None
        if isinstance(graph, AnchorGraph):
            B = graph.B().toarray()
            U, S, Vt = np.linalg.svd(B, full_matrices=False)
            p = min(k, S.size)
            emb = U[:, :p]
            anchor_emb = (safe_inverse(graph.anchor_degrees, 0.5)[:, None] * Vt[:p].T
                          * safe_inverse(S[:p])[None, :])
        else:
            N = graph.normalized_adjacency().toarray()
            vals, vecs = np.linalg.eigh(N)
            p = min(k, vals.size)
            emb = vecs[:, ::-1][:, :p]
        labels, _ = _kmeans(emb, k, ctx.seed_for("kit-solver"))
        soft = np.full((emb.shape[0], k), 0.1 / k)
        soft[np.arange(emb.shape[0]), labels] += 0.9
        anchor_soft = None
        if isinstance(graph, AnchorGraph):
            anchor_soft = safe_inverse(graph.anchor_degrees)[:, None] * (graph.Z.T @ soft)
        return Solution(embedding=emb, soft=soft, anchor_embedding=anchor_emb,
                        anchor_soft=anchor_soft)


@part
class KitKMeansRounding(Rounding):
    """Kit fixture: k-means on the embedding (3 restarts); new rows to the nearest centre."""

    name = "kit-kmeans"
    needs = SolutionField.EMBEDDING

    def round(self, solution: Solution, n_clusters: int, ctx: Context) -> np.ndarray:
        labels, self.centers_ = _kmeans(np.asarray(solution.embedding, dtype=np.float64),
                                        int(n_clusters), ctx.seed_for("kit-rounding"))
        return labels

    def assign(self, solution: Solution) -> np.ndarray:
        E = np.asarray(solution.embedding, dtype=np.float64)
        C = self.centers_
        return np.argmin((E * E).sum(1)[:, None] - 2 * E @ C.T + (C * C).sum(1)[None, :], axis=1)


@part
class KitArgmaxRounding(Rounding):
    """Kit fixture: argmax of the soft assignment."""

    name = "kit-argmax"
    needs = SolutionField.SOFT

    def round(self, solution: Solution, n_clusters: int, ctx: Context | None) -> np.ndarray:
        soft = solution.soft
        soft = soft.toarray() if sp.issparse(soft) else np.asarray(soft)
        return soft.argmax(axis=1).astype(np.int64)

    def assign(self, solution: Solution) -> np.ndarray:
        return self.round(solution, 0, None)


@attrs.define
class Fixture:
    """Inputs for one part kind, built on :func:`make_blobs` data.

    Attributes
    ----------
    X : ndarray (n, d)
    y : ndarray (n,)
    n_clusters : int
    anchors : Anchors
        ``KitAnchors`` (12 training rows) with their nearest-anchor assignment.
    anchor_graph : AnchorGraph
        ``KitAnchorGraph`` on ``anchors`` (3 nearest anchors per point).
    affinity_graph : AffinityGraph
        ``KitKnnGraph`` (symmetric Gaussian 6-NN).
    solution : Solution
        ``KitSolver`` on the affinity graph: an embedding and a soft assignment.
    """

    X: np.ndarray
    y: np.ndarray
    n_clusters: int
    anchors: Anchors
    anchor_graph: AnchorGraph
    affinity_graph: AffinityGraph
    solution: Solution

    def graph(self, kind: str) -> AffinityGraph | AnchorGraph:
        """The fixture graph of a kind (``"affinity"`` or ``"anchor"``)."""
        return self.anchor_graph if kind == "anchor" else self.affinity_graph

    def solution_with(self, needs: str, n_clusters: int | None = None) -> Solution:
        """A solution holding only ``needs`` (``"embedding"`` or ``"soft"``), for
        ``n_clusters`` clusters (default: the fixture's)."""
        sol = self.solution
        if n_clusters is not None and n_clusters != self.n_clusters:
            sol = KitSolver().solve(self.affinity_graph, self.X, n_clusters, Context(seed=0))
        if needs == "soft":
            return Solution(soft=sol.soft.copy())
        return Solution(embedding=sol.embedding.copy())


def make_fixture(n: int = 60, d: int = 4, k: int = 3, *, seed: int = 0,
                 dtype: type = np.float64) -> "Fixture":
    """Blobs plus anchors, both graph kinds and a solution built by the kit's own parts."""
    X, y = make_blobs(n, d, k, seed=seed, dtype=dtype)
    ctx = Context(seed=seed)
    anchors = KitAnchors(n_anchors=min(12, n)).select(X, ctx)
    ag = KitAnchorGraph().build(X, anchors, ctx)
    aff = KitKnnGraph().build(X, None, ctx)
    sol = KitSolver().solve(aff, X, k, ctx)
    return Fixture(X, y, k, anchors, ag, aff, sol)



@functools.lru_cache(maxsize=1)
def _master_fixture() -> Fixture:
    with threadpool_limits(limits=1):
        return make_fixture()


def shared_fixture() -> Fixture:
    """A private deep copy of the default :func:`make_fixture` (built once per process).

    Every check gets its own copy, so a part that modifies its inputs cannot corrupt
    the inputs of the checks that follow.
    """
    return copy.deepcopy(_master_fixture())
