""":class:`~graphclust.chunks.RowChunks` over the blocks of a ``dask.array``."""

from __future__ import annotations

import numpy as np

from graphclust.chunks import Block, BlockState, RowChunks, add_sums, split_by_block

__all__ = ["DaskChunks", "active_client", "apply_block", "apply_block_at", "cluster_lost",
           "check_held", "LOST_ADVICE", "lost_advice", "held"]

#: What to do when the cluster holding a chunked fit's results is gone (docs/dask.rst).
LOST_ADVICE = ("labels_ of a chunked fit are held by the Dask cluster that ran it: write them "
               "out (labels_.to_zarr(...)) or bring them to memory (labels_.compute()) "
               "before closing the client, and refit when the cluster is gone")


def lost_advice(what: str) -> str:
    """:data:`LOST_ADVICE` for the fitted attribute ``what`` (``labels_``,
    ``embedding_``, ``members_[j].labels``)."""
    return LOST_ADVICE.replace("labels_", what)


def cluster_lost(exc: BaseException) -> bool:
    """Whether ``exc`` says that the cluster (or the results it held) went away: a
    cancelled future (the client closed), a missing dependency (results lost with the
    cluster), or a closed connection to the scheduler."""
    import concurrent.futures

    if isinstance(exc, concurrent.futures.CancelledError):
        return True
    name = type(exc).__name__
    text = str(exc)
    return (name in ("FutureCancelledError", "CancelledError", "CommClosedError")
            or (isinstance(exc, ValueError) and text.startswith("Missing dependency"))
            or "client is closed" in text.lower() or "no clients found" in text.lower())


def _external_keys(collection) -> set:
    """Keys the graph of ``collection`` depends on but does not define: results held as
    futures by a cluster (a task built on a future names its key only)."""
    from dask.core import get_dependencies

    graph = dict(collection.__dask_graph__())
    needed: set = set()
    for key, task in graph.items():
        deps = getattr(task, "dependencies", None)  # a task spec node names its inputs
        needed.update(deps if deps is not None else get_dependencies(graph, key))
    return needed - set(graph)


def check_held(collection, what: str = "labels_") -> None:
    """Raise :class:`~graphclust.ClusterLostError` when the persisted ``collection`` (a
    chunked fit's result) is no longer held by a running cluster: its client closed, or
    it was unpickled away from the cluster that holds it. Nothing for a collection that
    holds no futures and names no key it does not define (computed, or run on Dask's
    local threads)."""
    try:
        from distributed import futures_of
    except ImportError:
        return
    from graphclust._errors import ClusterLostError

    futures = futures_of(collection)
    external = _external_keys(collection)
    if not futures and not external:
        return
    client = getattr(futures[0], "client", None) if futures else active_client()
    running = client is not None and getattr(client, "status", None) == "running"
    alive = (running and all(f.status in ("finished", "pending") for f in futures)
             and all(key in client.futures for key in external))
    if not alive:
        if not futures:  # results named by key only: no client here holds them
            state = ("the cluster that held it is gone (its client closed, or the model "
                     "was unpickled elsewhere)")
        elif client is not None and not running:
            state = "its client is closed"
        else:
            state = "it was unpickled away from the cluster that held it"
        raise ClusterLostError(f"{what} is not available: {state}. {lost_advice(what)}")


def held(value, what: str):
    """``value``, after :func:`check_held` when it is a Dask collection (a chunked fit's
    n-sized result, kept lazily on the cluster by design)."""
    if hasattr(value, "__dask_graph__"):
        check_held(value, what)
    return value


