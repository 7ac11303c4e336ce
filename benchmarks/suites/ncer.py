"""NCER (Mizutani), Tables 2–4 with p = 5 on raw pixels (Sec. 7.1; USPS to [0, 2]).

``ncer`` is deterministic: one seed. ``usps_smooth`` emulates the paper's USPS file
(0.75 px smoothing, see docs/bundles/ncer.rst). ``ncer-raw`` and ``ncer-l2nn`` are the
other readings of the graph (raw values; Euclidean neighbours). Speed on MNIST-70k:
MVEE + SPA + NNLS (the ``rounding`` stage) against the eigendecomposition before it (the
``solver`` stage), goal < 0.1 of its time. Table 5 needs no graph: MER (= NCER with p = m,
Corollary 1) and ER with Assumption 4's scaling, on unit-length and on raw values.
``nc`` is the paper's NC peer: one k-means start on the ``ncer`` embedding, ten seeds.
"""

from benchmarks.suite import Suite, preset, ratio, score, spec


def _separable(name: str, prep: str):
    return spec(f"{name} ({'unit' if prep == 'normalize' else 'raw'})",
                {"graph": {"name": "knn", "n_neighbors": 2}, "solver": {"name": name},
                 "rounding": {"name": "ellipsoid", "mvee": "fw", "nnls": "fast"}},
                prep=prep, datasets=("mnist_test", "coil20"))


SUITE = Suite(
    title="NCER — Mizutani, Tables 2–4",
    datasets=("mnist_test456", "mnist_test", "coil20", "usps", "usps_smooth", "jaffe", "orl"),
    seeds=1,
    methods=(
        preset("ncer", prep="raw-pixels",
               datasets=("mnist_test456", "mnist_test", "coil20", "usps", "usps_smooth",
                         "jaffe", "orl", "mnist")),
        preset("ncer-raw", prep="raw-pixels"), preset("ncer-l2nn", prep="raw-pixels"),
        # Table 2: larger p on MNIST 4-6; p = m includes each point itself (Sec. 4.3)
        preset("ncer", label="ncer p", prep="raw-pixels", datasets=("mnist_test456",),
               grid={"graph__n_neighbors": [944, 1888]}),
        preset("ncer", label="ncer p=m", prep="raw-pixels", datasets=("mnist_test456",),
               params={"graph__n_neighbors": 2832, "graph__include_self": True}),
        # NC (Algorithm 1): single-start k-means on the same embedding, ten seeds
        spec("nc", {"graph": {"name": "poly-knn", "n_neighbors": 5, "b": 0.0, "c": 1,
                              "neighbors": "similarity", "include_self": False,
                              "normalize": True},
                    "solver": {"name": "ncer-embedding"},
                    "rounding": {"name": "kmeans", "n_init": 1}},
             prep="raw-pixels", seeds=10, datasets=("mnist_test", "usps", "usps_smooth")),
        *(_separable(name, prep) for name in ("mer", "er") for prep in ("normalize", "raw")),
    ),
    targets=(
        score("MNIST digits 4–6", "ncer", "mnist_test456", acc=98.7, nmi=93.4),
        score("MNIST test set (10 000)", "ncer", "mnist_test", acc=66.3, nmi=75.5),
        score("COIL20 (ours 32×32, paper 128×128)", "ncer", "coil20", acc=83.1, nmi=93.3),
        score("USPS, the data folder's file", "ncer", "usps", acc=80.2, nmi=83.4),
        score("USPS smoothed by 0.75 px", "ncer", "usps_smooth", acc=80.2, nmi=83.4),
        score("Table 5, MER, MNIST test (unit length)", "mer (unit)", "mnist_test",
              acc=36.2, nmi=34.7),
        score("Table 5, ER, MNIST test (unit length)", "er (unit)", "mnist_test",
              acc=37.8, nmi=37.7),
        ratio("eigendecomposition vs MVEE + SPA + NNLS, MNIST-70k", "ncer", "mnist",
              versus="ncer", goal=10.0, stat="time_rounding", versus_stat="time_solver"),
    ),
)
