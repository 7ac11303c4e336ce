"""Every registered part of every installed plugin passes the contract-test kit, one
test per (part, check): ids such as ``solver[ulge]-determinism``.

A part whose defaults nest a part that is not registered (yet) is skipped with the
missing name; everything else must pass.
"""

from __future__ import annotations

import pytest

from graphclust._errors import UnknownPartError
from graphclust.testing import missing_parts, parametrize_with_checks


def _caused_by_unknown_part(exc: BaseException) -> str | None:
    seen = exc
    while seen is not None:
        if isinstance(seen, UnknownPartError):
            return str(seen).splitlines()[-1].strip()
        seen = seen.__cause__ or seen.__context__
    return None


@parametrize_with_checks()
def test_registered_part_honours_contract(check):
    missing = missing_parts(check.part)
    if missing:
        pytest.skip(f"{check.label} needs unregistered {missing}")
    try:
        check()
    except AssertionError as exc:
        unknown = _caused_by_unknown_part(exc)
        if unknown:
            pytest.skip(f"{check.label} depends on an unregistered part: {unknown}")
        raise
