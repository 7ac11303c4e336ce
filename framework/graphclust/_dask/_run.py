"""The chunked pipeline: sample → anchors → graph → m-sized solve → rounding → labels.

Stage by stage (every n-sized step is one task per row block of ``X``):

========== ============================================ ==================================
stage      work                                         what reaches the caller
========== ============================================ ==================================
anchors    ``select`` on a uniform row sample (one      the ``m x d`` anchors
           task)
graph      ``prepare_chunked`` (global scalars as       the fitted state (σ, an index)
           sums); rows of ``Z`` = ``transform`` per
           block, persisted on the workers
solver     ``solve_chunked``: sums over blocks          ``m``-sized sums, the solution's
                                                        per-anchor values / projection
adapter    instead of ``solve_chunked`` when the spec   the adapted ``m``-sized problem;
           has one: ``adapt_chunked`` (``ZᵀZ``          the solver's per-anchor values
           summed over blocks), the solver's
           ``solve`` on it here, unchanged; ``lift``
           on the zero-row graph; rows per block by
           ``lift_rows``
rounding   ``round`` on the lifted rows of a uniform    the fitted rounding (k centres)
           sample (one task), ``assign`` per block
labels     one int64 block per row block, persisted     nothing (a dask array)
========== ============================================ ==================================
"""

from __future__ import annotations

import warnings
from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp

from graphclust import chunks as protocol  # the sample floors, read at call time
from graphclust.chunks import (
    Block,
    sample_size,
    split_by_block,
    split_kept,
)
from graphclust._dask import _sizeof  # noqa: F401 - sizes the kept rows of Z (see there)
from graphclust._dask._chunks import DaskChunks
from graphclust._errors import FewerClustersWarning
from graphclust._graphs import AnchorGraph, anchor_modularity
from graphclust._kselect import KDispatch
from graphclust._parts import Context
from graphclust._pipeline import (BestStart, FitResult, given_in_scaled_units, iterations_note,
                                  solve_adapted, start_copies)
from graphclust._progress import Progress
from graphclust._solution import Solution
from graphclust.numerics.scaling import (
    COLUMN_KINDS,
    ColumnStats,
    Scaling,
    scaling_from_stats,
    unitless_block_stats,
)

__all__ = ["embed_chunked", "fit_chunked", "fit_scaling_chunked", "predict_chunked",
           "slim_result"]


def _quiet(ctx: Context) -> Context:
    """The context shipped to workers: same seed, no progress reporter."""
    return Context(ctx.seed, Progress(), ctx.n_jobs)


