"""The ``general`` battery (issue 16): every registered preset beside common peers on
real, scikit-learn and generated data sets, scored by ARI, AMI and ACC.

Data: USPS, PenDigits, MNIST-test, MNIST-70k, Letter, Connect-4, COIL20 (data folder);
scikit-learn's digits, iris, wine, breast-cancer; the generated 2-d families of
:data:`benchmarks.datasets.GENERATED` and :data:`benchmarks.datasets.SHAPES` at n = 1 000
and 20 000. One seed per data set,
three on the image sets (USPS, MNIST-test, MNIST-70k, COIL20, digits). Raw features,
no preprocessing: the battery judges what a user gets without tuning.

Every preset includes the rule presets (``auto``, the default of ``GraphClustering``),
which decide their pipeline from each data set's profile.

Which methods run where: every preset and peer is scheduled on every data set; one
that cannot run at a size is stopped by the cell caps (``time_cap`` per fit,
``mem_cap_mb`` on the worker) and reported ``over cap``, which the battery ranks last on
that data set. Peers: ``KMeans(n_init=10)``, ``GaussianMixture`` (full covariances),
``SpectralClustering`` (10-NN affinity), HDBSCAN (``k`` through a ``min_cluster_size``
search, :class:`benchmarks.peers.HdbscanK`), Genie (G = 0.3), UMAP (10 components) +
KMeans, UMAP (2 components) + HDBSCAN and EVoC (issue 25). The shapes of
:data:`benchmarks.datasets.SHAPES` (issue 25) join the generated families.
"""

import graphclust

from benchmarks.datasets import GENERATED, SHAPES
from benchmarks.suite import Suite, peer, preset

#: Data sets with three seeds (images); every other data set has one.
IMAGE_SETS = ("usps", "mnist_test", "mnist", "coil20", "digits")
OTHER_SETS = ("pendigits", "letter", "connect4", "iris", "wine", "breast_cancer",
              *(f"{g}@{n}" for n in (1000, 20000) for g in GENERATED + SHAPES))
PEER_NAMES = ("sk-kmeans", "sk-gmm", "sk-spectral", "sk-hdbscan", "genie", "umap-kmeans",
              "umap-hdbscan", "evoc")

SUITE = Suite(
    title="General battery — every preset against common peers (issue 16)",
    datasets=IMAGE_SETS + OTHER_SETS,
    seeds=1,
    time_cap=900.0,
    mem_cap_mb=8000.0,
    battery=True,
    # every method as two rows of one label: three seeds on the image sets, one on the others;
    # a preset named as a peer (the genie bundle's `genie`) is labelled `<name>-preset`, so
    # that `--methods genie` and the records' (method, data set, seed) keep meaning the peer
    methods=tuple(make(name, label=f"{name}-preset" if make is preset and name in PEER_NAMES
                       else None, datasets=sets, seeds=seeds)
                  for make, names in ((preset, graphclust.get_registry().preset_names()),
                                      (peer, PEER_NAMES))
                  for name in names for sets, seeds in ((IMAGE_SETS, 3), (OTHER_SETS, 1))),
)