def active_client():
    """The active ``distributed.Client``, or ``None`` (Dask's local threads then)."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


def apply_block(fn, X, Z, *args):
    """``fn(Block(X, Z), *args)``: the task run on a worker for one block."""
    return fn(Block(X, Z), *args)


def apply_block_at(fn, X, Z, start, state, *args):
    """``fn(Block(X, Z, start, state), *args)``: a block task that knows its first row and
    sees its value of a kept state."""
    return fn(Block(X, Z, start, state), *args)


def _first(pair):
    return pair[0]


def _second(pair):
    return pair[1]


def _reduce_parts(reduce, *parts):
    return reduce(list(parts))


class DaskChunks(RowChunks):
    """Row blocks of a dask array (and, once built, the matching blocks of ``Z``).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d)
        One chunk across the columns.
    Z_blocks : list of Delayed or None
        One sparse ``Z`` block per row block of ``X`` (persisted by the caller), or
        ``None`` before the graph exists.
    n_anchors : int, optional

    :meth:`sum` builds one task per block and adds the results in a fixed binary tree
    (so the result does not depend on which worker finished first), then computes it on
    the active scheduler; only the sum reaches the caller. With a distributed client each
    finished block is reported to ``progress`` (a :class:`~graphclust.Progress`), one
    step per chunk.

    :meth:`map` / :meth:`map_sum` keep one task's result per block: on a distributed
    client as futures (the values stay in the workers' memory, held by the returned
    :class:`~graphclust.chunks.BlockState`, and are recomputed from their lineage if a
    worker is lost), on Dask's threads by ``dask.persist``; ``release()`` drops the
    handle's references so the scheduler frees them. ``map_sum`` computes the ``(value,
    summand)`` pairs, keeps the first items and adds the second ones in :meth:`sum`'s
    tree, all on the workers in one round trip.
    """

    progress = None

    def __init__(self, X, Z_blocks=None, n_anchors: int | None = None, progress=None):
        self.progress = progress
        self.X = X
        self.X_blocks = list(X.to_delayed().ravel())
        self.Z_blocks = Z_blocks
        self.n, self.n_features = int(X.shape[0]), int(X.shape[1])
        self.n_anchors = n_anchors
        self.n_blocks = len(self.X_blocks)
        self.sizes = tuple(int(c) for c in X.chunks[0])

    def block_tasks(self, fn, *args, state: BlockState | None = None,
                    per_block: list | None = None) -> list:
        """One delayed ``fn(block, *args)`` per block (``args`` shipped once); with
        ``state``, each block's value of it as ``block.state``; with ``per_block``, one
        more argument per block, first (``fn(block, per_block[i], *args)``)."""
        import dask

        shipped = [dask.delayed(a) if not isinstance(a, (int, float, str, bool, type(None)))
                   else a for a in args]
        Zs = self.Z_blocks if self.Z_blocks is not None else [None] * self.n_blocks
        values = BlockState.values_for(state, self.n_blocks)
        extra = [()] * self.n_blocks if per_block is None else [(v,) for v in per_block]
        task = dask.delayed(apply_block_at, pure=True)
        return [task(fn, xb, zb, st, sb, *e, *shipped)
                for xb, zb, st, sb, e in zip(self.X_blocks, Zs, self._starts(), values, extra)]

    def _persist(self, tasks) -> list:
        """Threads: compute and keep the tasks (``dask.persist``)."""
        import dask

        return list(dask.persist(*tasks))

    def map(self, fn, *args, state=None):
        tasks = self.block_tasks(fn, *args, state=state)
        client = active_client()
        if client is None:
            return BlockState(self._persist(tasks))
        return BlockState(client.compute(tasks))  # futures: kept on the workers

    def map_sum(self, fn, *args, state=None):
        import dask

        tasks = self.block_tasks(fn, *args, state=state)
        what = getattr(fn, "__name__", "map_sum")
        client = active_client()
        if client is None:
            pairs = self._persist(tasks)
            values = self._persist([dask.delayed(_first, pure=True)(p) for p in pairs])
            total = self._tree_sum([dask.delayed(_second, pure=True)(p) for p in pairs], what)
            return BlockState(values), total
        # one round trip: the values are taken and the summands added on the workers
        pairs = client.compute(tasks)
        values = [client.submit(_first, p) for p in pairs]
        total = self._tree_futures(client, [client.submit(_second, p) for p in pairs], what)
        return BlockState(values), total

    def on_sample(self, fn, reduce, rows, *args, state=None):
        import dask

        parts = self.block_tasks(fn, *args, state=state,
                                 per_block=split_by_block(rows, self.sizes))
        return dask.delayed(_reduce_parts, pure=True)(reduce, *parts).compute()

    def _starts(self) -> list[int]:
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(int).tolist()

    def sum(self, fn, *args, state=None):
        return self._tree_sum(self.block_tasks(fn, *args, state=state),
                              getattr(fn, "__name__", "sum"))

    def _tree_sum(self, level: list, what: str):
        import dask

        client = active_client()
        if client is not None:
            return self._sum_futures(client, level, what)
        add = dask.delayed(add_sums, pure=True)
        while len(level) > 1:
            nxt = [add(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0].compute()

    def _sum_futures(self, client, tasks, what: str):
        """The same tree of sums on futures, reporting each finished block."""
        return self._tree_futures(client, client.compute(tasks), what)

    def _tree_futures(self, client, futures: list, what: str):
        from distributed import as_completed

        if self.progress is not None:
            self.progress.start(len(futures), f"{what}: {len(futures)} chunks")
            for i, _ in enumerate(as_completed(futures), 1):
                self.progress.step(i, len(futures))
            self.progress.end()
        level = futures
        while len(level) > 1:
            nxt = [client.submit(add_sums, level[i], level[i + 1], pure=False)
                   for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0].result()
