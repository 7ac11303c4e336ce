"""``python -m benchmarks.dask_equivalence``: chunked (Dask) against in-memory labels of
the anchor presets, same seed; see :func:`benchmarks.dask_scaling.equivalence`."""

from benchmarks.dask_scaling import equivalence

if __name__ == "__main__":
    raise SystemExit(equivalence())
