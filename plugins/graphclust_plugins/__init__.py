"""The built-in graphclust bundles, one sub-package each.

Each bundle registers through the ``graphclust`` entry-point group in graphclust's
``pyproject.toml``, exactly as a third-party package would.
"""
