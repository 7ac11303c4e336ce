"""The kit's failure type, how a failure names its part, and the per-kind contract base.

A part kind is covered by the kit through one :class:`KindContract` subclass (its own
module, e.g. :mod:`graphclust.testing.solver`) registered with :func:`register_kind`.
The common checks (:mod:`graphclust.testing._common`) call only the methods defined
here, so a new kind needs no change anywhere else in the kit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

import attrs
import numpy as np

from graphclust import GraphKind
from graphclust import PART_KINDS, Part

if TYPE_CHECKING:  # pragma: no cover
    from graphclust.testing._common import Session
    from graphclust.testing._fixture import Fixture

__all__ = ["ContractViolation", "KindContract", "KindCheck", "Variant", "register_kind",
           "kind_contract", "registered_kinds", "who", "violation", "fail", "ensure", "guard"]


class ContractViolation(AssertionError):
    """A part broke a contract (an :class:`AssertionError`).

    Attributes
    ----------
    check : str
        The broken check (``"work"``, ``"determinism"``...); empty for a report that
        gathers several failed checks.
    failures : list of ContractViolation
        Every failed check of the report (``[self]`` for a single failure).
    """

    def __init__(self, message: str, *, check: str = "",
                 failures: list["ContractViolation"] | None = None) -> None:
        super().__init__(message)
        self.check = check
        self.failures: list[ContractViolation] = list(failures) if failures else [self]


_KINDS: dict[str, "KindContract"] = {}


def register_kind(contract: "KindContract") -> "KindContract":
    """Make the kit check parts of ``contract.kind`` with ``contract``; returns it.

    Raises
    ------
    ValueError
        If the kind is not a graphclust part kind or already has a contract.
    """
    if contract.kind not in PART_KINDS:
        raise ValueError(f"register_kind: {contract.kind!r} is not a part kind "
                         f"({', '.join(PART_KINDS)})")
    if contract.kind in _KINDS:
        raise ValueError(f"register_kind: kind {contract.kind!r} already has a contract "
                         f"({type(_KINDS[contract.kind]).__name__})")
    _KINDS[contract.kind] = contract
    return contract


def kind_contract(kind: str) -> "KindContract | None":
    """The registered contract of a kind (``None`` when the kit does not cover it)."""
    return _KINDS.get(kind)


def registered_kinds() -> list[str]:
    """Kinds the kit has a contract module for, in :data:`graphclust.PART_KINDS` order."""
    return [k for k in PART_KINDS if k in _KINDS]


def who(cls: type) -> str:
    """``"solver 'ulge' (graphclust_plugins.ulge.ULGE)"``: how messages name a part."""
    kind = getattr(cls, "kind", "") or "part"
    contract = _KINDS.get(kind)
    label = contract.label if contract is not None else kind
    name = getattr(cls, "name", "") or "<no name>"
    return f"{label} {name!r} ({cls.__module__}.{cls.__qualname__})"


def violation(cls: type, check: str, detail: str) -> ContractViolation:
    """A :class:`ContractViolation` naming the part and the check."""
    return ContractViolation(f"{who(cls)} breaks the '{check}' contract: {detail}", check=check)


def fail(cls: type, check: str, detail: str) -> NoReturn:
    """Raise :func:`violation`."""
    raise violation(cls, check, detail)


def accepts_anchor(cls: type) -> bool:
    """Whether ``cls`` accepts anchor graphs; a malformed ``accepts`` counts as not (its
    ``declarations`` check reports it)."""
    try:
        return GraphKind.ANCHOR in cls.accepts
    except TypeError:
        return False


def chunked_on_anchors(cls: type) -> bool:
    """Whether ``cls`` accepts anchor graphs and declares ``chunkwise`` (the parts whose
    ``chunked`` check runs)."""
    return accepts_anchor(cls) and bool(getattr(cls, "chunkwise", False))


def ensure(cond: Any, cls: type, check: str, detail: str) -> None:
    """Raise :func:`violation` unless ``cond``."""
    if not cond:
        fail(cls, check, detail)


class guard:
    """Context manager: an exception raised by the part becomes a
    :class:`ContractViolation` of ``check`` saying what raised it (original chained)."""

    def __init__(self, cls: type, check: str, what: str) -> None:
        self.cls, self.check, self.what = cls, check, what

    def __enter__(self) -> "guard":
        return self

    def __exit__(self, etype, exc, tb) -> bool:
        if exc is None or isinstance(exc, ContractViolation):
            return False
        raise violation(self.cls, self.check,
                        f"{self.what} raised {etype.__name__}: {exc}") from exc


@attrs.frozen
class Variant:
    """One way the work method is called (a solver runs once per accepted graph kind).

    Attributes
    ----------
    name : str
        What the kind module reads back in :meth:`KindContract.inputs` (e.g. ``"anchor"``).
    where : str
        Suffix for messages, e.g. ``" on an anchor graph"``.
    """

    name: str = ""
    where: str = ""


@attrs.frozen
class KindCheck:
    """A check that only one kind has (e.g. a graph builder's ``transform``).

    Attributes
    ----------
    name : str
        The check's name in messages and test ids.
    doc : str
        One sentence for the documentation.
    run : callable
        ``run(session)``; raises :class:`ContractViolation`.
    """

    name: str
    doc: str
    run: Callable[["Session"], None]


class KindContract:
    """What the kit knows about one part kind. Subclass it in one module per kind.

    Attributes
    ----------
    kind : str
        The part kind (a key of :data:`graphclust._parts.PART_KINDS`).
    label : str
        How messages name the kind (``"graph builder"``).
    work_method : str
        The interface method a part must implement (``"build"``).
    sparse_input : bool
        Whether the work method receives ``X`` (so ``accepts_sparse`` is meaningful).
    float32_input : bool
        Whether the ``float32`` check applies: :meth:`inputs` receives float32 ``X``
        and passes float32 data on (``X`` itself, or a float32 solution).
    attributes : tuple of (str, str)
        The declarations a part of this kind must have and their rule; the plugin
        guide's table lists them (a test keeps the two in step).
    """

    kind: ClassVar[str] = ""
    label: ClassVar[str] = ""
    work_method: ClassVar[str] = ""
    sparse_input: ClassVar[bool] = False
    float32_input: ClassVar[bool] = True
    attributes: ClassVar[tuple[tuple[str, str], ...]] = ()

    @property
    def interface(self) -> type[Part]:
        """The interface class parts of this kind subclass."""
        return PART_KINDS[self.kind]

    def declaration_problems(self, cls: type[Part]) -> list[str]:
        """What is wrong with the kind's class attributes (empty when nothing)."""
        return []

    def variants(self, inst: Part) -> list[Variant]:
        """The calls of the work method the common checks make (default: one)."""
        return [Variant()]

    def inputs(self, inst: Part, fx: "Fixture", X: Any, variant: Variant,
               n_clusters: int) -> tuple:
        """Arguments of the work method besides the context and ``n_clusters``."""
        raise NotImplementedError

    def invoke(self, inst: Part, args: tuple, ctx: Any, n_clusters: int) -> Any:
        """Call the work method."""
        raise NotImplementedError

    def check_output(self, inst: Part, out: Any, fx: "Fixture", X: Any, *, check: str,
                     variant: Variant, n_clusters: int) -> None:
        """Raise :class:`ContractViolation` (under ``check``) if ``out`` is not valid."""
        raise NotImplementedError

    def extra_checks(self, cls: type[Part]) -> list[KindCheck]:
        """The kind's own checks that apply to ``cls`` (read from class attributes only)."""
        return []

    def minimal_spec(self, inst: Part) -> dict | None:
        """A minimal pipeline around ``inst`` (the kit's own parts elsewhere), or ``None``
        when the kind has no pipeline check."""
        return None

    def check_pipeline(self, session: "Session") -> bool:
        """Run a kind-specific pipeline check; return ``False`` to use the common one
        (fit :class:`graphclust.GraphClustering` on :meth:`minimal_spec`)."""
        return False


def check_labels(cls: type, check: str, out: Any, n: int, k: int, what: str) -> None:
    """``out`` must be integer labels of shape ``(n,)`` in ``[0, k)`` (roundings, consensus)."""
    lab = np.asarray(out)
    ensure(lab.shape == (n,), cls, check, f"{what} must return labels of shape ({n},), got "
           f"{lab.shape}")
    ensure(lab.dtype.kind in "iu", cls, check, f"labels must be integers, got dtype {lab.dtype}")
    ensure(lab.min() >= 0 and lab.max() < k, cls, check,
           f"labels must lie in [0, k) = [0, {k}), got [{lab.min()}, {lab.max()}]")
