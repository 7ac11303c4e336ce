"""Benchmark data sets and the papers' preprocessing.

A data-set name is one of

- a name of the data folder (``usps``, ``mnist``, ``coil20``, ...) or scikit-learn's
  bundled ``digits`` / ``iris``, read by :func:`graphclust.data.load_dataset`;
- ``NAME@N``: a fixed random subset of ``N`` rows of ``NAME`` (``--quick`` uses these);
- ``mnist-extend@N``: the first ``N`` of the 630 000 MNIST-extend images (MNIST and its
  one-pixel shifts, :func:`graphclust.data.mnist_extend`), built in memory;
- ``synthetic@N``: ten Gaussian blobs in 16-d, generated in 100 000-row chunks with fixed
  seeds, so that a smaller set is a prefix of a larger one;
- ``blobs@N``: four small blobs (tests);
- the generated shapes of the ``general`` battery, 2-d, drawn from a fixed seed
  (:data:`GENERATED`, :func:`generated`): ``blobs-unequal@N`` (five blobs of unequal size
  and spread), ``aniso@N`` (three sheared blobs), ``moons@N``, ``circles@N`` and
  ``nested@N`` (a blob in a ring beside a second ring holding a blob, jittered);
- the shapes where spectral recipes fail (issue 25, :data:`SHAPES`, 2-d, seeded):
  ``spirals@N``, ``ring-blob@N``, ``moons-unequal@N``, ``bridge@N``,
  ``nested-noise@N`` and ``aniso-overlap@N`` (see :func:`generated`);
- scikit-learn's ``digits``, ``iris``, ``wine`` and ``breast_cancer``;
- ``usps_smooth``: USPS smoothed by 0.75 px (emulates the USPS file of the NCER paper);
- ``mnist_test456``: the MNIST test digits 4, 5, 6 (NCER Table 2);
- ``gen-<family>-<i>``: a set of the generated battery of issue 44
  (:mod:`benchmarks.generated_sets`, split into a tuning and a check half);
- ``tfidf@N``: a generated tf-idf corpus of ``N`` documents with known topics, sparse
  (:func:`tfidf_topics`; ``tfidf`` alone is the issue-29 case, 5 000 documents × 50 000
  terms, about 250 000 nonzeros, 10 topics).

Preprocessing recipes (scikit-learn steps in front of the clusterer, :data:`RECIPES`):
``raw`` (none), ``minmax-pca`` (ONGR Sec. 4.1: [0, 1] scaling and PCA keeping 95 % of the
variance, 90 % on MNIST-extend, on the image sets only), ``normalize`` (DLC Sec. 4.1:
unit-length samples), ``raw-pixels`` (NCER Sec. 7.1: USPS stored in [0, 1] doubled to
the paper's [0, 2]).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks import generated_sets

__all__ = ["GENERATED", "RECIPES", "SHAPES", "TFIDF_SEED", "family", "tfidf_topics", "generated", "load",
           "preprocessing", "quick_name",
           "size_of"]

SUBSET_SEED = 20240611
USPS_SMOOTH_SIGMA = 0.75
QUICK_ROWS = 600
_SYNTH_CHUNK = 100_000
#: ONGR Sec. 4.1 scales and reduces only these image sets.
_ONGR_SCALED = {"usps", "coil20", "mnist", "mnist_test", "mnist-extend"}
RECIPES = ("raw", "minmax-pca", "normalize", "raw-pixels")
#: The generated families of the ``general`` battery (``NAME@N``, default N = 1 000).
GENERATED = ("blobs-unequal", "aniso", "moons", "circles", "nested")
GENERATED_SEED = 16
#: Low-dimensional shapes where spectral recipes fail and Genie or a Gaussian mixture
#: wins (issue 25); generated like :data:`GENERATED` (``NAME@N``).
SHAPES = ("spirals", "ring-blob", "moons-unequal", "bridge", "nested-noise", "aniso-overlap")


def family(name: str) -> str:
    """``'mnist-extend@70000' -> 'mnist-extend'``."""
    return name.partition("@")[0]


def size_of(name: str) -> int | None:
    """The ``@N`` part of a name, or None."""
    size = name.partition("@")[2]
    return int(float(size)) if size else None


def quick_name(name: str) -> str:
    """The ``--quick`` stand-in of a data set: :data:`QUICK_ROWS` rows of it (MNIST-extend
    and the synthetic sets: their first ``10 * QUICK_ROWS`` rows)."""
    base = family(name)
    if generated_sets.is_generated(base):  # a subset would change the problem (k, sizes)
        return base
    return f"{base}@{QUICK_ROWS * (10 if base in ('mnist-extend', 'synthetic') else 1)}"


def synthetic_blobs(n: int, n_clusters: int = 10, dim: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points of ``n_clusters`` Gaussian blobs; chunk ``i`` drawn from seed ``1 + i``."""
    centres = np.random.default_rng(0).uniform(-10.0, 10.0, size=(n_clusters, dim))
    X = np.empty((n, dim), dtype=np.float32)
    y = np.empty(n, dtype=np.int64)
    for i, start in enumerate(range(0, n, _SYNTH_CHUNK)):
        stop = min(n, start + _SYNTH_CHUNK)
        rng = np.random.default_rng(1 + i)
        lab = rng.integers(0, n_clusters, size=_SYNTH_CHUNK)[: stop - start]
        noise = rng.normal(scale=2.5, size=(_SYNTH_CHUNK, dim))[: stop - start]
        X[start:stop] = centres[lab] + noise
        y[start:stop] = lab
    return X, y


