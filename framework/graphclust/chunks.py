"""The chunk protocol: how a part runs over row blocks it never sees together.

This is the public module a part imports to run chunk-wise; the built-in bundles use
it exactly as a third-party package would. The engines (the Dask execution, and
:class:`InMemoryChunks` for tests) are behind it.

An anchor pipeline is row-local work (distances to anchors, rows of ``Z``, lifting,
labels) around global-small work (anchors, an ``m x m`` solve). A part that sets the
class variable ``chunkwise = True`` receives a :class:`RowChunks` and asks it for
**sums over row blocks** of what it needs (``chunks.sum(fn, *args)``, ``fn`` a
module-level function of a :class:`Block`); the sums are ``m``-sized and are all that
reaches the caller.

Which methods a ``chunkwise`` part implements depends on its kind; every one is
declared, with its contract, on the part interface (the kind's ``chunk_hooks``,
``optional_chunk_hooks`` and ``chunk_needs``), and ``Part.missing_chunk_hooks()`` names
what a class lacks. The chunked execution asks those declarations (``implements``),
never ``hasattr``:

=========== ============================================================ ======================
kind        required with ``chunkwise``                                  optional
=========== ============================================================ ======================
anchors     nothing (``select`` runs on a uniform row sample, or on      ``for_rows``;
            exactly the rows ``sample_rows`` names)                      ``sample_rows``
graph       ``prepare_chunked``; ``transform`` gives each block's        ``prepare_search``,
            rows                                                         ``search_block``,
                                                                         ``finish_search``,
                                                                         ``rows_from_search``
                                                                         (all or none)
adapter     ``adapt_chunked``, ``lift_rows``
solver      ``solve_chunked``, ``lift_rows``
rounding    ``assign`` (``round`` runs on a uniform row sample)
consensus   ``combine_chunked`` (sets ``rounding_``), ``embed_rows``
=========== ============================================================ ======================

A solver whose ``n x k`` iterates must stay with their rows between passes (ONGR) keeps
them in a :class:`BlockState` (``chunks.map`` / ``chunks.map_sum``) and returns that
under ``Solution.info[KEPT_ROWS]``; the execution takes it out (:func:`split_kept`)
before shipping the solution to the blocks and hands ``lift_rows`` each block's rows as
``block.state``.

What it exports:

:class:`RowChunks`, :class:`InMemoryChunks`, :class:`Block`, :class:`BlockState`
    The protocol's types: an engine's row blocks and per-block state, and the in-memory
    engine (test a part's chunked form against its in-memory form with it).
:data:`KEPT_ROWS`, :func:`split_kept`
    The solution key of rows kept per block, and how the execution takes them out.
:func:`sample_size` and the ``*_SAMPLE_*`` constants
    The uniform row samples the global-small stages (anchors, rounding) run on.
:func:`add_sums`
    How chunk sums add (arrays, sparse matrices, numbers, tuples and dicts of them).
:func:`anchor_degrees`
    The chunk function of the anchor degrees ``λ = Zᵀ1``. It lives here, not in
    :mod:`graphclust.numerics`: it is a chunk function (a :class:`Block` in, one summand
    of :meth:`RowChunks.sum` out), so its signature is the protocol's, while the
    numerics layer imports nothing of graphclust; and four anchor-graph parts of three
    bundles (``spectral``, the ``tcut`` solver and consensus, ``ongr``) start from it,
    so it is written once, where they all may import it.

This module knows no engine. :class:`InMemoryChunks` runs the protocol over the row
blocks of arrays in memory (tests, the contract kit, and proof that a part's chunked
form equals its in-memory form); :mod:`graphclust._dask` runs it over the chunks of a
``dask.array`` on whatever scheduler is active.

**Per-block state** (iterative solvers such as ONGR, whose ``n x k`` iterates must stay
with their rows between iterations). Besides :meth:`RowChunks.sum`:

* ``chunks.map(fn, *args, state=None)`` runs ``fn(block, *args)`` on every block and
  returns a :class:`BlockState`, a handle to the per-block results **kept where the
  blocks live** (a list in memory, persisted chunks on the Dask workers); nothing of them
  reaches the caller;
* ``chunks.map_sum(fn, *args, state=None)`` does the same with ``fn`` returning
  ``(value, summand)``: the values are kept as the new state, the summands added as by
  :meth:`RowChunks.sum`, in one pass;
* ``sum``, ``map`` and ``map_sum`` take ``state=`` a handle: each block then sees its
  value as ``block.state``;
* ``chunks.on_sample(fn, reduce, rows, *args, state=None)`` runs ``fn(block, local,
  *args)`` on every block (``local``: the block's positions of the sorted global row
  indices ``rows``, all rows when ``None``) and ``reduce(parts)`` on the list of results
  in **one** task (a k-means on a row sample); only ``reduce``'s result reaches the caller;
* ``state.release()`` frees the kept values (do it as soon as a newer state exists);
* ``block.start`` is the block's first row in the whole data, for row-keyed random
  numbers that do not depend on the cut (:func:`graphclust.numerics.random_block_rows`).

A solver whose chunked solution's rows live in such a state (ONGR's ``F`` and ``G``)
returns it under ``Solution.info[KEPT_ROWS]``, each block's value being a
:class:`~graphclust.Solution` of the block's rows; the execution takes it out of the
solution (:func:`split_kept`) before shipping the solution to the blocks and hands
``lift_rows`` each block's rows as ``block.state`` (:meth:`Block.take` restricts a block
and its state to some of its rows).

The sample floors are read at call time (``chunks.ROUNDING_SAMPLE_MIN``), so changing
them here changes every chunked run.
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
    "KEPT_ROWS",
    "ROUNDING_SAMPLE_MIN",
    "ROUNDING_SAMPLE_PER_CLUSTER",
    "Block",
    "BlockState",
    "InMemoryChunks",
    "RowChunks",
    "add_sums",
    "anchor_degrees",
    "sample_size",
    "split_by_block",
    "split_kept",
]

#: ``Solution.info`` key of a chunked solution's rows kept per block (a :class:`BlockState`).
KEPT_ROWS = "kept_rows"

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
    start : int
        The block's first row within all rows of the run (0 outside a pass over
        :class:`RowChunks`, e.g. when predicting new points).
    state : object or None
        The block's value of the :class:`BlockState` the pass was given, else ``None``.
    """

    X: np.ndarray
    Z: sp.csr_array | None = None
    start: int = 0
    state: Any = None

    def take(self, local: np.ndarray) -> Block:
        """The block restricted to its rows ``local``; a state that is a
        :class:`~graphclust.Solution` of the block's rows is restricted too."""
        return Block(self.X[local], None if self.Z is None else self.Z[local],
                     self.start, take_rows(self.state, local))


