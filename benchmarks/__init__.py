"""graphclust benchmark harness: paper reproduction, peers, parameter search, scaling.

Run ``python -m benchmarks --help``; see ``benchmarks/README.md``. The per-bundle scripts
``benchmarks/<bundle>_*.py`` expose ``run(data_dir, quick=False, seeds=...)``; this package
is the general runner over every registered preset.
"""
