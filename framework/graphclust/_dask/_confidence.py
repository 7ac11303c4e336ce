"""``confidence_``, ``noise=True`` and ``predict_proba`` of a chunked fit, block by block.

The confidence of a block's rows needs only the block and global-small state (the fitted
parts, the ``m x k`` label profile of the anchors): the rows of ``Z`` are rebuilt by the
graph builder's ``transform`` (the rows the fit built), lifted by the adapter or solver,
and handed with the block's labels to :func:`graphclust._confidence.rows_confidence`, as
in memory. ``confidence_`` is a lazy dask array chunked like the labels. An ensemble's
is the share of members agreeing with the consensus, from each block's membership rows
and the ``Σk_j x k`` table summed over the blocks.
"""

from __future__ import annotations

import numpy as np

from graphclust._confidence import (ConfidenceState, label_profile, member_probabilities,
                                    rows_confidence, rows_outliers, source_of)
from graphclust._ensemble import Ensemble
from graphclust.chunks import Block, split_kept

__all__ = ["chunked_confidence", "noise_labels_chunked", "proba_chunked"]


def _block_rows(X, pipe, graph, solution, kept, scaling):
    """The block's rows of ``Z`` and its lifted solution rows (as the fit built them)."""
    Xs = scaling.transform(np.asarray(X))
    Z = pipe.graph.transform(Xs, graph)
    lifter = pipe.adapter if pipe.adapter is not None else pipe.solver
    return Z, lifter.lift_rows(solution, Block(Xs, Z, state=kept))


def _profile_block(X, labels, pipe, graph, solution, kept, scaling, width):
    Z, _ = _block_rows(X, pipe, graph, solution, kept, scaling)
    return label_profile(Z, np.asarray(labels), width)


def _confidence_block(X, labels, pipe, graph, solution, kept, scaling, profile):
    Z, lifted = _block_rows(X, pipe, graph, solution, kept, scaling)
    return rows_confidence(pipe, Z, lifted, np.asarray(labels), profile)


def _outliers_block(X, labels, pipe, graph, solution, kept, scaling):
    Z, lifted = _block_rows(X, pipe, graph, solution, kept, scaling)
    flags = rows_outliers(pipe, Z, lifted, np.asarray(labels))
    return np.zeros(len(labels), dtype=bool) if flags is None else flags


def _member_block(labels_list, classes, sizes):
    from graphclust._dask._ensemble import _membership_block
    from graphclust._membership import Memberships

    return Memberships(_membership_block(labels_list, classes, sizes), tuple(sizes))


def _member_table(M, labels, width):
    from graphclust._confidence import _one_hot

    return np.asarray((M.matrix.T @ _one_hot(np.asarray(labels), width)).toarray())


def _member_confidence(M, labels, width, owner):
    labels = np.asarray(labels, dtype=np.int64)
    P, _ = member_probabilities(M, labels, width, owner)
    return P[np.arange(labels.size), labels] if labels.size else np.zeros(0)


def _aligned(arr, X):
    """``arr`` (rows) rechunked like the rows of ``X``."""
    return arr.rechunk((X.chunks[0],))


def chunked_confidence(plan, result, noise: bool):
    """The :class:`~graphclust._confidence_fit.FitConfidence` of a chunked fit."""
    import dask
    import dask.array as da

    from graphclust._confidence import FitConfidence
    from graphclust._dask._input import with_row_chunks

    executor = plan.executor
    X = executor._in_safe_units(plan.X)
    if len(X.chunks[1]) > 1:  # a block's rows whole
        X = X.rechunk({1: -1})
    labels = _aligned(result.labels, X)
    width = int(max(result.n_clusters or 0, 1))
    pipe = plan.pipeline
    x_blocks = list(X.to_delayed().ravel())
    l_blocks = list(labels.to_delayed().ravel())
    sizes = X.chunks[0]
    if isinstance(pipe, Ensemble):
        members = [list(_aligned(r.labels, X).to_delayed().ravel()) for r in result.members]
        build = dask.delayed(_member_block, pure=True)
        m_blocks = [build(list(row), result.member_classes,
                          [c.size for c in result.member_classes]) for row in zip(*members)]
        table = dask.delayed(sum)([dask.delayed(_member_table)(mb, lb, width)
                                   for mb, lb in zip(m_blocks, l_blocks)]).compute()
        owner = table.argmax(axis=1)
        conf = da.concatenate([
            da.from_delayed(dask.delayed(_member_confidence)(mb, lb, width, owner),
                            shape=(c,), dtype=np.float64)
            for mb, lb, c in zip(m_blocks, l_blocks, sizes)])
        state = ConfidenceState(width, owner, "ensemble members")
        flags = None
    else:
        solution, kept = split_kept(result.solution)
        kept = kept.values if kept is not None else [None] * len(x_blocks)
        args = (pipe, result.graph, solution)
        profile_of = dask.delayed(_profile_block, pure=True)
        # lazy: only the fallback's confidence and predict_proba without the rounding's
        # probabilities read it (a second pass over the blocks' rows of Z)
        profile = dask.delayed(sum)([profile_of(xb, lb, *args, kb, result.scaling, width)
                                     for xb, lb, kb in zip(x_blocks, l_blocks, kept)])
        block = dask.delayed(_confidence_block, pure=True)
        needed = profile if source_of(pipe) == "graph neighbours" else None
        conf = da.concatenate([
            da.from_delayed(block(xb, lb, *args, kb, result.scaling, needed),
                            shape=(c,), dtype=np.float64)
            for xb, lb, kb, c in zip(x_blocks, l_blocks, kept, sizes)])
        state = ConfidenceState(width, profile, source_of(pipe))
        flags = None
        if noise:
            out = dask.delayed(_outliers_block, pure=True)
            flags = da.concatenate([
                da.from_delayed(out(xb, lb, *args, kb, result.scaling), shape=(c,), dtype=bool)
                for xb, lb, kb, c in zip(x_blocks, l_blocks, kept, sizes)])
    conf = with_row_chunks(conf, executor.row_chunks)
    if not noise:
        return FitConfidence(conf, result.labels, state)
    if flags is None or not _part_flags(pipe):
        flags, state.noise_model = _framework_flags(X, labels, result, width, plan.seed)
        state.noise_rule = "cluster Gaussians"
    else:
        state.noise_rule = state.source
    flags = with_row_chunks(flags, executor.row_chunks)
    noisy = da.where(flags, -1, result.labels).persist()
    return FitConfidence(conf, noisy, state, int(flags.sum().compute()))


