"""The generated battery of issue 44: seeded data sets across families, split once.

Every set is fully determined by its :class:`SetSpec` — family, parameters and seed —
and the parameters of a family's sets are drawn from a random generator seeded by
``(BATTERY_SEED, family index)``, so the battery is the same on every machine. A set
has an id (``gen-<family>-<i>``, a data-set name of :func:`benchmarks.datasets.load`),
its family, ``n``, ``d``, the true ``k`` and labels ``0..k-1``; the labels are for
scoring only and are never given to a method.

Families (:data:`FAMILIES`, ``n`` is capped at :data:`MAX_N` = 20 000 points and
``n·d`` at :data:`MAX_CELLS` = 2 000 000 values, so that one fit takes seconds to a
minute on two cores; a draw over a cap loses points per cluster, never clusters):

``blobs``
    isotropic Gaussian blobs, ``k`` 2–100 and 5–5 000 points per cluster (log-uniform,
    sizes 80–100 % of it, at least 5), ``d`` 2–1 000; centres at least ``gap`` × the
    spread × ``max(1, (d/4)^¼)`` apart (gap 7–12; the factor keeps a pair equally
    separable in every ``d``, :mod:`benchmarks.generated_shapes`); the first eight sets are the
    corners ``k ∈ {2, 100}``, points per cluster ``∈ {5, 5 000}``, ``d ∈ {2, 1 000}``.
``aniso``
    Gaussians with random covariances (axis ratios up to 1:6, random rotations),
    centres ``gap`` 8–14 × the largest spread apart, ``k`` 2–12, ``d`` 2–20.
``overlap``
    isotropic Gaussians whose centres are only 3–4.5 spreads apart (the mixture is
    still multimodal: two equal Gaussians are bimodal above 2), ``k`` 2–8, ``d`` 2–10.
``chains``
    ``k`` 2–6 polylines of 2–4 segments (a random walk of unit steps), points uniform
    along them with a jitter of 2–5 % of a step, the chains 1.5–3 steps apart; ``d``
    2–3.
``spirals``
    ``k`` 2–4 interleaved Archimedean spirals ``r = t`` (1.5–2.5 turns), uniform in arc
    length, Gaussian noise 3–6 % of the radial gap ``2π/k`` between neighbouring arms.
``rings``
    ``k`` 2–4 concentric circles of radii 1, 2, …, radial noise 0.05–0.12, ``d`` 2, or
    3 with the third coordinate noise of the same size.
``nested``
    1–3 groups 12 apart, each a blob (spread 0.4) inside a ring (radius 2.5, noise 0.12;
    2 clusters), the first group optionally inside a second ring (radius 4.5; 3
    clusters); ``k`` 2–7.
``density``
    Gaussian blobs whose spreads differ up to tenfold and whose sizes differ up to
    eightfold, ``k`` 2–8, ``d`` 2–10, centres 5–8 × the sum of the two spreads apart
    (gap 10–16 × their mean).
``outliers``
    ``blobs`` with ``k`` 2–10, ``d`` 2–20 plus 2–10 % uniform points over the bounding
    box enlarged by 10 %, each outlier labelled by its nearest blob centre (so ``k`` is
    the number of blobs).
``null``
    no cluster structure, true ``k = 1``: one isotropic Gaussian, one elongated Gaussian
    (axis ratios up to 1:5), a uniform cube or a uniform ball, ``d`` 2–100, ``n``
    200–10 000. A single ring is a shape of one cluster too, but it is not a null here
    (its density is not unimodal), so it is not counted.

The split (:func:`split`): within each family the ids are ordered by the SHA-256 of
``"graphclust-battery:" + id`` and alternate ``tune``, ``check`` — about half each,
stratified by family, and the same ids always give the same halves.

**No rule of auto may be tuned on the check half.** Rules and thresholds are argued and
measured on the tune half; the check half is only run to report how they generalise.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

__all__ = ["BATTERY_SEED", "FAMILIES", "MAX_CELLS", "MAX_N", "GeneratedSet", "SetSpec",
           "battery", "expand", "generate", "half_ids", "is_generated", "split"]

BATTERY_SEED = 44
MAX_N = 20_000
MAX_CELLS = 2_000_000
#: Family → number of sets (225 in all).
FAMILIES = {"blobs": 40, "aniso": 20, "overlap": 20, "chains": 20, "spirals": 15,
            "rings": 15, "nested": 15, "density": 20, "outliers": 20, "null": 40}
_PREFIX = "gen-"


@dataclass(frozen=True)
class SetSpec:
    """What determines a set: its ``id``, ``family``, drawn ``params`` and ``seed``."""

    id: str
    family: str
    params: dict = field(hash=False)
    seed: int


@dataclass(frozen=True, eq=False)
class GeneratedSet:
    """A generated set: ``X`` (n×d), ``labels`` (0..k-1, for scoring only) and its spec."""

    spec: SetSpec
    X: np.ndarray
    labels: np.ndarray

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def k(self) -> int:
        return int(np.unique(self.labels).size)


def _loguniform_int(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(round(np.exp(rng.uniform(np.log(lo), np.log(hi)))))


def _fit_caps(k: int, per: int, d: int) -> int:
    """Points per cluster after the caps on ``n`` and ``n·d`` (at least 5)."""
    per = min(per, MAX_N // k, MAX_CELLS // (k * d))
    return max(5, per)


def _draw(family: str, rng: np.random.Generator, i: int) -> dict[str, Any]:
    """The parameters of the ``i``-th set of ``family``."""
    u, li = rng.uniform, _loguniform_int
    if family == "blobs":
        if i < 8:  # the corners of the ranges
            k, per, d = (2, 100)[i & 1], (5, 5000)[(i >> 1) & 1], (2, 1000)[(i >> 2) & 1]
        else:
            k, per, d = li(rng, 2, 100), li(rng, 5, 5000), li(rng, 2, 1000)
        return {"k": k, "per": _fit_caps(k, per, d), "d": d, "gap": u(7, 12)}
    if family in ("aniso", "overlap", "density", "outliers"):
        k_hi, d_hi = {"aniso": (12, 20), "overlap": (8, 10), "density": (8, 10),
                      "outliers": (10, 20)}[family]
        k, d = int(rng.integers(2, k_hi + 1)), li(rng, 2, d_hi)
        out = {"k": k, "d": d, "per": _fit_caps(k, li(rng, 30, 1500), d)}
        out["gap"] = {"aniso": u(8, 14), "overlap": u(3, 4.5), "density": u(10, 16),
                      "outliers": u(7, 12)}[family]
        if family == "outliers":
            out["outlier_share"] = u(0.02, 0.10)
        return out
    if family == "chains":
        return {"k": int(rng.integers(2, 7)), "segments": int(rng.integers(2, 5)),
                "n": li(rng, 300, 5000), "jitter": u(0.02, 0.05), "apart": u(1.5, 3.0),
                "d": int(rng.integers(2, 4))}
    if family == "spirals":
        return {"k": int(rng.integers(2, 5)), "turns": u(1.5, 2.5), "n": li(rng, 300, 5000),
                "noise": u(0.03, 0.06)}
    if family == "rings":
        return {"k": int(rng.integers(2, 5)), "n": li(rng, 300, 5000), "noise": u(0.05, 0.12),
                "d": int(rng.integers(2, 4))}
    if family == "nested":
        return {"groups": int(rng.integers(1, 4)), "outer": bool(rng.random() < 0.5),
                "n": li(rng, 400, 6000)}
    if family == "null":
        return {"shape": ("gaussian", "elongated", "cube", "ball")[i % 4],
                "d": li(rng, 2, 100), "n": li(rng, 200, 10000)}
    raise ValueError(f"unknown family {family!r}; known: {', '.join(FAMILIES)}")


@cache
def battery() -> tuple[SetSpec, ...]:
    """Every set's spec, family by family in the order of :data:`FAMILIES`."""
    specs = []
    for f_index, (family, count) in enumerate(FAMILIES.items()):
        rng = np.random.default_rng([BATTERY_SEED, f_index])
        for i in range(count):
            params = _draw(family, rng, i)
            seed = int(rng.integers(0, 2**31 - 1))
            specs.append(SetSpec(f"{_PREFIX}{family}-{i:03d}", family, params, seed))
    return tuple(specs)


