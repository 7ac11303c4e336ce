"""Common bundle: ``ncut`` (and ``anchor-spectral``, LSC) against scikit-learn's
``SpectralClustering(affinity="nearest_neighbors", n_neighbors=10)``: at least its ACC
without being slower (issue 2), same run."""

from benchmarks.suite import Suite, peer, preset, ratio, score

SUITE = Suite(
    name="ncut",
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
        score("anchor-spectral (LSC-K) USPS, ONGR Table 4", "anchor-spectral", "usps",
              acc=77.00, nmi=80.64),
        score("anchor-spectral (LSC-K) PenDigits", "anchor-spectral", "pendigits",
              acc=79.97, nmi=81.85),
        score("anchor-spectral (LSC-K) MNIST-70k", "anchor-spectral", "mnist",
              acc=76.21, nmi=77.33),
        score("anchor-spectral (LSC-K) COIL20", "anchor-spectral", "coil20",
              acc=72.89, nmi=90.90),
    ),
)
