"""The one reader of graphclust's environment variables.

Every ``GRAPHCLUST_*`` variable the core reads is declared once in :data:`VARIABLES`
(its name, what a valid value is, and the parser that turns the text into a value) and
read through :func:`read_env`. A set but invalid value is refused with an
:class:`~graphclust.InputError` naming the variable, the value as given and what it must
be, before the work that reads it; it never reaches ``int()`` or ``float()`` bare (an
``OverflowError`` from ``GRAPHCLUST_DENSIFY_LIMIT=inf``, issue 46) and is never silently
replaced by the default. Unset or blank means the default.

This module is public (a plugin or a test can read or list the variables) and imports
nothing of graphclust but its errors, so the numerics layer reads
``GRAPHCLUST_DENSIFY_LIMIT`` through it as well.
"""

from __future__ import annotations

import decimal
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from graphclust._errors import InputError

__all__ = ["EnvVariable", "VARIABLES", "read_env", "parse_env"]


class _Invalid(ValueError):
    """Raised by a parser for a value it refuses (turned into an InputError by read_env)."""


@attrs.frozen
class EnvVariable:
    """One environment variable graphclust reads.

    Attributes
    ----------
    name : str
        ``GRAPHCLUST_...``.
    must_be : str
        What a valid value is, as written in the refusal.
    parse : callable
        Text (stripped, not blank) to value; raises ``ValueError`` for an invalid one.
    default : object
        The value when the variable is unset or blank.
    """

    name: str
    must_be: str
    parse: Callable[[str], Any]
    default: Any


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _flag(text: str) -> bool:
    low = text.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise _Invalid(text)


#: The largest byte count a variable takes: ``2**63 - 1``, the largest size a 64-bit
#: address space (and NumPy's ``int64``) can state.
MAX_BYTES = 2**63 - 1


def _byte_count(text: str) -> int:
    """A whole number in ``[0, MAX_BYTES]``, as an integer or in ``1e9`` notation (read
    exactly, in decimal: ``1e23`` is 10**23, not the float nearest to it)."""
    try:
        value = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise _Invalid(text) from None
    if not value.is_finite() or value != value.to_integral_value():
        raise _Invalid(text)
    if value < 0 or value > MAX_BYTES:  # compared before int(): 1e400 is never expanded
        raise _Invalid(text)
    return int(value)


_PLUGIN_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


def _name_list(text: str) -> frozenset[str]:
    names = [s.strip() for s in text.split(",")]
    if any(not _PLUGIN_NAME.match(s) for s in names if s) or not any(names):
        raise _Invalid(text)
    return frozenset(s for s in names if s)


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        low = text.lower()
        if low not in choices:
            raise _Invalid(text)
        return low
    return parse


def _folder(text: str) -> Path:
    path = Path(text).expanduser()
    if not path.is_dir():
        raise _Invalid(text)
    return path


#: Every environment variable graphclust reads, by name.
VARIABLES: dict[str, EnvVariable] = {v.name: v for v in (
    EnvVariable("GRAPHCLUST_DENSIFY_LIMIT",
                "a whole number of bytes from 0 to 2**63 - 1 (e.g. 2147483648 or 2e9)",
                _byte_count, None),
    EnvVariable("GRAPHCLUST_STRICT_PLUGINS",
                f"a flag: one of {', '.join(_TRUE)} (on) or {', '.join(_FALSE)} (off)",
                _flag, False),
    EnvVariable("GRAPHCLUST_DISABLE_PLUGINS",
                "comma-separated plugin (entry-point) names of letters, digits, '_', '.' "
                "and '-' (e.g. dlc,stderr-progress)",
                _name_list, frozenset()),
    EnvVariable("GRAPHCLUST_PROGRESS", "one of auto, bar, lines", _choice("auto", "bar", "lines"),
                "auto"),
    EnvVariable("GRAPHCLUST_DATA", "the path of an existing folder (the data folder)",
                _folder, None),
)}


def parse_env(name: str, text: str | None) -> Any:
    """The value of the variable ``name`` for the text ``text`` (``None`` or blank: its
    default); see :func:`read_env`."""
    var = VARIABLES[name]
    if text is None or not text.strip():
        return var.default
    try:
        return var.parse(text.strip())
    except ValueError:
        raise InputError(f"environment variable {name}={text!r} is not valid: it must be "
                         f"{var.must_be}; unset it for the default") from None


def read_env(name: str) -> Any:
    """The value of the environment variable ``name`` (declared in :data:`VARIABLES`),
    its default when unset or blank.

    Raises
    ------
    InputError
        The variable is set to something it must not be: the message names the
        variable, the value and what it must be.
    """
    return parse_env(name, os.environ.get(name))
