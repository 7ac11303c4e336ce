"""ONGR (Han, Xiong, Nie, IJCAI 2017), Table 4 under the paper's protocol (Sec. 4.3).

Every setting of the parameter grid runs once on one anchor draw (seed 0) and the best
ACC is reported (``select="best"``). Sec. 4.1 preprocessing: [0, 1] scaling and PCA
keeping 95 % (90 % on MNIST-extend) on the image sets, PenDigits as is. The grids: m
and s of Sec. 4.3 in full, λ thinned to four values (λ barely matters, Fig. 2(c));
sparser covers on MNIST and MNIST-extend. Speed: ``ongr-r`` with its defaults beside
``KMeans(10, n_init=1)`` on the same preprocessed MNIST (goal ≤ 2× its time).

The grids pin ``solver__init = "svd"`` (Algorithm 1's start), so they keep reproducing
Table 4 whatever the presets' default start is. ``ongr-k defaults`` / ``ongr-r defaults``
(the presets as shipped, no search) run beside ``… paper start`` (the same presets with
``init = "svd"``, the defaults before issue 16) on USPS and PenDigits and on held-out
sets, three seeds; targets: within 6 points of Table 4's ACC (issue 16).
"""

from benchmarks.suite import Suite, peer, preset, ratio, score

_FIXED = {"anchors__max_fraction": [1.0], "solver__positive_part": ["max", "abs"],
          "solver__init": ["svd"]}
GRID_PAPER = {"anchors__n_anchors": list(range(100, 1300, 100)),
              "graph__n_neighbors": list(range(2, 9)), "solver__lam": [1e-6, 1e-3, 1.0, 1e3],
              **_FIXED}
GRID_MNIST = {"anchors__n_anchors": [300, 600, 900, 1200], "graph__n_neighbors": [2, 3, 4, 5, 6],
              "solver__lam": [1e-6, 1.0], **_FIXED}
GRID_EXTEND = {"anchors__n_anchors": [300, 600, 900, 1000, 1100, 1200],
               "graph__n_neighbors": [2, 3, 4, 5], "solver__lam": [1.0], **_FIXED}
_SMALL = ("usps", "pendigits", "coil20")
#: Defaults (no search) against the paper's start, same run: the two sets of issue 16 and
#: sets the default rule was not fitted on.
_DEFAULTS = ("usps", "pendigits", "mnist_test", "letter", "coil20", "digits")
_PAPER_START = {"solver__init": "svd"}


#: Table 4's ACC / NMI (%) of the rows reproduced: (label, data set, preset) → numbers.
TABLE4 = {("USPS", "usps", "ongr-k"): (80.59, 82.76), ("USPS", "usps", "ongr-r"): (78.82, 78.48),
          ("PenDigits", "pendigits", "ongr-k"): (88.02, 84.42),
          ("PenDigits", "pendigits", "ongr-r"): (87.30, 83.50),
          ("COIL20", "coil20", "ongr-k"): (87.92, 96.35),
          ("COIL20", "coil20", "ongr-r"): (87.08, 95.18),
          ("MNIST-70k", "mnist", "ongr-k"): (78.59, 79.50),
          ("MNIST-70k", "mnist", "ongr-r"): (70.75, 69.05),
          ("MNIST-extend 630k", "mnist-extend@630000", "ongr-r"): (59.26, 56.39)}


def _grid(name: str, grid: dict, datasets: tuple[str, ...]):
    return preset(name, prep="minmax-pca", grid=grid, select="best", datasets=datasets)


SUITE = Suite(
    title="ONGR — Han, Xiong, Nie (IJCAI 2017), Table 4",
    datasets=("usps", "pendigits", "coil20", "mnist", "mnist-extend@630000"),
    seeds=1,
    time_cap=1800.0,
    methods=(
        _grid("ongr-k", GRID_PAPER, _SMALL), _grid("ongr-r", GRID_PAPER, _SMALL),
        _grid("ongr-k", GRID_MNIST, ("mnist",)), _grid("ongr-r", GRID_MNIST, ("mnist",)),
        _grid("ongr-r", GRID_EXTEND, ("mnist-extend@630000",)),
        preset("ongr-r", label="ongr-r defaults", prep="minmax-pca", datasets=("mnist",), seeds=3),
        *(preset(p, label=f"{p} {what}", params=params, prep="minmax-pca", datasets=_DEFAULTS,
                 seeds=3)
          for what, params in (("defaults", {}), ("paper start", _PAPER_START))
          for p in ("ongr-r", "ongr-k")),
        peer("sk-kmeans-1", prep="minmax-pca", datasets=("mnist",), seeds=3),
    ),
    targets=(
        *(score(f"{label}, {p}", p, ds, acc=acc, nmi=nmi)
          for (label, ds, p), (acc, nmi) in TABLE4.items()),
        # Issue 16: defaults (no search) within 6 points of ACC of the tuned Table 4 rows.
        *(score(f"{label}, {p} defaults (Table 4 − 6)", f"{p} defaults", ds, 6.0,
                acc=TABLE4[label, ds, p][0])
          for label, ds, p in TABLE4 if ds in ("usps", "pendigits")),
        ratio("ongr-r speed vs KMeans(10, n_init=1), MNIST (≤ 2× its time)",
              "ongr-r defaults", "mnist", versus="sk-kmeans-1", goal=0.5),
    ),
)
