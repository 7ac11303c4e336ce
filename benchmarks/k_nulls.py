"""The no-structure tests of ``auto`` on fresh structureless samples (issue 44).

Draws structureless sets that are not the generated battery's — one Gaussian, an
elongated Gaussian (axis scales 1-5), a uniform cube, a uniform ball, in turn — and
prints, for each, the rule ``auto`` takes and the statistic its no-structure test reads:

* ``--kind share`` (``d`` 8-100, ``n`` 200-10 000, log-uniform, seed 12345): the share of
  the sample's rows rule 10's density tree holds in two or more clusters (the
  ``small_clusters`` diagnostic), the test of rules 10 (>= .95) and 11 (>= .5);
* ``--kind tree`` (``d`` 2-7, ``n`` 200-20 000 and at least the rows rule 9 needs, seed
  4242): ``auto``'s fit through rule 9 — ``k``, excess of mass's clusters and its
  selection's stability over the root's (rule 9's test: structure above .25).

* ``--kind reference`` (``d`` 1-8 uniform or ``--dims LO-HI``, ``n`` 200-5 000
  log-uniform, seed 4444 (``4400 + LO + HI`` with ``--dims``); the
  shapes above and a t3 cloud, heavy-tailed, in turn): rule 12's second opinion fitted
  directly on every draw (whatever rule ``auto`` takes first, so a superset of the draws
  it is asked on), its eigengap's ``k`` and, when ``k >= 2``, the null test's ratio
  ``λ_k(data) / λ_k(reference)``, the larger of a Gaussian's and a uniform box's
  (:mod:`graphclust.numerics.null_reference`), and whether it passes ``NULL_RATIO`` (a
  structureless draw answered ``k >= 2``).

The last line gives the largest statistic (``reference``: the smallest ratio in
``d >= 2`` and how many draws would answer ``k >= 2`` with and without the test).
Usage::

    python -m benchmarks.k_nulls --kind share --draws 40
    python -m benchmarks.k_nulls --kind tree --draws 60
    python -m benchmarks.k_nulls --kind reference --draws 120
    python -m benchmarks.k_nulls --kind reference --draws 60 --dims 2-3
"""

from __future__ import annotations

import argparse
import warnings

import graphclust
import numpy as np
from graphclust.numerics.null_reference import NULL_RATIO, null_test
from graphclust_plugins.auto.rule_auto import AUTO_RULES, DENSITY_ROWS_NEEDED

__all__ = ["KINDS", "REFERENCE_KINDS", "draw", "main", "reference_draw"]

#: The structureless shapes, drawn in turn.
KINDS = ("gauss", "elongated", "cube", "ball")
#: The shapes of ``--kind reference``: those and a heavy-tailed (Student t, 3 degrees
#: of freedom) cloud.
REFERENCE_KINDS = (*KINDS, "t3")


