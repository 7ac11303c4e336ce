"""Smoke (CI, ``run --quick``): every registered preset, anchors cut to 64, and the
peers on 600-row subsets. Exits 1 if any cell crashes. Without a data folder
(``--data-dir`` / ``GRAPHCLUST_DATA``) it runs on scikit-learn's digits and blobs only."""

import graphclust
from graphclust.data import find_data_dir

from benchmarks.suite import Suite, peer, preset


def _has_data() -> bool:
    try:
        return find_data_dir() is not None
    except graphclust.InputError:  # GRAPHCLUST_DATA names no folder
        return False

SUITE = Suite(
    title="Smoke: every registered preset on tiny subsets",
    datasets=("usps@600", "pendigits@600", "digits@600") if _has_data()
    else ("digits@600", "blobs@600"),
    seeds=1,
    time_cap=60.0,
    isolate="none",
    methods=tuple(preset(p) for p in graphclust.get_registry().presets.names())
    + (peer("sk-kmeans"), peer("sk-minibatch"), peer("sk-spectral")),
)
