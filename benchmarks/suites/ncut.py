"""Common bundle: ``ncut`` (and ``anchor-spectral``, LSC) against scikit-learn's
``SpectralClustering(affinity="nearest_neighbors", n_neighbors=10)``: at least its ACC
without being slower (issue 2), same run."""

from benchmarks.suite import Suite, peer, preset, ratio, score

SUITE = Suite(
    title="Common: ncut and anchor-spectral against SpectralClustering",
    datasets=("usps", "pendigits", "mnist", "coil20"),
    seeds=3,
    methods=(
        preset("ncut", datasets=("usps", "pendigits", "mnist")), preset("anchor-spectral"),
        peer("sk-spectral", datasets=("usps", "pendigits"), cap=600.0),
    ),
    targets=(
        ratio("ncut ACC vs SpectralClustering, USPS", "sk-spectral", "usps", versus="ncut",
              goal=1.0, stat="acc"),
        ratio("ncut speed vs SpectralClustering, USPS", "ncut", "usps", versus="sk-spectral",
              goal=1.0),
        *(score(f"anchor-spectral (LSC-K) {label}", "anchor-spectral", ds, acc=acc, nmi=nmi)
          for label, ds, acc, nmi in (("USPS, ONGR Table 4", "usps", 77.00, 80.64),
                                      ("PenDigits", "pendigits", 79.97, 81.85),
                                      ("MNIST-70k", "mnist", 76.21, 77.33),
                                      ("COIL20", "coil20", 72.89, 90.90))),
    ),
)
