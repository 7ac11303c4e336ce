"""U-SPEC (Huang, Wang, Wu, Lai, Kwoh, TKDE 2020): accuracy against the paper's MNIST-70k
row and the authors' USPEC.m run unchanged on the data folder's USPS and PenDigits
files (REFERENCE-FACTS.md), the cost of the approximate K-nearest-representative
search (``uspec-exact``), speed against one k-means run in the same run, and memory
at 630 000 points. U-SENC and consensus over any specs: the ``ensemble`` suite.

Two rounding variants show where the ACC spread comes from (docs/bundles/uspec.rst):
``uspec-kpp`` seeds the k-means rounding by k-means++ as the MATLAB ``kmeans`` of the
authors' USPEC.m does (3 replicates), ``uspec-kpp20`` keeps the lowest-inertia of 20
k-means++ restarts (the rounding's objective, nearly converged)."""

from benchmarks.suite import Suite, limit, peer, preset, ratio, score

_630K = "mnist-extend@630000"

SUITE = Suite(
    title="U-SPEC — Huang et al., ultra-scalable spectral clustering",
    datasets=("usps", "pendigits", "mnist"),
    seeds=3,
    methods=(
        preset("uspec"),
        preset("uspec", label="uspec-exact", params={"graph__search": "exact"}),
        preset("uspec", label="uspec-kpp", params={"rounding__init": "k-means++"}),
        preset("uspec", label="uspec-kpp20", datasets=("mnist",),
               params={"rounding__init": "k-means++", "rounding__n_init": 20}),
        preset("uspec", label="uspec-630k", datasets=(_630K,), seeds=1),
        peer("sk-kmeans-1"),
    ),
    targets=(
        score("MNIST-70k, uspec (paper 74.31 / 67.43)", "uspec", "mnist", acc=74.31, nmi=67.43),
        score("USPS, uspec (authors' USPEC.m .698 / .757)", "uspec", "usps",
              acc=69.8, nmi=75.7),
        score("PenDigits, uspec (authors' USPEC.m .869 / .826)", "uspec", "pendigits",
              acc=86.9, nmi=82.6),
        ratio("MNIST-70k fit time: KMeans(10, n_init=1) / uspec ≥ 1/1.5", "uspec", "mnist",
              versus="sk-kmeans-1", goal=1 / 1.5),
        limit("uspec, MB beyond the input at 630 000 points (≤ 1.5 GB)", "uspec-630k", _630K,
              "fit_extra_mb", 1536.0),
    ),
)
