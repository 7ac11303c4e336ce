"""NCER (Mizutani), Tables 2–4 with p = 5 on raw pixels (Sec. 7.1; USPS to [0, 2]).

``ncer`` is deterministic: one seed. ``usps_smooth`` emulates the paper's USPS file
(0.75 px smoothing, see docs/bundles/ncer.rst). Speed on MNIST-70k: MVEE + SPA + NNLS
(the ``rounding`` stage) against the eigendecomposition before it (the ``solver``
stage), goal < 0.1 of its time.
"""

from benchmarks.suite import Suite, preset, ratio, score

SUITE = Suite(
    name="ncer",
    title="NCER — Mizutani, Tables 2–4",
    doc="docs/bundles/ncer.rst",
    datasets=("mnist_test456", "mnist_test", "coil20", "usps", "usps_smooth", "jaffe", "orl"),
    seeds=1,
    methods=(
        preset("ncer", prep="raw-pixels",
               datasets=("mnist_test456", "mnist_test", "coil20", "usps", "usps_smooth",
                         "jaffe", "orl", "mnist")),
        preset("ncer-raw", prep="raw-pixels", datasets=("usps", "mnist_test")),
    ),
    targets=(
        score("MNIST digits 4–6", "ncer", "mnist_test456", acc=98.7, nmi=93.4),
        score("MNIST test set (10 000)", "ncer", "mnist_test", acc=66.3, nmi=75.5),
        score("COIL20 (ours 32×32, paper 128×128)", "ncer", "coil20", acc=83.1, nmi=93.3),
        score("USPS, the data folder's file", "ncer", "usps", acc=80.2, nmi=83.4),
        score("USPS smoothed by 0.75 px", "ncer", "usps_smooth", acc=80.2, nmi=83.4),
        ratio("eigendecomposition vs MVEE + SPA + NNLS, MNIST-70k", "ncer", "mnist",
              versus="ncer", goal=10.0, stat="time_rounding", versus_stat="time_solver"),
    ),
)