def take_rows(value: Any, local: np.ndarray) -> Any:
    """Rows ``local`` of a kept per-block value: a :class:`~graphclust.Solution` (its
    row fields), an array, or ``None``."""
    from graphclust._solution import Solution

    if value is None:
        return None
    if isinstance(value, Solution):
        return Solution(embedding=None if value.embedding is None else value.embedding[local],
                        soft=None if value.soft is None else value.soft[local])
    return value[local]


class BlockState:
    """A handle to one value per row block, kept where the blocks live.

    Returned by :meth:`RowChunks.map` / :meth:`RowChunks.map_sum`; pass it back as
    ``state=`` so each block sees its value as ``block.state``. :meth:`release` drops the
    values (in memory: the list; on Dask: the persisted chunks on the workers).

    Attributes
    ----------
    values : list
        One entry per block (in-memory objects, or the engine's handles).
    """

    def __init__(self, values: list):
        self.values = list(values)

    def __len__(self) -> int:
        return len(self.values)

    @staticmethod
    def values_for(state: BlockState | None, n_blocks: int) -> list:
        """The per-block values a pass over ``n_blocks`` blocks hands its blocks
        (``None`` each without a state); a state of another length is refused."""
        if state is None:
            return [None] * n_blocks
        if len(state) != n_blocks:
            raise ValueError(f"a state of {len(state)} blocks for {n_blocks} blocks "
                             "(released, or of other chunks)")
        return state.values

    def release(self) -> None:
        """Forget the per-block values (a released state cannot be used again)."""
        self.values = []


