"""The checks every part kind shares.

``declarations`` and ``parameters`` read the class; ``work``, ``no-mutation``,
``determinism``, ``float32``, ``sparse`` and ``pipeline`` run the part on the fixture
through its kind's :class:`~graphclust.testing._contract.KindContract`. All checks of
one part share a :class:`Session`, which builds the part under test once and runs the
work method once per variant for ``work``, ``no-mutation`` and ``determinism``
together (the contract suite stays as fast as one monolithic check).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from graphclust import GraphKind
from graphclust import PART_KINDS, Context, Part
from graphclust import NAME_PATTERN
from graphclust.testing._contract import (
    ContractViolation,
    KindContract,
    Variant,
    ensure,
    fail,
    guard,
    kind_contract,
    violation,
    who,
)
from graphclust.testing._fixture import Fixture, shared_fixture
from graphclust.testing._snapshot import differs, snapshot

__all__ = ["COMMON_CHECKS", "Session", "kind_of", "check_declarations", "check_parameters",
           "chunk_protocol_problems", "COMMON_CHECK_FUNCTIONS"]

#: Names of the checks every kind shares, in the order they run (``sparse`` only for
#: parts declaring ``accepts_sparse = True``); kind modules add their own.
COMMON_CHECKS = ("declarations", "parameters", "work", "determinism", "no-mutation",
                 "float32", "sparse", "pipeline")


def kind_of(cls: Any, kind: str | None) -> str:
    """The part kind of ``cls`` (``kind`` if given, checked; else from its interface)."""
    if kind is not None:
        if kind not in PART_KINDS:
            raise ValueError(f"kind must be one of {', '.join(PART_KINDS)}, got {kind!r}")
        return kind
    for k, base in PART_KINDS.items():
        if isinstance(cls, type) and issubclass(cls, base):
            return k
    raise ContractViolation(
        f"{cls!r} is not a graphclust part: it must subclass one of "
        f"{', '.join('graphclust.' + b.__name__ for b in PART_KINDS.values())}",
        check="declarations")


# ----------------------------------------------------------------------------------
# declarations
# ----------------------------------------------------------------------------------
def check_declarations(cls: type, kind: str | None = None) -> None:
    """Check a part class's declared attributes: ``name``, kind, decoration, docstring
    summary, the work method and the kind's own declarations.

    Raises
    ------
    ContractViolation
        Listing every problem found (not only the first).
    """
    kind = kind_of(cls, kind)
    base = PART_KINDS[kind]
    if not (isinstance(cls, type) and issubclass(cls, base)):
        fail(cls, "declarations", f"a {kind} part must subclass graphclust.{base.__name__}")
    problems: list[str] = []
    if cls.kind != kind:
        problems.append(f"class attribute kind is {cls.kind!r}, expected {kind!r}")
    if not (isinstance(cls.name, str) and NAME_PATTERN.match(cls.name or "")):
        problems.append(f"name {cls.name!r} is not valid: a non-empty lower-case name of "
                        "letters, digits, '-' or '_'")
    if not (attrs.has(cls) and "__attrs_attrs__" in cls.__dict__):
        problems.append("the class is not decorated with @graphclust.part (parameters are "
                        "not declared)")
    if not cls.summary():
        problems.append("no docstring: its first line is the summary 'graphclust plugins' "
                        "shows")
    contract = kind_contract(kind)
    if contract is not None:
        work = contract.work_method
        if getattr(cls, work, None) is getattr(base, work, None):
            problems.append(f"the work method {work}() is not implemented")
        problems.extend(contract.declaration_problems(cls))
    problems.extend(chunk_protocol_problems(cls))
    if problems:
        fail(cls, "declarations", "; ".join(problems))


def chunk_protocol_problems(cls: type[Part]) -> list[str]:
    """What breaks the chunk protocol (:mod:`graphclust.chunks`) in the class's
    declarations, read from the hooks its interface declares.

    * ``chunkwise = True`` without every hook its kind needs
      (:meth:`graphclust.Part.missing_chunk_hooks`, which also names the rest of an
      optional group implemented in part): the missing methods are named;
    * chunk-only hooks implemented (``prepare_chunked``, ``solve_chunked``,
      ``lift_rows``...) while ``chunkwise`` is left at the interface's ``False``: the
      chunked execution would never call them, so this is a failure too, unless a class
      of the part itself sets ``chunkwise = False`` (a deliberate opt-out, e.g. a
      subclass whose chunked form no longer holds).
    """
    chunkwise = cls.chunkwise
    if not isinstance(chunkwise, bool):
        return [f"chunkwise must be a bool, got {chunkwise!r}"]
    if chunkwise:
        missing = cls.missing_chunk_hooks()
        if not missing:
            return []
        return [(f"declares chunkwise = True but does not implement "
                 f"{', '.join(h + '()' for h in missing)}, which the chunk protocol "
                 f"(graphclust.chunks) needs of a {cls.kind} part")]
    hooks = cls.implemented_chunk_hooks()
    interface = PART_KINDS.get(cls.kind, Part)
    opted_out = any("chunkwise" in vars(b) for b in cls.__mro__
                    if b is not interface and issubclass(b, interface))
    if hooks and not opted_out:
        return [(f"implements {', '.join(h + '()' for h in hooks)} of the chunk protocol "
                 "but does not declare chunkwise = True, so the chunked execution never "
                 "calls it (declare chunkwise = True, or set chunkwise = False in the class "
                 "to opt out)")]
    return []


# ----------------------------------------------------------------------------------
# parameters
# ----------------------------------------------------------------------------------
def lifted_rows(parts: list, attr: str, cls: type) -> np.ndarray:
    """The per-block ``lift_rows()`` solutions' ``attr`` stacked (a ``chunked`` check);
    a block without it is a violation."""
    rows = [getattr(q, attr) for q in parts]
    ensure(all(r is not None for r in rows), cls, "chunked", f"lift_rows() gives no {attr}")
    return np.vstack(rows)


class _Invalid:
    """A value no sensible check accepts."""

    def __repr__(self) -> str:
        return "<invalid>"


def check_parameters(part_or_cls: Part | type, kind: str | None = None, **options: Any) -> Part:
    """Check parameter declarations and the scikit-learn parameter protocol.

    Every parameter has a ``doc`` and a ``check`` whose description is set, every default
    passes its own check, ``__init__`` stores values as given (an invalid value is
    reported by ``check_params`` instead), and ``get_params``/``set_params``/``clone``
    round-trip.

    Returns
    -------
    Part
        The instance under test (``options`` over the defaults, or over the given
        instance's parameters).

    Raises
    ------
    ContractViolation
        On the first broken rule.
    TypeError
        If ``options`` names a parameter the part does not have.
    """
    cls = part_or_cls if isinstance(part_or_cls, type) else type(part_or_cls)
    kind_of(cls, kind)
    c = "parameters"
    fields = cls.parameters()
    names = [f.name for f in fields]
    _refuse_unknown_options(cls, options)
    for f in fields:
        doc = f.metadata.get("doc")
        ensure(isinstance(doc, str) and doc.strip(), cls, c,
               f"parameter {f.name!r} has no doc (declare it with graphclust.param(..., "
               "doc=...))")
        check = f.metadata.get("check")
        ensure(check is not None, cls, c,
               f"parameter {f.name!r} has no check (declare it with graphclust.param(..., "
               "check=graphclust.integer(...)) or another check)")
        ensure(isinstance(getattr(check, "description", None), str) and check.description,
               cls, c, f"parameter {f.name!r}: its check has no description")
        if f.default is not attrs.NOTHING:
            default = f.default.factory() if isinstance(f.default, attrs.Factory) else f.default
            with guard(cls, c, f"the check of parameter {f.name!r} on its default"):
                msg = check(default)
            ensure(msg is None, cls, c,
                   f"the default of parameter {f.name!r} ({default!r}) fails its own check: "
                   f"{msg}")
        elif f.name not in options and isinstance(part_or_cls, type):
            fail(cls, c, f"parameter {f.name!r} has no default; pass a value: "
                 f"check_part({cls.__name__}, {f.name}=...)")
    # __init__ stores values as given and does not validate
    bad = _Invalid()
    base = {} if isinstance(part_or_cls, type) else part_or_cls.get_params(deep=False)
    for f in fields:
        kwargs = {**base, **options, f.name: bad}
        with guard(cls, c, f"{cls.__name__}({f.name}=<invalid>) (__init__ must not validate; "
                   "the composer calls check_params)"):
            obj = cls(**kwargs)
        ensure(getattr(obj, f.name) is bad, cls, c,
               f"__init__ must store parameter {f.name!r} as given")
        check = f.metadata.get("check")
        if check is not None and check(bad) is not None:
            with guard(cls, c, "check_params()"):
                reported = [p for p, _ in obj.check_params()]
            ensure(f.name in reported, cls, c,
                   f"check_params() did not report the invalid value of {f.name!r}")
    inst = _build(part_or_cls, options, c)
    with guard(cls, c, "check_params()"):
        problems = inst.check_params()
    ensure(not problems, cls, c, "check_params() rejects the values under test: "
           + "; ".join(f"{p}: {m}" for p, m in problems))
    with guard(cls, c, "get_params/set_params/clone"):
        params = inst.get_params(deep=False)
        twin = clone(inst)
        twin.set_params(**params)
        twin_params = twin.get_params(deep=False)
    ensure(sorted(params) == sorted(names), cls, c,
           f"get_params() keys {sorted(params)} differ from the declared parameters "
           f"{sorted(names)}")
    for key in names:
        d = differs(snapshot(params[key]), snapshot(twin_params[key]))
        ensure(d is None, cls, c, f"clone() changed parameter {key!r}: {d}")
    return inst


def _refuse_unknown_options(cls: type, options: dict) -> None:
    names = [f.name for f in cls.parameters()]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise TypeError(f"check_part: {who(cls)} has no parameter(s) {unknown}; "
                        f"parameters: {names}")


def _build(part_or_cls: Part | type, options: dict, check: str) -> Part:
    cls = part_or_cls if isinstance(part_or_cls, type) else type(part_or_cls)
    with guard(cls, check, "building the part under test"):
        if isinstance(part_or_cls, type):
            return cls(**options)
        return clone(part_or_cls).set_params(**options) if options else part_or_cls


# ----------------------------------------------------------------------------------
# the session shared by the checks of one part
# ----------------------------------------------------------------------------------
@attrs.define
class _Run:
    """One call of the work method on fresh fixture inputs."""

    out: Any = None
    error: BaseException | None = None
    mutation: str | None = None
    x_modified: bool = False


class Session:
    """The part under test, its kind's contract and the runs its checks share.

    Parameters
    ----------
    part_or_cls : Part subclass or instance
    kind : str
    options : dict
        Parameter values over the defaults (or over the instance's parameters).
    """

    def __init__(self, part_or_cls: Part | type, kind: str, options: dict) -> None:
        self.part_or_cls = part_or_cls
        self.cls: type = part_or_cls if isinstance(part_or_cls, type) else type(part_or_cls)
        self.kind = kind
        self.options = dict(options)
        self.contract: KindContract | None = kind_contract(kind)
        self._template: Part | None = None
        self._runs: dict[Variant, _Run] = {}

    # -- building ----------------------------------------------------------------------
    def instance(self, check: str) -> Part:
        """A fresh clone of the part under test (a failure is reported under ``check``)."""
        if self._template is None:
            self._template = _build(self.part_or_cls, self.options, check)
        with guard(self.cls, check, "clone() of the part under test"):
            return clone(self._template)

    @staticmethod
    def fixture() -> Fixture:
        """A private copy of the kit's fixture."""
        return shared_fixture()

    @property
    def work(self) -> str:
        """The work method's name, for messages."""
        return self.contract.work_method if self.contract else "work"

    # -- calls ---------------------------------------------------------------------------
    def call(self, check: str, variant: Variant, X: Any | None = None,
             n_clusters: int | None = None, ctx: Context | None = None) -> tuple[Any, Part]:
        """Run the work method of a fresh clone on fresh inputs; return (output, part).

        ``X`` defaults to the fixture data; a failure is reported under ``check``.
        """
        fx = self.fixture()
        k = fx.n_clusters if n_clusters is None else n_clusters
        inst = self.instance(check)
        X = fx.X if X is None else X
        args = self.contract.inputs(inst, fx, X, variant, k)
        with guard(self.cls, check, f"{self.work}(){variant.where}{_dtype_note(X)}"):
            out = self.contract.invoke(inst, args, ctx or Context(seed=0), k)
        return out, inst

    def first_run(self, check: str, variant: Variant) -> _Run:
        """The first call on float64 fixture data, with input snapshots (run once)."""
        if variant not in self._runs:
            fx = self.fixture()
            inst = self.instance(check)
            X = fx.X.copy()
            run = _Run()
            args = self.contract.inputs(inst, fx, X, variant, fx.n_clusters)
            before = snapshot(args)
            try:
                run.out = self.contract.invoke(inst, args, Context(seed=0), fx.n_clusters)
            except Exception as exc:  # noqa: BLE001 - reported by every check that needs it
                run.error = exc
            run.mutation = differs(before, snapshot(args))
            run.x_modified = not np.array_equal(X, fx.X)
            self._runs[variant] = run
        return self._runs[variant]

    def chunked_case(self, word: str) -> tuple:
        """What a ``chunked`` check starts from: ``(part, fixture anchor graph, k,
        InMemoryChunks of the fixture in three row blocks)``, after ensuring the part
        (an ``adapter`` or ``solver``, ``word``) accepts anchor graphs."""
        from graphclust.chunks import InMemoryChunks

        fx = self.fixture()
        ensure(GraphKind.ANCHOR in self.cls.accepts, self.cls, "chunked",
               f"declares chunkwise=True, which needs {word} that accepts anchor graphs")
        graph = fx.anchor_graph
        chunks = InMemoryChunks(fx.X.copy(), graph.Z, block_rows=-(-fx.X.shape[0] // 3))
        return self.instance("chunked"), graph, fx.n_clusters, chunks

    def first_output(self, check: str, variant: Variant) -> Any:
        """The first run's output, or a violation of ``check`` if it raised."""
        run = self.first_run(check, variant)
        if run.error is not None:
            exc = run.error
            raise violation(self.cls, check, f"{self.work}(){variant.where} raised "
                            f"{type(exc).__name__}: {exc}") from exc
        return run.out

    def variants(self, check: str) -> list[Variant]:
        """The kind's calls of the work method for this part (failures under ``check``)."""
        with guard(self.cls, check, "reading its declarations"):
            return self.contract.variants(self.instance(check))


def _dtype_note(X: Any) -> str:
    if sp.issparse(X):
        return " on sparse X"
    dtype = getattr(X, "dtype", None)
    return f" on {dtype} X" if dtype is not None and dtype != np.float64 else ""


# ----------------------------------------------------------------------------------
# work-method checks
# ----------------------------------------------------------------------------------
def quiet(func: Callable[[Session], None]) -> Callable[[Session], None]:
    """``func`` with the warnings the part emits silenced and BLAS on one thread.

    The fixture is tiny: a threaded BLAS only adds overhead there (a 60 x 60 ``eigh``
    is tens of times slower with two OpenBLAS threads on a busy machine).
    """

    def run(session: Session) -> None:
        with warnings.catch_warnings(), threadpool_limits(limits=1):
            warnings.simplefilter("ignore")
            func(session)

    run.__name__ = func.__name__
    run.__doc__ = func.__doc__
    return run


def check_work(session: Session) -> None:
    """The work method's output has the kind's type, shape and values."""
    fx = session.fixture()
    for v in session.variants("work"):
        out = session.first_output("work", v)
        session.contract.check_output(session.instance("work"), out, fx, fx.X, check="work",
                                      variant=v, n_clusters=fx.n_clusters)


def check_no_mutation(session: Session) -> None:
    """The work method leaves its inputs (data, anchors, graph, solution, labels) alone."""
    c = "no-mutation"
    for v in session.variants(c):
        run = session.first_run(c, v)
        if run.error is not None:
            session.first_output(c, v)
        ensure(run.mutation is None, session.cls, c,
               f"{session.work}(){v.where} modified its input: {run.mutation}")
        ensure(not run.x_modified, session.cls, c, f"{session.work}(){v.where} modified X")


def check_determinism(session: Session) -> None:
    """Two fresh clones with the same ``Context`` seed give the same output."""
    c = "determinism"
    for v in session.variants(c):
        first = session.first_output(c, v)
        again, _ = session.call(c, v, X=session.fixture().X.copy())
        d = differs(snapshot(first), snapshot(again), exact=False)
        ensure(d is None, session.cls, c, f"two runs with Context(seed=0){v.where} differ: {d}")


def check_float32(session: Session) -> None:
    """float32 data is accepted and gives valid output."""
    c = "float32"
    fx = session.fixture()
    X32 = fx.X.astype(np.float32)
    for v in session.variants(c):
        out, inst = session.call(c, v, X=X32)
        session.contract.check_output(inst, out, fx, X32, check=c, variant=v,
                                      n_clusters=fx.n_clusters)


def check_sparse(session: Session) -> None:
    """A part declaring ``accepts_sparse = True`` works on a CSR ``X``."""
    c = "sparse"
    fx = session.fixture()
    for v in session.variants(c):
        out, inst = session.call(c, v, X=sp.csr_array(fx.X))
        session.contract.check_output(inst, out, fx, fx.X, check=c, variant=v,
                                      n_clusters=fx.n_clusters)


def applies_sparse(cls: type, contract: KindContract) -> bool:
    """Whether the ``sparse`` check applies (the part claims it, the kind receives X)."""
    return contract.sparse_input and getattr(cls, "accepts_sparse", False) is True


# ----------------------------------------------------------------------------------
# the part inside a minimal pipeline
# ----------------------------------------------------------------------------------
def check_pipeline(session: Session) -> None:
    """The part runs in a minimal pipeline through :class:`graphclust.GraphClustering`:
    labels ``0..k-1``, ``predict`` where offered, NaN and ``n < k`` refused clearly."""
    from graphclust import GraphClustering

    if session.contract.check_pipeline(session):
        return
    cls, c = session.cls, "pipeline"
    fx = session.fixture()
    k = fx.n_clusters
    spec = session.contract.minimal_spec(session.instance(c))
    model = GraphClustering(spec, n_clusters=k, random_state=0)
    with guard(cls, c, "GraphClustering(<minimal pipeline with it>).fit(X)"):
        labels = model.fit(fx.X.copy()).labels_
    ensure(labels.shape == (fx.X.shape[0],) and labels.min() >= 0 and labels.max() < k,
           cls, c, f"the pipeline's labels must be (n,) in [0, {k})")
    if model._can_predict() and model.solution_.extendable:
        with guard(cls, c, "predict(X_new) of the fitted minimal pipeline"):
            new = model.predict(fx.X[:5] + 0.01)
        ensure(np.asarray(new).shape == (5,), cls, c, "predict() must give one label a row")
    X_nan = fx.X.copy()
    X_nan[3, 1] = np.nan
    for bad, what, words in ((X_nan, "X with a NaN", ("nan",)),
                             (fx.X[: k - 1].copy(), f"X with n = {k - 1} < n_clusters = {k}",
                              ("n_clusters", "sample"))):
        try:
            clone(model).fit(bad)
        except ValueError as exc:
            text = str(exc).lower()
            ensure(any(w in text for w in words), cls, c,
                   f"fitting {what} raised an unclear error: {exc}")
        except Exception as exc:  # noqa: BLE001
            raise violation(cls, c, f"fitting {what} must raise a ValueError, got "
                            f"{type(exc).__name__}: {exc}") from exc
        else:
            fail(cls, c, f"fitting {what} did not raise")


def _declarations(session: Session) -> None:
    check_declarations(session.cls, session.kind)


def _parameters(session: Session) -> None:
    check_parameters(session.part_or_cls, session.kind, **session.options)


_declarations.__doc__ = check_declarations.__doc__.split("\n\n")[0]
_parameters.__doc__ = check_parameters.__doc__.split("\n\n")[0]

#: The function of each common check (``session -> None``).
COMMON_CHECK_FUNCTIONS = {
    "declarations": _declarations,
    "parameters": _parameters,
    "work": check_work,
    "determinism": check_determinism,
    "no-mutation": check_no_mutation,
    "float32": check_float32,
    "sparse": check_sparse,
    "pipeline": check_pipeline,
}
