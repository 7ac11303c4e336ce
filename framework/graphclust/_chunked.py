"""The chunk-wise protocol: how a part runs over row blocks it never sees together.

An anchor pipeline is row-local work (distances to anchors, rows of ``Z``, lifting,
labels) around global-small work (anchors, an ``m x m`` solve). The chunked execution
(:mod:`graphclust._dask`) keeps that split explicit: a part marked ``chunkwise`` receives
a :class:`RowChunks` and asks it for **sums over row blocks** of what it needs; the sums
are ``m``-sized and are the only n-independent data that reach the caller.

This module knows no engine. :class:`InMemoryChunks` runs the protocol over the row
blocks of arrays in memory (tests, the contract kit, and proof that a part's chunked
form equals its in-memory form); :mod:`graphclust._dask` runs it over the chunks of a
``dask.array`` on whatever scheduler is active.

The protocol per part kind (a ``chunkwise = True`` class variable declares it):

* **anchors** — :meth:`~graphclust.AnchorSelector.select` runs unchanged on a uniform
  row sample (:func:`sample_size`); nothing else is needed.
* **graph** — ``prepare_chunked(anchors, chunks, ctx)`` returns an
  :class:`~graphclust.AnchorGraph` with **zero rows** that carries the anchors and the
  fitted state (global scalars such as a bandwidth are sums over ``chunks`` first); the
  rows of ``Z`` of any block are then the builder's existing ``transform``.
* **solver** — ``solve_chunked(chunks, n_clusters, ctx)`` returns a
  :class:`~graphclust.Solution` with zero rows holding the per-anchor values (the
  ``m``-sized solve), and ``lift_rows(solution, block)`` the solution rows of one block.
* **adapter** — ``adapt_chunked(graph, chunks, n_clusters, ctx)`` returns the
  :class:`~graphclust.Adapted` problem, which must be global-small (``anchor-level``: the
  ``m x m`` graph ``ZᵀZ = Σ_b Z_bᵀ Z_b``) since the solver then runs on it in the calling
  process with its in-memory ``solve``, unchanged (it need not be chunk-wise itself);
  ``graph`` is the run's zero-row anchor graph. The adapter's :meth:`~graphclust.Adapter.lift`
  on that zero-row graph gives the zero-row solution (the per-anchor values), and
  ``lift_rows(solution, block)`` the solution rows of one block, as a solver's would.
* **rounding** — :meth:`~graphclust.Rounding.round` runs on the solution rows of a
  uniform sample (:func:`sample_size`), :meth:`~graphclust.Rounding.assign` labels every
  block.
* **consensus** (ensembles) — ``combine_chunked(chunks, n_clusters, ctx)`` fits the
  ``Σk_i``-sized state from sums where ``block.Z`` is a block's rows of the memberships;
  ``embed_rows(block)`` gives a block's point coordinates, which the consensus'
  ``rounding_`` is fitted on (a sample) and applied to (every block).

Optional hooks: an anchor selector whose count depends on ``n`` has ``for_rows(n)`` (the
selector to run on a sample of ``n`` rows); a graph builder whose global scalar comes
from the search that also gives its rows has ``prepare_search`` / ``search_block`` /
``finish_search`` / ``rows_from_search`` (each block searched once, see
:mod:`graphclust._dask._run`). The ``scale`` stage's column statistics are
:class:`~graphclust.numerics.scaling.ColumnStats`, which add like any chunk sum.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp

__all__ = [
    "ANCHOR_SAMPLE_MIN",
    "ANCHOR_SAMPLE_PER_ANCHOR",
    "ROUNDING_SAMPLE_MIN",
    "ROUNDING_SAMPLE_PER_CLUSTER",
    "Block",
    "InMemoryChunks",
    "RowChunks",
    "add_sums",
    "sample_size",
]

#: Anchor selection sees at least this many rows (or all of them, when fewer) ...
ANCHOR_SAMPLE_MIN = 100_000
#: ... and at least this many rows per anchor.
ANCHOR_SAMPLE_PER_ANCHOR = 20
#: k-means rounding sees at least this many embedding rows (or all, when fewer) ...
ROUNDING_SAMPLE_MIN = 100_000
#: ... and at least this many per cluster.
ROUNDING_SAMPLE_PER_CLUSTER = 1_000


def sample_size(n: int, units: int, *, per_unit: int, minimum: int) -> int:
    """Rows of the uniform sample a global-small stage runs on: ``min(n, max(per_unit·units,
    minimum))``.

    For anchors ``units = m`` (``20 m``, at least 100 000): every anchor selector here is
    a k-means-like summary whose centres need tens of points each; the floor keeps the
    selection's cost and the sample's memory on one worker (``100 000 x d``) independent
    of ``n`` while leaving the in-memory result unchanged for every set up to that size
    (the sample is then all rows, in order). Both samples share the floor, so a set of up
    to 100 000 rows is clustered exactly as in memory. For k-means
    rounding ``units = k`` (``1000 k``, at least 100 000) on a ``k``-dimensional
    embedding: the centres' sampling error shrinks as ``1/√(rows per cluster)``.
    """
    return int(min(n, max(int(per_unit) * int(units), int(minimum))))


@attrs.frozen(eq=False)
class Block:
    """One row block as a chunk-wise part sees it.

    Attributes
    ----------
    X : ndarray of shape (b, d)
        The features of the block (scaled, in the run's dtype).
    Z : scipy.sparse.csr_array of shape (b, m) or None
        The block's rows of the anchor graph (``None`` before the graph exists).
    """

    X: np.ndarray
    Z: sp.csr_array | None = None


def add_sums(a: Any, b: Any) -> Any:
    """``a + b`` for what a chunk function may return: arrays, sparse matrices, numbers,
    and tuples or dicts of them (added item by item)."""
    if isinstance(a, dict):
        if a.keys() != b.keys():
            raise ValueError(f"chunk sums with different keys: {sorted(a)} vs {sorted(b)}")
        return {key: add_sums(a[key], b[key]) for key in a}
    if isinstance(a, tuple):
        return tuple(add_sums(x, y) for x, y in zip(a, b, strict=True))
    out = a + b
    return sp.csr_array(out) if sp.issparse(out) else out


class RowChunks:
    """Row blocks of one run, seen through sums.

    Attributes
    ----------
    n : int
        Rows over all blocks.
    n_features : int
    n_anchors : int or None
        Columns of ``Z`` (``None`` before the graph exists).
    n_blocks : int
    """

    n: int
    n_features: int
    n_anchors: int | None
    n_blocks: int

    def sum(self, fn: Callable[..., Any], *args: Any) -> Any:  # pragma: no cover - interface
        """``Σ_blocks fn(block, *args)``, added with :func:`add_sums` in a fixed order.

        ``fn`` must be a module-level function (it is shipped to workers) and should
        return ``m``-sized values; ``args`` are shipped once, not once per block.
        """
        raise NotImplementedError


class InMemoryChunks(RowChunks):
    """:class:`RowChunks` over arrays in memory, cut into blocks of ``block_rows`` rows.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Z : sparse matrix of shape (n, m), optional
    block_rows : int
        Rows per block; the last block may be shorter.
    """

    def __init__(self, X: np.ndarray, Z=None, block_rows: int = 4096):
        if block_rows < 1:
            raise ValueError(f"block_rows must be >= 1, got {block_rows}")
        self.X = X
        self.Z = None if Z is None else sp.csr_array(Z)
        self.n, self.n_features = int(X.shape[0]), int(X.shape[1])
        self.n_anchors = None if Z is None else int(Z.shape[1])
        self.block_rows = int(block_rows)
        self.n_blocks = -(-self.n // self.block_rows)

    def blocks(self):
        """The :class:`Block` objects in row order."""
        for start in range(0, self.n, self.block_rows):
            stop = start + self.block_rows
            yield Block(self.X[start:stop], None if self.Z is None else self.Z[start:stop])

    def sum(self, fn, *args):
        total = None
        for block in self.blocks():
            value = fn(block, *args)
            total = value if total is None else add_sums(total, value)
        return total