def split_kept(solution):
    """``(solution without info[KEPT_ROWS], the kept BlockState or None)``."""
    import attrs as _attrs

    if KEPT_ROWS not in solution.info:
        return solution, None
    info = {k: v for k, v in solution.info.items() if k != KEPT_ROWS}
    return _attrs.evolve(solution, info=info), solution.info[KEPT_ROWS]


def split_by_block(idx: np.ndarray | None, sizes) -> list[np.ndarray]:
    """Per row block of ``sizes`` rows, the block-local positions of the sorted global row
    indices ``idx`` (all rows of every block when ``idx`` is ``None``)."""
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    if idx is None:
        return [np.arange(c) for c in sizes]
    idx = np.asarray(idx)
    return [idx[(idx >= lo) & (idx < hi)] - lo for lo, hi in zip(bounds[:-1], bounds[1:])]


def anchor_degrees(block: Block) -> np.ndarray:
    """``Z_bᵀ1`` of one block in float64: the chunk function whose sum over blocks is the
    anchor degrees ``λ = Zᵀ1`` (every anchor-graph solver's first pass).

    It belongs to the chunk protocol, not to :mod:`graphclust.numerics`: it takes a
    :class:`Block` and returns one summand of :meth:`RowChunks.sum` (the numerics layer
    knows no graphclust type), and parts of several bundles share it, so it is public
    in :mod:`graphclust.chunks`.
    """
    return np.asarray(sp.csr_array(block.Z).sum(axis=0), dtype=np.float64).ravel()


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
    sizes : tuple of int
        Rows of each block, in order.
    """

    n: int
    n_features: int
    n_anchors: int | None
    n_blocks: int
    sizes: tuple[int, ...]

    def sum(self, fn: Callable[..., Any], *args: Any,
            state: BlockState | None = None) -> Any:  # pragma: no cover - interface
        """``Σ_blocks fn(block, *args)``, added with :func:`add_sums` in a fixed order.

        ``fn`` must be a module-level function (it is shipped to workers) and should
        return ``m``-sized values; ``args`` are shipped once, not once per block. With
        ``state``, each block sees its value as ``block.state``.
        """
        raise NotImplementedError

    def map(self, fn: Callable[..., Any], *args: Any,
            state: BlockState | None = None) -> BlockState:  # pragma: no cover - interface
        """Keep ``fn(block, *args)`` per block (where the block lives); returns the handle."""
        raise NotImplementedError

    def map_sum(self, fn: Callable[..., Any], *args: Any,
                state: BlockState | None = None
                ) -> tuple[BlockState, Any]:  # pragma: no cover - interface
        """``fn(block, *args) = (value, summand)``: keep the values, add the summands;
        returns ``(handle, Σ summand)`` after one pass."""
        raise NotImplementedError

    def on_sample(self, fn: Callable[..., Any], reduce: Callable[[list], Any],
                  rows: np.ndarray | None, *args: Any,
                  state: BlockState | None = None) -> Any:  # pragma: no cover - interface
        """``reduce([fn(block, local_b, *args) for each block])`` in one task, ``local_b``
        the block's positions of the sorted global rows ``rows`` (all when ``None``)."""
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
        self.sizes = tuple(min(self.block_rows, self.n - s)
                           for s in range(0, self.n, self.block_rows))

    def blocks(self, state: BlockState | None = None):
        """The :class:`Block` objects in row order (with their ``state`` values)."""
        values = BlockState.values_for(state, self.n_blocks)
        for i, start in enumerate(range(0, self.n, self.block_rows)):
            stop = start + self.block_rows
            yield Block(self.X[start:stop], None if self.Z is None else self.Z[start:stop],
                        start, values[i])

    def sum(self, fn, *args, state=None):
        total = None
        for block in self.blocks(state):
            value = fn(block, *args)
            total = value if total is None else add_sums(total, value)
        return total

    def map(self, fn, *args, state=None):
        return BlockState([fn(block, *args) for block in self.blocks(state)])

    def map_sum(self, fn, *args, state=None):
        values, total = [], None
        for block in self.blocks(state):
            value, summand = fn(block, *args)
            values.append(value)
            total = summand if total is None else add_sums(total, summand)
        return BlockState(values), total

    def on_sample(self, fn, reduce, rows, *args, state=None):
        locals_ = split_by_block(rows, self.sizes)
        return reduce([fn(block, local, *args)
                       for block, local in zip(self.blocks(state), locals_)])