def _capturing(fn, *args):
    """Run ``fn(*args)`` and return ``(result, warnings)``, so warnings raised on a worker
    are re-issued where the fit was called."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(w.category, str(w.message)) for w in caught]


def _reissue(caught) -> None:
    for category, message in caught:
        warnings.warn(message, category, stacklevel=4)


def _select(selector, X, ctx):
    return selector.select(np.asarray(X), ctx)


def _graph_rows(builder, X, template):
    import scipy.sparse as sp

    return sp.csr_array(builder.transform(X, template))


def _search_block(builder, X, template):
    return builder.search_block(X, template)


def _rows_from_search(builder, found, template):
    import scipy.sparse as sp

    return sp.csr_array(builder.rows_from_search(found, template))


def _graph_one_search(builder, anchors, X, ctx):
    """The graph of a builder whose global scalar comes from the same neighbour search as
    its rows (``knr-bipartite``'s σ): each chunk is searched once, the search kept on the
    workers, σ summed over the kept searches, and the rows of ``Z`` built from them
    (``prepare_chunked`` then ``transform`` would search every chunk twice). Returns the
    fitted template and the (lazy) ``Z`` blocks; the kept searches are released once the
    caller has persisted ``Z``."""
    import dask

    template0 = builder.prepare_search(anchors, ctx)
    search = dask.delayed(_search_block, pure=True)
    shipped = dask.delayed(template0)
    found = list(dask.persist(*[search(builder, xb, shipped)
                                for xb in X.to_delayed().ravel()]))
    _wait(found, ctx.progress, "nearest-anchor search")
    template = builder.finish_search(template0, DaskChunks(X, found,
                                                           n_anchors=template0.n_anchors))
    rows = dask.delayed(_rows_from_search, pure=True)
    shipped = dask.delayed(template)
    return template, [rows(builder, f, shipped) for f in found]


def _lifter(pipe):
    """The part whose ``lift_rows`` gives a block's solution rows: the adapter when there
    is one (its lifted solution is the pipeline's), else the solver."""
    return pipe.adapter if pipe.adapter is not None else pipe.solver


def _sample_rows(lifter, solution, X, Z, local, kept=None):
    """The solution rows of the sampled rows ``local`` of one block (``kept``: the
    block's rows kept by the solver, :data:`graphclust.chunks.KEPT_ROWS`)."""
    sol = lifter.lift_rows(solution, Block(X, Z, state=kept).take(local))
    return sol.embedding, sol.soft


def _concat_solution(parts) -> Solution:
    emb = [p[0] for p in parts]
    soft = [p[1] for p in parts]
    return Solution(embedding=None if emb[0] is None else np.vstack(emb),
                    soft=None if soft[0] is None else np.vstack(soft))


def _round(rounding, parts, n_clusters, ctx, k_range=None):
    """Fit the rounding on the sample's rows; return it, the sample's label count and,
    with ``n_clusters=None``, the rounding's estimate of ``k`` on those rows within
    ``k_range`` (else None)."""
    solution = _concat_solution(parts)
    selection = None
    if n_clusters is None:
        selection = rounding.estimate_k(solution, *k_range, ctx)
        n_clusters = selection.k
    labels = rounding.round(solution, n_clusters, ctx)
    return rounding, int(np.unique(np.asarray(labels)).size), selection


def _label_counts(labels, k):
    return np.bincount(np.asarray(labels, dtype=np.int64), minlength=k)[:max(k, 1)] \
        if labels.size else np.zeros(max(k, 1), dtype=np.int64)


def _assign(rounding, lifter, solution, X, Z, kept=None):
    return np.asarray(rounding.assign(lifter.lift_rows(solution, Block(X, Z, state=kept))),
                      dtype=np.int64)


def _apply_scaling(X, scaling):
    return scaling.transform(X)


def _column_stats(block):
    """A chunk's column statistics (summed over chunks: :meth:`ColumnStats.merge`)."""
    with np.errstate(over="ignore", under="ignore"):
        return ColumnStats.of_block(block.X)


def _unitless_stats(block, offset, unit):
    return unitless_block_stats(block.X, offset, unit)


def fit_scaling_chunked(kind: str, X, progress=None) -> Scaling:
    """Fit the ``scale`` stage on a row-chunked dask array: the column statistics are a
    sum over chunks (Chan's pairwise merge of mean and squared deviations, min, max;
    a second sum for ``standard`` columns with an extreme range), then the same
    reduction as in memory (:func:`graphclust.numerics.scaling.scaling_from_stats`).
    Equal to :func:`~graphclust.numerics.scaling.fit_scaling` up to the order of the
    merges (round-off)."""
    if kind not in COLUMN_KINDS:
        return Scaling(kind)
    if len(X.chunks[1]) > 1:  # a chunk's statistics need whole rows
        X = X.rechunk({1: -1})
    chunks = DaskChunks(X, progress=progress)
    stats = chunks.sum(_column_stats)
    return scaling_from_stats(kind, stats,
                              lambda offset, unit: chunks.sum(_unitless_stats, offset, unit))


def _wait(collection, progress=None, what: str = "chunks"):
    """Block until a persisted collection is in memory on the workers (a distributed
    ``persist`` returns at once), so ``fit`` returns a finished fit; each finished chunk
    is a progress step."""
    try:
        from distributed import as_completed, futures_of, wait
    except ImportError:  # threads: persist has computed already
        return collection
    futures = futures_of(collection)
    if futures:
        if progress is not None:
            progress.start(len(futures), f"{what}: {len(futures)} chunks")
            for i, _ in enumerate(as_completed(futures), 1):
                progress.step(i, len(futures))
            progress.end()
        wait(futures)
        bad = [f for f in futures if f.status == "error"]
        if bad:
            bad[0].result()  # raises the task's exception here
    return collection


def _sorted_sample(rng: np.random.Generator, n: int, size: int) -> np.ndarray | None:
    """Sorted row indices of a uniform sample without replacement; ``None`` for all rows."""
    if size >= n:
        return None
    return np.sort(rng.choice(n, size=size, replace=False))


def _n_anchors_asked(selector, n: int) -> int:
    m = getattr(selector, "n_anchors", None)
    if m is None and getattr(selector, "points", None) is not None:
        m = np.shape(selector.points)[0]
    return int(m) if m is not None else n


def fit_chunked(pipe, X, n_clusters: int | None, ctx: Context, who: str = "the pipeline",
                k_range: tuple[int, int] | None = None) -> FitResult:
    """Fit an anchor pipeline on a row-chunked dask array, ``pipe.starts`` times (see
    :func:`fit_chunked_once`); with several starts, as in memory
    (:meth:`graphclust._pipeline.Pipeline.run`): start ``r > 0`` runs with
    ``ctx.child(f"start{r}")`` and the kept result is the one whose labels are the most
    modular on its own graph, ``W = Z Λ⁻¹ Zᵀ`` scored from ``Zᵀ H`` summed over the
    blocks (:func:`graphclust._graphs.anchor_modularity`), so the same start is kept as
    in memory."""
    if getattr(pipe, "starts", 1) == 1:
        return fit_chunked_once(pipe, X, n_clusters, ctx, who, k_range)[0]
    best = BestStart()
    for r, rctx, copy_ in start_copies(pipe, ctx):
        with best.warnings_once():
            res, q = fit_chunked_once(copy_, X, n_clusters, rctx, who, k_range, score=True)
        best.offer(r, res, q, copy_)
    return best.kept(pipe)


def _memberships_block(Z, labels, k):
    """``Z_bᵀ H_b`` (``m x (k + 1)``, the last column for ``-1`` labels) of one block."""
    labels = np.asarray(labels)
    codes = np.where(labels < 0, k, labels)
    H = sp.csr_array((np.ones(labels.size), (np.arange(labels.size), codes)),
                     shape=(labels.size, k + 1))
    return (sp.csr_array(Z).T @ H).toarray()


def _modularity_chunked(Z_blocks, labels, k: int) -> float:
    """Modularity of chunked labels on ``W = Z Λ⁻¹ Zᵀ``: ``Zᵀ H`` summed over the blocks."""
    import dask

    part = dask.delayed(_memberships_block, pure=True)
    pieces = [part(zb, lb, k) for zb, lb in zip(Z_blocks, labels.to_delayed().ravel())]
    S = dask.delayed(sum)(pieces).compute()
    return anchor_modularity(S)


def fit_chunked_once(pipe, X, n_clusters: int | None, ctx: Context,
                     who: str = "the pipeline", k_range: tuple[int, int] | None = None,
                     score: bool = False) -> tuple[FitResult, float | None]:
    """Fit an anchor pipeline on a row-chunked dask array; returns a :class:`FitResult`
    whose ``labels`` is a persisted dask array chunked like the rows of ``X``, whose
    ``graph`` has zero rows (anchors and fitted state) and whose ``solution`` is the
    ``m``-sized one (per-anchor values or a projection, for ``predict``).

    With ``n_clusters=None`` the graph builder's ``estimate_k_chunked`` estimates it
    after the graph stage, from ``m``-sized sums over the blocks; an adapter that
    estimates does so on its sample, and a rounding that draws its own rows
    (``sample_rows``) on exactly those gathered rows, before it is fitted on them
    (:doc:`/choosing-k`).
    """
    import dask

    kd = KDispatch.begin(pipe, n_clusters, k_range, int(X.shape[0]), who, chunked=True)
    import dask.array as da

    progress = ctx.progress
    timings: dict[str, float] = {}
    quiet = _quiet(ctx)
    n = int(X.shape[0])

    def stage(name, part):
        return Context(ctx.seed, progress.for_stage(name, part.name), ctx.n_jobs)

    # scale: column statistics as sums over chunks (l2 is row-local), applied per chunk
    scaling, X = scale_stage(pipe.scale, X, progress, timings)

    # anchors: the selector, unchanged, on a uniform row sample (one task)
    sctx = stage("anchors", pipe.anchors)
    sctx.progress.open()
    # a selector whose count depends on n (capped) is fixed from all n rows first
    selector = pipe.anchors.for_rows(n) if pipe.anchors.depends_on_rows() else pipe.anchors
    m = _n_anchors_asked(selector, n)
    if selector.draws_rows():  # the rows it reads in memory, gathered by global index
        idx = selector.sample_rows(n, sctx)
        size = n if idx is None else int(len(idx))
    else:
        size = sample_size(n, m, per_unit=protocol.ANCHOR_SAMPLE_PER_ANCHOR,
                           minimum=protocol.ANCHOR_SAMPLE_MIN)
        idx = _sorted_sample(ctx.rng("chunked.anchor-sample"), n, size)
    Xs = X if idx is None else X[idx]
    anchors, caught = dask.delayed(_capturing)(_select, selector, Xs, quiet).compute()
    _reissue(caught)
    anchors = attrs.evolve(anchors, assignment=None,
                           info={**anchors.info, "sample_size": int(size)})
    anchors = given_in_scaled_units(anchors, scaling)
    timings["anchors"] = sctx.progress.close(
        f"{anchors.n_anchors} anchors from {size} sampled rows")

    # graph: global state from sums over blocks, then rows of Z per block, persisted
    sctx = stage("graph", pipe.graph)
    sctx.progress.open()
    if pipe.graph.can_search_once():  # each chunk searched once (the one-search hooks)
        template, Z_blocks = _graph_one_search(pipe.graph, anchors, X, sctx)
    else:
        template = pipe.graph.prepare_chunked(anchors, DaskChunks(X, progress=sctx.progress),
                                              sctx)
        rows = dask.delayed(_graph_rows, pure=True)
        shipped_template = dask.delayed(template)
        Z_blocks = [rows(pipe.graph, xb, shipped_template) for xb in X.to_delayed().ravel()]
    Z_blocks = list(dask.persist(*Z_blocks))
    _wait(Z_blocks, sctx.progress, "rows of Z")  # the stage's time is the graph's
    chunks = DaskChunks(X, Z_blocks, n_anchors=anchors.n_anchors)
    timings["graph"] = sctx.progress.close(f"{chunks.n_blocks} chunks of Z")

    kd.at("graph", lambda part, lo, hi, c: part.estimate_k_chunked(template, chunks, lo, hi, c),
          stage, timings)  # m-sized sums, m x m here
    n_clusters = kd.k

    # solver: m-sized sums over blocks, m-sized solve here (through the adapter, if any:
    # stages adapter, solver, k and lift, as in memory)
    if pipe.adapter is None:  # a solver that does not use k is handed k_max
        sctx = stage("solver", pipe.solver)
        sctx.progress.open()
        chunks.progress = sctx.progress
        solution = pipe.solver.solve_chunked(chunks, kd.solver_k, sctx)
        timings["solver"] = sctx.progress.close(iterations_note(solution))
    else:
        solution, adapter_sel = _adapted_solve(pipe, template, chunks, kd.solver_k, stage,
                                               timings, kd.range_for("adapter"))
        # estimated on the sample the adapter fits, as in memory
        n_clusters = kd.take("adapter", adapter_sel)
    # rows a solver keeps per block (ONGR's F and G) stay on the workers, never shipped
    shipped, kept = split_kept(solution)
    kept = kept.values if kept is not None else [None] * chunks.n_blocks

    # rounding: fitted on the lifted rows of a uniform sample, applied per block
    sctx = stage("rounding", pipe.rounding)
    sctx.progress.open()
    if pipe.rounding.draws_rows():  # the rows it fits on in memory, by global index
        r_idx = pipe.rounding.sample_rows(n, n_clusters, sctx)
        r_size = n if r_idx is None else len(r_idx)
    else:
        r_size = sample_size(n, n_clusters, per_unit=protocol.ROUNDING_SAMPLE_PER_CLUSTER,
                             minimum=protocol.ROUNDING_SAMPLE_MIN)
        r_idx = _sorted_sample(ctx.rng("chunked.rounding-sample"), n, r_size)
    shipped_solution = dask.delayed(shipped)
    lifter = _lifter(pipe)
    lift = dask.delayed(_sample_rows, pure=True)
    parts = [lift(lifter, shipped_solution, xb, zb, local, kb)
             for xb, zb, local, kb in zip(chunks.X_blocks, Z_blocks,
                                          split_by_block(r_idx, X.chunks[0]), kept)]
    (fitted, sample_found, rounding_sel), caught = dask.delayed(_capturing)(
        _round, pipe.rounding, parts, n_clusters, quiet, kd.range_for("rounding")).compute()
    _reissue(caught)
    pipe.rounding = fitted
    # estimated on the rows the rounding draws, as in memory
    n_clusters, selection = kd.take("rounding", rounding_sel), kd.selection
    assign = dask.delayed(_assign, pure=True)
    shipped_rounding = dask.delayed(fitted)
    blocks = [da.from_delayed(assign(shipped_rounding, lifter, shipped_solution, xb, zb, kb),
                              shape=(c,), dtype=np.int64)
              for xb, zb, c, kb in zip(chunks.X_blocks, Z_blocks, X.chunks[0], kept)]
    labels = _wait(da.concatenate(blocks).persist(), sctx.progress, "labels")
    counts = labels.map_blocks(_label_counts, n_clusters, chunks=(n_clusters,),
                               dtype=np.int64).reshape((-1, n_clusters)).sum(axis=0)
    sizes = np.asarray(counts.compute())
    found = int((sizes > 0).sum())
    if found < n_clusters:
        warnings.warn(f"{who} returned {found} distinct label{'s' if found != 1 else ''} for "
                      f"n_clusters={n_clusters} ({n} points)", FewerClustersWarning,
                      stacklevel=3)
    timings["rounding"] = sctx.progress.close(
        f"{found} clusters (rounding fitted on {r_size} sampled rows, "
        f"{sample_found} clusters there)")
    timings["total"] = sum(timings.values())
    q = _modularity_chunked(Z_blocks, labels, n_clusters) if score else None
    return FitResult(labels, template, solution, anchors, timings, {}, None, scaling,
                     selection), q


def _adapted_solve(pipe, template: AnchorGraph, chunks, n_clusters: int, stage,
                   timings: dict[str, float], k_range=None):
    """The solver through a chunk-wise adapter: ``adapt_chunked`` (its ``m``-sized problem
    from sums over the blocks; stage ``adapter``), then :func:`solve_adapted`: the
    solver's in-memory ``solve`` on it here, unchanged (any solver accepting the adapted
    graph kind; stage ``solver``), the adapter's estimate of ``k`` when ``k_range`` is
    given (stage ``k``) and its ``lift`` on the zero-row ``template`` (per-anchor values
    kept, zero rows; stage ``lift``), as :meth:`graphclust.Pipeline._solve` does in
    memory. Each stage is timed into ``timings``. Returns the lifted solution and the
    adapter's :class:`KSelection` when ``k_range`` is given (else None)."""
    adapter = pipe.adapter
    actx = stage("adapter", adapter)
    actx.progress.open()
    chunks.progress = actx.progress  # the adapter's sums are its stage's chunk steps
    adapted = adapter.adapt_chunked(template, chunks, n_clusters, actx)
    timings["adapter"] = actx.progress.close(
        f"{type(adapted.graph).__name__} n={adapted.graph.n} nnz={adapted.graph.nnz}")
    return solve_adapted(pipe.solver, adapter, adapted, template, stage, timings, k_range)


def slim_result(result: FitResult) -> FitResult:
    """What ``predict`` needs of a fit, without anything n-sized: the graph's anchors and
    state (zero rows) and the solution's per-anchor values or projection."""
    graph, sol = result.graph, result.solution
    slim_graph = graph
    if isinstance(graph, AnchorGraph) and graph.n:
        slim_graph = AnchorGraph(np.zeros((0, graph.n_anchors)), anchors=graph.anchors,
                                 info=dict(graph.info), state=graph.state)
    width = (sol.embedding if sol.embedding is not None else sol.soft).shape[1]
    slim_sol = Solution(embedding=np.zeros((0, width)), anchor_embedding=sol.anchor_embedding,
                        anchor_soft=sol.anchor_soft, projection=sol.projection,
                        center=sol.center)
    if sol.embedding is None:
        slim_sol = Solution(soft=np.zeros((0, width)), anchor_embedding=sol.anchor_embedding,
                            anchor_soft=sol.anchor_soft, projection=sol.projection,
                            center=sol.center)
    return FitResult(np.zeros(0, dtype=np.int64), slim_graph, slim_sol, result.anchors,
                     scaling=result.scaling)


def _predict_block(X, pipe, result):
    return np.asarray(pipe.predict(X, result), dtype=np.int64)


def _extend_block(X, pipe, result):
    ext = pipe.extend(X, result)
    return ext.embedding if ext.embedding is not None else ext.soft


def predict_chunked(pipe, result: FitResult, X):
    """Labels of the rows of a dask array, one task per block (``Pipeline.predict``)."""
    slim = slim_result(result)
    return X.map_blocks(_predict_block, pipe, slim, drop_axis=1, dtype=np.int64)


def embed_chunked(pipe, result: FitResult, X, width: int):
    """Embedding rows of a dask array, one task per block (``Pipeline.extend``)."""
    slim = slim_result(result)
    return X.map_blocks(_extend_block, pipe, slim, chunks=(X.chunks[0], (width,)),
                        dtype=np.float64)


def training_embedding(pipe, result: FitResult, X) -> Any:
    """The training rows' solution (the in-memory ``embedding_``), lazily per block:
    ``transform`` then ``lift_rows``; nothing is computed until asked. Rows the solver
    kept per block (:data:`graphclust.chunks.KEPT_ROWS`) are taken from the workers."""
    sol, kept = split_kept(result.solution)
    width = (sol.embedding if sol.embedding is not None else sol.soft).shape[1]
    if kept is not None:
        import dask
        import dask.array as da

        rows = dask.delayed(_kept_rows, pure=True)
        return da.concatenate([da.from_delayed(rows(kb), shape=(c, width), dtype=np.float64)
                               for kb, c in zip(kept.values, X.chunks[0])])
    return X.map_blocks(_train_rows, pipe.graph, result.graph, _lifter(pipe), sol,
                        chunks=(X.chunks[0], (width,)), dtype=np.float64,
                        meta=np.empty((0, 0), dtype=np.float64))  # no search on a 0-row probe


def _kept_rows(kept):
    return kept.embedding if kept.embedding is not None else kept.soft


def _train_rows(X, builder, template, lifter, solution):
    Z = builder.transform(X, template)
    lifted = lifter.lift_rows(solution, Block(X, Z))
    return lifted.embedding if lifted.embedding is not None else lifted.soft


def scale_stage(kind: str, X, progress, timings: dict):
    """The chunked ``scale`` stage: ``(scaling, scaled X)``; statistics summed over the
    chunks (l2 is row-local), applied per chunk, timed into ``timings["scale"]``."""
    if kind == "none":
        return Scaling("none"), X
    bar = progress.for_stage("scale", kind)
    bar.open()
    scaling = fit_scaling_chunked(kind, X, bar)
    X = X.map_blocks(_apply_scaling, scaling, dtype=X.dtype)
    timings["scale"] = bar.close(f"{X.shape[1]} columns")
    return scaling, X
