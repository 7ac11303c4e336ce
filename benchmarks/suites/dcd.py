"""DCD (Yang, Oja), the purity claim on raw features (the paper used scattering ones).

``dcd`` and ``ncut-binary`` (``ncut`` on the same binary symmetric 10-NN graph) side by
side: DCD purity > Ncut purity. ``bkhk-dcd`` (anchor-level DCD) against ``dcd`` on
MNIST-70k: ≥ 10× faster. Memory at 630 000 points: the ``scaling`` suite.
"""

from benchmarks.suite import Suite, peer, preset, ratio

SUITE = Suite(
    title="DCD — Yang, Corander, Oja, purity on one graph",
    datasets=("usps", "pendigits", "mnist"),
    seeds=1,
    methods=(
        preset("dcd"), preset("ncut", label="ncut-binary", params={"graph__weight": "binary"}),
        preset("bkhk-dcd", datasets=("mnist",)), peer("sk-kmeans"),
    ),
    targets=tuple(
        ratio(f"purity, same binary 10-NN graph, {ds}: DCD ≥ Ncut", "ncut-binary", ds,
              versus="dcd", goal=1.0, stat="purity") for ds in ("usps", "pendigits", "mnist")
    ) + (ratio("bkhk-dcd vs dcd, MNIST", "bkhk-dcd", "mnist", versus="dcd", goal=10.0),),
)
