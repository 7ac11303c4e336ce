"""The typed values of the part declarations the composer checks.

A graph builder or an adapter ``produces`` one :class:`GraphKind`; an adapter or a
solver ``accepts`` a frozenset of them; a solver ``provides`` a frozenset of
:class:`SolutionField`; a rounding ``needs`` one. Both are string enums, so a value
equals its plain string (``GraphKind.ANCHOR == "anchor"``, with the same hash) and
prints as it; a part that declares plain strings is coerced to the enum when its class
is defined (:func:`normalise_declarations`).
"""

from __future__ import annotations

import enum
import warnings
from typing import Any

__all__ = ["RENAMED", "GraphKind", "SolutionField", "normalise_declarations", "plain"]


class GraphKind(enum.StrEnum):
    """The kind of graph a builder or an adapter produces and a solver accepts."""

    #: a sparse symmetric ``n x n`` affinity ``A`` (:class:`~graphclust.AffinityGraph`)
    AFFINITY = "affinity"
    #: a sparse ``n x m`` point-to-anchor matrix ``Z`` (:class:`~graphclust.AnchorGraph`)
    ANCHOR = "anchor"


class SolutionField(enum.StrEnum):
    """What a :class:`~graphclust.Solution` holds: a solver provides, a rounding needs."""

    #: an ``n x p`` embedding
    EMBEDDING = "embedding"
    #: a nonnegative ``n x k`` soft assignment
    SOFT = "soft"


def _one(enum_cls: type[enum.StrEnum], value: Any) -> Any:
    """``value`` as a member of ``enum_cls`` when it names one, else unchanged (a
    malformed declaration stays as declared, for the checks that report it)."""
    if isinstance(value, str):
        try:
            return enum_cls(value)
        except ValueError:
            return value
    return value


def _set(enum_cls: type[enum.StrEnum], value: Any) -> Any:
    """A frozenset of strings as a frozenset of ``enum_cls`` members when every one names
    a member, else unchanged."""
    if isinstance(value, frozenset) and all(isinstance(v, str) for v in value):
        coerced = frozenset(_one(enum_cls, v) for v in value)
        if all(isinstance(v, enum_cls) for v in coerced):
            return coerced
    return value


#: Declarations renamed, per part kind: old attribute → new attribute.
RENAMED: dict[str, dict[str, str]] = {"solver": {"produces": "provides"}}

#: The typed declarations, per part kind: attribute → coercion.
_TYPED: dict[str, dict[str, Any]] = {
    "graph": {"produces": lambda v: _one(GraphKind, v)},
    "adapter": {"produces": lambda v: _one(GraphKind, v),
                "accepts": lambda v: _set(GraphKind, v)},
    "solver": {"accepts": lambda v: _set(GraphKind, v),
               "provides": lambda v: _set(SolutionField, v)},
    "rounding": {"needs": lambda v: _one(SolutionField, v)},
}


def normalise_declarations(cls: type, kind: str) -> None:
    """Coerce the declarations ``cls`` itself makes to the typed values, and take a
    renamed declaration under its old name (with a :class:`DeprecationWarning`).

    Called for every part class when it is defined; only the attributes in the class's
    own namespace are touched, so inherited values are coerced once, where declared.
    """
    own = vars(cls)
    for old, new in RENAMED.get(kind, {}).items():
        if old in own and new not in own:
            warnings.warn(f"{cls.__module__}.{cls.__qualname__} declares {old!r}, the old name "
                          f"of a {kind}'s {new!r}; declare {new} = ... instead ({old!r} is "
                          "read as it until it is removed)", DeprecationWarning, stacklevel=3)
            setattr(cls, new, own[old])
    for attr, coerce in _TYPED.get(kind, {}).items():
        if attr in own:
            value = own[attr]
            typed = coerce(value)
            if typed is not value:
                setattr(cls, attr, typed)


def plain(value: Any) -> Any:
    """A declaration's value with plain strings for listings and JSON: an enum member as
    its string, a set as a sorted list of them, anything else unchanged."""
    if isinstance(value, (set, frozenset)):
        return sorted(plain(v) for v in value)
    if isinstance(value, enum.Enum):
        return value.value
    return value


class RenamedDeclaration:
    """A class attribute read under its old name: warns and returns the new one."""

    def __init__(self, new: str):
        self.new = new
        self.old = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.old = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        owner = owner if owner is not None else type(obj)
        warnings.warn(f"{owner.__name__}.{self.old} is deprecated; read {self.new}",
                      DeprecationWarning, stacklevel=2)
        return getattr(owner if obj is None else obj, self.new)