def _by_id() -> dict[str, SetSpec]:
    return {s.id: s for s in battery()}


def is_generated(name: str) -> bool:
    """Whether ``name`` is the id of a set of the battery."""
    return name.startswith(_PREFIX) and name in _by_id()


def split(specs: tuple[SetSpec, ...] | None = None) -> dict[str, str]:
    """Id → ``"tune"`` or ``"check"``: per family, ids ordered by the SHA-256 of
    ``"graphclust-battery:" + id`` alternate tune, check (tune gets the odd one)."""
    out: dict[str, str] = {}
    families: dict[str, list[str]] = {}
    for s in specs if specs is not None else battery():
        families.setdefault(s.family, []).append(s.id)
    for ids in families.values():
        ordered = sorted(ids, key=lambda i: hashlib.sha256(
            f"graphclust-battery:{i}".encode()).hexdigest())
        out.update({i: ("tune", "check")[r % 2] for r, i in enumerate(ordered)})
    return out


def half_ids(half: str, family: str | None = None) -> list[str]:
    """The ids of one half (``"tune"``, ``"check"`` or ``"all"``), optionally of one
    family, in battery order."""
    if half not in ("tune", "check", "all"):
        raise ValueError(f"unknown half {half!r}; use 'tune', 'check' or 'all'")
    halves = split()
    return [s.id for s in battery() if (half == "all" or halves[s.id] == half)
            and (family is None or s.family == family)]


def generate(set_id: str) -> GeneratedSet:
    """The set ``set_id`` (the same arrays for the same spec, on every call)."""
    spec = _by_id().get(set_id)
    if spec is None:
        raise ValueError(f"unknown generated set {set_id!r}; ids look like "
                         f"'{battery()[0].id}' (benchmarks.generated_sets.battery())")
    from benchmarks import generated_shapes

    rng = np.random.default_rng(spec.seed)
    X, y = generated_shapes.MAKERS[spec.family](rng, **spec.params)
    return GeneratedSet(spec, np.asarray(X, dtype=np.float64),
                        np.unique(y, return_inverse=True)[1].astype(np.int64))


def expand(name: str) -> list[str]:
    """A ``--datasets`` entry as ids: ``generated:HALF`` or ``generated:HALF:FAMILY``
    (``HALF`` one of ``tune``, ``check``, ``all``) gives the ids of that half (and family);
    any other name is itself."""
    if not name.startswith("generated:"):
        return [name]
    _, half, fam = (name.split(":") + [""])[:3]
    if fam and fam not in FAMILIES:
        raise ValueError(f"unknown family {fam!r} in {name!r}; known: {', '.join(FAMILIES)}")
    return half_ids(half, fam or None)
