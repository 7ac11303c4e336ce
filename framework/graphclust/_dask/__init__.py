"""Chunked execution of anchor pipelines on Dask (``dask.array`` in, labels out).

Nothing here imports Dask at module import: :func:`graphclust._executors.is_dask_input`
recognises a Dask collection by its type alone, and :func:`require_dask` imports it (with
an error naming the ``[dask]`` extra when it is missing) only when such an input reaches
``fit``.

Modules: :mod:`._input` (a dask array or DataFrame → a validated float array chunked by
rows), :mod:`._refuse` (which specs can run, checked before anything runs),
:mod:`._chunks` (:class:`~graphclust.chunks.RowChunks` over Dask blocks),
:mod:`._run` (the pipeline: sample → anchors → graph → solve → round → labels).
"""

from __future__ import annotations


__all__ = ["DASK_EXTRA_HINT", "require_dask"]

DASK_EXTRA_HINT = 'pip install "graphclust[dask]"'


def require_dask() -> None:
    """Import Dask's array module, or raise an :class:`ImportError` naming the extra."""
    try:
        import dask.array  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised without the extra only
        raise ImportError(f"graphclust got a Dask collection but Dask is not installed "
                          f"({exc}); install the extra: {DASK_EXTRA_HINT}") from None
