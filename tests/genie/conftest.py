"""Make the ``genie`` bundle visible to the process-wide registry while these tests run
(module by module, so no other test sees it) when its entry point is not installed yet
(a worktree run against a shared environment): the bundle's own hook registers it, and
the registry is restored after."""

from __future__ import annotations

import pytest

import graphclust
from graphclust._registry import Provider


@pytest.fixture(scope="module", autouse=True)
def genie_registered():
    from graphclust_plugins import genie

    registry = graphclust.get_registry()
    if "genie" in registry.roundings:  # installed: nothing to do
        yield registry
        return
    snap = registry.snapshot()
    registry.bind(Provider("genie", "graphclust"))
    try:
        genie.graphclust_register_components(registry=registry)
    finally:
        registry.bind(Provider("<direct>"))
    yield registry
    registry.restore(snap)
