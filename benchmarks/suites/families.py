"""Issue 25: ``auto`` v2 choosing among families — MNIST-70k against EVoC and one
k-means run, and the low-dimensional shapes against Genie and a Gaussian mixture.

MNIST-70k (pixels/255 as stored, k = 10, 3 seeds): ``auto`` (its manifold family) beside
EVoC (defaults, ``approx_n_clusters = 10``), UMAP+HDBSCAN and ``KMeans(10, n_init=1)``,
each cell in its own process. The shapes of :data:`benchmarks.datasets.SHAPES` and the
older generated families at n = 1 000 and 20 000 (1 seed): ``auto`` beside Genie
(G = 0.3) and ``GaussianMixture`` (full covariances); the target is ``auto`` within
.05 ARI on average of the better of the two on each set (read off the battery table).
"""

from benchmarks.datasets import GENERATED, SHAPES
from benchmarks.suite import Suite, peer, preset, ratio, score

SHAPE_SETS = tuple(f"{g}@{n}" for n in (1000, 20000) for g in SHAPES + GENERATED)

SUITE = Suite(
    title="Families — auto v2 against EVoC, Genie and a Gaussian mixture (issue 25)",
    datasets=("mnist", *SHAPE_SETS),
    seeds=1,
    time_cap=900.0,
    mem_cap_mb=8000.0,
    battery=True,
    methods=(
        preset("auto", datasets=("mnist",), seeds=3),
        peer("evoc", datasets=("mnist",), seeds=3),
        peer("sk-kmeans-1", datasets=("mnist",), seeds=3),
        peer("umap-hdbscan", datasets=("mnist",), seeds=1),
        preset("auto", datasets=SHAPE_SETS),
        peer("genie", datasets=SHAPE_SETS),
        peer("sk-gmm", datasets=SHAPE_SETS),
        peer("evoc", datasets=SHAPE_SETS),
    ),
    targets=(
        score("MNIST-70k, auto: ACC ≥ 95, NMI ≥ 90", "auto", "mnist", tolerance=0.0,
              acc=95.0, nmi=90.0),
        ratio("MNIST-70k fit time: EVoC / auto ≥ 1", "auto", "mnist", versus="evoc", goal=1.0),
        ratio("MNIST-70k fit time: KMeans(10, n_init=1) / auto ≥ 1/3", "auto", "mnist",
              versus="sk-kmeans-1", goal=1 / 3),
    ),
)
