"""Contract-test kit for plugin authors.

Call :func:`check_part` on your part class (or instance) from your own tests; it
returns nothing and raises :class:`ContractViolation` (an :class:`AssertionError`)
naming the part and every contract it breaks::

    from graphclust.testing import check_part

    def test_my_solver_contract():
        check_part(MySolver)                   # defaults
        check_part(MySolver, n_iter=5)         # other parameter values

Or get one test per (part, check), as scikit-learn's ``parametrize_with_checks``::

    from graphclust.testing import parametrize_with_checks

    @parametrize_with_checks([MySolver, (MySolver, {"n_iter": 5})])
    def test_contract(check):          # ids: solver[my-solver]-work, ...
        check()

    @parametrize_with_checks(distribution="my-graphclust-plugin")   # all parts it registers
    def test_registered(check):
        check()

The package holds one module per part kind (:mod:`~graphclust.testing.anchors`,
:mod:`~graphclust.testing.graph`, :mod:`~graphclust.testing.solver`,
:mod:`~graphclust.testing.rounding`, :mod:`~graphclust.testing.metric`), each defining
the kind's :class:`KindContract` and registered below with :func:`register_kind`; the
checks every kind shares live in ``_common.py``, the fixture data and the kit's own
tiny parts in ``_fixture.py``.
"""

from __future__ import annotations

from graphclust import part_spec
from graphclust.testing import adapter, anchors, consensus, graph, metric, rounding, solver
from graphclust.testing._common import COMMON_CHECKS, check_declarations, check_parameters
from graphclust.testing._contract import (
    ContractViolation,
    KindCheck,
    KindContract,
    Variant,
    kind_contract,
    register_kind,
    registered_kinds,
)
from graphclust.testing._fixture import (
    Fixture,
    KitAnchorGraph,
    KitAnchors,
    KitArgmaxRounding,
    KitKMeansRounding,
    KitKnnGraph,
    KitSolver,
    make_blobs,
    make_fixture,
)
from graphclust.testing._pytest import collect_checks, parametrize_parts, parametrize_with_checks
from graphclust.testing._registered import missing_parts, registered_parts
from graphclust.testing._runner import ContractCheck, check_part, iter_checks

# One line per part kind the kit covers (a new kind: its module, then one line here).
register_kind(anchors.CONTRACT)
register_kind(graph.CONTRACT)
register_kind(adapter.CONTRACT)
register_kind(solver.CONTRACT)
register_kind(rounding.CONTRACT)
register_kind(metric.CONTRACT)
register_kind(consensus.CONTRACT)

__all__ = [
    "check_part",
    "iter_checks",
    "ContractCheck",
    "parametrize_with_checks",
    "parametrize_parts",
    "collect_checks",
    "registered_parts",
    "missing_parts",
    "check_declarations",
    "check_parameters",
    "make_blobs",
    "make_fixture",
    "Fixture",
    "COMMON_CHECKS",
    "ContractViolation",
    "KindContract",
    "KindCheck",
    "Variant",
    "register_kind",
    "kind_contract",
    "registered_kinds",
    "KitAnchors",
    "KitAnchorGraph",
    "KitKnnGraph",
    "KitSolver",
    "KitKMeansRounding",
    "KitArgmaxRounding",
]

_ = part_spec  # importable from here as before (it was in the module's namespace)
