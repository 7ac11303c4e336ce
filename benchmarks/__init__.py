"""graphclust benchmark harness: suites of (method × data set × seed) cells, run in
capped worker processes beside scikit-learn peers, reported as tables.

Modules: :mod:`~benchmarks.suite` (the suite-definition API), ``suites/`` (one module
per suite), :mod:`~benchmarks.datasets`, :mod:`~benchmarks.peers`,
:mod:`~benchmarks.runner`, :mod:`~benchmarks.report`, :mod:`~benchmarks.plots`,
:mod:`~benchmarks.cli`. See ``benchmarks/README.md``.
"""
