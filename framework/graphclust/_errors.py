"""Exceptions and warnings raised by graphclust.

Every exception subclasses a built-in (``ValueError``, ``TypeError``,
``LookupError``) so callers can catch them generically, as in scikit-learn.
"""

from __future__ import annotations

import enum

import attrs

__all__ = [
    "GraphClustWarning",
    "ConvergenceWarning",
    "DisconnectedGraphWarning",
    "DirectedGraphWarning",
    "DensifyWarning",
    "DegenerateDataWarning",
    "FewerClustersWarning",
    "NoClusterStructureWarning",
    "KRangeWarning",
    "Problem",
    "ProblemKind",
    "spec_error",
    "SpecError",
    "UnknownPartError",
    "IncompatiblePartsError",
    "InputError",
    "PluginError",
    "PluginWarning",
]


class GraphClustWarning(UserWarning):
    """Base class of the warnings graphclust emits."""


class ConvergenceWarning(GraphClustWarning):
    """An iterative solver stopped at ``max_iter`` before its stopping rule held."""


class DensifyWarning(GraphClustWarning):
    """A sparse ``X`` was densified for a part that needs dense rows (within the limit
    of :data:`graphclust.numerics.DENSIFY_LIMIT_BYTES`; above it the fit is refused)."""


class DisconnectedGraphWarning(GraphClustWarning):
    """The graph has more connected components than clusters asked for (warned once per
    fit, only then: fewer components cannot change the result)."""


class DirectedGraphWarning(GraphClustWarning):
    """A precomputed graph was not symmetric (a directed graph): it was clustered as
    the undirected graph ``(A + Aᵀ) / 2`` (:doc:`/graphs`)."""


class DegenerateDataWarning(GraphClustWarning):
    """The data cannot separate points (e.g. all rows identical): the labels are arbitrary."""


class FewerClustersWarning(GraphClustWarning):
    """A fit returned fewer distinct labels than ``n_clusters``."""


class NoClusterStructureWarning(GraphClustWarning):
    """``n_clusters`` was estimated and the data showed no cluster structure: one cluster
    (``k = 1``) is returned instead of an arbitrary split (:doc:`/choosing-k`)."""


class KRangeWarning(GraphClustWarning):
    """``n_clusters`` was estimated at the top of the searched range (``k_max``): the
    range may be too small (:doc:`/choosing-k`)."""


class ProblemKind(enum.Enum):
    """What kind of problem a :class:`Problem` is, set where the problem is found. The
    class of the error raised for a list of problems is chosen from these
    (:func:`spec_error`), never from the wording of the messages."""

    #: a part name that no plugin registered (:class:`UnknownPartError`)
    UNKNOWN_PART = "unknown-part"
    #: parts that cannot be connected (:class:`IncompatiblePartsError`)
    INCOMPATIBLE = "incompatible"
    #: an unknown parameter of a part, or an invalid parameter value
    INVALID_PARAMETER = "invalid-parameter"
    #: a preset name that no plugin registered (an ensemble member's; a spec that is
    #: neither a preset nor a table is an ``INVALID_SPEC``)
    UNKNOWN_PRESET = "unknown-preset"
    #: a stage that cannot run on row chunks (the chunked execution)
    NOT_CHUNKWISE = "not-chunkwise"
    #: anything else wrong with a spec: its shape, a key, a value (the default)
    INVALID_SPEC = "invalid-spec"


@attrs.frozen
class Problem:
    """One validation problem: where it is (``loc``, e.g. ``"solver.lam"``), what is wrong
    (``msg``, for people) and what kind of problem it is (``kind``, for programs)."""

    loc: str
    msg: str
    kind: ProblemKind = ProblemKind.INVALID_SPEC

    def __str__(self) -> str:
        return f"{self.loc}: {self.msg}" if self.loc else self.msg

    def at(self, loc: str) -> Problem:
        """The same problem (message and kind) at another location."""
        return attrs.evolve(self, loc=loc)


class SpecError(ValueError):
    """A pipeline spec is invalid. ``problems`` lists every problem found, each with its path
    and :class:`ProblemKind`.

    A message given as a string becomes one problem of the class's ``problem_kind``.
    """

    #: the kind of a problem given to the constructor as a plain string
    problem_kind: ProblemKind = ProblemKind.INVALID_SPEC

    def __init__(self, problems: list[Problem] | Problem | str, *, title: str = "invalid spec"):
        if isinstance(problems, str):
            problems = [Problem("", problems, self.problem_kind)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems = list(problems)
        self.title = title
        lines = [f"{title} ({len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}):"]
        lines += [f"  - {p}" for p in self.problems]
        super().__init__("\n".join(lines))


class UnknownPartError(SpecError, LookupError):
    """A spec names a part (or preset) that no plugin registered."""

    problem_kind = ProblemKind.UNKNOWN_PART


class IncompatiblePartsError(SpecError):
    """Two parts of a spec cannot be connected (e.g. a solver that needs an affinity graph
    after a builder that produces an anchor graph)."""

    problem_kind = ProblemKind.INCOMPATIBLE


def spec_error(problems: list[Problem]) -> SpecError:
    """The error for ``problems`` (non-empty), its class chosen from their kinds only:
    :class:`UnknownPartError` when every problem is an unknown part,
    :class:`IncompatiblePartsError` when every one is an incompatibility, else
    :class:`SpecError`."""
    kinds = {p.kind for p in problems}
    if kinds == {ProblemKind.UNKNOWN_PART}:
        return UnknownPartError(problems, title="unknown part")
    if kinds == {ProblemKind.INCOMPATIBLE}:
        return IncompatiblePartsError(problems, title="incompatible parts")
    return SpecError(problems)


class InputError(ValueError):
    """The data given to a pipeline is not usable (NaN, wrong shape, too few samples...)."""


class PluginWarning(GraphClustWarning):
    """A plugin failed to load, or registered a name another plugin already holds (the
    :class:`PluginError` of non-strict mode: the plugin is reported, the rest keep working)."""


class PluginError(RuntimeError):
    """A plugin failed to load or to register (raised only in strict mode)."""


class ClusterLostError(RuntimeError):
    """The Dask cluster a chunked fit runs on, or holds its results on, went away (its
    client closed mid-fit; ``labels_`` of a chunked fit read after the cluster closed or
    in another process after unpickling): what happened and what to do (:doc:`/dask`)."""
