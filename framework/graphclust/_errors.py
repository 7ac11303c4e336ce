"""Exceptions and warnings raised by graphclust.

Every exception subclasses a built-in (``ValueError``, ``TypeError``,
``LookupError``) so callers can catch them generically, as in scikit-learn.
"""

from __future__ import annotations

import attrs

__all__ = [
    "GraphClustWarning",
    "ConvergenceWarning",
    "DisconnectedGraphWarning",
    "DegenerateDataWarning",
    "FewerClustersWarning",
    "Problem",
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


class DisconnectedGraphWarning(GraphClustWarning):
    """The graph has more connected components than clusters asked for (warned once per
    fit, only then: fewer components cannot change the result)."""


class DegenerateDataWarning(GraphClustWarning):
    """The data cannot separate points (e.g. all rows identical): the labels are arbitrary."""


class FewerClustersWarning(GraphClustWarning):
    """A fit returned fewer distinct labels than ``n_clusters``."""


@attrs.frozen
class Problem:
    """One validation problem: where it is (``loc``, e.g. ``"solver.lam"``) and what is wrong."""

    loc: str
    msg: str

    def __str__(self) -> str:
        return f"{self.loc}: {self.msg}" if self.loc else self.msg


class SpecError(ValueError):
    """A pipeline spec is invalid. ``problems`` lists every problem found, each with its path."""

    def __init__(self, problems: list[Problem] | Problem | str, *, title: str = "invalid spec"):
        if isinstance(problems, str):
            problems = [Problem("", problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems = list(problems)
        self.title = title
        lines = [f"{title} ({len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}):"]
        lines += [f"  - {p}" for p in self.problems]
        super().__init__("\n".join(lines))


class UnknownPartError(SpecError, LookupError):
    """A spec names a part (or preset) that no plugin registered."""


class IncompatiblePartsError(SpecError):
    """Two parts of a spec cannot be connected (e.g. a solver that needs an affinity graph
    after a builder that produces an anchor graph)."""


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
