"""pytest helpers: one test per registered part, or one test per (part, check)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from graphclust import Part
from graphclust import PartRecord, Registry
from graphclust.testing._registered import registered_parts
from graphclust.testing._runner import ContractCheck, iter_checks, part_label

__all__ = ["parametrize_parts", "parametrize_with_checks", "collect_checks"]

PartItem = PartRecord | Part | type | tuple


def parametrize_parts(kinds: Iterable[str] | str | None = None, registry: Registry | None = None,
                      *, argname: str = "part_record",
                      distribution: str | None = None) -> Callable:
    """A ``pytest.mark.parametrize`` over registered parts, one test id ``kind:name`` each.

    Parameters
    ----------
    kinds : str or iterable of str, optional
        Part kinds to include (default: all).
    registry : Registry, optional
        Default: the process-wide registry of installed plugins, read at collection time
        (so newly installed plugins are picked up by the next pytest run).
    argname : str, default="part_record"
        The test function's argument receiving the :class:`~graphclust.PartRecord`
        (``.kind``, ``.name``, ``.cls``, ``.provider``, ``.distribution``).
    distribution : str, optional
        Only the parts this distribution registered (see :func:`registered_parts`).
    """
    import pytest

    records = registered_parts(kinds, distribution=distribution, registry=registry)
    return pytest.mark.parametrize(argname, records, ids=[f"{r.kind}:{r.name}" for r in records])


def collect_checks(parts: Iterable[PartItem] | None = None, *,
                   kinds: Iterable[str] | str | None = None, distribution: str | None = None,
                   registry: Registry | None = None) -> list[ContractCheck]:
    """Every check of every part, in order (what :func:`parametrize_with_checks` runs).

    ``parts`` items are :class:`~graphclust.PartRecord` s, part classes or instances, or
    ``(class_or_instance, options)`` pairs; default: the registered parts selected by
    ``kinds`` and ``distribution`` (see :func:`registered_parts`).
    """
    if parts is None:
        parts = registered_parts(kinds, distribution=distribution, registry=registry)
    elif kinds is not None or distribution is not None:
        raise TypeError("give either parts or kinds/distribution, not both")
    out: list[ContractCheck] = []
    for item in parts:
        if isinstance(item, PartRecord):
            label = part_label(item.cls, item.kind, name=item.name)
            out.extend(iter_checks(item.cls, item.kind, label=label))
            continue
        options: dict[str, Any] = {}
        if isinstance(item, tuple):
            item, options = item
        out.extend(iter_checks(item, **options))
    return out


def parametrize_with_checks(parts: Iterable[PartItem] | None = None, *,
                            kinds: Iterable[str] | str | None = None,
                            distribution: str | None = None, registry: Registry | None = None,
                            argname: str = "check") -> Callable:
    """A ``pytest.mark.parametrize`` with one test per (part, check), as scikit-learn's
    ``parametrize_with_checks`` does for estimators.

    Test ids read ``kind[name]-check``, e.g. ``solver[ulge]-determinism`` or
    ``graph[knn(n_neighbors=3)]-work``; the test calls the :class:`ContractCheck` it
    receives::

        @parametrize_with_checks([MySolver, (MySolver, {"lam": 0.1})])
        def test_contract(check):
            check()

    Parameters
    ----------
    parts : iterable, optional
        :class:`~graphclust.PartRecord` s, part classes or instances, or
        ``(class_or_instance, options)`` pairs. Default: the registered parts selected
        by ``kinds`` and ``distribution``.
    kinds, distribution, registry
        Select registered parts (see :func:`registered_parts`); only without ``parts``.
    argname : str, default="check"
        The test function's argument receiving the check.

    Notes
    -----
    A part of a kind the kit has no contract module for gets a ``work`` test marked
    skipped with the reason, besides its ``declarations`` and ``parameters`` tests.
    """
    import pytest

    params = [pytest.param(c, id=c.id, marks=[pytest.mark.skip(reason=c.skip)] if c.skip else [])
              for c in collect_checks(parts, kinds=kinds, distribution=distribution,
                                      registry=registry)]
    return pytest.mark.parametrize(argname, params)
