"""Parameter checks: small callables that return ``None`` or a message.

A check is attached to a part parameter with :func:`graphclust.param` and run by the
composer (and again at ``fit``), never in ``__init__``. Each check has a
``description`` used by ``graphclust describe`` and the spec reference.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import attrs

__all__ = [
    "Check",
    "integer",
    "real",
    "one_of",
    "boolean",
    "optional",
    "part_spec",
    "any_of",
    "check_fields",
]


@attrs.frozen
class Check:
    """A named predicate on one parameter value."""

    description: str
    test: Callable[[Any], str | None]
    #: For :func:`part_spec` checks: the nested part kind the composer resolves.
    _part_kind: str | None = None

    def __call__(self, value: Any) -> str | None:
        return self.test(value)


def _got(value: Any) -> str:
    return f"got {value!r} ({type(value).__name__})"


def _bounds_text(low, high, low_open, high_open) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high}")
    return " and ".join(parts)


def _number(kind: str, cls, low, high, low_open, high_open) -> Check:
    bounds = _bounds_text(low, high, low_open, high_open)
    desc = f"{kind}{' ' + bounds if bounds else ''}"

    def test(value):
        if isinstance(value, bool) or not isinstance(value, cls):
            return f"must be {desc}, {_got(value)}"
        if value != value:  # NaN
            return f"must be {desc}, got nan"
        if value in (float("inf"), float("-inf")):  # no parameter means anything at infinity
            return f"must be a finite {desc.removeprefix('a ').removeprefix('an ')}, got {value!r}"
        if low is not None and (value <= low if low_open else value < low):
            return f"must be {desc}, got {value!r}"
        if high is not None and (value >= high if high_open else value > high):
            return f"must be {desc}, got {value!r}"
        return None

    return Check(desc, test)


def integer(low: int | None = None, high: int | None = None) -> Check:
    """An integer in ``[low, high]``."""
    return _number("an integer", numbers.Integral, low, high, False, False)


def real(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Check:
    """A real number within the bounds (``low_open`` makes ``low`` exclusive)."""
    return _number("a number", numbers.Real, low, high, low_open, high_open)


def one_of(*choices: Any) -> Check:
    """One of the given values."""
    listed = ", ".join(repr(c) for c in choices)

    def test(value):
        try:  # `in`, except that an array's elementwise == never matches
            hit = any(bool(value == c) for c in choices)
        except Exception:
            hit = False
        return None if hit else f"must be one of {listed}, {_got(value)}"

    return Check(f"one of {listed}", test)


boolean = Check("a boolean", lambda v: None if isinstance(v, bool) else f"must be a boolean, {_got(v)}")


def optional(check: Check) -> Check:
    """``None`` or what ``check`` accepts."""
    return Check(f"None or {check.description}", lambda v: None if v is None else check(v),
                 part_kind=check._part_kind)


def any_of(*checks: Check) -> Check:
    """Accepted when any of ``checks`` accepts."""
    desc = " or ".join(c.description for c in checks)

    def test(value):
        for c in checks:
            if c(value) is None:
                return None
        return f"must be {desc}, {_got(value)}"

    return Check(desc, test)


def part_spec(kind: str) -> Check:
    """A nested part: a spec table with a ``name`` (resolved by the composer) or a part."""
    from graphclust._parts import Part  # local: avoid an import cycle

    def test(value):
        if isinstance(value, Part):
            return None
        if kind == "pipeline":
            # a table with optional graph/solver/rounding sub-tables, or a composed Pipeline
            if isinstance(value, dict) or hasattr(value, "fit_labels"):
                return None
            return f"must be a pipeline spec (a table with solver/rounding tables), {_got(value)}"
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            return None
        return f"must be a {kind} spec (a table with a 'name'), {_got(value)}"

    return Check(f"a {kind} spec", test, part_kind=kind)


def check_fields(obj: Any) -> list[tuple[str, str]]:
    """``(field, message)`` for every attrs field of ``obj`` whose declared check (the
    ``check`` of :func:`graphclust.param`) refuses its value: the one machinery behind
    :meth:`graphclust.Part.check_params` and the estimator's own parameters."""
    out = []
    for field in attrs.fields(type(obj)) if attrs.has(type(obj)) else ():
        check = field.metadata.get("check")
        msg = check(getattr(obj, field.name)) if check is not None else None
        if msg:
            out.append((field.name, msg))
    return out
