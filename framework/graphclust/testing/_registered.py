"""Selecting registered parts: by kind and by the distribution that registered them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from graphclust import PART_KINDS, Part
from graphclust import STAGES
from graphclust import PartRecord, Registry

__all__ = ["registered_parts", "missing_parts", "canonical_distribution"]


def canonical_distribution(name: str) -> str:
    """A distribution name normalised as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _kinds(kinds: Iterable[str] | str | None) -> list[str]:
    if isinstance(kinds, str):
        kinds = [kinds]
    kinds = list(PART_KINDS) if kinds is None else list(kinds)
    for k in kinds:
        if k not in PART_KINDS:
            raise ValueError(f"kinds must be among {', '.join(PART_KINDS)}, got {k!r}")
    return kinds


def registered_parts(kinds: Iterable[str] | str | None = None, *,
                     distribution: str | None = None,
                     registry: Registry | None = None) -> list[PartRecord]:
    """Registered parts, by kind then name.

    Parameters
    ----------
    kinds : str or iterable of str, optional
        Part kinds to include (default: all).
    distribution : str, optional
        Only parts registered by this installed distribution (its name as pip shows
        it, e.g. ``"graphclust-nystrom"``; ``-``, ``_``, ``.`` and case do not matter).
    registry : Registry, optional
        Default: the process-wide registry of installed plugins.

    Raises
    ------
    ValueError
        If a kind is not a part kind.
    LookupError
        If ``distribution`` registered no part of these kinds (a misspelt name would
        otherwise silently test nothing); the message lists the distributions that did.
    """
    from graphclust import get_registry

    registry = registry or get_registry()
    wanted = _kinds(kinds)
    records = [r for r in registry.all_parts() if r.kind in wanted]
    if distribution is None:
        return records
    target = canonical_distribution(distribution)
    chosen = [r for r in records if canonical_distribution(r.distribution) == target]
    if not chosen:
        known = sorted({r.distribution for r in records if r.distribution})
        raise LookupError(f"no registered {'/'.join(wanted)} part comes from distribution "
                          f"{distribution!r}; distributions with such parts: "
                          f"{', '.join(known) or '(none)'}")
    return chosen


def missing_parts(part_obj: Part | type, registry: Registry | None = None) -> list[str]:
    """Nested part names (``part_spec`` parameters' values) that are not registered,
    e.g. ``["anchors 'random'"]`` for a part whose default nests a missing part."""
    from graphclust import get_registry

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
        for sec in STAGES:
            if isinstance(value.get(sec), dict):
                out.extend(_missing_in(sec, value[sec], registry))
        return out
    name = value.get("name")
    if isinstance(name, str) and name not in registry.parts(kind):
        return [f"{kind} {name!r}"]
    return []
