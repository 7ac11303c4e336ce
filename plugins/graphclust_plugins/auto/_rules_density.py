"""``auto``'s rule 9 (the density tree of the features counts and draws the clusters
without ``k``) and the density tree it shares with rule 8b (docs/auto.rst, rule 9)."""

from __future__ import annotations

import numpy as np

from graphclust import DataProfile, Rule
from graphclust_plugins.auto import _rules_base as base

__all__ = ["DENSITY_MIN_CLUSTER", "DENSITY_ROWS_NEEDED", "DENSITY_SAMPLE", "density_k_max",
           "DENSITY_SIZE_DIVISOR", "DENSITY_STRUCTURE_RATIO", "RULE_DENSITY",
           "LINE_CORE_SHARE", "density_size", "density_tree", "line_core_neighbours"]

#: Rule 9: rows a density estimate needs in d dimensions — Silverman (1986), *Density
#: Estimation for Statistics and Data Analysis*, Table 4.2: the sample size for which a
#: kernel estimate of the standard normal density at its centre has a relative mean
#: squared error below 0.1, for d = 1..10. Rule 9 holds where the rows its tree is built
#: on reach it (d <= 7 at DENSITY_SAMPLE rows).
DENSITY_ROWS_NEEDED = {1: 4, 2: 19, 3: 67, 4: 223, 5: 768, 6: 2790, 7: 10700, 8: 43700,
                       9: 187000, 10: 842000}
#: Rule 9: rows the density tree is built on without k (all rows up to it; every other
#: row takes its nearest sample row's label); the ``density`` rounding's ``max_fit``.
DENSITY_SAMPLE = 20_000
#: Rule 9: the tree's smallest cluster is the rows it is built on over this (1 %).
DENSITY_SIZE_DIVISOR = 100
#: Rule 9: ... and at least this many rows.
DENSITY_MIN_CLUSTER = 5
#: Rule 9: no structure (k = 1) when excess of mass's selection holds at most this share
#: of the root's stability; on data without clusters (uniform, Gaussian, Student t3;
#: d = 2..10, n >= 1000, 6 seeds) the share reached .19 (docs/choosing-k.rst).
DENSITY_STRUCTURE_RATIO = 0.25
#: Rule 9 on one column: the core distance's neighbours are this share of rows^(4/5)
#: (:func:`line_core_neighbours`). On a line any dip of the estimated density splits the
#: support, and the core distance over 1 % of the rows dips at random (uniform, Gaussian
#: and t3 columns gave 15-20 clusters at 1 000 rows); of the shares 1, 1/2 and 1/4 tried
#: (6 one-column shapes x 3 seeds x 1 000 and 3 000 rows), 1 merged a cluster of n/6
#: rows and 1/4 split Gaussians, 1/2 gave the right k on all 36.
LINE_CORE_SHARE = 0.5