def _part_flags(pipe) -> bool:
    """Whether a part of ``pipe`` flags outliers itself (else the framework's rule)."""
    adapter, rounding = getattr(pipe, "adapter", None), pipe.rounding
    if adapter is not None and type(adapter).gives_confidence():
        return type(adapter).implements("outliers") and getattr(
            adapter, "sample_noise_", True) is not None
    return type(rounding).gives_confidence() and type(rounding).implements("outliers")


def _framework_flags(X, labels, result, width: int, seed: int):
    """The framework's noise rule on a chunked fit: the cluster Gaussians fitted on a
    uniform sample of the rows (the rounding's sample size, :mod:`graphclust.chunks`),
    applied per block; the flags (lazy) and the fitted model."""
    from graphclust import chunks as protocol
    from graphclust.chunks import sample_size
    from graphclust.numerics.confidence import fit_cluster_gaussians, gaussian_outliers

    import dask
    import dask.array as da

    n = int(X.shape[0])
    size = sample_size(n, width, per_unit=protocol.ROUNDING_SAMPLE_PER_CLUSTER,
                       minimum=protocol.ROUNDING_SAMPLE_MIN)
    idx = None if size >= n else np.sort(np.random.default_rng(seed).choice(n, size, False))
    Xs = X.map_blocks(result.scaling.transform, dtype=np.float64)
    rows = np.asarray((Xs if idx is None else Xs[idx]).compute())
    lab = np.asarray((labels if idx is None else labels[idx]).compute())
    model = fit_cluster_gaussians(rows, lab, width, seed)
    flag = dask.delayed(gaussian_outliers, pure=True)
    return da.concatenate([
        da.from_delayed(flag(xb, lb, model), shape=(c,), dtype=bool)
        for xb, lb, c in zip(Xs.to_delayed().ravel(), labels.to_delayed().ravel(),
                             X.chunks[0])]), model


def _proba_block(X, executor_rows, pipe, result, state):
    return executor_rows(np.asarray(X), pipe, result, state)


def _slim(estimator):
    from graphclust._dask._ensemble import slim_ensemble_result
    from graphclust._dask._run import slim_result

    return (slim_ensemble_result(estimator.result_) if isinstance(estimator.pipeline_, Ensemble)
            else slim_result(estimator.result_))


def noise_labels_chunked(executor, estimator, X, rows_fn, state):
    """``predict`` after ``noise=True`` of the rows of a dask array, one task per block
    (``rows_fn``: :func:`graphclust._noise_predict.labels_with_noise`)."""
    from graphclust._dask._input import with_row_chunks

    Xn = executor._new_rows(estimator, X)
    out = Xn.map_blocks(_proba_block, rows_fn, estimator.pipeline_, _slim(estimator), state,
                        drop_axis=1, dtype=np.int64)
    return with_row_chunks(out, executor.row_chunks)


def proba_chunked(executor, estimator, X, rows_fn, state):
    """``predict_proba`` of the rows of a dask array, one task per block."""
    from graphclust._dask._ensemble import slim_ensemble_result
    from graphclust._dask._input import with_row_chunks
    from graphclust._dask._run import slim_result

    if hasattr(state.profile, "compute"):  # the chunked fit's lazy label profile
        state.profile = np.asarray(state.profile.compute())
    pipe = estimator.pipeline_
    slim = (slim_ensemble_result(estimator.result_) if isinstance(pipe, Ensemble)
            else slim_result(estimator.result_))
    Xn = executor._new_rows(estimator, X)
    out = Xn.map_blocks(_proba_block, rows_fn, pipe, slim, state,
                        chunks=(Xn.chunks[0], (state.width,)), dtype=np.float64)
    return with_row_chunks(out, executor.row_chunks)
