"""Ensembles with a consensus, chunk-wise: members → memberships per chunk → consensus.

As :meth:`graphclust.Ensemble.run`, stage by stage, with every ``n``-sized step one task
per row block of ``X``:

========== ============================================ ==================================
stage      work                                         what reaches the caller
========== ============================================ ==================================
scale      the ensemble's ``scale``, fitted once         ``d``-sized statistics
members    each member a chunked pipeline               per member what
           (:func:`~graphclust._dask._run.fit_chunked`)  :func:`fit_chunked` keeps; its
           with the in-memory ``k_j`` and seed           labels stay on the workers
classes    each member's used labels (counts per chunk) ``Σk_j`` counts
memberships one ``rows x Σk_j`` 0/1 block per chunk,     nothing
           persisted on the workers
consensus  ``combine_chunked``: ``Σk_j``-sized sums      the consensus' fitted state
           over the membership blocks; its rounding on
           the coordinates of a uniform row sample,
           ``assign`` per block
========== ============================================ ==================================

A consensus part runs chunk-wise when it sets ``chunkwise = True`` and implements the
hooks :class:`~graphclust.Consensus` declares: ``combine_chunked(chunks, n_clusters,
ctx)`` (fits its ``Σk_j``-sized state from ``chunks.sum``; ``block.Z`` is a block's rows
of the memberships; sets ``rounding_``, a :class:`~graphclust.Rounding` fitted here on a
sample and applied per block) and ``embed_rows(block)`` (a block's point coordinates).
"""

from __future__ import annotations

import warnings

import attrs
import numpy as np
import scipy.sparse as sp

from graphclust import chunks as protocol  # the sample floors, read at call time
from graphclust.chunks import (
    Block,
    sample_size,
    split_by_block,
)
from graphclust._dask._chunks import DaskChunks
from graphclust._dask._run import (
    _capturing,
    _label_counts,
    _reissue,
    _sorted_sample,
    _wait,
    fit_chunked,
    scale_stage,
    slim_result,
)
from graphclust._ensemble import EnsembleResult
from graphclust._errors import FewerClustersWarning
from graphclust._kselect import DEFAULT_K_MAX, KDispatch
from graphclust._membership import Memberships
from graphclust._parts import Context
from graphclust._progress import Progress
from graphclust._solution import Solution

__all__ = ["fit_ensemble_chunked", "predict_ensemble_chunked"]


def _membership_block(labels, classes, sizes):
    """The ``rows x Σk_j`` 0/1 membership rows of one chunk from each member's labels of
    it, columns laid out as :meth:`Memberships.from_labels` does in memory."""
    coded = [np.searchsorted(cls, np.asarray(lab)) for lab, cls in zip(labels, classes,
                                                                       strict=True)]
    return sp.csr_array(Memberships.from_labels(coded, sizes).matrix)


def _coordinate_rows(consensus, Z, local):
    return consensus.embed_rows(Block(np.zeros((len(local), 0)), Z[local]))


def _round_consensus(consensus, parts, n_clusters, ctx):
    rounding = consensus.rounding_
    rounding.round(Solution(embedding=np.vstack(parts)), n_clusters, ctx)
    return consensus


def _assign_consensus(consensus, Z):
    coords = consensus.embed_rows(Block(np.zeros((Z.shape[0], 0)), Z))
    return np.asarray(consensus.rounding_.assign(Solution(embedding=coords)), dtype=np.int64)


