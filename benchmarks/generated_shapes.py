"""The makers of :mod:`benchmarks.generated_sets`: ``MAKERS[family](rng, **params) -> (X, y)``.

Each maker draws everything from ``rng`` (seeded by the set's seed), so a set is a
function of its family, parameters and seed. Centre distances are in units of the
clusters' spread times :func:`separation_scale` ``= max(1, (d / 4) ** 0.25)``: between
two unit Gaussians whose centres are ``D`` apart, squared distances across clusters
exceed those within by ``D²`` while the latter spread by ``√(8d)``, so a ``D`` growing
as ``d^{1/4}`` keeps a pair of clusters equally separable for a nearest-neighbour graph
in every dimension.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["MAKERS", "separation_scale"]


def separation_scale(d: int) -> float:
    """The factor on every centre gap in ``d`` dimensions (see the module docstring)."""
    return max(1.0, (d / 4.0) ** 0.25)


def _centres(rng: np.random.Generator, radii: np.ndarray, d: int, gap: float) -> np.ndarray:
    """``len(radii)`` centres in ``d``-space, centres ``i`` and ``j`` at least
    ``gap · separation_scale(d) · (r_i + r_j) / 2`` apart (rejection in a box that grows
    until they fit)."""
    k = len(radii)
    unit = gap * separation_scale(d)
    side = unit * float(np.max(radii)) * max(2.0, 2.0 * k ** (1.0 / d))
    while True:
        placed: list[np.ndarray] = []
        for _ in range(100 * k):
            c = rng.uniform(0.0, side, d)
            i = len(placed)
            if all(np.linalg.norm(c - p) >= unit * (radii[i] + radii[j]) / 2
                   for j, p in enumerate(placed)):
                placed.append(c)
                if len(placed) == k:
                    return np.array(placed)
        side *= 1.3


def _sizes(rng: np.random.Generator, k: int, per: int, spread: float = 0.8) -> np.ndarray:
    """``k`` cluster sizes in ``[spread · per, per]``, at least 5."""
    return np.maximum(5, np.round(per * rng.uniform(spread, 1.0, k))).astype(int)


def _rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def _gaussians(rng, centres, sizes, axes, rotations=None):
    """Gaussian clusters: ``axes[i]`` the per-axis spreads of cluster ``i``."""
    parts = []
    for i, (c, m) in enumerate(zip(centres, sizes, strict=True)):
        Z = rng.standard_normal((m, len(c))) * axes[i]
        parts.append((Z if rotations is None else Z @ rotations[i].T) + c)
    return np.vstack(parts), np.repeat(np.arange(len(sizes)), sizes)


def blobs(rng, k, per, d, gap):
    sizes = _sizes(rng, k, per)
    C = _centres(rng, np.ones(k), d, gap)
    return _gaussians(rng, C, sizes, np.ones((k, 1)))


def aniso(rng, k, per, d, gap):
    axes = rng.uniform(1 / 6, 1.0, (k, d))
    axes[:, 0] = 1.0
    C = _centres(rng, np.ones(k), d, gap)
    return _gaussians(rng, C, _sizes(rng, k, per), axes, [_rotation(rng, d) for _ in range(k)])


def overlap(rng, k, per, d, gap):
    return blobs(rng, k, per, d, gap)


def density(rng, k, per, d, gap):
    spreads = np.exp(rng.uniform(0.0, np.log(10.0), k))
    sizes = np.maximum(5, np.round(per * 2.0 ** rng.uniform(-3.0, 0.0, k))).astype(int)
    C = _centres(rng, spreads, d, gap)
    return _gaussians(rng, C, sizes, spreads[:, None])


def outliers(rng, k, per, d, gap, outlier_share):
    X, y = blobs(rng, k, per, d, gap)
    centres = np.array([X[y == j].mean(axis=0) for j in range(k)])
    lo, hi = X.min(axis=0), X.max(axis=0)
    lo, hi = lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)
    m = max(1, int(round(outlier_share * X.shape[0])))
    U = lo + (hi - lo) * rng.random((m, d))
    nearest = np.argmin(((U[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
    return np.r_[X, U], np.r_[y, nearest]


def _polyline(rng, segments, d):
    steps = [rng.standard_normal(d)]
    for _ in range(segments - 1):  # turns of at most 90 degrees
        s = rng.standard_normal(d)
        steps.append(s if s @ steps[-1] >= 0 else -s)
    steps = [s / np.linalg.norm(s) for s in steps]
    return np.vstack([np.zeros(d), np.cumsum(steps, axis=0)])


def _along(rng, vertices, m):
    """``m`` points uniform in arc length along a polyline."""
    seg = np.diff(vertices, axis=0)
    cum = np.r_[0.0, np.cumsum(np.linalg.norm(seg, axis=1))]
    t = rng.random(m) * cum[-1]
    i = np.minimum(np.searchsorted(cum, t, side="right") - 1, len(seg) - 1)
    return vertices[i] + seg[i] * ((t - cum[i]) / (cum[i + 1] - cum[i]))[:, None]


def chains(rng, k, segments, n, jitter, apart, d):
    from scipy.spatial import cKDTree

    shapes = [_polyline(rng, segments, d) for _ in range(k)]
    dense = [_along(rng, v, 400) for v in shapes]
    side = float(k) * segments
    while True:
        placed = []
        for v, pts in zip(shapes, dense, strict=True):
            for _ in range(200):
                shift = rng.uniform(0.0, side, d)
                if all(cKDTree(q).query(pts + shift)[0].min() >= apart for q in placed):
                    placed.append(pts + shift)
                    break
            else:
                break
        if len(placed) == k:
            break
        side *= 1.3
    sizes = _sizes(rng, k, max(5, n // k))
    parts = [_along(rng, v + (p[0] - d_[0]), m)
             for v, p, d_, m in zip(shapes, placed, dense, sizes, strict=True)]
    X = np.vstack(parts) + jitter * rng.standard_normal((int(sizes.sum()), d))
    return X, np.repeat(np.arange(k), sizes)


def spirals(rng, k, turns, n, noise):
    lo, hi = 0.5 * np.pi, 2 * np.pi * turns
    sizes = _sizes(rng, k, max(5, n // k), 1.0)
    parts = []
    for j, m in enumerate(sizes):
        t = np.sqrt(lo * lo + rng.random(m) * (hi * hi - lo * lo))  # uniform in arc length
        a = t + 2 * np.pi * j / k
        parts.append(np.c_[t * np.cos(a), t * np.sin(a)])
    gap = 2 * np.pi / k  # radial distance between neighbouring arms
    X = np.vstack(parts) + noise * gap * rng.standard_normal((int(sizes.sum()), 2))
    return X, np.repeat(np.arange(k), sizes)


def _ring(rng, m, centre, radius, noise):
    a = rng.uniform(0.0, 2 * np.pi, m)
    r = radius + noise * rng.standard_normal(m)
    return np.c_[centre[0] + r * np.cos(a), centre[1] + r * np.sin(a)]


def rings(rng, k, n, noise, d):
    radii = np.arange(1, k + 1, dtype=float)
    sizes = np.maximum(20, np.round(n * radii / radii.sum())).astype(int)
    X = np.vstack([_ring(rng, m, (0.0, 0.0), r, noise) for m, r in zip(sizes, radii)])
    if d == 3:
        X = np.c_[X, noise * rng.standard_normal(X.shape[0])]
    return X, np.repeat(np.arange(k), sizes)


def nested(rng, groups, outer, n):
    """Blob (spread 0.4) in a ring (radius 2.5); the first group also in a ring of 4.5."""
    shapes: list[tuple[str, float]] = []
    for g in range(groups):
        shapes += [("blob", 12.0 * g), ("ring2.5", 12.0 * g)]
        if outer and g == 0:
            shapes.append(("ring4.5", 0.0))
    weight = np.array([1.0 if s == "blob" else float(s[4:]) / 2.5 for s, _ in shapes])
    sizes = np.maximum(20, np.round(n * weight / weight.sum())).astype(int)
    parts = [0.4 * rng.standard_normal((m, 2)) + (x, 0.0) if s == "blob"
             else _ring(rng, m, (x, 0.0), float(s[4:]), 0.12)
             for (s, x), m in zip(shapes, sizes, strict=True)]
    return np.vstack(parts), np.repeat(np.arange(len(shapes)), sizes)


def null(rng, shape, d, n):
    """One structureless cloud (true k = 1)."""
    if shape == "gaussian":
        X = rng.standard_normal((n, d))
    elif shape == "elongated":
        X = rng.standard_normal((n, d)) * rng.uniform(0.2, 1.0, d) @ _rotation(rng, d).T
    elif shape == "cube":
        X = rng.random((n, d))
    else:  # ball: a uniform direction times a radius with density ∝ r^(d-1)
        g = rng.standard_normal((n, d))
        X = g / np.linalg.norm(g, axis=1, keepdims=True) * rng.random(n)[:, None] ** (1 / d)
    return X, np.zeros(n, dtype=np.int64)


MAKERS: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "blobs": blobs, "aniso": aniso, "overlap": overlap, "chains": chains,
    "spirals": spirals, "rings": rings, "nested": nested, "density": density,
    "outliers": outliers, "null": null}