def density_size(rows: int) -> int:
    """The density tree's smallest cluster on ``rows`` rows: 1 % of them
    (:data:`DENSITY_SIZE_DIVISOR`), at least :data:`DENSITY_MIN_CLUSTER`."""
    return int(max(DENSITY_MIN_CLUSTER, int(rows) // DENSITY_SIZE_DIVISOR))


def density_k_max(rows: int) -> int:
    """Rule 9's ``k_max``: the tree's own resolution, ``rows // density_size(rows)``
    clusters of the smallest size (100 from 500 rows on): the tree costs the same
    whatever ``k`` is, so the range is the one it can resolve, not the spectral
    recipes' 20 (docs/choosing-k.rst, "k_max")."""
    return int(max(2, int(rows) // density_size(rows)))


def density_tree(p: DataProfile, **params) -> tuple[dict, str]:
    """The ``density`` rounding on the scaled features at the resolution of rules 8b and
    9 (:func:`density_size` of the rows it is built on, at most :data:`DENSITY_SAMPLE`
    drawn by global row index), with ``params`` added; the spec and its words."""
    rows = int(min(p.n, DENSITY_SAMPLE))
    size = density_size(rows)
    spec = base.features_pipeline({"name": "density", "min_cluster_size": size, **params,
                                   "max_fit": DENSITY_SAMPLE})
    where = base.fitted_on(p, DENSITY_SAMPLE, "every other row labelled as its nearest "
                           "sample row")
    return spec, (f"HDBSCAN's tree of the features (min_cluster_size = {size}, 1 % of "
                  f"{rows} rows), noise points joining their neighbours' cluster; {where}")


def density_fits(p: DataProfile) -> bool:
    """Rule 9 holds: no ``k``, dense, at least DIAGNOSTIC_MIN_N rows, and the rows the
    tree is built on (``min(n, DENSITY_SAMPLE)``) reach the sample size a density
    estimate needs in ``d`` dimensions (:data:`DENSITY_ROWS_NEEDED`); any ``n``, in
    memory or chunked."""
    need = DENSITY_ROWS_NEEDED.get(int(p.d))
    return (base.asked_k(p) is None and not p.sparse and need is not None
            and min(p.n, DENSITY_SAMPLE) >= max(need, base.DIAGNOSTIC_MIN_N))


def line_core_neighbours(rows: int) -> int:
    """Rule 9 on one column: the core distance's neighbours, ``⌈rows^(4/5) / 2⌉`` — the
    order of the mean-squared-error optimal neighbour count of a kNN density estimate in
    one dimension, ``n^(4/(d+4))`` (Mack & Rosenblatt 1979), halved
    (:data:`LINE_CORE_SHARE`; docs/choosing-k.rst, "One column")."""
    return int(np.ceil(LINE_CORE_SHARE * float(rows) ** 0.8))


def _low_dim_tree(p: DataProfile) -> tuple[dict, str]:
    """Rule 9: the density tree of the features counts and draws the clusters (on one
    column with the core distance of :func:`line_core_neighbours`)."""
    rows = int(min(p.n, DENSITY_SAMPLE))
    line = {"min_samples": line_core_neighbours(rows)} if int(p.d) == 1 else {}
    spec, tree = density_tree(p, estimate="eom", structure_ratio=DENSITY_STRUCTURE_RATIO,
                              **line)
    if line:
        tree += (f"; one column: core distance over {line['min_samples']} rows "
                 "(rows^(4/5) / 2: on a line every dip of the density splits it)")
    need = DENSITY_ROWS_NEEDED[int(p.d)]
    spec["k_max"] = density_k_max(rows)
    return spec, (f"d = {p.d}, no k, {rows} rows >= the {need} a "
                  "density estimate needs in d dimensions (Silverman's Table 4.2): excess "
                  f"of mass in {tree} counts and draws the clusters")


RULE_DENSITY = Rule(
    9, "dense, no k, the rows a density estimate needs in d dimensions (Silverman; so "
    "d <= 7): the density tree of the features counts and draws the clusters",
    lambda p, ctx: _low_dim_tree(p)[1] if density_fits(p) else None,
    lambda p, ctx: _low_dim_tree(p)[0],
    details="Silverman 1986, Table 4.2: 19 rows in 2-d, 223 in 4-d, 10 700 in 7-d; at every n "
            "and on Dask.\nHDBSCAN's excess of mass at min_cluster_size = 1 % of the rows it "
            f"is built on (at least\n{DENSITY_MIN_CLUSTER}), on at most {DENSITY_SAMPLE} rows "
            "drawn by global row index; noise points join their\nneighbours' cluster, every "
            "other row takes its nearest sample row's label; no structure\n(k = 1, with the "
            f"warning) when the selection holds at most {DENSITY_STRUCTURE_RATIO:g} of the "
            "root's stability; on one column the core distance is over\n"
            "ceil(rows^(4/5) / 2) rows (on a line every dip of the density splits it).\nIn a few dimensions the stable clusters of a density tree "
            "count chained shapes the\ngraph spectrum has no gap for.")
