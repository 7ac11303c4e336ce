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
anchors     nothing (``select`` runs on a uniform row sample)            ``for_rows``
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
"""

from __future__ import annotations

from graphclust import _chunked
from graphclust._chunked import (
    Block,
    BlockState,
    InMemoryChunks,
    RowChunks,
    add_sums,
    anchor_degrees,
    sample_size,
    split_kept,
)

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
    "split_kept",
]

#: ``Solution.info`` key of a chunked solution's rows kept per block (a
#: :class:`BlockState` whose values are :class:`~graphclust.Solution` objects of the
#: block's rows).
KEPT_ROWS: str = _chunked.KEPT_ROWS
#: Anchor selection sees at least this many rows (or all of them, when fewer) ...
ANCHOR_SAMPLE_MIN: int = _chunked.ANCHOR_SAMPLE_MIN
#: ... and at least this many rows per anchor (:func:`sample_size`).
ANCHOR_SAMPLE_PER_ANCHOR: int = _chunked.ANCHOR_SAMPLE_PER_ANCHOR
#: A rounding is fitted on at least this many rows (or all, when fewer) ...
ROUNDING_SAMPLE_MIN: int = _chunked.ROUNDING_SAMPLE_MIN
#: ... and at least this many per cluster (:func:`sample_size`).
ROUNDING_SAMPLE_PER_CLUSTER: int = _chunked.ROUNDING_SAMPLE_PER_CLUSTER

# The objects are defined in the engine-free implementation module; they belong to this
# public module (what ``repr``, pickles and the documentation name).
for _name in ("Block", "BlockState", "InMemoryChunks", "RowChunks", "add_sums",
              "anchor_degrees", "sample_size", "split_kept"):
    globals()[_name].__module__ = __name__
del _name
