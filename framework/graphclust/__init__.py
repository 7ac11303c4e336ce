"""graphclust: scalable graph clustering from interchangeable, pluggable parts.

Data flow::

    X ─► AnchorSelector ─► Anchors            (optional)
      └► GraphBuilder(X, anchors?) ─► AffinityGraph | AnchorGraph
         Solver(graph, X?, k) ─► Solution
         Rounding(solution, k) ─► labels
         Metric(labels, y?, graph?) ─► float
"""

from importlib.metadata import PackageNotFoundError, version as _version

from graphclust._estimator import GraphClustering
from graphclust._composer import compose, resolve_part, validate_spec
from graphclust._pipeline import FitResult, Pipeline, check_input, float_dtype
from graphclust._checks import Check, any_of, boolean, integer, one_of, optional, part_spec, real
from graphclust._errors import (
    ConvergenceWarning,
    DegenerateDataWarning,
    DisconnectedGraphWarning,
    FewerClustersWarning,
    GraphClustWarning,
    IncompatiblePartsError,
    InputError,
    PluginError,
    PluginWarning,
    Problem,
    SpecError,
    UnknownPartError,
)
from graphclust._graphs import AffinityGraph, Anchors, AnchorGraph, Graph, safe_inverse
from graphclust._parts import (
    AnchorSelector,
    Context,
    GraphBuilder,
    Metric,
    Part,
    Rounding,
    Solver,
    param,
    part,
)
from graphclust._plugins import PluginManager, get_plugin_manager, get_registry
from graphclust._progress import Progress, ProgressEvent
from graphclust._registry import PartRecord, PluginRecord, PresetRecord, Registry
from graphclust._solution import Solution
from graphclust.hookspecs import hookimpl
from graphclust.neighbors import clamp_anchors

try:
    __version__ = _version("graphclust")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "AffinityGraph",
    "AnchorGraph",
    "AnchorSelector",
    "Anchors",
    "Check",
    "FitResult",
    "Pipeline",
    "check_input",
    "float_dtype",
    "compose",
    "resolve_part",
    "validate_spec",
    "Context",
    "ConvergenceWarning",
    "DisconnectedGraphWarning",
    "DegenerateDataWarning",
    "FewerClustersWarning",
    "Graph",
    "GraphBuilder",
    "GraphClustering",
    "GraphClustWarning",
    "IncompatiblePartsError",
    "InputError",
    "Metric",
    "Part",
    "PartRecord",
    "PluginError",
    "PluginWarning",
    "PluginManager",
    "PluginRecord",
    "PresetRecord",
    "Problem",
    "Progress",
    "ProgressEvent",
    "Registry",
    "Rounding",
    "Solution",
    "Solver",
    "SpecError",
    "UnknownPartError",
    "__version__",
    "any_of",
    "boolean",
    "clamp_anchors",
    "get_plugin_manager",
    "get_registry",
    "hookimpl",
    "integer",
    "one_of",
    "optional",
    "param",
    "part",
    "part_spec",
    "real",
    "safe_inverse",
]
