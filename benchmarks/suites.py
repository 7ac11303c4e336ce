"""What the benchmark suites run: data sets, each paper's preprocessing, the papers' numbers.

Everything here is declarative data plus small builders; :mod:`benchmarks.runner` turns
it into jobs. Data-set names:

``usps``, ``mnist``, ...
    A file of the data folder (``graphclust.data.load_dataset``) or a scikit-learn
    bundled set (``digits``, ``iris``).
``NAME@N``
    A deterministic random subset of ``N`` rows of ``NAME`` (seeded, independent of the
    run's seeds), e.g. ``usps@600``.
``mnist_test456``
    The MNIST test images of the digits 4, 5 and 6 (2832 images; NCER paper, Table 2).
``usps_smooth``
    USPS with every 16×16 image smoothed by a Gaussian of 0.75 pixel
    (:func:`benchmarks.ncer_paper.smooth_usps`): an emulation of the NCER paper's USPS
    file, whose numbers are those of smoother images than ``usps.npz`` (see
    ``docs/bundles/ncer.rst``). Not a data set of its own; ``usps`` stays the honest row.
``mnist-extend@N``
    The first ``N`` rows of MNIST-extend (ONGR paper, Section 4.1), built from
    ``mnist.npz`` by :func:`graphclust.data.mnist_extend` (see :mod:`benchmarks.scaling`).
``synthetic@N``
    ``N`` points of 10 Gaussian blobs in 16 dimensions, generated deterministically in
    chunks (:func:`benchmarks.scaling.synthetic_blobs`).
``blobs@N``
    A tiny, easy 4-blob set for the harness's own tests.

Preprocessing follows each paper and is a scikit-learn ``Pipeline`` whose last step is
the clusterer (:func:`make_pipeline_for`):

=============================  ==================================================
presets                        preprocessing (paper, section)
=============================  ==================================================
``ongr-k``, ``ongr-r``         MinMaxScaler to [0, 1], PCA keeping 95 % of the
                               variance (90 % on MNIST-extend) on the image sets
                               (USPS, COIL, MNIST); others as they are (Sec. 4.1)
``slc``, ``dlc``               Normalizer: unit-length samples (DLC, Sec. 4.1)
``ncer``, ``ncer-anchor``,     raw values (pixels 0-255); USPS, stored in [0, 1] =
                               (x+1)/2, multiplied by 2 to the paper's [0, 2]
``ncer-raw``                   (NCER, Sec. 7.1); the ``ncer`` preset scales the
                               points to unit length inside its graph builder
                               (what reproduces Tables 2-5; ``ncer-raw`` does not)
``ulge``, ``oulge``, ``dcd``,  raw features (ULGE Sec. 5; DCD used scattering
``bkhk-dcd``, others, peers    features we do not have, so raw pixels here)
=============================  ==================================================
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "PAPER", "PAPER_DATASETS", "PEER_DATASETS", "QUICK_DATASETS", "SCALING_SIZES",
    "PAPER_GRIDS", "PEERS", "paper_grid", "preprocess_recipe", "make_preprocessing", "make_pipeline_for",
    "load", "paper_number",
]

#: Peers run next to the presets: scikit-learn estimators a user would otherwise pick.
PEERS = ("sk-kmeans", "sk-minibatch", "sk-spectral")

#: Data sets per preset for the paper suite (those of the paper that the data folder has).
PAPER_DATASETS: dict[str, list[str]] = {
    "ongr-k": ["usps", "pendigits", "mnist", "coil20", "connect4"],
    "ongr-r": ["usps", "pendigits", "mnist", "coil20", "connect4"],
    "ulge": ["usps", "mnist", "connect4"],
    "oulge": ["usps", "mnist", "connect4"],
    "oulge-mean": ["usps", "mnist", "connect4"],
    "ncer": ["usps", "usps_smooth", "mnist_test", "coil20", "jaffe", "orl", "mnist_test456"],
    "ncer-anchor": ["usps", "pendigits", "mnist"],
    "ncer-raw": ["usps", "mnist_test"],
    "dcd": ["iris", "orl", "coil20", "mfeat", "usps", "pendigits", "mnist"],
    "bkhk-dcd": ["usps", "pendigits", "mnist"],
    "ncut": ["iris", "orl", "coil20", "mfeat", "usps", "pendigits", "mnist"],
    "anchor-spectral": ["usps", "pendigits", "mnist", "coil20"],
    "slc": ["pendigits", "letter", "mnist", "coil20", "yaleb"],
    "dlc": ["pendigits", "letter", "mnist", "coil20", "yaleb"],
}
#: Run order with ``--isolate method`` (peers first, then the papers' presets, then the
#: baselines), so that a run stopped early has the peers and the main presets.
PRIORITY = ["sk-kmeans", "sk-minibatch", "sk-spectral", "ongr-k", "ongr-r", "ulge", "oulge",
            "oulge-mean", "ncer", "ncer-raw", "dcd", "slc", "dlc", "bkhk-dcd", "ncer-anchor", "ncut", "anchor-spectral"]


def priority(method: str) -> int:
    return PRIORITY.index(method) if method in PRIORITY else len(PRIORITY)


#: Data sets for presets without an entry above (e.g. third-party presets).
DEFAULT_DATASETS = ["usps", "pendigits"]
#: Data sets of the peers suite: every anchor preset and the peers, side by side.
PEER_DATASETS = ["usps", "pendigits", "mnist"]
#: The quick (CI) suite: tiny subsets.
QUICK_DATASETS = ["usps@600", "pendigits@600", "digits@600"]
#: Anchor count of the anchor presets in the quick suite.
QUICK_ANCHORS = 64
#: Scaling suite sizes.
SCALING_SIZES = {
    "mnist-extend": [70_000, 140_000, 280_000, 630_000],
    "synthetic": [250_000, 500_000, 1_000_000, 2_000_000],
}

# ---------------------------------------------------------------------------------------
# The papers' reported numbers, as fractions. ``None`` = not reported.
# ---------------------------------------------------------------------------------------
_ONGR = "ONGR Table 4"
_LSC = "ONGR Table 4, LSC-K column"
_ULGE = "ULGE Table 5 (raw features)"
_NCER = "NCER Tables 3-4 (raw pixels, p = 5)"
_DCD = "DCD Table 2 (scattering features; ours: raw)"
_NCUT = "DCD Table 2, NCUT column (scattering features; ours: raw)"
_DLC2 = "DLC Table 2 (unit-length samples)"
_DLC3 = "DLC Table 3 (unit-length samples)"


def _p(source, acc=None, nmi=None, purity=None):
    return {"source": source, "acc": acc, "nmi": nmi, "purity": purity}


PAPER: dict[tuple[str, str], dict] = {
    # ONGR (Han, Xiong, Nie 2017), Table 4, % -> fractions.
    ("ongr-k", "usps"): _p(_ONGR, 0.8059, 0.8276),
    ("ongr-k", "pendigits"): _p(_ONGR, 0.8802, 0.8442),
    ("ongr-k", "mnist"): _p(_ONGR, 0.7859, 0.7950),
    ("ongr-k", "coil20"): _p(_ONGR, 0.8792, 0.9635),
    ("ongr-k", "connect4"): _p(_ONGR, 0.5261, 0.0032),
    ("ongr-r", "usps"): _p(_ONGR, 0.7882, 0.7848),
    ("ongr-r", "pendigits"): _p(_ONGR, 0.8730, 0.8350),
    ("ongr-r", "mnist"): _p(_ONGR, 0.7075, 0.6905),
    ("ongr-r", "coil20"): _p(_ONGR, 0.8708, 0.9518),
    ("ongr-r", "connect4"): _p(_ONGR, 0.5557, 0.0058),
    ("ongr-r", "mnist-extend@630000"): _p(_ONGR + ", PCA 90%", 0.5926, 0.5639),
    ("anchor-spectral", "usps"): _p(_LSC, 0.7700, 0.8064),
    ("anchor-spectral", "pendigits"): _p(_LSC, 0.7997, 0.8185),
    ("anchor-spectral", "mnist"): _p(_LSC, 0.7621, 0.7733),
    ("anchor-spectral", "coil20"): _p(_LSC, 0.7289, 0.9090),
    # ULGE (Nie, Zhu, Li), Table 5: ACC only.
    ("ulge", "usps"): _p(_ULGE, 0.645),
    ("ulge", "mnist"): _p(_ULGE, 0.593),
    ("ulge", "connect4"): _p(_ULGE, 0.458),
    ("oulge", "usps"): _p(_ULGE, 0.674),
    ("oulge", "mnist"): _p(_ULGE, 0.545),
    ("oulge", "connect4"): _p(_ULGE, 0.450),
    ("oulge-mean", "usps"): _p(_ULGE + ", OULGE column", 0.674),
    ("oulge-mean", "mnist"): _p(_ULGE + ", OULGE column", 0.545),
    ("oulge-mean", "connect4"): _p(_ULGE + ", OULGE column", 0.450),
    # NCER (Mizutani), Tables 2-4.
    ("ncer", "usps"): _p(_NCER, 0.802, 0.834),
    ("ncer", "usps_smooth"): _p(_NCER + "; ours: USPS smoothed by 0.75 px", 0.802, 0.834),
    ("ncer", "mnist_test"): _p(_NCER, 0.663, 0.755),
    ("ncer", "coil20"): _p(_NCER + "; paper: 128x128 COIL20, ours 32x32", 0.831, 0.933),
    ("ncer", "jaffe"): _p(_NCER + "; paper: 256x256 JAFFE, ours 26x26", 0.948, 0.938),
    ("ncer", "orl"): _p(_NCER + "; paper: 112x92 ORL, ours 32x32", 0.792, 0.875),
    ("ncer", "mnist_test456"): _p("NCER Table 2 (digits 4, 5, 6; p = 5)", 0.987, 0.934),
    ("ncer-raw", "usps"): _p(_NCER, 0.802, 0.834),
    ("ncer-raw", "mnist_test"): _p(_NCER, 0.663, 0.755),
    # DCD (Yang, Oja), Table 2: purity only.
    ("dcd", "iris"): _p(_DCD, purity=0.97),
    ("dcd", "orl"): _p(_DCD, purity=0.83),
    ("dcd", "yaleb"): _p(_DCD, purity=0.51),
    ("dcd", "coil20"): _p(_DCD, purity=0.81),
    ("dcd", "mfeat"): _p(_DCD, purity=0.78),
    ("dcd", "usps"): _p(_DCD, purity=0.81),
    ("dcd", "pendigits"): _p(_DCD, purity=0.89),
    ("dcd", "letter"): _p(_DCD, purity=0.32),
    ("dcd", "mnist"): _p(_DCD, purity=0.97),
    ("ncut", "iris"): _p(_NCUT, purity=0.90),
    ("ncut", "orl"): _p(_NCUT, purity=0.81),
    ("ncut", "yaleb"): _p(_NCUT, purity=0.45),
    ("ncut", "coil20"): _p(_NCUT, purity=0.81),
    ("ncut", "mfeat"): _p(_NCUT, purity=0.75),
    ("ncut", "usps"): _p(_NCUT, purity=0.74),
    ("ncut", "pendigits"): _p(_NCUT, purity=0.80),
    ("ncut", "letter"): _p(_NCUT, purity=0.24),
    ("ncut", "mnist"): _p(_NCUT, purity=0.77),
    # DLC (Shao, Li, Ding, Fu), Tables 2-3 ("Ours-L1" = slc, "Ours-L2" = dlc).
    ("slc", "pendigits"): _p(_DLC2, 0.7934),
    ("slc", "letter"): _p(_DLC2, 0.3398),
    ("slc", "mnist"): _p(_DLC2, 0.6534),
    ("slc", "coil20"): _p(_DLC3, 0.7104, 0.853),
    ("slc", "yaleb"): _p(_DLC3, 0.9217, 0.924),
    ("dlc", "pendigits"): _p(_DLC2, 0.8018),
    ("dlc", "letter"): _p(_DLC2, 0.3515),
    ("dlc", "mnist"): _p(_DLC2, 0.6648),
    ("dlc", "coil20"): _p(_DLC3, 0.7361, 0.884),
    ("dlc", "yaleb"): _p(_DLC3, 0.9447, 0.941),
    # Peers as reported in the papers (DLC Table 2 "Spectral": Gaussian kNN graph).
    ("sk-spectral", "pendigits"): _p("DLC Table 2, Spectral column", 0.7655),
    ("sk-spectral", "letter"): _p("DLC Table 2, Spectral column", 0.3104),
    ("sk-spectral", "mnist"): _p("DLC Table 2, Spectral column", 0.7246),
}


def paper_number(method: str, dataset: str) -> dict | None:
    """The paper's reported numbers for ``method`` on ``dataset``, or None."""
    return PAPER.get((method, dataset))


