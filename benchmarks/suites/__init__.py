"""One module per suite, each defining ``SUITE`` (see :mod:`benchmarks.suite`).

Adding a suite is adding a module here; ``python -m benchmarks list`` shows them all.
"""