def _member_fit(member, X, k, seed, n_jobs, k_range=None):
    """Fit one member chunk-wise quietly; its warnings are returned, not raised. The
    in-memory member raises no fewer-clusters warning (the ensemble's labels are what
    is checked), so that one is dropped here too."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fit_chunked(member.pipeline, X, k, Context(seed, Progress(), n_jobs),
                             member.label, k_range=k_range)
    return result, [(w.category, str(w.message)) for w in caught
                    if not issubclass(w.category, FewerClustersWarning)]


def fit_ensemble_chunked(ens, X, n_clusters: int | None, ctx: Context,
                         who: str = "the ensemble", k_range: tuple[int, int] | None = None
                         ) -> EnsembleResult:
    """Run an :class:`~graphclust.Ensemble` on a row-chunked dask array.

    Members get the ``k_j`` and seeds of :meth:`Ensemble.plan` (as in memory), so with the
    same seed and ``n`` below the samples' floors the members' labels, and the consensus
    labels, equal the in-memory ones up to the order of the chunk sums. Returns an
    :class:`EnsembleResult` whose ``labels`` and members' ``labels`` are persisted dask
    arrays chunked like ``X``'s rows and whose ``memberships`` has zero rows (the
    ``Σk_j`` layout only; its rows stay on the workers).
    """
    import dask
    import dask.array as da

    progress = ctx.progress
    timings: dict[str, float] = {}
    n = int(X.shape[0])
    scaling, X = scale_stage(ens.scale, X, progress, timings)

    kd = KDispatch.begin(ens, n_clusters, k_range, n, who, chunked=True)
    k_range = k_range or (1, DEFAULT_K_MAX)
    ks, seeds = ens.plan(n, n_clusters, ctx, k_range[1])
    bar = progress.for_stage("members", f"{len(ens.members)} members")
    bar.open(len(ens.members))
    results, caught = [], []
    for j, member in enumerate(ens.members):
        result, ws = _member_fit(member, X, ks[j], seeds[j], ctx.n_jobs, k_range)
        results.append(result)
        caught.extend(ws)
        bar.step(j + 1, len(ens.members), f"{member.label}, k={ks[j]}")
    timings["members"] = bar.close(f"{len(ens.members)} members")
    ens._reemit(caught)
    ks = [r.n_clusters if k is None else k for r, k in zip(results, ks, strict=True)]

    # each member's used labels (in memory: np.unique of its labels), from chunk counts
    counts = [r.labels.map_blocks(_label_counts, k, chunks=(k,), dtype=np.int64)
              .reshape((-1, k)).sum(axis=0) for r, k in zip(results, ks, strict=True)]
    classes = [np.flatnonzero(c) for c in dask.compute(*counts)]
    sizes = [int(c.size) for c in classes]

    cstage = progress.for_stage("consensus", ens.consensus.name)
    cstage.open(message=f"{sum(sizes)} base clusters")
    member_blocks = [list(r.labels.to_delayed().ravel()) for r in results]
    build = dask.delayed(_membership_block, pure=True)
    shipped = dask.delayed(classes)
    B_blocks = [build(list(row), shipped, sizes) for row in zip(*member_blocks)]
    B_blocks = list(dask.persist(*B_blocks))
    _wait(B_blocks, cstage, "memberships")
    chunks = DaskChunks(X, B_blocks, n_anchors=sum(sizes), progress=cstage)
    cctx = Context(ctx.seed_for("ensemble.consensus"), cstage, ctx.n_jobs)
    consensus = ens.consensus
    n_clusters = kd.at("consensus",
                       lambda part, lo, hi, _: part.estimate_k_chunked(chunks, lo, hi, cctx))
    selection = kd.selection
    consensus.combine_chunked(chunks, n_clusters, cctx)

    quiet = Context(cctx.seed, Progress(), ctx.n_jobs)
    r_size = sample_size(n, n_clusters, per_unit=protocol.ROUNDING_SAMPLE_PER_CLUSTER,
                         minimum=protocol.ROUNDING_SAMPLE_MIN)
    r_idx = _sorted_sample(ctx.rng("chunked.consensus-sample"), n, r_size)
    shipped_consensus = dask.delayed(consensus)
    lift = dask.delayed(_coordinate_rows, pure=True)
    parts = [lift(shipped_consensus, zb, local)
             for zb, local in zip(B_blocks, split_by_block(r_idx, X.chunks[0]))]
    fitted, caught = dask.delayed(_capturing)(_round_consensus, consensus, parts,
                                               n_clusters, quiet).compute()
    _reissue(caught)
    consensus = ens.consensus = fitted  # the fitted copy (its rounding's centres)
    assign = dask.delayed(_assign_consensus, pure=True)
    shipped_consensus = dask.delayed(consensus)
    blocks = [da.from_delayed(assign(shipped_consensus, zb), shape=(c,), dtype=np.int64)
              for zb, c in zip(B_blocks, X.chunks[0])]
    labels = _wait(da.concatenate(blocks).persist(), cstage, "labels")
    sizes_found = np.asarray(labels.map_blocks(_label_counts, n_clusters, chunks=(n_clusters,),
                                               dtype=np.int64)
                             .reshape((-1, n_clusters)).sum(axis=0).compute())
    found = int((sizes_found > 0).sum())
    if found < n_clusters:  # as the in-memory fit (warn_fewer_labels)
        warnings.warn(f"{who} returned {found} distinct label{'s' if found != 1 else ''} for "
                      f"n_clusters={n_clusters} ({n} points)", FewerClustersWarning,
                      stacklevel=3)
    timings["consensus"] = cstage.close(f"{sum(sizes)} base clusters")
    timings["total"] = sum(timings.values())
    memberships = Memberships(sp.csr_array((0, sum(sizes))), tuple(sizes))
    return EnsembleResult(labels, results, memberships, classes, ks, seeds, timings, {},
                          scaling, [m.label for m in ens.members],
                          [{} for _ in ens.members], selection)


def slim_ensemble_result(result: EnsembleResult) -> EnsembleResult:
    """What ``predict`` needs of an ensemble fit, without anything n-sized."""
    return attrs.evolve(result, labels=np.zeros(0, dtype=np.int64),
                        members=[slim_result(r) for r in result.members])


def _predict_block(X, ens, result):
    return np.asarray(ens.predict(X, result), dtype=np.int64)


def predict_ensemble_chunked(ens, result: EnsembleResult, X):
    """Labels of the rows of a dask array, one task per block (``Ensemble.predict``)."""
    return X.map_blocks(_predict_block, ens, slim_ensemble_result(result), drop_axis=1,
                        dtype=np.int64)