#: The papers' parameter grids (coarse versions where the full grid is large), for
#: ``run --suite search`` without ``--grid``.
PAPER_GRIDS: dict[str, dict[str, list]] = {
    # ONGR Sec. 4.2: m in 100..1200, s in 2..8, log10(lambda) in -6..3.
    "ongr-k": {"anchors__n_anchors": [400, 800, 1200], "anchors__max_fraction": [1.0],
               "graph__n_neighbors": [3, 5, 8], "solver__lam": [1e-3, 1.0, 1e3],
               "solver__positive_part": ["max", "abs"]},
    "ongr-r": {"anchors__n_anchors": [400, 800, 1200], "anchors__max_fraction": [1.0],
               "graph__n_neighbors": [3, 5, 8], "solver__lam": [1e-3, 1.0, 1e3],
               "solver__positive_part": ["max", "abs"]},
    # DLC Fig. 1: landmarks 100..1500.
    "slc": {"anchors__n_anchors": [250, 500, 1000, 1500]},
    "dlc": {"anchors__n_anchors": [250, 500, 1000, 1500]},
    # NCER Table 2: the neighbour number p.
    "ncer": {"graph__n_neighbors": [3, 5, 10, 20]},
    # DCD: K of the kNN graph (5 for small sets, 10 for large ones).
    "dcd": {"graph__n_neighbors": [5, 10, 20]},
    # ULGE Fig. 4: number of anchors.
    "ulge": {"anchors__n_anchors": [256, 512, 1024, 2048]},
    "oulge": {"anchors__n_anchors": [256, 512, 1024, 2048]},
}

