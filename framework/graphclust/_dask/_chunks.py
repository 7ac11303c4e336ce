""":class:`~graphclust._chunked.RowChunks` over the blocks of a ``dask.array``."""

from __future__ import annotations

from graphclust._chunked import Block, RowChunks, add_sums

__all__ = ["DaskChunks", "apply_block"]


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
    the active scheduler; only the sum reaches the caller.
    """

    def __init__(self, X, Z_blocks=None, n_anchors: int | None = None):
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
        add = dask.delayed(add_sums, pure=True)
        while len(level) > 1:
            nxt = [add(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0].compute()
