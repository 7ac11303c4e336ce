"""U-SPEC's sparse bipartite graph: Gaussian weights on the K nearest representatives."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import attrs
import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_info, threadpool_limits

import graphclust
from graphclust.numerics import ExactSum, as_dense_float, float_rows, rows_to_csr
from graphclust_plugins.uspec._knr import RepresentativeIndex, build_index, exact_nearest

WEIGHT_FLOOR = float(np.finfo(np.float64).eps)
"""Weights that underflow are raised to this, so every point keeps its K edges."""


def gaussian_weights(dist: np.ndarray, sigma: float) -> np.ndarray:
    """``exp(−d² / (2σ²))`` of Euclidean distances ``d``, floored at :data:`WEIGHT_FLOOR`;
    ``σ = 0`` (every point on its representatives) gives weight 1."""
    if sigma > 0:
        w = np.exp(-(dist * dist) / (2.0 * sigma * sigma))
    else:
        w = np.ones_like(dist)
    return np.maximum(w, WEIGHT_FLOOR)


@attrs.frozen
class KnrBipartiteState(graphclust.FittedState):
    """What ``knr-bipartite`` keeps in ``AnchorGraph.state`` to place new points.

    Attributes
    ----------
    sigma : float
        The kernel width σ fixed at fit time.
    n_neighbors : int
        Representatives ``K`` kept per point, after clamping to ``p``.
    index : RepresentativeIndex or None
        The coarse-to-fine search structure (``search="approx"``); ``None`` when every
        point is compared with every representative.
    """

    sigma: float
    n_neighbors: int
    index: RepresentativeIndex | None = None


#: Rows of the search are reported in at most this many blocks (progress steps) ...
SEARCH_STEPS = 20
#: ... of at least this many rows (smaller blocks only add per-block overhead) ...
SEARCH_BLOCK_MIN = 4096
#: ... and, for the approximate search, of at least this many rows per representative:
#: a block's rows are searched one representative's candidate list at a time (one BLAS
#: product each), so a block of ``n / 20`` rows split MNIST-70k's 70 rows a list into
#: 18 products of about 4 rows, where the Python and BLAS call overheads cost 2.6 of the
#: graph's 5.1 CPU s (cProfile, issue 48).
SEARCH_ROWS_PER_LIST = 64


@graphclust.part
class KNRBipartiteGraph(graphclust.GraphBuilder):
    """Bipartite graph on the K nearest representatives, found coarse to fine (U-SPEC Sec. 3.2).

    Each point is linked to its ``K`` nearest representatives (the anchors) with
    Gaussian weights ``b_ij = exp(−d_ij² / (2σ²))`` of the Euclidean distance ``d_ij``,
    ``σ`` the mean of those ``n·K`` distances (U-SPEC Sec. 3.2). The
    result is the sparse ``n x p`` cross-affinity ``B`` of the bipartite graph, stored
    *unnormalised* as the anchor graph's ``Z`` (the transfer cut takes its row sums as
    ``D_X``; other anchor solvers read it as any anchor graph).

    ``search = "approx"`` (U-SPEC Sec. 3.2.2): the representatives are grouped by k-means
    into ``⌊√p⌋`` groups (``n_groups``) and each one's ``K' = candidates·K`` nearest
    representatives are precomputed; a point takes its nearest group centre, the nearest
    representative in that group, and its ``K`` nearest among that representative's
    ``K'`` neighbours (and itself). Cost ``O(n·(√p + p/√p + K')·d)``, never
    ``O(n·p·d)``. ``search = "exact"`` compares every point with all ``p``.

    The fitted search structure and ``σ`` are kept in ``graph.state`` (a
    :class:`KnrBipartiteState`) and :meth:`transform` places new points with them: the same search,
    the same ``σ``, so training points get back their own rows.

    Rules: ``K`` is clamped to ``p``; ``K'`` to ``p − 1``; a weight that underflows
    is raised to machine epsilon (a far outlier keeps ``K`` equal, tiny edges); ``σ = 0``
    gives weights 1; the approximate search equals the exact one whenever ``K' + 1 ≥ p``
    or the data are well separated (see the bundle docs for the measured ACC cost).
    """

    name = "knr-bipartite"
    produces = graphclust.GraphKind.ANCHOR
    needs_anchors = True
    chunkwise = True  # σ is a sum over row blocks; rows are transform()
    accepts_sparse = True  # the searches take sparse rows (numerics.distances)

    n_neighbors: int = graphclust.param(
        5, doc="Nearest representatives K per point (U-SPEC: 5).", check=graphclust.integer(1))
    search: str = graphclust.param(
        "approx", doc="'approx' (coarse-to-fine, Sec. 3.2.2) or 'exact' (all p compared).",
        check=graphclust.one_of("approx", "exact"))
    candidates: int = graphclust.param(
        10, doc="For search='approx': neighbours K' precomputed per representative, as a "
        "multiple of K (U-SPEC: 10).", check=graphclust.integer(1))
    n_groups: int | None = graphclust.param(
        None, doc="For search='approx': groups of representatives; None = floor(sqrt(p)).",
        check=graphclust.optional(graphclust.integer(1)))
    sigma: float | None = graphclust.param(
        None, doc="Kernel width σ; None = mean distance to the K nearest representatives.",
        check=graphclust.optional(graphclust.real(0, low_open=True)))

    @staticmethod
    def _features(X, U) -> tuple[np.ndarray, np.ndarray]:
        X = float_rows(X)
        return X, np.asarray(U, dtype=X.dtype)

    def _search(self, X: np.ndarray, U: np.ndarray, k: int,
                index: RepresentativeIndex | None) -> tuple[np.ndarray, np.ndarray]:
        if index is None:
            idx, sq = exact_nearest(X, U, k)
        else:
            idx, sq = index.search(X, U, k)
        return idx, np.sqrt(sq)

    def _search_in_blocks(self, X, U, k, index, progress):
        """:meth:`_search` over row blocks of ``X`` (each row's answer is its own, so the
        result is that of one search), one progress step per block: at most
        ``SEARCH_STEPS`` blocks of at least ``SEARCH_BLOCK_MIN`` rows, and with the
        approximate search at least ``SEARCH_ROWS_PER_LIST`` rows per representative.

        The approximate search's products are small and run on one BLAS thread each
        (:func:`graphclust.numerics.grouped_nearest`), so its blocks are searched on as
        many Python threads as BLAS has (numpy releases the GIL in the products and the
        array passes), the number of blocks rounded up to a multiple of them; each row's
        answer is the same on any thread."""
        n = X.shape[0]
        block = max(SEARCH_BLOCK_MIN, -(-n // SEARCH_STEPS))
        threads = 1
        if index is not None:
            block = max(block, SEARCH_ROWS_PER_LIST * U.shape[0])
            threads = min(blas_threads(), -(-n // SEARCH_BLOCK_MIN))
        n_blocks = max(1, -(-n // block))
        n_blocks = -(-n_blocks // threads) * threads
        block = max(1, -(-n // n_blocks))
        bounds = [(a, min(n, a + block)) for a in range(0, n, block)]
        progress.start(len(bounds), f"{k} nearest of {U.shape[0]} representatives "
                       f"({'approximate' if index is not None else 'exact'})")
        idx = np.empty((n, k), dtype=np.int64)
        dist = np.empty((n, k), dtype=np.float64)
        if threads == 1:
            for b, (start, stop) in enumerate(bounds):
                idx[start:stop], dist[start:stop] = self._search(X[start:stop], U, k, index)
                progress.step(b + 1, len(bounds))
            return idx, dist
        # one BLAS thread around the pool: the workers' own one-thread limits then
        # restore one thread, not each other's settings
        with threadpool_limits(limits=1, user_api="blas"), \
                ThreadPoolExecutor(max_workers=threads) as pool:
            found = [pool.submit(self._search, X[start:stop], U, k, index)
                     for start, stop in bounds]
            for b, ((start, stop), fut) in enumerate(zip(bounds, found)):
                idx[start:stop], dist[start:stop] = fut.result()
                progress.step(b + 1, len(bounds))
        return idx, dist

    def build(self, X, anchors, ctx) -> graphclust.AnchorGraph:
        if anchors is None:
            raise graphclust.InputError("graph 'knr-bipartite' needs anchors (representatives)")
        X, U = self._features(X, anchors.points)
        p = U.shape[0]
        k = int(min(self.n_neighbors, p))
        index = None
        if self.search == "approx":
            kprime = int(min(p - 1, int(self.candidates) * k))
            if kprime + 1 < p:  # otherwise every point sees every representative anyway
                ctx.progress.message(f"grouping {p} representatives")
                index = build_index(U, kprime, n_groups=self.n_groups,
                                    seed=ctx.seed_for("graph.knr-bipartite"))
        idx, dist = self._search_in_blocks(X, U, k, index, ctx.progress)
        sigma = float(self.sigma) if self.sigma is not None else _mean_distance(dist)
        B = rows_to_csr(idx, gaussian_weights(dist, sigma), p)
        info = {"search": self.search}
        if index is not None:
            info["n_groups"] = index.n_groups
        state = KnrBipartiteState(sigma=sigma, n_neighbors=k, index=index)
        return graphclust.AnchorGraph(B, anchors=anchors, info=info, state=state)

    def transform(self, X_new, graph) -> sp.csr_array:
        """Rows of ``B`` for new points: the fitted search structure and ``σ``."""
        state = graphclust.fitted_state(graph, KnrBipartiteState, f"graph {self.name!r}")
        X_new, U = self._features(X_new, graph.anchors.points)
        idx, dist = self._search(X_new, U, state.n_neighbors, state.index)
        return rows_to_csr(idx, gaussian_weights(dist, state.sigma), U.shape[0])

    # -- one search per chunk (the chunked execution's single-pass form) -------------
    def _search_structure(self, anchors, ctx):
        """``(U, p, K, index)`` of the chunked runs: the representatives, their number, the
        neighbours per point and :meth:`build`'s coarse-to-fine index (same seed; ``None``
        for exact search or when the candidates cover every representative)."""
        U = np.asarray(anchors.points)
        p = U.shape[0]
        k = int(min(self.n_neighbors, p))
        index = None
        if self.search == "approx":
            kprime = int(min(p - 1, int(self.candidates) * k))
            if kprime + 1 < p:
                index = build_index(U, kprime, n_groups=self.n_groups,
                                    seed=ctx.seed_for("graph.knr-bipartite"))
        return U, p, k, index

    def prepare_search(self, anchors, ctx) -> graphclust.AnchorGraph:
        """The graph without rows and without ``σ`` (``nan`` until :meth:`finish_search`):
        anchors and the search structure of :meth:`build` (same seed)."""
        _, p, k, index = self._search_structure(anchors, ctx)
        info = {"search": self.search}
        if index is not None:
            info["n_groups"] = index.n_groups
        sigma = float(self.sigma) if self.sigma is not None else float("nan")
        state = KnrBipartiteState(sigma=sigma, n_neighbors=k, index=index)
        return graphclust.AnchorGraph(np.zeros((0, p)), anchors=anchors, info=info,
                                      state=state)

    def search_block(self, X, template) -> tuple[np.ndarray, np.ndarray]:
        """``(indices, distances)`` of one block's ``K`` nearest representatives: the
        search :meth:`transform` would do, kept so the chunk is searched once."""
        state = template.state
        X, U = self._features(X, template.anchors.points)
        return self._search(X, U, state.n_neighbors, state.index)

    def finish_search(self, template, chunks) -> graphclust.AnchorGraph:
        """``σ`` = the mean of the ``n·K`` distances, summed over the blocks' kept
        searches (``block.Z`` is :meth:`search_block`'s output); a given ``σ`` is kept."""
        if self.sigma is not None:
            return template
        total, count = chunks.sum(_kept_distance_sum)
        sigma = _sigma_from(total, count)
        return graphclust.AnchorGraph(np.zeros((0, template.n_anchors)),
                                      anchors=template.anchors, info=dict(template.info),
                                      state=attrs.evolve(template.state, sigma=sigma))

    def rows_from_search(self, found, template) -> sp.csr_array:
        """A block's rows of ``B`` from its kept search and the fitted ``σ``: equal to
        :meth:`transform` of the block."""
        idx, dist = found
        return rows_to_csr(idx, gaussian_weights(dist, template.state.sigma),
                           template.n_anchors)

    def prepare_chunked(self, anchors, chunks, ctx) -> graphclust.AnchorGraph:
        """The fitted graph without rows (chunked runs): the same search structure as
        :meth:`build` (same seed), and ``σ`` = the mean of the ``n·K`` distances as a sum
        over the blocks, so every block's :meth:`transform` rows are :meth:`build`'s (up
        to the order of the sum of ``σ``)."""
        U, p, k, index = self._search_structure(anchors, ctx)
        if self.sigma is not None:
            sigma = float(self.sigma)
        else:
            total, count = chunks.sum(_distance_sum, self, U, k, index)
            sigma = _sigma_from(total, count)
        info = {"search": self.search}
        if index is not None:
            info["n_groups"] = index.n_groups
        state = KnrBipartiteState(sigma=sigma, n_neighbors=k, index=index)
        return graphclust.AnchorGraph(np.zeros((0, p)), anchors=anchors, info=info,
                                      state=state)


def blas_threads() -> int:
    """The threads BLAS would use now (the most any loaded BLAS reports; 1 without)."""
    counts = [int(pool["num_threads"]) for pool in threadpool_info()
              if pool.get("user_api") == "blas"]
    return max(counts, default=1)


def _distance_sum(block, builder, U, k, index):
    """``(Σ d, count)`` of the ``K`` nearest-representative distances of one block
    (chunk function of ``σ``)."""
    X, U = builder._features(block.X, U)
    _, dist = builder._search(X, U, k, index)
    return _exact_total(dist), int(dist.size)


def _kept_distance_sum(block):
    """``(Σ d, count)`` of one block's kept search (``block.Z = (indices, distances)``)."""
    _, dist = block.Z
    return _exact_total(dist), int(np.asarray(dist).size)


def _exact_total(dist) -> ExactSum:
    """The exact sum of the rows' distance sums: each row's ``K`` distances are added in
    float64 first (a function of the row alone), so the exact sum sees ``n`` values, not
    ``n·K``."""
    dist = np.asarray(dist, dtype=np.float64)
    if dist.ndim != 2 or dist.shape[1] == 0:
        return ExactSum.of(dist)
    rows = dist[:, 0].copy()
    for j in range(1, dist.shape[1]):  # column by column: the same order for every row
        rows += dist[:, j]
    return ExactSum.of(rows)


def _sigma_from(total: ExactSum, count: int) -> float:
    """σ from the exact sum of the ``count`` kept distances (0 without any)."""
    return float(total.value()[0] / count) if count else 0.0


def _mean_distance(dist: np.ndarray) -> float:
    """σ of all rows in memory: the same exact sum as the chunked execution's, so σ (and
    every row of ``B``) is the same bits for any cut of the rows."""
    return _sigma_from(_exact_total(dist), int(np.asarray(dist).size))