def draw(kind: str, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """One structureless ``n x d`` set of shape ``kind`` (:data:`KINDS`)."""
    if kind == "gauss":
        return rng.standard_normal((n, d))
    if kind == "elongated":
        return rng.standard_normal((n, d)) * rng.uniform(1, 5, d)
    if kind == "cube":
        return rng.uniform(-1, 1, (n, d))
    if kind == "t3":
        return rng.standard_t(3, (n, d))
    G = rng.standard_normal((n, d))
    return G / np.linalg.norm(G, axis=1, keepdims=True) * rng.uniform(0, 1, (n, 1)) ** (1 / d)


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> int:
    return int(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def _share(i: int, rng: np.random.Generator) -> float:
    d = _log_uniform(rng, 8, 100)
    n = min(_log_uniform(rng, 200, 10_000), 2_000_000 // d)
    X = draw(KINDS[i % 4], n, d, rng)
    rule, _, ctx = AUTO_RULES.decide(graphclust.profile_data(X, None))
    diag = ctx["small_clusters"]
    share = diag["share"] if diag["clusters"] >= 2 else 0.0
    print(f"{KINDS[i % 4]:9s} n={n:6d} d={d:3d} rule {rule.number:2d} clusters "
          f"{diag['clusters']:3d} share {share:.3f}", flush=True)
    return share


def _tree(i: int, rng: np.random.Generator) -> float:
    while True:  # rule 9's rows: at least those a density estimate needs in d dimensions
        d = int(rng.integers(2, 8))
        n = _log_uniform(rng, 200, 20_000)
        if n >= max(DENSITY_ROWS_NEEDED[d], 100):
            break
    X = draw(KINDS[i % 4], n, d, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = graphclust.GraphClustering("auto", random_state=0).fit(X)
    det = model.k_selection_.details or {}
    ratio = det.get("selection_stability", 0.0) / max(det.get("root_stability", 1.0), 1e-12)
    print(f"{KINDS[i % 4]:9s} n={n:6d} d={d} {model.resolved_spec_['summary'][6:13]} "
          f"k {model.n_clusters_} clusters {det.get('excess_of_mass_clusters')} "
          f"ratio {ratio:.3f}", flush=True)
    return ratio


def _second_selection(X: np.ndarray):
    """Rule 12's second opinion fitted on ``X``: its ``KSelection``."""
    p = graphclust.profile_data(X, None)
    spec = AUTO_RULES.second_opinion.build(p, AUTO_RULES.context(p))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return graphclust.GraphClustering(spec, random_state=0).fit(X).k_selection_


def reference_draw(i: int, rng: np.random.Generator, dims: tuple[int, int] = (1, 8)) -> dict:
    """One draw of ``--kind reference``: its shape, ``n``, ``d``, the eigengap's ``k``
    and, when ``k >= 2``, the null test's record (``None`` otherwise)."""
    kind = REFERENCE_KINDS[i % len(REFERENCE_KINDS)]
    d = int(rng.integers(dims[0], dims[1] + 1))
    n = _log_uniform(rng, 200, 5_000)
    X = draw(kind, n, d, rng)
    sel = _second_selection(X)
    test = null_test(sel, X, np.random.default_rng([4444, i]), _second_selection)
    said = "" if test is None else (f"ratio {test['ratio']:.3f} "
                                    f"{'passes' if test['accepted'] else 'refused'}")
    print(f"{kind:9s} n={n:5d} d={d} eigengap k {sel.k:2d} {said}", flush=True)
    return {"kind": kind, "n": n, "d": d, "k": int(sel.k), "test": test}


def _reference_summary(rows: list[dict]) -> None:
    for lo, hi in ((1, 1), (2, 8)):
        part = [r for r in rows if lo <= r["d"] <= hi]
        tested = [r["test"]["ratio"] for r in part if r["test"] is not None]
        passed = sum(1 for r in part if r["test"] is not None and r["test"]["accepted"])
        print(f"d {lo}-{hi}: {len(part)} draws, eigengap k >= 2 on {len(tested)} "
              f"(without the test), {passed} pass the null test (ratio <= {NULL_RATIO:g}); "
              f"smallest ratio {min(tested, default=float('nan')):.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=("share", "tree", "reference"), default="share")
    ap.add_argument("--draws", type=int, default=40)
    ap.add_argument("--dims", default="1-8", help="reference: the range of d, 'LO-HI' "
                    "(seed 4444 for 1-8, 4400 + LO + HI otherwise)")
    args = ap.parse_args(argv)
    if args.kind == "reference":
        lo, hi = (int(v) for v in args.dims.split("-"))
        rng = np.random.default_rng(4444 if (lo, hi) == (1, 8) else 4400 + lo + hi)
        _reference_summary([reference_draw(i, rng, (lo, hi)) for i in range(args.draws)])
        return 0
    rng = np.random.default_rng(12345 if args.kind == "share" else 4242)
    stat = _share if args.kind == "share" else _tree
    values = [stat(i, rng) for i in range(args.draws)]
    print(f"largest {args.kind} statistic over {args.draws} draws: {max(values):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
