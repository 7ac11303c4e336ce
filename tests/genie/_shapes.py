"""Low-dimensional chained shapes, generated with numpy (seeded)."""

from __future__ import annotations

import numpy as np


def spirals(n: int = 1500, turns: float = 2.0, noise: float = 0.15, seed: int = 0):
    """Two interleaved Archimedean spirals ``r = t`` from half a turn out to ``turns``
    turns (arms ``π`` apart), points uniform along the arc, Gaussian noise ``noise``."""
    rng = np.random.default_rng(seed)
    half = n // 2
    lo, hi = np.pi, 2.0 * np.pi * turns
    t = np.sqrt(lo * lo + rng.random(n) * (hi * hi - lo * lo))  # uniform in arc length
    y = (np.arange(n) >= half).astype(np.int64)
    r = t
    ang = t + np.pi * y
    X = np.c_[r * np.cos(ang), r * np.sin(ang)] + noise * rng.standard_normal((n, 2))
    return X, y


def ring_and_blob(n: int = 1500, radius: float = 5.0, width: float = 0.25,
                  blob: float = 0.7, frac: float = 1 / 3, seed: int = 0):
    """A blob (standard deviation ``blob``) inside a ring (``radius``, ``width``); a
    fraction ``frac`` of the points in the blob."""
    rng = np.random.default_rng(seed)
    nb = int(n * frac)
    y = (np.arange(n) >= nb).astype(np.int64)
    core = blob * rng.standard_normal((nb, 2))
    a = rng.random(n - nb) * 2 * np.pi
    r = radius + width * rng.standard_normal(n - nb)
    return np.r_[core, np.c_[r * np.cos(a), r * np.sin(a)]], y


def moons(n: int = 1500, noise: float = 0.06, core: float = 0.0, seed: int = 0):
    """Two interleaved half circles (scikit-learn's make_moons shape, drawn here); a
    fraction ``core`` of the first moon's points crowd its middle (a dense core)."""
    rng = np.random.default_rng(seed)
    half = n // 2
    y = (np.arange(n) >= half).astype(np.int64)
    t = rng.random(n) * np.pi
    dense = np.arange(n) < int(core * half)
    t[dense] = np.clip(np.pi / 2 + 0.15 * rng.standard_normal(dense.sum()), 0.0, np.pi)
    X = np.where(y[:, None] == 0, np.c_[np.cos(t), np.sin(t)],
                 np.c_[1.0 - np.cos(t), 0.5 - np.sin(t)])
    return X + noise * rng.standard_normal((n, 2)), y