# ---------------------------------------------------------------------------------------
# Preprocessing
# ---------------------------------------------------------------------------------------
_RECIPES = {
    "ongr-k": "minmax-pca", "ongr-r": "minmax-pca",
    "slc": "normalize", "dlc": "normalize",
    "ncer": "raw-pixels", "ncer-anchor": "raw-pixels", "ncer-raw": "raw-pixels",
}


#: ONGR Sec. 4.1: "For USPS, COIL-20, COIL-100, MINIST and its extended version, we firstly
#: scaled them to [0, 1], then ... PCA with 95% information reserved" (90% for MNIST-extend).
_ONGR_SCALED = {"usps", "coil20", "coil100_subset1000", "mnist", "mnist_test", "mnist-extend"}


def paper_grid(preset: str) -> dict | None:
    """The search grid of ``preset``: the bundle's own grid when its benchmark module has
    one (``benchmarks.ongr_paper.GRID_LARGE``), else :data:`PAPER_GRIDS`."""
    if preset in ("ongr-k", "ongr-r"):
        # Table 4 reports the best setting of the grid on one anchor draw, and only the
        # absolute value for (.)+ (the paper's text) reaches it on USPS/PenDigits.
        try:
            from benchmarks.ongr_paper import GRID_LARGE as g

            return {"anchors__n_anchors": list(g["m"]), "anchors__max_fraction": [1.0],
                    "graph__n_neighbors": list(g["s"]), "solver__lam": list(g["lam"]),
                    "solver__positive_part": ["max", "abs"]}
        except Exception:  # noqa: BLE001 - the bundle's module is optional
            pass
    return PAPER_GRIDS.get(preset)


