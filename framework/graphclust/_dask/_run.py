"""The chunked pipeline: sample → anchors → graph → m-sized solve → rounding → labels.

Stage by stage (every n-sized step is one task per row block of ``X``):

========== ============================================ ==================================
stage      work                                         what reaches the caller
========== ============================================ ==================================
anchors    ``select`` on a uniform row sample (one task) the ``m x d`` anchors
graph      ``prepare_chunked`` (global scalars as sums); the fitted state (σ, an index)
           rows of ``Z`` = ``transform`` per block,
           persisted on the workers
solver     ``solve_chunked``: sums over blocks           ``m``-sized sums, the solution's
                                                         per-anchor values / projection
rounding   ``round`` on the lifted rows of a uniform     the fitted rounding (k centres)
           sample (one task), ``assign`` per block
labels     one int64 block per row block, persisted      nothing (a dask array)
========== ============================================ ==================================
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import attrs
import numpy as np

from graphclust._chunked import (
    ANCHOR_SAMPLE_MIN,
    ANCHOR_SAMPLE_PER_ANCHOR,
    ROUNDING_SAMPLE_MIN,
    ROUNDING_SAMPLE_PER_CLUSTER,
    Block,
    sample_size,
)
from graphclust._dask._chunks import DaskChunks
from graphclust._errors import FewerClustersWarning
from graphclust._graphs import AnchorGraph
from graphclust._parts import Context
from graphclust._pipeline import FitResult
from graphclust._progress import Progress
from graphclust._solution import Solution
from graphclust.numerics.scaling import Scaling

__all__ = ["embed_chunked", "fit_chunked", "predict_chunked", "slim_result"]


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


def _sample_rows(solver, solution, X, Z, local):
    """The solution rows of the sampled rows ``local`` of one block."""
    sol = solver.lift_rows(solution, Block(X[local], Z[local]))
    return sol.embedding, sol.soft


def _concat_solution(parts) -> Solution:
    emb = [p[0] for p in parts]
    soft = [p[1] for p in parts]
    return Solution(embedding=None if emb[0] is None else np.vstack(emb),
                    soft=None if soft[0] is None else np.vstack(soft))


def _round(rounding, parts, n_clusters, ctx):
    """Fit the rounding on the sample's rows; return it and the sample's label count."""
    labels = rounding.round(_concat_solution(parts), n_clusters, ctx)
    return rounding, int(np.unique(np.asarray(labels)).size)


def _label_counts(labels, k):
    return np.bincount(np.asarray(labels, dtype=np.int64), minlength=k)[:max(k, 1)] \
        if labels.size else np.zeros(max(k, 1), dtype=np.int64)


def _assign(rounding, solver, solution, X, Z):
    return np.asarray(rounding.assign(solver.lift_rows(solution, Block(X, Z))), dtype=np.int64)


def _scale_rows(X, kind):
    return Scaling(kind).transform(X)


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


def _split_by_block(idx: np.ndarray | None, chunks: tuple[int, ...]) -> list[np.ndarray]:
    """Per row block, the block-local positions of the sampled rows ``idx``."""
    bounds = np.concatenate([[0], np.cumsum(chunks)])
    if idx is None:
        return [np.arange(c) for c in chunks]
    return [idx[(idx >= lo) & (idx < hi)] - lo for lo, hi in zip(bounds[:-1], bounds[1:])]


def _n_anchors_asked(selector, n: int) -> int:
    m = getattr(selector, "n_anchors", None)
    if m is None and getattr(selector, "points", None) is not None:
        m = np.shape(selector.points)[0]
    return int(m) if m is not None else n


def fit_chunked(pipe, X, n_clusters: int, ctx: Context, who: str = "the pipeline"
                ) -> FitResult:
    """Fit an anchor pipeline on a row-chunked dask array; returns a :class:`FitResult`
    whose ``labels`` is a persisted dask array chunked like the rows of ``X``, whose
    ``graph`` has zero rows (anchors and fitted state) and whose ``solution`` is the
    ``m``-sized one (per-anchor values or a projection, for ``predict``).
    """
    import dask
    import dask.array as da

    progress = ctx.progress
    timings: dict[str, float] = {}
    quiet = _quiet(ctx)
    n = int(X.shape[0])

    def stage(name, part):
        return Context(ctx.seed, progress.for_stage(name, part.name), ctx.n_jobs)

    scaling = Scaling(pipe.scale if pipe.scale == "l2" else "none")
    if scaling.kind == "l2":
        X = X.map_blocks(_scale_rows, "l2", dtype=X.dtype)

    # anchors: the selector, unchanged, on a uniform row sample (one task)
    t0 = time.perf_counter()
    sctx = stage("anchors", pipe.anchors)
    sctx.progress.open()
    m = _n_anchors_asked(pipe.anchors, n)
    size = sample_size(n, m, per_unit=ANCHOR_SAMPLE_PER_ANCHOR, minimum=ANCHOR_SAMPLE_MIN)
    idx = _sorted_sample(ctx.rng("chunked.anchor-sample"), n, size)
    Xs = X if idx is None else X[idx]
    anchors, caught = dask.delayed(_capturing)(_select, pipe.anchors, Xs, quiet).compute()
    _reissue(caught)
    anchors = attrs.evolve(anchors, assignment=None,
                           info={**anchors.info, "sample_size": int(size)})
    sctx.progress.close(f"{anchors.n_anchors} anchors from {size} sampled rows")
    timings["anchors"] = time.perf_counter() - t0

    # graph: global state from sums over blocks, then rows of Z per block, persisted
    t0 = time.perf_counter()
    sctx = stage("graph", pipe.graph)
    sctx.progress.open()
    template = pipe.graph.prepare_chunked(anchors, DaskChunks(X, progress=sctx.progress), sctx)
    rows = dask.delayed(_graph_rows, pure=True)
    shipped_template = dask.delayed(template)
    Z_blocks = [rows(pipe.graph, xb, shipped_template) for xb in X.to_delayed().ravel()]
    Z_blocks = list(dask.persist(*Z_blocks))
    _wait(Z_blocks, sctx.progress, "rows of Z")  # the stage's time is the graph's
    chunks = DaskChunks(X, Z_blocks, n_anchors=anchors.n_anchors)
    sctx.progress.close(f"{chunks.n_blocks} chunks of Z")
    timings["graph"] = time.perf_counter() - t0

    # solver: m-sized sums over blocks, m-sized solve here
    t0 = time.perf_counter()
    sctx = stage("solver", pipe.solver)
    sctx.progress.open()
    chunks.progress = sctx.progress
    solution = pipe.solver.solve_chunked(chunks, n_clusters, sctx)
    sctx.progress.close("")
    timings["solver"] = time.perf_counter() - t0

    # rounding: fitted on the lifted rows of a uniform sample, applied per block
    t0 = time.perf_counter()
    sctx = stage("rounding", pipe.rounding)
    sctx.progress.open()
    r_size = sample_size(n, n_clusters, per_unit=ROUNDING_SAMPLE_PER_CLUSTER,
                         minimum=ROUNDING_SAMPLE_MIN)
    r_idx = _sorted_sample(ctx.rng("chunked.rounding-sample"), n, r_size)
    shipped_solution = dask.delayed(solution)
    lift = dask.delayed(_sample_rows, pure=True)
    parts = [lift(pipe.solver, shipped_solution, xb, zb, local)
             for xb, zb, local in zip(chunks.X_blocks, Z_blocks,
                                      _split_by_block(r_idx, X.chunks[0]))]
    (fitted, sample_found), caught = dask.delayed(_capturing)(
        _round, pipe.rounding, parts, n_clusters, quiet).compute()
    _reissue(caught)
    pipe.rounding = fitted
    assign = dask.delayed(_assign, pure=True)
    shipped_rounding = dask.delayed(fitted)
    blocks = [da.from_delayed(assign(shipped_rounding, pipe.solver, shipped_solution, xb, zb),
                              shape=(c,), dtype=np.int64)
              for xb, zb, c in zip(chunks.X_blocks, Z_blocks, X.chunks[0])]
    labels = _wait(da.concatenate(blocks).persist(), sctx.progress, "labels")
    counts = labels.map_blocks(_label_counts, n_clusters, chunks=(n_clusters,),
                               dtype=np.int64).reshape((-1, n_clusters)).sum(axis=0)
    sizes = np.asarray(counts.compute())
    found = int((sizes > 0).sum())
    if found < n_clusters:
        warnings.warn(f"{who} returned {found} distinct label{'s' if found != 1 else ''} for "
                      f"n_clusters={n_clusters} ({n} points)", FewerClustersWarning,
                      stacklevel=3)
    sctx.progress.close(f"{found} clusters (rounding fitted on {r_size} sampled rows, "
                        f"{sample_found} clusters there)")
    timings["rounding"] = time.perf_counter() - t0
    timings["total"] = sum(timings.values())
    return FitResult(labels, template, solution, anchors, timings, {}, None, scaling)


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
    ``transform`` then ``lift_rows``; nothing is computed until asked."""
    sol = result.solution
    width = (sol.embedding if sol.embedding is not None else sol.soft).shape[1]
    return X.map_blocks(_train_rows, pipe.graph, result.graph, pipe.solver, sol,
                        chunks=(X.chunks[0], (width,)), dtype=np.float64)


def _train_rows(X, builder, template, solver, solution):
    Z = builder.transform(X, template)
    lifted = solver.lift_rows(solution, Block(X, Z))
    return lifted.embedding if lifted.embedding is not None else lifted.soft
