"""One warning per fit and cause.

Parts warn where they notice something (a solver that hit ``max_iter``, a graph with
too many components); a fit may run a part several times (restarts, nested
pipelines, BKHK levels), which used to print the same warning over and over until
nobody read it. :func:`one_warning_per_cause` collects the warnings of one fit and
re-issues graphclust's own once per cause — the category plus the message with its
numbers blanked, so two parts stay two causes and ten restarts of one part are one —
with the count of repeats. Other libraries' warnings pass through unchanged.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from graphclust._errors import GraphClustWarning

__all__ = ["one_warning_per_cause"]

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?")


def _cause(w: warnings.WarningMessage) -> tuple:
    return (w.category, _NUMBER.sub("#", str(w.message)))


@contextmanager
def one_warning_per_cause() -> Iterator[None]:
    """Collect the warnings raised inside the block; on exit (also on an exception)
    re-issue each graphclust cause once, with ``(N times in this fit)`` when repeated,
    through the caller's warning filters."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            pending = list(caught)
    counts: dict[tuple, int] = {}
    first: dict[tuple, warnings.WarningMessage] = {}
    order: list = []
    for w in pending:
        if issubclass(w.category, GraphClustWarning):
            key = _cause(w)
            counts[key] = counts.get(key, 0) + 1
            if key not in first:
                first[key] = w
                order.append(key)
        else:
            order.append(w)
    for item in order:
        if isinstance(item, tuple):
            w = first[item]
            n = counts[item]
            text = str(w.message) + (f" ({n} times in this fit)" if n > 1 else "")
            message = w.category(text)
        else:
            w, message = item, item.message
        module = _module_name(w.filename)
        warnings.warn_explicit(message, w.category, w.filename, w.lineno, module=module)


def _module_name(filename: str) -> str:
    for name, mod in list(sys.modules.items()):
        if getattr(mod, "__file__", None) == filename:
            return name
    return filename.rsplit("/", 1)[-1].removesuffix(".py")