def preprocess_recipe(method: str) -> str:
    """Name of the preprocessing recipe of ``method`` (``raw`` when the paper used none)."""
    return _RECIPES.get(method, "raw")


def _times_two(X):
    return X * 2


def make_preprocessing(method: str, dataset: str) -> list[tuple[str, object]]:
    """The scikit-learn steps in front of ``method`` on ``dataset`` (see module docs)."""
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, Normalizer

    recipe = preprocess_recipe(method)
    base = dataset.split("@")[0]
    if recipe == "minmax-pca":
        if base not in _ONGR_SCALED:
            return []  # Sec. 4.1 scales/reduces only the image sets; PenDigits etc. as they are
        keep = 0.90 if base == "mnist-extend" else 0.95
        return [("minmax", MinMaxScaler()), ("pca", PCA(n_components=keep, random_state=0))]
    if recipe == "normalize":
        return [("normalize", Normalizer())]
    if recipe == "raw-pixels" and base in ("usps", "usps_smooth"):
        return [("usps_0_2", FunctionTransformer(_times_two))]
    return []


def make_pipeline_for(method: str, dataset: str, estimator):
    """``sklearn.pipeline.Pipeline`` = the paper's preprocessing + ``estimator`` (``cluster``)."""
    from sklearn.pipeline import Pipeline

    return Pipeline([*make_preprocessing(method, dataset), ("cluster", estimator)])


