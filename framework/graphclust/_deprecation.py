"""Deprecated aliases for names that moved: a module-level ``__getattr__`` factory."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["moved_names"]


def moved_names(module: str, moved: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that serves each name of ``moved`` from its new module
    with a :class:`DeprecationWarning` naming the new place (PEP 562).

    Parameters
    ----------
    module : str
        The module the names used to live in (its ``__name__``).
    moved : mapping of str to str
        Old attribute name → the module that holds it now.
    """

    def __getattr__(name: str) -> Any:
        if name in moved:
            warnings.warn(f"{module}.{name} is deprecated; import it from {moved[name]}",
                          DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(moved[name]), name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
