"""The core's contract kit on the ONGR parts."""

from __future__ import annotations

import pytest

from graphclust.testing import check_part
from graphclust_plugins.ongr.graph_ongr_anchor import OngrAnchorGraph
from graphclust_plugins.ongr.anchors_capped import CappedAnchors
from graphclust_plugins.ongr.solver_ongr import OngrSolver


@pytest.mark.parametrize("cls, params", [
    (OngrAnchorGraph, {}),
    (OngrSolver, {}),
    (OngrSolver, {"positive_part": "abs", "init": "random"}),
    (OngrSolver, {"init": "spectral-kmeans"}),
])
def test_contract(cls, params):
    check_part(cls, **params)


def test_capped_contract():
    import graphclust

    if "random" not in graphclust.get_registry().anchors:
        pytest.skip("common 'random' anchors not registered")
    check_part(CappedAnchors, base={"name": "random"}, max_fraction=1.0)
