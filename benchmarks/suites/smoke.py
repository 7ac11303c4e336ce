"""Smoke (CI, ``run --quick``): every registered preset, anchors cut to 64, and the
peers on 600-row subsets. Exits 1 if any cell crashes."""

import graphclust

from benchmarks.suite import Suite, peer, preset

SUITE = Suite(
    name="smoke",
    title="Smoke: every registered preset on tiny subsets",
    datasets=("usps@600", "pendigits@600", "digits@600"),
    seeds=1,
    time_cap=60.0,
    isolate="none",
    methods=tuple(preset(p) for p in graphclust.get_registry().presets.names())
    + (peer("sk-kmeans"), peer("sk-minibatch"), peer("sk-spectral")),
)
