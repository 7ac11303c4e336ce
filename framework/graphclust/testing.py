"""Contract-test kit for plugin authors.

Call :func:`check_part` on your part class (or instance) from your own tests; it
returns nothing and raises :class:`AssertionError` naming the part and the broken
contract::

    from graphclust.testing import check_part

    def test_my_solver_contract():
        check_part(MySolver)                   # defaults
        check_part(MySolver, n_iter=5)         # other parameter values

To run the kit over every registered part (your plugin's and everybody else's)::

    from graphclust.testing import check_part, parametrize_parts

    @parametrize_parts(kinds=["solver"])
    def test_contract(part_record):
        check_part(part_record.cls, part_record.kind)

What is checked
---------------
For every kind (see :data:`COMMON_CHECKS`):

* **declarations** — the class subclasses the interface of its kind, is decorated with
  :func:`graphclust.part`, has a valid ``name`` and a docstring summary, and the kind's
  class attributes are well formed (``produces``/``needs_anchors`` for graph builders,
  ``accepts``/``needs_features``/``produces`` for solvers, ``needs`` for roundings,
  ``needs_truth``/``greater_is_better`` for metrics);
* **parameters** — each parameter declared with :func:`graphclust.param` has a ``doc``
  and a ``check``, every default passes its own check, ``__init__`` does no validation
  (an invalid value is stored and then reported by ``check_params``), and
  ``get_params``/``set_params``/``sklearn.base.clone`` round-trip;
* **work method** — the output type and shape on small blobs (below);
* **determinism** — two fresh clones with the same :class:`~graphclust.Context` seed give
  identical output;
* **no mutation** — the inputs (data, anchors, graph, solution, labels) are unchanged;
* **float32** — float32 data is accepted and gives valid output;
* **sparse** — parts that set the class attribute ``accepts_sparse = True`` are also run
  on a ``scipy.sparse.csr_array`` ``X`` (the pipeline densifies sparse data before parts
  see it, so the other parts never receive it);
* **pipeline** — the part runs inside a minimal pipeline (the kit's own tiny parts fill
  the other stages) through :class:`graphclust.GraphClustering`: it fits, labels are
  ``0..k-1``, data with NaN and data with ``n < k`` are refused with a clear
  ``ValueError``.

Work-method contracts per kind:

========== ================================================================================
kind       contract
========== ================================================================================
anchors    :class:`~graphclust.Anchors` with ``m <= n`` finite rows of ``d`` columns;
           ``assignment`` (if set) of shape ``(n,)`` in ``[0, m)``; asking for more anchors
           than points (an ``n_anchors`` parameter) clamps to ``n``.
graph      the declared kind (``produces``) with ``n`` rows; an affinity graph is symmetric
           and nonnegative; an anchor graph has one column per anchor; builders with
           ``transform`` return nonnegative finite rows of shape ``(n_new, m)``.
solver     a :class:`~graphclust.Solution` with ``n`` rows holding everything ``produces``
           declares, finite; on every graph kind in ``accepts``; ``n_clusters = 1`` works.
rounding   integer labels of shape ``(n,)`` in ``[0, k)`` from a solution holding only what
           ``needs`` declares; ``n_clusters = 1`` works; ``assign`` (if implemented)
           labels the rows of a solution in ``[0, k)``.
metric     a finite float; a truth metric scores the true labels at least as well as
           shuffled ones (respecting ``greater_is_better``).
========== ================================================================================

Fixture data (:func:`make_fixture`): ``n = 60`` points in ``d = 4`` dimensions from
three well-separated Gaussian blobs, with anchors, an anchor graph, a kNN affinity
graph and solutions synthesised by small internal parts (nothing from any bundle), so
the kit runs whatever else is installed.
"""

from __future__ import annotations

import copy
import inspect
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from graphclust._checks import part_spec
from graphclust._graphs import AffinityGraph, Anchors, AnchorGraph, safe_inverse
from graphclust._parts import (
    PART_KINDS,
    AnchorSelector,
    Context,
    GraphBuilder,
    Metric,
    Part,
    Rounding,
    Solver,
    param,
    part,
)
from graphclust._checks import integer
from graphclust._registry import NAME_PATTERN, PartRecord, Registry
from graphclust._solution import Solution

__all__ = [
    "check_part",
    "check_declarations",
    "check_parameters",
    "parametrize_parts",
    "missing_parts",
    "make_blobs",
    "make_fixture",
    "Fixture",
    "COMMON_CHECKS",
    "ContractViolation",
]

#: Names of the contracts :func:`check_part` checks, in order (they appear in messages).
COMMON_CHECKS = ("declarations", "parameters", "work", "determinism", "no-mutation",
                 "float32", "sparse", "pipeline")

_KIND_LABEL = {"anchors": "anchor selector", "graph": "graph builder", "solver": "solver",
               "rounding": "rounding", "metric": "metric"}


class ContractViolation(AssertionError):
    """Raised by the kit: a part broke a contract (an :class:`AssertionError`)."""


def _who(cls: type) -> str:
    kind = getattr(cls, "kind", "") or "part"
    name = getattr(cls, "name", "") or "<no name>"
    return f"{_KIND_LABEL.get(kind, kind)} {name!r} ({cls.__module__}.{cls.__qualname__})"


def _fail(cls: type, contract: str, detail: str) -> None:
    raise ContractViolation(f"{_who(cls)} breaks the '{contract}' contract: {detail}")


def _ensure(cond: Any, cls: type, contract: str, detail: str) -> None:
    if not cond:
        _fail(cls, contract, detail)