def _ring(rng: np.random.Generator, n: int, centre: tuple[float, float], radius: float,
          jitter: float) -> np.ndarray:
    angle = rng.uniform(0.0, 2 * np.pi, n)
    r = radius + rng.normal(scale=jitter, size=n)
    return np.c_[centre[0] + r * np.cos(angle), centre[1] + r * np.sin(angle)]


def generated(family_: str, n: int = 1000, seed: int = GENERATED_SEED
              ) -> tuple[np.ndarray, np.ndarray]:
    """``n`` 2-d points of a generated family of :data:`GENERATED`, the same for the same
    ``(family_, n, seed)``; labels ``0..k-1``.

    ``blobs-unequal``: five Gaussian blobs holding 1/31 … 16/31 of the points with standard
    deviations 0.3 … 1.5; ``aniso``: three blobs sheared by one linear map; ``moons`` (noise
    0.08) and ``circles`` (factor 0.5, noise 0.05) from scikit-learn; ``nested``: a blob in
    a ring beside a smaller ring holding a smaller blob (k = 4), radial jitter 0.15.

    The shapes of :data:`SHAPES` (issue 25):

    ``spirals``: two interleaved Archimedean spirals ``r = t`` from half a turn to two
    turns, arms ``π`` apart, uniform in arc length, Gaussian noise 0.15 (k = 2);
    ``ring-blob``: a blob (std 0.7, a third of the points) inside a ring of radius 5 and
    radial std 0.25 (k = 2); ``moons-unequal``: two moons, the first holding 7/8 of the
    points with noise 0.05, the second 1/8 with noise 0.1 (density ratio about 30, k = 2);
    ``bridge``: two round blobs (std 1, centres 8 apart) joined by a straight bridge of
    4 % of the points with a 0.1 jitter, each bridge point labelled by the blob on its side
    (k = 2); ``nested-noise``: a ``C``-shaped arc (radius 4, 300°) around a blob, beside a
    smaller arc around a second blob, plus 5 % uniform noise points over the bounding box,
    each labelled by the nearest shape point (k = 4); ``aniso-overlap``: three overlapping
    Gaussians with different elongated covariances (axis ratios 1:5, 1:3 and 1:1, rotated;
    k = 3), where a Gaussian mixture is the model.
    """
    from sklearn.datasets import make_blobs, make_circles, make_moons

    rng = np.random.default_rng(seed)
    if family_ == "blobs-unequal":
        sizes = np.floor(n * np.array([1, 2, 4, 8, 16]) / 31).astype(int)
        sizes[-1] += n - sizes.sum()
        centres = np.array([[-6.0, 6.0], [6.0, 6.0], [0.0, 0.0], [-6.0, -6.0], [6.0, -6.0]])
        return make_blobs(n_samples=sizes, centers=centres, random_state=seed,
                          cluster_std=[0.3, 0.6, 0.9, 1.2, 1.5])
    if family_ == "aniso":
        X, y = make_blobs(n_samples=n, centers=3, random_state=seed, cluster_std=1.0)
        return X @ np.array([[0.6, -0.64], [-0.41, 0.85]]), y
    if family_ == "moons":
        return make_moons(n_samples=n, noise=0.08, random_state=seed)
    if family_ == "circles":
        return make_circles(n_samples=n, factor=0.5, noise=0.05, random_state=seed)
    if family_ == "nested":
        sizes = [n // 4] * 3 + [n - 3 * (n // 4)]
        parts = [rng.normal(scale=0.4, size=(sizes[0], 2)),
                 _ring(rng, sizes[1], (0.0, 0.0), 3.0, 0.15),
                 rng.normal(scale=0.25, size=(sizes[2], 2)) + (7.5, 0.0),
                 _ring(rng, sizes[3], (7.5, 0.0), 1.6, 0.15)]
        return np.vstack(parts), np.repeat(np.arange(4), sizes)
    if family_ in SHAPES:
        return _shape(family_, n, rng)
    raise ValueError(f"unknown generated family {family_!r}; known: "
                     f"{', '.join(GENERATED + SHAPES)}")


def _split(n: int, fractions: tuple[float, ...]) -> list[int]:
    sizes = [int(n * f) for f in fractions[:-1]]
    return [*sizes, n - sum(sizes)]


def _shape(family_: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The generators of :data:`SHAPES` (documented in :func:`generated`)."""
    if family_ == "spirals":
        y = (np.arange(n) >= n // 2).astype(np.int64)
        lo, hi = np.pi, 4.0 * np.pi
        t = np.sqrt(lo * lo + rng.random(n) * (hi * hi - lo * lo))
        X = np.c_[t * np.cos(t + np.pi * y), t * np.sin(t + np.pi * y)]
        return X + 0.15 * rng.standard_normal((n, 2)), y
    if family_ == "ring-blob":
        nb, nr = _split(n, (1 / 3, 2 / 3))
        return (np.r_[0.7 * rng.standard_normal((nb, 2)), _ring(rng, nr, (0.0, 0.0), 5.0, 0.25)],
                np.repeat([0, 1], [nb, nr]))
    if family_ == "moons-unequal":
        na, nb = _split(n, (7 / 8, 1 / 8))
        ta, tb = rng.random(na) * np.pi, rng.random(nb) * np.pi
        A = np.c_[np.cos(ta), np.sin(ta)] + 0.05 * rng.standard_normal((na, 2))
        B = np.c_[1.0 - np.cos(tb), 0.5 - np.sin(tb)] + 0.1 * rng.standard_normal((nb, 2))
        return np.r_[A, B], np.repeat([0, 1], [na, nb])
    if family_ == "bridge":
        na, nb, nc = _split(n, (0.48, 0.48, 0.04))
        t = rng.random(nc)
        bridge = np.c_[-4.0 + 8.0 * t, 0.1 * rng.standard_normal(nc)]
        X = np.r_[rng.standard_normal((na, 2)) + (-4.0, 0.0),
                  rng.standard_normal((nb, 2)) + (4.0, 0.0), bridge]
        return X, np.r_[np.zeros(na, np.int64), np.ones(nb, np.int64), (t >= 0.5).astype(np.int64)]
    if family_ == "nested-noise":
        sizes = _split(n, (0.35, 0.2, 0.2, 0.2, 0.05))
        def arc(m, centre, radius):
            a = np.deg2rad(30.0 + 300.0 * rng.random(m))
            r = radius + 0.2 * rng.standard_normal(m)
            return np.c_[centre[0] + r * np.cos(a), centre[1] + r * np.sin(a)]
        shapes = [arc(sizes[0], (0.0, 0.0), 4.0), 0.5 * rng.standard_normal((sizes[1], 2)),
                  arc(sizes[2], (11.0, 0.0), 2.5), 0.35 * rng.standard_normal((sizes[3], 2))
                  + (11.0, 0.0)]
        P, lab = np.vstack(shapes), np.repeat(np.arange(4), sizes[:4])
        lo, hi = P.min(axis=0) - 1.0, P.max(axis=0) + 1.0
        noise = lo + (hi - lo) * rng.random((sizes[4], 2))
        from scipy.spatial import cKDTree

        return np.r_[P, noise], np.r_[lab, lab[cKDTree(P).query(noise)[1]]]
    sizes = _split(n, (0.4, 0.35, 0.25))  # aniso-overlap
    out = []
    for m, centre, (sa, sb), angle in zip(sizes, ((0.0, 0.0), (3.0, 1.5), (1.0, 4.0)),
                                          ((2.5, 0.5), (1.8, 0.6), (1.0, 1.0)),
                                          (0.5, -0.7, 0.0)):
        R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        out.append(rng.standard_normal((m, 2)) * (sa, sb) @ R.T + centre)
    return np.vstack(out), np.repeat(np.arange(3), sizes)


TFIDF_SEED = 29


def tfidf_topics(n_docs: int = 5000, n_terms: int = 50_000, n_topics: int = 10, *,
                 doc_length: float = 62.0, topic_share: float = 0.3,
                 topic_terms: int = 2000, zipf: float = 1.07, seed: int = TFIDF_SEED):
    """A tf-idf corpus with known topics: ``(X, y)``, ``X`` a CSR matrix (float64).

    The generator (multinomial topic mixtures over a Zipf vocabulary):

    * a background distribution over all ``n_terms`` terms, Zipf with exponent ``zipf``
      (rank ``r`` has weight ``r^-zipf``), the shared function words and common terms;
    * every topic owns ``topic_terms`` terms drawn at random (topics may share some)
      with their own Zipf weights over a random order;
    * document ``i`` has topic ``y_i`` (uniform) and a mixture ``θ_i``: ``topic_share``
      of its tokens (jittered by a Beta draw) from its topic, a fifth of the rest from
      one other random topic, and the remainder from the background;
    * its length is Poisson(``doc_length``) tokens (at least 5), the counts are
      weighted by scikit-learn's ``TfidfTransformer`` (smooth idf, sublinear tf off,
      rows of unit length).

    With the defaults the corpus has about 50 distinct terms per document (250 000
    nonzeros for 5 000 documents). The same arguments give the same corpus.
    """
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfTransformer

    rng = np.random.default_rng([seed, n_docs, n_terms, n_topics])
    ranks = np.arange(1, n_terms + 1, dtype=np.float64)
    background = np.cumsum(ranks ** -zipf)
    background /= background[-1]
    bg_terms = rng.permutation(n_terms)
    own = [rng.choice(n_terms, size=min(topic_terms, n_terms), replace=False)
           for _ in range(n_topics)]
    topic_cdf = np.cumsum(np.arange(1, len(own[0]) + 1, dtype=np.float64) ** -zipf)
    topic_cdf /= topic_cdf[-1]
    y = rng.integers(0, n_topics, size=n_docs)
    lengths = np.maximum(5, rng.poisson(doc_length, size=n_docs))
    share = np.clip(rng.beta(8.0, 8.0 * (1 - topic_share) / topic_share, size=n_docs), 0, 1)
    other = (y + rng.integers(1, max(2, n_topics), size=n_docs)) % n_topics
    rows, cols = [], []
    for i in range(n_docs):
        L = int(lengths[i])
        n_own = rng.binomial(L, share[i])
        n_other = rng.binomial(L - n_own, 0.2)
        n_bg = L - n_own - n_other
        toks = [own[y[i]][np.searchsorted(topic_cdf, rng.random(n_own))],
                own[other[i]][np.searchsorted(topic_cdf, rng.random(n_other))],
                bg_terms[np.minimum(np.searchsorted(background, rng.random(n_bg)),
                                    n_terms - 1)]]
        t = np.concatenate(toks)
        rows.append(np.full(t.size, i))
        cols.append(t)
    counts = sp.csr_matrix((np.ones(sum(r.size for r in rows)),
                            (np.concatenate(rows), np.concatenate(cols))),
                           shape=(n_docs, n_terms))
    counts.sum_duplicates()
    X = TfidfTransformer().fit_transform(counts)
    return sp.csr_matrix(X, dtype=np.float64), y.astype(np.int64)


def smooth_usps(X: np.ndarray, sigma: float = USPS_SMOOTH_SIGMA) -> np.ndarray:
    """Each 16×16 USPS image (column-major rows) smoothed by a Gaussian of ``sigma`` px,
    zero outside the image; see docs/bundles/ncer.rst, "USPS"."""
    from scipy.ndimage import gaussian_filter

    imgs = np.asarray(X).reshape(-1, 16, 16).transpose(0, 2, 1)
    out = gaussian_filter(imgs.astype(np.float64), sigma=(0, sigma, sigma), mode="constant")
    return out.transpose(0, 2, 1).reshape(X.shape).astype(X.dtype)


def load(name: str, data_dir: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a data-set name; ``y`` relabelled ``0..k-1``.

    ``X`` is float32 for float32 or small-integer input (pixels) and above 200 000 rows,
    float64 otherwise (:func:`graphclust.float_dtype`); presets and peers get the same array.
    Raises ``graphclust.InputError`` (from the data loader) for an unknown name.
    """
    from graphclust import float_dtype
    from graphclust.data import load_dataset, mnist_extend

    base, n = family(name), size_of(name)
    if base == "mnist-extend":
        X, y = load_dataset("mnist", data_dir)
        X, y = mnist_extend(np.asarray(X), np.asarray(y), n)
    elif base == "synthetic":
        X, y = synthetic_blobs(n or _SYNTH_CHUNK)
    elif base == "blobs":
        from sklearn.datasets import make_blobs

        X, y = make_blobs(n_samples=n or 200, centers=4, n_features=5, cluster_std=0.7,
                          random_state=0)
    elif base in GENERATED + SHAPES:
        X, y = generated(base, n or 1000)
    elif generated_sets.is_generated(base):
        gen = generated_sets.generate(base)
        X, y = gen.X, gen.labels
    elif base == "usps_smooth":
        X, y = load_dataset("usps", data_dir)
        X = smooth_usps(np.asarray(X))
    elif base == "mnist_test456":
        X, y = load_dataset("mnist_test", data_dir)
        keep = np.isin(y, [4, 5, 6])
        X, y = X[keep], y[keep]
    else:
        X, y = load_dataset(base, data_dir)
    if n is not None and n < X.shape[0]:  # the generated sets have n rows already
        idx = np.sort(np.random.default_rng(SUBSET_SEED).choice(X.shape[0], n, replace=False))
        X, y = X[idx], np.asarray(y)[idx]
    if hasattr(X, "toarray"):
        X = X.toarray()
    X = np.asarray(X)
    dtype = np.float32 if X.shape[0] > 200_000 else float_dtype(X.dtype)
    return np.asarray(X, dtype=dtype), np.unique(np.asarray(y), return_inverse=True)[1]


def _times_two(X: np.ndarray) -> np.ndarray:
    return X * 2


def preprocessing(recipe: str, dataset: str) -> list[tuple[str, Any]]:
    """The scikit-learn steps of ``recipe`` on ``dataset`` (empty: none)."""
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, Normalizer

    if recipe not in RECIPES:
        raise ValueError(f"unknown preprocessing recipe {recipe!r}; known: {', '.join(RECIPES)}")
    base = family(dataset)
    if recipe == "minmax-pca" and base in _ONGR_SCALED:
        keep = 0.90 if base == "mnist-extend" else 0.95
        return [("minmax", MinMaxScaler()), ("pca", PCA(n_components=keep, random_state=0))]
    if recipe == "normalize":
        return [("normalize", Normalizer())]
    if recipe == "raw-pixels" and base in ("usps", "usps_smooth"):
        return [("usps_0_2", FunctionTransformer(_times_two))]
    return []