# ---------------------------------------------------------------------------------------
# Data sets
# ---------------------------------------------------------------------------------------
SUBSET_SEED = 20240611


def _subset(X, y, n: int):
    if n >= X.shape[0]:
        return X, y
    rng = np.random.default_rng(SUBSET_SEED)
    idx = np.sort(rng.choice(X.shape[0], size=n, replace=False))
    return X[idx], y[idx]


def _relabel(y):
    _, inv = np.unique(y, return_inverse=True)
    return inv.astype(np.int64)


def load(name: str, data_dir=None):
    """``(X, y)`` of a benchmark data-set name (see the module docstring).

    ``X`` is float32 when the stored values are float32 or integers of at most 16 bits
    (pixels: exact in float32; graphclust computes such input in float32, see
    :func:`graphclust.float_dtype`) and for every set above 200 000 rows
    (memory at scale), float64 otherwise. Presets and peers get the same array.
    """
    from graphclust.data import load_dataset

    from benchmarks import scaling

    base, _, size = name.partition("@")
    n = int(float(size)) if size else None
    if base == "mnist-extend":
        X, y = scaling.mnist_extend_dataset(data_dir, n)
    elif base == "synthetic":
        X, y = scaling.synthetic_blobs(n or 100_000)
    elif base == "blobs":
        from sklearn.datasets import make_blobs

        X, y = make_blobs(n_samples=n or 200, centers=4, n_features=5, cluster_std=0.7,
                          random_state=0)
        n = None
    elif base == "usps_smooth":
        from benchmarks.ncer_paper import smooth_usps

        X, y = load_dataset("usps", data_dir)
        X = smooth_usps(X)
    elif base == "mnist_test456":
        X, y = load_dataset("mnist_test", data_dir)
        keep = np.isin(y, [4, 5, 6])
        X, y = X[keep], y[keep]
    else:
        X, y = load_dataset(base, data_dir)
    if n is not None and base not in ("mnist-extend", "synthetic"):
        X, y = _subset(X, y, n)
    if hasattr(X, "toarray"):
        X = X.toarray()
    from graphclust import float_dtype

    dtype = np.float32 if X.shape[0] > 200_000 else float_dtype(np.asarray(X).dtype)
    return np.asarray(X, dtype=dtype), _relabel(np.asarray(y))


def n_classes(y) -> int:
    return int(len(np.unique(y)))


def fmt_n(n: int) -> str:
    """``630000 -> '630k'``, ``2000000 -> '2M'``."""
    if n >= 1_000_000 and n % 100_000 == 0:
        return f"{n / 1e6:g}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def isfinite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)