class _Contract:
    """Context manager: exceptions other than a kit failure become AssertionErrors."""

    def __init__(self, cls: type, contract: str, what: str):
        self.cls, self.contract, self.what = cls, contract, what

    def __enter__(self):
        return self

    def __exit__(self, etype, exc, tb):
        if exc is None or isinstance(exc, ContractViolation):
            return False
        raise ContractViolation(f"{_who(self.cls)} breaks the '{self.contract}' contract: {self.what} "
                      f"raised {etype.__name__}: {exc}") from exc


# ----------------------------------------------------------------------------------
# Fixture data and the kit's own tiny parts
# ----------------------------------------------------------------------------------
def make_blobs(n: int = 60, d: int = 4, k: int = 3, *, seed: int = 0,
               dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Well-separated Gaussian blobs ``(X, y)``: ``k`` classes of (almost) equal size.

    Centres are ``k`` points spaced 8 apart along random directions, noise 0.5; every
    feature is shifted to be at least 0.5 (methods for nonnegative data accept it).
    """
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rng.shuffle(y)
    centres = rng.normal(size=(k, d))
    centres *= 8.0 / np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
    centres += 8.0 * np.eye(k, d) if d >= k else 0.0
    X = centres[y] + 0.5 * rng.normal(size=(n, d))
    X -= X.min(axis=0) - 0.5  # nonnegative features (pixel-like), as some methods assume
    return X.astype(dtype), y.astype(np.int64)


def _anchor_rows(X: np.ndarray, U: np.ndarray, s: int, sigma: float | None = None):
    """Gaussian weights on the ``s`` nearest anchors, rows summing to one (dense, tiny)."""
    X = np.asarray(X, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    d2 = np.maximum((X * X).sum(1)[:, None] - 2 * X @ U.T + (U * U).sum(1)[None, :], 0.0)
    s = min(s, U.shape[0])
    idx = np.argsort(d2, axis=1, kind="stable")[:, :s]
    dd = np.take_along_axis(d2, idx, axis=1)
    if sigma is None:
        sigma = float(np.mean(np.sqrt(dd[:, -1]))) or 1.0
    w = np.exp(-(dd - dd[:, :1]) / (sigma * sigma))
    w /= w.sum(axis=1, keepdims=True)
    n = X.shape[0]
    Z = sp.csr_array((w.ravel(), idx.ravel(), np.arange(0, n * s + 1, s)), shape=(n, U.shape[0]))
    return Z, sigma


@part
class KitAnchors(AnchorSelector):
    """Kit fixture: ``n_anchors`` distinct training rows drawn at random."""

    name = "kit-anchors"
    n_anchors: int = param(12, doc="Number of anchors m.", check=integer(1))

    def select(self, X, ctx):
        X = np.asarray(X)
        m = min(int(self.n_anchors), X.shape[0])
        idx = np.sort(ctx.rng("kit-anchors").choice(X.shape[0], m, replace=False))
        U = X[idx].astype(np.float64)
        _, assign = _anchor_rows(X, U, 1)[0].nonzero()
        return Anchors(U, assignment=np.asarray(assign, dtype=np.int64))


@part
class KitAnchorGraph(GraphBuilder):
    """Kit fixture: Gaussian weights on the ``s`` nearest anchors, rows summing to one."""

    name = "kit-anchor-graph"
    produces = "anchor"
    needs_anchors = True
    n_neighbors: int = param(3, doc="Nearest anchors per point s.", check=integer(1))

    def build(self, X, anchors, ctx):
        Z, sigma = _anchor_rows(X, anchors.points, self.n_neighbors)
        return AnchorGraph(Z, anchors=anchors, info={"sigma": sigma})

    def transform(self, X_new, graph):
        return _anchor_rows(X_new, graph.anchors.points, self.n_neighbors, graph.info["sigma"])[0]


@part
class KitKnnGraph(GraphBuilder):
    """Kit fixture: symmetric Gaussian kNN affinity graph (dense distances; tiny n only)."""

    name = "kit-knn"
    produces = "affinity"
    n_neighbors: int = param(6, doc="Neighbours per point.", check=integer(1))

    def build(self, X, anchors, ctx):
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        k = max(1, min(int(self.n_neighbors), n - 1))
        if n == 1:
            return AffinityGraph(sp.csr_array((1, 1)))
        d2 = np.maximum((X * X).sum(1)[:, None] - 2 * X @ X.T + (X * X).sum(1)[None, :], 0.0)
        np.fill_diagonal(d2, np.inf)
        idx = np.argsort(d2, axis=1, kind="stable")[:, :k]
        dd = np.take_along_axis(d2, idx, axis=1)
        sigma2 = float(np.mean(dd)) or 1.0
        A = sp.csr_array((np.exp(-dd / sigma2).ravel(), idx.ravel(),
                          np.arange(0, n * k + 1, k)), shape=(n, n))
        return AffinityGraph(A.maximum(A.T))


def _kmeans(E: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.cluster import KMeans

    k = max(1, min(k, E.shape[0]))
    km = KMeans(n_clusters=k, n_init=3, random_state=seed).fit(E)
    return km.labels_.astype(np.int64), km.cluster_centers_


@part
class KitSolver(Solver):
    """Kit fixture: dense spectral embedding of the normalised graph plus a k-means soft part."""

    name = "kit-spectral"
    accepts = frozenset({"affinity", "anchor"})
    produces = frozenset({"embedding", "soft"})
    out_of_sample = True

    def solve(self, graph, X, n_clusters, ctx):
        k = max(1, int(n_clusters))
        anchor_emb = None
        if isinstance(graph, AnchorGraph):
            B = graph.B().toarray()
            U, S, Vt = np.linalg.svd(B, full_matrices=False)
            p = min(k, S.size)
            emb = U[:, :p]
            anchor_emb = (safe_inverse(graph.anchor_degrees, 0.5)[:, None] * Vt[:p].T
                          * safe_inverse(S[:p])[None, :])
        else:
            N = graph.normalized_adjacency().toarray()
            vals, vecs = np.linalg.eigh(N)
            p = min(k, vals.size)
            emb = vecs[:, ::-1][:, :p]
        labels, _ = _kmeans(emb, k, ctx.seed_for("kit-solver"))
        soft = np.full((emb.shape[0], k), 0.1 / k)
        soft[np.arange(emb.shape[0]), labels] += 0.9
        anchor_soft = None
        if isinstance(graph, AnchorGraph):
            anchor_soft = safe_inverse(graph.anchor_degrees)[:, None] * (graph.Z.T @ soft)
        return Solution(embedding=emb, soft=soft, anchor_embedding=anchor_emb,
                        anchor_soft=anchor_soft)


@part
class KitKMeansRounding(Rounding):
    """Kit fixture: k-means on the embedding (3 restarts); new rows to the nearest centre."""

    name = "kit-kmeans"
    needs = "embedding"

    def round(self, solution, n_clusters, ctx):
        labels, self.centers_ = _kmeans(np.asarray(solution.embedding, dtype=np.float64),
                                        int(n_clusters), ctx.seed_for("kit-rounding"))
        return labels

    def assign(self, solution):
        E = np.asarray(solution.embedding, dtype=np.float64)
        C = self.centers_
        return np.argmin((E * E).sum(1)[:, None] - 2 * E @ C.T + (C * C).sum(1)[None, :], axis=1)


@part
class KitArgmaxRounding(Rounding):
    """Kit fixture: argmax of the soft assignment."""

    name = "kit-argmax"
    needs = "soft"

    def round(self, solution, n_clusters, ctx):
        return np.asarray(solution.soft).argmax(axis=1).astype(np.int64)

    def assign(self, solution):
        return self.round(solution, 0, None)


@attrs.define
class Fixture:
    """Inputs for one part kind, built on :func:`make_blobs` data.

    Attributes
    ----------
    X : ndarray (n, d)
    y : ndarray (n,)
    n_clusters : int
    anchors : Anchors
        ``KitAnchors`` (12 training rows) with their nearest-anchor assignment.
    anchor_graph : AnchorGraph
        ``KitAnchorGraph`` on ``anchors`` (3 nearest anchors per point).
    affinity_graph : AffinityGraph
        ``KitKnnGraph`` (symmetric Gaussian 6-NN).
    solution : Solution
        ``KitSolver`` on the affinity graph: an embedding and a soft assignment.
    """

    X: np.ndarray
    y: np.ndarray
    n_clusters: int
    anchors: Anchors
    anchor_graph: AnchorGraph
    affinity_graph: AffinityGraph
    solution: Solution

    def graph(self, kind: str):
        """The fixture graph of a kind (``"affinity"`` or ``"anchor"``)."""
        return self.anchor_graph if kind == "anchor" else self.affinity_graph

    def solution_with(self, needs: str, n_clusters: int | None = None) -> Solution:
        """A solution holding only ``needs`` (``"embedding"`` or ``"soft"``), for
        ``n_clusters`` clusters (default: the fixture's)."""
        sol = self.solution
        if n_clusters is not None and n_clusters != self.n_clusters:
            sol = KitSolver().solve(self.affinity_graph, self.X, n_clusters, Context(seed=0))
        if needs == "soft":
            return Solution(soft=sol.soft.copy())
        return Solution(embedding=sol.embedding.copy())


def make_fixture(n: int = 60, d: int = 4, k: int = 3, *, seed: int = 0,
                 dtype=np.float64) -> Fixture:
    """Blobs plus anchors, both graph kinds and a solution built by the kit's own parts."""
    X, y = make_blobs(n, d, k, seed=seed, dtype=dtype)
    ctx = Context(seed=seed)
    anchors = KitAnchors(n_anchors=min(12, n)).select(X, ctx)
    ag = KitAnchorGraph().build(X, anchors, ctx)
    aff = KitKnnGraph().build(X, None, ctx)
    sol = KitSolver().solve(aff, X, k, ctx)
    return Fixture(X, y, k, anchors, ag, aff, sol)


# ----------------------------------------------------------------------------------
# Snapshots for the no-mutation and determinism checks
# ----------------------------------------------------------------------------------
def _snapshot(obj: Any) -> Any:
    """A deep, comparable copy of arrays, sparse matrices, graphs, anchors and solutions."""
    if obj is None or isinstance(obj, (bool, int, float, str, np.generic)):
        return obj
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if sp.issparse(obj):
        return ("sparse", obj.shape, np.asarray(obj.toarray()).copy())
    if isinstance(obj, Anchors):
        return ("anchors", _snapshot(obj.points), _snapshot(obj.assignment))
    if isinstance(obj, AffinityGraph):
        return ("affinity", _snapshot(obj.adjacency))
    if isinstance(obj, AnchorGraph):
        return ("anchor", _snapshot(obj.Z), _snapshot(obj.anchors))
    if isinstance(obj, Solution):
        return ("solution", _snapshot(obj.embedding), _snapshot(obj.soft),
                _snapshot(obj.anchor_embedding), _snapshot(obj.anchor_soft))
    if isinstance(obj, (list, tuple)):
        return tuple(_snapshot(o) for o in obj)
    return copy.deepcopy(obj)


def _differs(a: Any, b: Any, *, exact: bool = True) -> str | None:
    """Where two snapshots differ (``None`` when equal)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        if a_arr.shape != b_arr.shape:
            return f"shape {a_arr.shape} vs {b_arr.shape}"
        if a_arr.dtype.kind in "fc" and not exact:
            ok = np.allclose(a_arr, b_arr, rtol=1e-7, atol=1e-10, equal_nan=True)
        else:
            ok = np.array_equal(a_arr, b_arr, equal_nan=a_arr.dtype.kind in "fc")
        if not ok:
            return f"values differ (max abs difference {np.max(np.abs(a_arr - b_arr)):.3g})" \
                if a_arr.dtype.kind in "fciub" else "values differ"
        return None
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            return "structure differs"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _differs(x, y, exact=exact)
            if d:
                return f"[{i}] {d}"
        return None
    if isinstance(a, float) and isinstance(b, float):
        if exact:
            return None if (a == b or (a != a and b != b)) else f"{a!r} vs {b!r}"
        return None if np.isclose(a, b, rtol=1e-7, atol=1e-10) else f"{a!r} vs {b!r}"
    try:
        return None if a == b else f"{a!r} vs {b!r}"
    except Exception:  # noqa: BLE001 - objects without a boolean ==
        return None


# ----------------------------------------------------------------------------------
# Declarations and parameters
# ----------------------------------------------------------------------------------
def _kind_of(cls: type, kind: str | None) -> str:
    if kind is not None:
        if kind not in PART_KINDS:
            raise ValueError(f"kind must be one of {', '.join(PART_KINDS)}, got {kind!r}")
        return kind
    for k, base in PART_KINDS.items():
        if isinstance(cls, type) and issubclass(cls, base):
            return k
    raise ContractViolation(f"{cls!r} is not a graphclust part: it must subclass one of "
                  f"{', '.join('graphclust.' + b.__name__ for b in PART_KINDS.values())}")


def check_declarations(cls: type, kind: str | None = None) -> None:
    """Check a part class's declared attributes (``name``, kind and its declarations)."""
    kind = _kind_of(cls, kind)
    c = "declarations"
    base = PART_KINDS[kind]
    _ensure(isinstance(cls, type) and issubclass(cls, base), cls, c,
            f"a {kind} part must subclass graphclust.{base.__name__}")
    _ensure(cls.kind == kind, cls, c, f"class attribute kind is {cls.kind!r}, expected {kind!r}")
    _ensure(isinstance(cls.name, str) and bool(NAME_PATTERN.match(cls.name or "")), cls, c,
            f"name {cls.name!r} is not valid: a non-empty lower-case name of letters, digits, "
            "'-' or '_'")
    _ensure(attrs.has(cls) and "__attrs_attrs__" in cls.__dict__, cls, c,
            "the class is not decorated with @graphclust.part (parameters are not declared)")
    _ensure(bool(cls.summary()), cls, c,
            "no docstring: its first line is the summary 'graphclust plugins' shows")
    work = {"anchors": "select", "graph": "build", "solver": "solve", "rounding": "round",
            "metric": "score"}[kind]
    _ensure(getattr(cls, work) is not getattr(base, work), cls, c,
            f"the work method {work}() is not implemented")
    if kind == "graph":
        produces = inspect.getattr_static(cls, "produces")
        _ensure(produces in ("affinity", "anchor"), cls, c,
                f"produces must be 'affinity' or 'anchor', got {produces!r}")
        _ensure(isinstance(cls.needs_anchors, bool), cls, c,
                f"needs_anchors must be a bool, got {cls.needs_anchors!r}")
        if cls.can_transform():
            _ensure(produces == "anchor", cls, c,
                    "only anchor-graph builders place new points, but it implements transform()")
    elif kind == "solver":
        for attr, allowed in (("accepts", {"affinity", "anchor"}),
                              ("produces", {"embedding", "soft"})):
            value = getattr(cls, attr)
            _ensure(isinstance(value, (frozenset, set)) and value and value <= allowed, cls, c,
                    f"{attr} must be a non-empty frozenset of {sorted(allowed)}, got {value!r}")
        _ensure(isinstance(cls.needs_features, bool), cls, c,
                f"needs_features must be a bool, got {cls.needs_features!r}")
    elif kind == "rounding":
        _ensure(cls.needs in ("embedding", "soft"), cls, c,
                f"needs must be 'embedding' or 'soft', got {cls.needs!r}")
    elif kind == "metric":
        for attr in ("needs_truth", "greater_is_better"):
            _ensure(isinstance(getattr(cls, attr), bool), cls, c,
                    f"{attr} must be a bool, got {getattr(cls, attr)!r}")


class _Invalid:
    """A value no sensible check accepts."""

    def __repr__(self) -> str:
        return "<invalid>"


def check_parameters(part_or_cls: Part | type, kind: str | None = None, **options) -> Part:
    """Check parameter declarations and the scikit-learn parameter protocol.

    Returns the instance (built from ``options`` over the defaults) that the work
    checks use.
    """
    cls = part_or_cls if isinstance(part_or_cls, type) else type(part_or_cls)
    c = "parameters"
    fields = cls.parameters()
    names = [f.name for f in fields]
    for f in fields:
        doc = f.metadata.get("doc")
        _ensure(isinstance(doc, str) and doc.strip(), cls, c,
                f"parameter {f.name!r} has no doc (declare it with graphclust.param(..., doc=...))")
        check = f.metadata.get("check")
        _ensure(check is not None, cls, c,
                f"parameter {f.name!r} has no check (declare it with graphclust.param(..., "
                "check=graphclust.integer(...)) or another check)")
        _ensure(isinstance(getattr(check, "description", None), str) and check.description,
                cls, c, f"parameter {f.name!r}: its check has no description")
        if f.default is not attrs.NOTHING:
            default = f.default.factory() if isinstance(f.default, attrs.Factory) else f.default
            with _Contract(cls, c, f"the check of parameter {f.name!r} on its default"):
                msg = check(default)
            _ensure(msg is None, cls, c,
                    f"the default of parameter {f.name!r} ({default!r}) fails its own check: {msg}")
        elif f.name not in options and isinstance(part_or_cls, type):
            _fail(cls, c, f"parameter {f.name!r} has no default; pass a value: "
                  f"check_part({cls.__name__}, {f.name}=...)")
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise TypeError(f"check_part: {_who(cls)} has no parameter(s) {unknown}; "
                        f"parameters: {names}")
    # __init__ stores values as given and does not validate
    bad = _Invalid()
    base = {} if isinstance(part_or_cls, type) else part_or_cls.get_params(deep=False)
    for f in fields:
        kwargs = {**base, **options, f.name: bad}
        with _Contract(cls, c, f"{cls.__name__}({f.name}=<invalid>) (__init__ must not "
                       "validate; the composer calls check_params)"):
            obj = cls(**kwargs)
        _ensure(getattr(obj, f.name) is bad, cls, c,
                f"__init__ must store parameter {f.name!r} as given")
        check = f.metadata.get("check")
        if check is not None and check(bad) is not None:
            with _Contract(cls, c, "check_params()"):
                reported = [p for p, _ in obj.check_params()]
            _ensure(f.name in reported, cls, c,
                    f"check_params() did not report the invalid value of {f.name!r}")
    # the instance under test
    with _Contract(cls, c, "construction"):
        if isinstance(part_or_cls, type):
            inst = cls(**options)
        else:
            inst = clone(part_or_cls).set_params(**options) if options else part_or_cls
    with _Contract(cls, c, "check_params()"):
        problems = inst.check_params()
    _ensure(not problems, cls, c,
            "check_params() rejects the values under test: "
            + "; ".join(f"{p}: {m}" for p, m in problems))
    with _Contract(cls, c, "get_params/set_params/clone"):
        params = inst.get_params(deep=False)
        twin = clone(inst)
        twin.set_params(**params)
        twin_params = twin.get_params(deep=False)
    _ensure(sorted(params) == sorted(names), cls, c,
            f"get_params() keys {sorted(params)} differ from the declared parameters "
            f"{sorted(names)}")
    for key in names:
        d = _differs(_snapshot(params[key]), _snapshot(twin_params[key]))
        _ensure(d is None, cls, c, f"clone() changed parameter {key!r}: {d}")
    return inst


def missing_parts(part_obj: Part | type, registry: Registry | None = None) -> list[str]:
    """Nested part names (``part_spec`` parameters' values) that are not registered."""
    from graphclust._plugins import get_registry

    registry = registry or get_registry()
    out: list[str] = []
    obj = part_obj() if isinstance(part_obj, type) else part_obj
    for f in type(obj).parameters():
        check = f.metadata.get("check")
        pk = getattr(check, "_part_kind", None)
        value = getattr(obj, f.name, None)
        if pk is None or not isinstance(value, dict):
            continue
        out.extend(_missing_in(pk, value, registry))
    return out


def _missing_in(kind: str, value: dict, registry: Registry) -> list[str]:
    if kind == "pipeline":
        out = []
        for sec in ("anchors", "graph", "solver", "rounding"):
            if isinstance(value.get(sec), dict):
                out.extend(_missing_in(sec, value[sec], registry))
        return out
    name = value.get("name")
    if isinstance(name, str) and name not in registry.parts(kind):
        return [f"{kind} {name!r}"]
    return []


# ----------------------------------------------------------------------------------
# Work-method checks per kind
# ----------------------------------------------------------------------------------
def _fresh(inst: Part) -> Part:
    return clone(inst)


def _inputs(inst: Part, kind: str, fx: Fixture, X, *, graph_kind: str | None = None,
            n_clusters: int | None = None) -> tuple:
    """Fresh work-method inputs (besides the context and ``n_clusters``)."""
    if kind == "anchors":
        return (X,)
    if kind == "graph":
        return (X, fx.anchors if inst.needs_anchors else None)
    if kind == "solver":
        return (fx.graph(graph_kind), X)
    if kind == "rounding":
        return (fx.solution_with(inst.needs, n_clusters),)
    return (fx.y.copy(), fx.y.copy() if inst.needs_truth else None, fx.affinity_graph)


def _invoke(inst: Part, kind: str, args: tuple, ctx: Context, k: int):
    if kind == "anchors":
        return inst.select(args[0], ctx)
    if kind == "graph":
        return inst.build(args[0], args[1], ctx)
    if kind == "solver":
        return inst.solve(args[0], args[1], k, ctx)
    if kind == "rounding":
        return inst.round(args[0], k, ctx)
    return inst.score(*args)


def _call(inst: Part, kind: str, fx: Fixture, X, ctx: Context, *, graph_kind: str | None = None,
          n_clusters: int | None = None):
    """Run the work method on fresh fixture inputs; return (output, inputs)."""
    k = fx.n_clusters if n_clusters is None else n_clusters
    args = _inputs(inst, kind, fx, X, graph_kind=graph_kind, n_clusters=k)
    return _invoke(inst, kind, args, ctx, k), args


def _check_output(inst: Part, kind: str, out: Any, fx: Fixture, X, *, contract: str,
                  graph_kind: str | None = None, n_clusters: int | None = None) -> None:
    cls = type(inst)
    n, d = X.shape
    k = fx.n_clusters if n_clusters is None else n_clusters
    c = contract
    if kind == "anchors":
        _ensure(isinstance(out, Anchors), cls, c, f"select() must return graphclust.Anchors, "
                f"got {type(out).__name__}")
        P = np.asarray(out.points)
        _ensure(P.ndim == 2 and P.shape[1] == d and 1 <= P.shape[0] <= n, cls, c,
                f"anchors must have shape (m, {d}) with 1 <= m <= n = {n}, got {P.shape}")
        _ensure(P.dtype.kind == "f" and np.all(np.isfinite(P)), cls, c,
                "anchor points must be finite floats")
        if out.assignment is not None:
            a = np.asarray(out.assignment)
            _ensure(a.shape == (n,) and a.dtype.kind in "iu" and a.min() >= 0
                    and a.max() < P.shape[0], cls, c,
                    f"assignment must be ints of shape ({n},) in [0, {P.shape[0]}), got "
                    f"{a.dtype} {a.shape}")
    elif kind == "graph":
        produces = inst.produces
        want = AnchorGraph if produces == "anchor" else AffinityGraph
        _ensure(isinstance(out, want), cls, c, f"declares produces={produces!r} so build() "
                f"must return graphclust.{want.__name__}, got {type(out).__name__}")
        _ensure(out.n == n, cls, c, f"the graph must have n = {n} rows, got {out.n}")
        if isinstance(out, AffinityGraph):
            A = out.adjacency
            asym = abs(A - A.T).max() if A.nnz else 0.0
            scale = max(1.0, abs(A).max() if A.nnz else 0.0)
            _ensure(asym <= 1e-8 * scale, cls, c,
                    f"an affinity graph must be symmetric (max |A - Aᵀ| = {asym:.3g})")
            _ensure(A.nnz > 0, cls, c, "the affinity graph has no edges on well-separated blobs")
        else:
            if inst.needs_anchors:
                m = fx.anchors.n_anchors
                _ensure(out.n_anchors == m, cls, c,
                        f"Z must have one column per anchor ({m}), got {out.n_anchors}")
            if out.anchors is not None:
                _ensure(out.anchors.n_anchors == out.n_anchors, cls, c,
                        "graph.anchors and the columns of Z disagree")
            _ensure(out.nnz > 0, cls, c, "Z has no entries")
    elif kind == "solver":
        _ensure(isinstance(out, Solution), cls, c, f"solve() must return graphclust.Solution, "
                f"got {type(out).__name__}")
        missing = sorted(inst.produces - out.provides)
        _ensure(not missing, cls, c, f"declares produces={sorted(inst.produces)} but the "
                f"solution has no {' / '.join(missing)}")
        _ensure(out.n == n, cls, c, f"the solution must have n = {n} rows, got {out.n}")
        for attr in ("embedding", "soft"):
            arr = getattr(out, attr)
            if arr is None:
                continue
            _ensure(arr.shape[0] == n and arr.shape[1] >= 1, cls, c,
                    f"solution.{attr} must have shape ({n}, p >= 1), got {arr.shape}")
            _ensure(np.all(np.isfinite(arr)), cls, c, f"solution.{attr} has non-finite values")
        if out.soft is not None:
            _ensure(out.soft.shape[1] <= max(k, 1) and out.soft.min() >= 0, cls, c,
                    f"solution.soft must be nonnegative with at most k = {k} columns, got "
                    f"{out.soft.shape}")
        if graph_kind == "anchor":
            _ensure(out.extendable or not inst.out_of_sample, cls, c,
                    "declares out_of_sample=True but its solution on an anchor graph has "
                    "neither a feature projection nor per-anchor values: predict() would fail")
            _ensure(not out.extendable or inst.out_of_sample, cls, c,
                    "its solution on an anchor graph places new points but the solver "
                    "does not declare out_of_sample=True, so predict() is never offered")
        if graph_kind == "anchor" and out.extendable:
            # an embedding placed through the feature projection needs no anchor_embedding
            partial = [a for a in sorted(out.provides) if getattr(out, f"anchor_{a}") is None
                       and not (a == "embedding" and out.projection is not None)]
            _ensure(not partial, cls, c,
                    f"the solution sets per-anchor values for new points but not anchor_"
                    f"{' / anchor_'.join(partial)}, although it holds that too: "
                    "predict() would fail with a rounding that reads it (set every anchor_* "
                    "value it can)")
        if graph_kind == "anchor":
            m = fx.anchor_graph.n_anchors
            for attr, full in (("anchor_embedding", out.embedding), ("anchor_soft", out.soft)):
                arr = getattr(out, attr)
                if arr is None:
                    continue
                _ensure(full is not None and arr.shape == (m, full.shape[1]), cls, c,
                        f"solution.{attr} must have shape (m, p) = ({m}, "
                        f"{None if full is None else full.shape[1]}), got {arr.shape}")
    elif kind == "rounding":
        lab = np.asarray(out)
        _ensure(lab.shape == (n,), cls, c, f"round() must return labels of shape ({n},), got "
                f"{lab.shape}")
        _ensure(lab.dtype.kind in "iu", cls, c, f"labels must be integers, got dtype {lab.dtype}")
        _ensure(lab.min() >= 0 and lab.max() < k, cls, c,
                f"labels must lie in [0, k) = [0, {k}), got [{lab.min()}, {lab.max()}]")
    else:
        _ensure(isinstance(out, (float, np.floating)) and not isinstance(out, bool), cls, c,
                f"score() must return a float, got {type(out).__name__}")
        _ensure(np.isfinite(out), cls, c, f"score() returned {out!r}")


def _runs(inst: Part, kind: str) -> list[dict]:
    """Variants of the work call: solvers run on every graph kind they accept."""
    if kind == "solver":
        return [{"graph_kind": g} for g in sorted(inst.accepts)]
    return [{}]


def _check_work(inst: Part, kind: str, fx: Fixture) -> None:
    cls = type(inst)
    quiet = warnings.catch_warnings()
    with quiet:
        warnings.simplefilter("ignore")
        for run in _runs(inst, kind):
            where = f" on an {run['graph_kind']} graph" if run else ""
            # work + no mutation
            p = _fresh(inst)
            X = fx.X.copy()
            args = _inputs(p, kind, fx, X, **run)
            before = _snapshot(args)
            with _Contract(cls, "work", f"{_work_name(kind)}(){where}"):
                out1 = _invoke(p, kind, args, Context(seed=0), fx.n_clusters)
            _check_output(p, kind, out1, fx, X, contract="work", **run)
            d = _differs(before, _snapshot(args))
            _ensure(d is None, cls, "no-mutation", f"{_work_name(kind)}(){where} modified "
                    f"its input: {d}")
            _ensure(np.array_equal(X, fx.X), cls, "no-mutation",
                    f"{_work_name(kind)}(){where} modified X")
            # determinism
            with _Contract(cls, "determinism", f"a second {_work_name(kind)}(){where}"):
                out2, _ = _call(_fresh(inst), kind, fx, fx.X.copy(), Context(seed=0), **run)
            d = _differs(_snapshot(out1), _snapshot(out2), exact=False)
            _ensure(d is None, cls, "determinism",
                    f"two runs with Context(seed=0){where} differ: {d}")
            # float32
            X32 = fx.X.astype(np.float32)
            with _Contract(cls, "float32", f"{_work_name(kind)}(){where} on float32 X"):
                out32, _ = _call(_fresh(inst), kind, fx, X32, Context(seed=0), **run)
            _check_output(inst, kind, out32, fx, X32, contract="float32", **run)
            # sparse, only where claimed
            if getattr(cls, "accepts_sparse", False) and kind in ("anchors", "graph", "solver"):
                Xs = sp.csr_array(fx.X)
                with _Contract(cls, "sparse", f"{_work_name(kind)}(){where} on sparse X"):
                    outs, _ = _call(_fresh(inst), kind, fx, Xs, Context(seed=0), **run)
                _check_output(inst, kind, outs, fx, fx.X, contract="sparse", **run)
        _check_kind_extras(inst, kind, fx)


def _work_name(kind: str) -> str:
    return {"anchors": "select", "graph": "build", "solver": "solve", "rounding": "round",
            "metric": "score"}[kind]


def _check_kind_extras(inst: Part, kind: str, fx: Fixture) -> None:
    cls = type(inst)
    n = fx.X.shape[0]
    if kind == "anchors" and "n_anchors" in inst.get_params(deep=False):
        p = _fresh(inst).set_params(n_anchors=n + 7)
        with _Contract(cls, "work", f"select() with n_anchors = n + 7 = {n + 7}"):
            out = p.select(fx.X.copy(), Context(seed=0))
        _ensure(isinstance(out, Anchors) and out.n_anchors <= n, cls, "work",
                f"with n_anchors > n the anchor count must be clamped to n = {n}")
    if kind == "graph" and inst.can_transform():
        p = _fresh(inst)
        with _Contract(cls, "work", "build() then transform(X_new, graph)"):
            graph = p.build(fx.X.copy(), fx.anchors if p.needs_anchors else None, Context(seed=0))
            X_new = fx.X[:7] + 0.01
            rows = p.transform(X_new.copy(), graph)
        R = rows.toarray() if sp.issparse(rows) else np.asarray(rows)
        _ensure(R.shape == (7, graph.n_anchors), cls, "work",
                f"transform() must return rows of shape (n_new, m) = (7, {graph.n_anchors}), "
                f"got {R.shape}")
        _ensure(np.all(np.isfinite(R)) and R.min() >= 0, cls, "work",
                "transform() rows must be finite and nonnegative")
    if kind == "solver":
        for gk in sorted(inst.accepts):
            with _Contract(cls, "work", f"solve() with n_clusters = 1 on an {gk} graph"):
                out, _ = _call(_fresh(inst), kind, fx, fx.X.copy(), Context(seed=0),
                               graph_kind=gk, n_clusters=1)
            _check_output(inst, kind, out, fx, fx.X, contract="work", graph_kind=gk,
                          n_clusters=1)
    if kind == "rounding":
        with _Contract(cls, "work", "round() with n_clusters = 1"):
            out, _ = _call(_fresh(inst), kind, fx, fx.X, Context(seed=0), n_clusters=1)
        _check_output(inst, kind, out, fx, fx.X, contract="work", n_clusters=1)
        if type(inst).assign is not Rounding.assign:
            p = _fresh(inst)
            sol = fx.solution_with(p.needs)
            with _Contract(cls, "work", "round() then assign(solution)"):
                p.round(sol, fx.n_clusters, Context(seed=0))
                new = p.assign(sol)
            _check_output(inst, kind, new, fx, fx.X, contract="work")
    if kind == "metric" and inst.needs_truth:
        rng = np.random.default_rng(0)
        shuffled = rng.permutation(fx.y)
        with _Contract(cls, "work", "score()"):
            good = float(_fresh(inst).score(fx.y.copy(), fx.y.copy(), fx.affinity_graph))
            bad = float(_fresh(inst).score(shuffled, fx.y.copy(), fx.affinity_graph))
        better = good >= bad if inst.greater_is_better else good <= bad
        _ensure(better, cls, "work",
                f"greater_is_better={inst.greater_is_better} but the true labels score {good:.4g} "
                f"and shuffled labels {bad:.4g}")


# ----------------------------------------------------------------------------------
# The part inside a minimal pipeline, through the estimator
# ----------------------------------------------------------------------------------
def _minimal_spec(inst: Part, kind: str) -> dict:
    spec: dict[str, Any] = {}
    if kind == "anchors":
        spec = {"anchors": inst, "graph": KitAnchorGraph(), "solver": KitSolver(),
                "rounding": KitKMeansRounding()}
    elif kind == "graph":
        spec = {"graph": inst, "solver": KitSolver(), "rounding": KitKMeansRounding()}
        if inst.needs_anchors:
            spec["anchors"] = KitAnchors()
    elif kind == "solver":
        if "anchor" in inst.accepts:
            spec = {"anchors": KitAnchors(), "graph": KitAnchorGraph()}
        else:
            spec = {"graph": KitKnnGraph()}
        spec["solver"] = inst
        spec["rounding"] = (KitKMeansRounding() if "embedding" in inst.produces
                            else KitArgmaxRounding())
    elif kind == "rounding":
        spec = {"graph": KitKnnGraph(), "solver": KitSolver(), "rounding": inst}
    else:
        spec = {"graph": KitKnnGraph(), "solver": KitSolver(), "rounding": KitKMeansRounding(),
                "metrics": [inst]}
    return spec


def _check_pipeline(inst: Part, kind: str, fx: Fixture) -> None:
    from graphclust._estimator import GraphClustering

    cls = type(inst)
    c = "pipeline"
    k = fx.n_clusters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "metric":
            with _Contract(cls, c, "compose() of a minimal pipeline with it"):
                from graphclust._composer import compose

                pipe = compose(_minimal_spec(_fresh(inst), kind), registry=Registry())
            with _Contract(cls, c, "a minimal pipeline run with it as a metric"):
                res = pipe.run(fx.X.copy(), fx.y.copy(), n_clusters=k, ctx=Context(seed=0))
            _ensure(inst.name in res.scores or not inst.needs_truth, cls, c,
                    "the pipeline did not report its score")
            return
        model = GraphClustering(_minimal_spec(_fresh(inst), kind), n_clusters=k, random_state=0)
        with _Contract(cls, c, "GraphClustering(<minimal pipeline with it>).fit(X)"):
            labels = model.fit(fx.X.copy()).labels_
        _ensure(labels.shape == (fx.X.shape[0],) and labels.min() >= 0 and labels.max() < k,
                cls, c, f"the pipeline's labels must be (n,) in [0, {k})")
        if model._can_predict() and model.solution_.extendable:
            with _Contract(cls, c, "predict(X_new) of the fitted minimal pipeline"):
                new = model.predict(fx.X[:5] + 0.01)
            _ensure(np.asarray(new).shape == (5,), cls, c, "predict() must give one label a row")
        X_nan = fx.X.copy()
        X_nan[3, 1] = np.nan
        for bad, what, words in ((X_nan, "X with a NaN", ("nan",)),
                                 (fx.X[: k - 1].copy(), f"X with n = {k - 1} < n_clusters = {k}",
                                  ("n_clusters", "sample"))):
            try:
                clone(model).fit(bad)
            except ValueError as exc:
                text = str(exc).lower()
                _ensure(any(w in text for w in words), cls, c,
                        f"fitting {what} raised an unclear error: {exc}")
            except Exception as exc:  # noqa: BLE001
                _fail(cls, c, f"fitting {what} must raise a ValueError, got "
                      f"{type(exc).__name__}: {exc}")
            else:
                _fail(cls, c, f"fitting {what} did not raise")


# ----------------------------------------------------------------------------------
# Public entry points
# ----------------------------------------------------------------------------------
def check_part(part_or_cls: Part | type, kind: str | None = None, **options) -> None:
    """Check that a part honours the interface contract of its kind.

    Parameters
    ----------
    part_or_cls : Part subclass or instance
        The part to check. A class is instantiated with its defaults updated by
        ``options``; an instance is cloned (``options`` update its parameters).
    kind : {"anchors", "graph", "solver", "rounding", "metric"}, optional
        Default: from the interface the class subclasses.
    **options
        Parameter values to check the part with (required for parameters without a
        default).

    Raises
    ------
    AssertionError
        On the first broken contract, naming the part (kind, registered name, class)
        and the contract (one of :data:`COMMON_CHECKS`), with what was expected and
        what was found. Exceptions raised by the part itself are wrapped, the original
        chained as ``__cause__``.

    Notes
    -----
    The checks use small data (60 x 4 blobs, 3 clusters) and take well under a
    second for a typical part. Warnings the part emits are silenced.
    """
    cls = part_or_cls if isinstance(part_or_cls, type) else type(part_or_cls)
    kind = _kind_of(cls, kind)
    check_declarations(cls, kind)
    inst = check_parameters(part_or_cls, kind, **options)
    fx = make_fixture()
    _check_work(inst, kind, fx)
    _check_pipeline(inst, kind, fx)


def parametrize_parts(kinds: Iterable[str] | str | None = None, registry: Registry | None = None,
                      *, argname: str = "part_record") -> Callable:
    """A ``pytest.mark.parametrize`` over registered parts, one test id ``kind:name`` each.

    Parameters
    ----------
    kinds : str or iterable of str, optional
        Part kinds to include (default: all five).
    registry : Registry, optional
        Default: the process-wide registry of installed plugins, read at collection time
        (so newly installed plugins are picked up by the next pytest run).
    argname : str, default="part_record"
        The test function's argument receiving the :class:`~graphclust.PartRecord`
        (``.kind``, ``.name``, ``.cls``, ``.provider``).
    """
    import pytest

    from graphclust._plugins import get_registry

    registry = registry or get_registry()
    if isinstance(kinds, str):
        kinds = [kinds]
    kinds = list(PART_KINDS) if kinds is None else list(kinds)
    for k in kinds:
        if k not in PART_KINDS:
            raise ValueError(f"kinds must be among {', '.join(PART_KINDS)}, got {k!r}")
    records: list[PartRecord] = [r for k in kinds for r in registry.parts(k).records()]
    return pytest.mark.parametrize(argname, records,
                                   ids=[f"{r.kind}:{r.name}" for r in records])


_ = part_spec  # re-exported names used in docs
