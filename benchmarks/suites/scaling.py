"""Scaling: the anchor presets on MNIST-extend (70k → 630k) and synthetic blobs
(250k → 2M), one fresh process per cell; a method's larger sizes are skipped after a
failure. Memory goals at 630 000 points and the log-log slope of fit time against n."""

from benchmarks.suite import Suite, limit, peer, preset, slope

_EXTEND = tuple(f"mnist-extend@{n}" for n in (70_000, 140_000, 280_000, 630_000))
_SYNTH = tuple(f"synthetic@{n}" for n in (250_000, 500_000, 1_000_000, 2_000_000))
_630K = "mnist-extend@630000"

SUITE = Suite(
    title="Scaling: MNIST-extend and synthetic sets",
    datasets=_EXTEND + _SYNTH,
    seeds=1,
    time_cap=2700.0,
    isolate="job",
    scaling=True,
    methods=(
        preset("ulge"), preset("oulge"), preset("bkhk-dcd"), preset("ongr-r", prep="minmax-pca"),
        preset("anchor-spectral"), preset("ncer-anchor"), preset("dlc", prep="normalize"),
        peer("sk-minibatch"),
    ),
    targets=(
        slope("ulge time vs n, MNIST-extend 70k–630k (linear)", "ulge", "mnist-extend", 1.1),
        limit("ongr-r, MB beyond the input at 630 000 points (< 1.5 GB)", "ongr-r", _630K,
              "fit_extra_mb", 1536.0),
        limit("bkhk-dcd, MB beyond the input at 630 000 points (< 2 GB)", "bkhk-dcd", _630K,
              "fit_extra_mb", 2048.0),
        limit("dlc, peak MB at 630 000 points (< 8 GB)", "dlc", _630K, "peak_rss_mb", 8192.0),
    ),
)
