""":class:`~graphclust._chunked.RowChunks` over the blocks of a ``dask.array``."""

from __future__ import annotations

from graphclust._chunked import Block, RowChunks, add_sums

__all__ = ["DaskChunks", "active_client", "apply_block"]


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

    def block_tasks(self, fn, *args) -> list:
        """One delayed ``fn(block, *args)`` per block (``args`` shipped once)."""
        import dask

        shipped = [dask.delayed(a) if not isinstance(a, (int, float, str, bool, type(None)))
                   else a for a in args]
        Zs = self.Z_blocks if self.Z_blocks is not None else [None] * self.n_blocks
        task = dask.delayed(apply_block, pure=True)
        return [task(fn, xb, zb, *shipped) for xb, zb in zip(self.X_blocks, Zs)]

    def sum(self, fn, *args):
        import dask

        level = self.block_tasks(fn, *args)
        client = active_client()
        if client is not None:
            return self._sum_futures(client, level, getattr(fn, "__name__", "sum"))
        add = dask.delayed(add_sums, pure=True)
        while len(level) > 1:
            nxt = [add(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0].compute()

    def _sum_futures(self, client, tasks, what: str):
        """The same tree of sums on futures, reporting each finished block."""
        from distributed import as_completed

        futures = client.compute(tasks)
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
