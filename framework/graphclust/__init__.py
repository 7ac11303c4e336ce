"""graphclust: scalable graph clustering from interchangeable, pluggable parts.

Data flow::

    X ─► AnchorSelector ─► Anchors            (optional)
      └► GraphBuilder(X, anchors?) ─► AffinityGraph | AnchorGraph
         Adapter.adapt(graph, X?) ─► Adapted graph   (optional; Adapter.lift after the solver)
         Solver(graph, X?, k) ─► Solution
         Rounding(solution, k) ─► labels
         Metric(labels, y?, graph?) ─► float

    Ensemble: member pipelines ─► Memberships (n × Σk_i) ─► Consensus ─► labels
"""

from importlib.metadata import PackageNotFoundError, version as _version

from graphclust._estimator import GraphClustering
from graphclust._composer import compose, resolve_part, validate_spec
from graphclust._ensemble import Ensemble, EnsembleMember, EnsembleResult
from graphclust._membership import Memberships
from graphclust._kselection import DEFAULT_K_MAX, KSelection
from graphclust._layers import Layers
from graphclust._input import check_input
from graphclust._pipeline import STAGES, FitResult, Pipeline
from graphclust._checks import Check, any_of, boolean, integer, one_of, optional, part_spec, real
from graphclust._contracts import GraphKind, SolutionField
from graphclust._errors import (
    ClusterLostError,
    ConvergenceWarning,
    DegenerateDataWarning,
    DensifyWarning,
    DirectedGraphWarning,
    DisconnectedGraphWarning,
    FewerClustersWarning,
    KRangeWarning,
    NoClusterStructureWarning,
    GraphClustWarning,
    IncompatiblePartsError,
    InputError,
    PluginError,
    PluginWarning,
    Problem,
    ProblemKind,
    SpecError,
    UnknownPartError,
)
from graphclust._graphs import (
    AffinityGraph,
    Anchors,
    AnchorGraph,
    FittedState,
    Graph,
    fitted_state,
    modularity,
)
from graphclust._parts import (
    Adapted,
    Adapter,
    AnchorSelector,
    Consensus,
    Context,
    GraphBuilder,
    Metric,
    PART_KINDS,
    Part,
    Rounding,
    Solver,
    param,
    part,
)
from graphclust._plugins import PluginManager, get_plugin_manager, get_registry
from graphclust._progress import Progress, ProgressEvent
from graphclust._registry import NAME_PATTERN, PartRecord, PluginRecord, PresetRecord, Registry
from graphclust._rules import (DataProfile, Rule, RuleContext, RulePresetRecord, RuleStep,
                               RuleTable, profile_data)
from graphclust._solution import Solution
from graphclust.hookspecs import hookimpl
from graphclust import numerics
from graphclust.numerics import clamp_anchors, float_dtype, safe_inverse

try:
    __version__ = _version("graphclust")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "Adapted",
    "Adapter",
    "AffinityGraph",
    "AnchorGraph",
    "AnchorSelector",
    "Anchors",
    "Check",
    "ClusterLostError",
    "Consensus",
    "Ensemble",
    "EnsembleMember",
    "EnsembleResult",
    "Memberships",
    "KSelection",
    "Layers",
    "DEFAULT_K_MAX",
    "FitResult",
    "Pipeline",
    "STAGES",
    "check_input",
    "float_dtype",
    "compose",
    "numerics",
    "resolve_part",
    "validate_spec",
    "Context",
    "DataProfile",
    "RulePresetRecord",
    "Rule",
    "RuleContext",
    "RuleStep",
    "RuleTable",
    "profile_data",
    "ConvergenceWarning",
    "DisconnectedGraphWarning",
    "DirectedGraphWarning",
    "DensifyWarning",
    "DegenerateDataWarning",
    "FewerClustersWarning",
    "NoClusterStructureWarning",
    "KRangeWarning",
    "FittedState",
    "Graph",
    "GraphBuilder",
    "GraphClustering",
    "GraphClustWarning",
    "GraphKind",
    "IncompatiblePartsError",
    "InputError",
    "Metric",
    "Part",
    "PART_KINDS",
    "PartRecord",
    "PluginError",
    "PluginWarning",
    "PluginManager",
    "PluginRecord",
    "PresetRecord",
    "Problem",
    "ProblemKind",
    "Progress",
    "ProgressEvent",
    "Registry",
    "NAME_PATTERN",
    "Rounding",
    "Solution",
    "SolutionField",
    "Solver",
    "SpecError",
    "UnknownPartError",
    "__version__",
    "any_of",
    "boolean",
    "clamp_anchors",
    "fitted_state",
    "get_plugin_manager",
    "get_registry",
    "hookimpl",
    "integer",
    "modularity",
    "one_of",
    "optional",
    "param",
    "part",
    "part_spec",
    "real",
    "safe_inverse",
]
