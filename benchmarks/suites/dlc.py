"""DLC (Shao, Li, Ding, Fu, IJCAI 2015), Tables 2–3 on unit-length samples (Sec. 4.1).

``slc`` (one layer, "Ours-L1") and ``dlc`` (two, "Ours-L2"); speed on MNIST-70k against
``SpectralClustering`` in the same run (goal ≥ 5× faster; a peer over its cap gives a
lower bound). Memory at 630 000 points: the ``scaling`` suite.
"""

from benchmarks.suite import Suite, peer, preset, ratio, score

SUITE = Suite(
    title="DLC — Shao, Li, Ding, Fu (IJCAI 2015), Tables 2–3",
    datasets=("pendigits", "letter", "mnist", "coil20", "yaleb"),
    seeds=5,
    methods=(
        preset("slc", prep="normalize"), preset("dlc", prep="normalize"),
        # not the paper's setting: k-means on unit-length rows of the codes
        preset("dlc", label="dlc+rownorm", prep="normalize",
               params={"rounding__normalize_rows": True}),
        peer("sk-spectral", datasets=("mnist",), seeds=1, cap=900.0),
    ),
    targets=(
        score("dlc PenDigits, ACC", "dlc", "pendigits", acc=80.18),
        score("dlc Letter", "dlc", "letter", acc=35.15),
        score("dlc MNIST-70k", "dlc", "mnist", acc=66.48),
        score("dlc COIL20, ACC / NMI", "dlc", "coil20", acc=73.61, nmi=88.4),
        ratio("dlc vs SpectralClustering", "dlc", "mnist", versus="sk-spectral", goal=5.0),
    ),
)
