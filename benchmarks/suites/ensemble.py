"""Ensembles: U-SENC (Huang, Wang, Wu, Lai, Kwoh, TKDE 2020) against the paper's MNIST-70k
row and one k-means run in the same run, and a cross-bundle ensemble (one member from
each of four bundles, transfer-cut consensus) against its members.

Every ensemble cell records its own members' scores (``members`` in the result file:
the very labels the consensus combined, each member with the seed the ensemble gave
it), and the report prints them beside the consensus under each data-set table. The
"≥ median member" targets compare the consensus with the median of *those* members,
per seed, then averaged over seeds. The member presets run alone (rows
``anchor-spectral`` ... ``uspec``, the run's seed itself) stay in the tables as a
reference and are the fallback of the target for result files without members.
The ``-k1`` rows are the same ensembles with the consensus keeping one eigenvector beyond
``k`` (``extra_components = 1``; a variant, not the presets' default): the member seeds
derive from the run's seed, so they combine the very same memberships."""

import graphclust

from benchmarks.suite import Suite, median_of, peer, preset, ratio, score, spec

#: The members of the cross-bundle ensemble, one preset per bundle.
MEMBERS = ("anchor-spectral", "bkhk-dcd", "ongr-k", "uspec")
_CROSS_SETS = ("usps", "pendigits", "mnist_test", "letter")
_CROSS = {"ensemble": {"members": [{"preset": name, "metrics": []} for name in MEMBERS],
                       "consensus": {"name": "tcut"}}}


def _extra_component(spec_: dict) -> dict:
    """``spec_`` (an ensemble spec) with one more consensus eigenvector than ``k``."""
    ensemble = spec_["ensemble"]
    return {"ensemble": {**ensemble, "consensus": {**ensemble["consensus"], "extra_components": 1}}}


SUITE = Suite(
    title="Ensembles — U-SENC and a cross-bundle consensus",
    datasets=_CROSS_SETS,
    seeds=1,
    time_cap=1800.0,
    methods=(
        preset("usenc", datasets=("mnist",), seeds=3),
        peer("sk-kmeans-1", datasets=("mnist",), seeds=3),
        spec("usenc-k1", _extra_component(graphclust.get_registry().presets.get("usenc")),
             datasets=("mnist",), seeds=3),
        spec("cross-ensemble", _CROSS),
        spec("cross-ensemble-k1", _extra_component(_CROSS)),
        *(preset(name) for name in MEMBERS),
    ),
    targets=(
        score("MNIST-70k, usenc (paper's U-SENC 80.58 / 75.02)", "usenc", "mnist",
              acc=80.58, nmi=75.02),
        ratio("MNIST-70k fit time: KMeans(10, n_init=1) / usenc ≥ 1/15", "usenc", "mnist",
              versus="sk-kmeans-1", goal=1 / 15),
        *(median_of(f"{ds}: cross-ensemble ACC ≥ median member ACC", "cross-ensemble", ds,
                    versus=MEMBERS) for ds in _CROSS_SETS),
    ),
)
