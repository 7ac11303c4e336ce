"""The composer: turns a spec into a validated :class:`~graphclust.Pipeline`.

Every problem is collected before any work starts — unknown names (with the
registered names and the closest match), unknown or invalid parameters (with their
path, e.g. ``solver.lam``), and incompatible parts (naming both parts and what
would fit) — and raised together as one :class:`~graphclust.SpecError`.
"""

from __future__ import annotations

import copy
import difflib
from typing import Any

from graphclust._errors import Problem, ProblemKind, SpecError, spec_error
from graphclust._parts import Part
from graphclust._registry import Registry, unknown_name_message
from graphclust._spec import (SECTIONS, EnsembleSpec, MemberSpec, PartSpec, PipelineSpec,
                              merge_overrides, parse_spec, read_spec)

__all__ = ["compose", "validate_spec", "resolve_part", "build_part", "resolve_spec",
           "needs_data"]

_KIND_LABEL = {"anchors": "anchor selector", "graph": "graph builder", "adapter": "adapter",
               "solver": "solver", "rounding": "rounding", "metric": "metric",
               "consensus": "consensus"}


def _registry(registry: Registry | None) -> Registry:
    if registry is not None:
        return registry
    from graphclust._plugins import get_registry

    return get_registry()


def build_part(kind: str, ps: PartSpec, loc: str, registry: Registry,
               problems: list[Problem]) -> Part | None:
    """Instantiate the part ``ps`` of ``kind``; append problems (path-prefixed) on failure.

    Nested part parameters (declared with ``part_spec(kind)``) given as tables are
    composed recursively.
    """
    if ps.instance is not None:
        part = ps.instance
        problems.extend(_checked(part, loc))
        return part
    catalog = registry.parts(kind)
    if ps.name not in catalog:
        problems.append(Problem(f"{loc}.name", unknown_name_message(
            _KIND_LABEL[kind], ps.name, catalog.names()), ProblemKind.UNKNOWN_PART))
        return None
    cls = catalog.get(ps.name)
    fields = {f.name: f for f in cls.parameters()}
    kwargs: dict[str, Any] = {}
    ok = True
    for key, value in ps.params.items():
        if not isinstance(key, str):
            problems.append(Problem(f"{loc}.{key!r}", "parameter names must be strings",
                                    ProblemKind.INVALID_PARAMETER))
            ok = False
            continue
        if key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            known = ", ".join(fields) or "(none)"
            problems.append(Problem(f"{loc}.{key}", f"unknown parameter of {_KIND_LABEL[kind]} "
                                    f"{ps.name!r}{hint} Parameters: {known}",
                                    ProblemKind.INVALID_PARAMETER))
            ok = False
            continue
        check = fields[key].metadata.get("check")
        nested_kind = getattr(check, "_part_kind", None) if check is not None else None
        if nested_kind is not None and isinstance(value, dict):
            value = _compose_nested(nested_kind, value, f"{loc}.{key}", registry, problems)
            if value is None:
                ok = False
                continue
        kwargs[key] = value
    if not ok:
        return None
    try:
        part = cls(**kwargs)
    except Exception as exc:  # a required parameter is missing, or a part's own objection
        problems.append(Problem(loc, f"cannot build {_KIND_LABEL[kind]} {ps.name!r}: {exc}",
                                ProblemKind.INVALID_PARAMETER))
        return None
    problems.extend(_checked(part, loc))
    return part


def _checked(part: Part, loc: str) -> list[Problem]:
    """``part.check_params()`` as problems; a check that itself fails on a value of an
    unexpected shape is reported as a problem of that part, never raised."""
    try:
        return [Problem(f"{loc}.{p}", m, ProblemKind.INVALID_PARAMETER)
                for p, m in part.check_params()]
    except Exception as exc:
        return [Problem(loc, f"invalid parameters for {part.kind} {part.name!r}: "
                        f"{type(exc).__name__}: {exc}", ProblemKind.INVALID_PARAMETER)]


def build_metrics(specs, prefix: str, registry: Registry,
                  problems: list[Problem]) -> list[Part]:
    """The metric parts of a spec's ``metrics`` list (problems at ``metrics[i]``)."""
    metrics = []
    for i, ps in enumerate(specs):
        m = build_part("metric", ps, f"{prefix}metrics[{i}]", registry, problems)
        if m is not None:
            metrics.append(m)
    return metrics


def _compose_nested(kind: str, value: dict, loc: str, registry: Registry,
                    problems: list[Problem]):
    from graphclust._parts import Part

    if kind == "pipeline":
        return _compose(value, registry, problems, nested=True, prefix=f"{loc}.")
    from graphclust._spec import parse_part

    ps = parse_part(value, loc, problems)
    if ps is None:
        return None
    part = build_part(kind, ps, loc, registry, problems)
    return part if isinstance(part, Part) else None


def _kinds(kinds) -> str:
    return " or ".join(sorted(kinds))


def _hint(cls: type[Part]) -> str:
    """An adapter's summary as a clause: 'runs the solver on ...'."""
    text = cls.summary().rstrip(".")
    return text[:1].lower() + text[1:]


def _adapter_problems(graph: Part | None, adapter: Part, solver: Part | None,
                      registry: Registry, prefix: str) -> list[Problem]:
    """Problems of the chain graph builder → adapter → solver, from declarations only."""
    out: list[Problem] = []
    produced = graph.produces if graph is not None else None
    if produced is not None and produced not in adapter.accepts:
        fits = [r.name for r in registry.adapters.records() if produced in r.cls.accepts
                and (solver is None or r.cls.produces in solver.accepts)]
        msg = (f"adapter {adapter.name!r} accepts {_kinds(adapter.accepts)} graphs, but graph "
               f"builder {graph.name!r} produces an {produced} graph")
        if solver is not None and produced in solver.accepts:
            msg += f"; solver {solver.name!r} accepts it as it is: remove the adapter"
        msg += f". Adapters that fit: {', '.join(fits) or '(none)'}"
        out.append(Problem(f"{prefix}adapter", msg, ProblemKind.INCOMPATIBLE))
        return out
    if solver is None:
        return out
    if adapter.produces not in solver.accepts:
        source = "" if produced is None else f" of graph builder {graph.name!r}"
        fits = [r.name for r in registry.adapters.records()
                if r.cls.produces in solver.accepts and (produced is None
                                                         or produced in r.cls.accepts)]
        msg = (f"solver {solver.name!r} accepts {_kinds(solver.accepts)} graphs, but adapter "
               f"{adapter.name!r} turns the {produced or 'given'} graph{source} into an "
               f"{adapter.produces} graph")
        if produced is not None and produced in solver.accepts:
            msg += "; the solver accepts the graph as it is: remove the adapter"
        msg += f". Adapters that fit: {', '.join(fits) or '(none)'}"
        out.append(Problem(f"{prefix}solver", msg, ProblemKind.INCOMPATIBLE))
    for msg in adapter.solver_problems(solver):  # what the adapter runs with the solver
        out.append(Problem(f"{prefix}adapter", msg, ProblemKind.INCOMPATIBLE))
    if solver.needs_features and not adapter.provides_features:
        fits = [r.name for r in registry.adapters.records() if r.cls.provides_features
                and r.cls.produces in solver.accepts]
        out.append(Problem(f"{prefix}solver", f"solver {solver.name!r} needs features, but "
                           f"adapter {adapter.name!r} hands it none. Adapters that fit: "
                           f"{', '.join(fits) or '(none)'}", ProblemKind.INCOMPATIBLE))
    return out


def _compat(pipe_parts: dict[str, Part | None], spec: PipelineSpec, registry: Registry,
            prefix: str, nested: bool) -> list[Problem]:
    out: list[Problem] = []
    graph, adapter = pipe_parts.get("graph"), pipe_parts.get("adapter")
    solver, rounding = pipe_parts.get("solver"), pipe_parts.get("rounding")
    if graph is not None:
        if graph.needs_anchors and spec.anchors is None:
            names = ", ".join(registry.anchors.names()) or "(none registered)"
            out.append(Problem(f"{prefix}anchors", f"graph builder {graph.name!r} builds an anchor "
                               f"graph and needs an [anchors] section; registered anchor "
                               f"selectors: {names}", ProblemKind.INCOMPATIBLE))
        if not graph.needs_anchors and spec.anchors is not None:
            out.append(Problem(f"{prefix}anchors", f"graph builder {graph.name!r} does not use "
                               "anchors; remove the [anchors] section or choose an anchor graph "
                               "builder", ProblemKind.INCOMPATIBLE))
    produced = graph.produces if graph is not None else None
    if adapter is not None:
        out.extend(_adapter_problems(graph, adapter, solver, registry, prefix))
    elif (spec.adapter is None  # an adapter that failed to build was reported already
          and solver is not None and produced is not None and produced not in solver.accepts):
        fits = [r.name for r in registry.graphs.records() if r.cls.produces in solver.accepts]
        msg = (f"solver {solver.name!r} accepts {_kinds(solver.accepts)} graphs, "
               f"but graph builder {graph.name!r} produces an {produced} graph")
        bridges = [r for r in registry.adapters.records()
                   if produced in r.cls.accepts and r.cls.produces in solver.accepts]
        if bridges:
            msg += "; set " + " or ".join(f"adapter = \"{r.name}\" ({_hint(r.cls)})"
                                          for r in bridges)
        msg += f". Graph builders that fit: {', '.join(fits) or '(none)'}"
        out.append(Problem(f"{prefix}solver", msg, ProblemKind.INCOMPATIBLE))
    # an adapter's lift may add fields to the solver's solution (``Adapter.adds``)
    added = frozenset(getattr(adapter, "adds", frozenset())) if adapter is not None else frozenset()
    if solver is not None and rounding is not None and rounding.needs not in (solver.provides
                                                                              | added):
        have = solver.provides | added
        fits = [r.name for r in registry.roundings.records() if r.cls.needs in have]
        by = f" with adapter {adapter.name!r}" if added else ""
        out.append(Problem(f"{prefix}rounding", f"rounding {rounding.name!r} needs a solution "
                           f"with a {rounding.needs}, but solver {solver.name!r}{by} produces "
                           f"{' and '.join(sorted(have))}. Roundings that fit: "
                           f"{', '.join(fits) or '(none)'}", ProblemKind.INCOMPATIBLE))
    return out


def _compose(data: dict, registry: Registry, problems: list[Problem], *, nested: bool,
             prefix: str = ""):
    from graphclust._pipeline import Pipeline

    spec, structural = parse_spec(data, nested=nested)
    problems.extend(p.at(f"{prefix}{p.loc}") for p in structural)
    if spec.ensemble is not None:  # members and consensus
        return compose_ensemble(spec.ensemble, spec, registry, problems, prefix=prefix)
    parts: dict[str, Part | None] = {}
    for sec in SECTIONS:
        ps = getattr(spec, sec)
        parts[sec] = None if ps is None else build_part(sec, ps, f"{prefix}{sec}", registry,
                                                        problems)
    metrics = build_metrics(spec.metrics, prefix, registry, problems)
    problems.extend(_compat(parts, spec, registry, prefix, nested))
    return Pipeline(anchors=parts["anchors"], graph=parts["graph"], solver=parts["solver"],
                    rounding=parts["rounding"], metrics=metrics, adapter=parts["adapter"],
                    n_clusters=spec.n_clusters, seed=spec.seed, scale=spec.scale,
                    starts=spec.starts)


def compose_ensemble(spec: EnsembleSpec, top: Any, registry, problems: list[Problem], *,
                     prefix: str = ""):
    """Build an :class:`Ensemble` from a parsed ensemble section.

    Each member is composed as a whole pipeline spec, its problems prefixed with
    ``ensemble.members[i].``; a preset member's other keys override the preset's
    sections. ``top`` is the parsed :class:`~graphclust._spec.PipelineSpec` (its
    ``n_clusters``, ``seed`` and metrics belong to the ensemble).
    """
    from graphclust._ensemble import Ensemble, EnsembleMember

    loc = f"{prefix}ensemble"
    members: list[EnsembleMember] = []
    for i, ms in enumerate(spec.members):
        mloc = f"{loc}.members[{i}]"
        data = _member_data(ms, mloc, registry, problems)
        if data is None:
            continue
        if ms.preset is not None and data.get("scale", "none") != "none":
            problems.append(Problem(f"{mloc}.scale", f"preset {ms.preset!r} sets scale = "
                                    f"{data['scale']!r}, but members share the ensemble's "
                                    "scaling; set 'scale' at the top of the spec"))
            continue
        n_before = len(problems)
        pipe = _compose(data, registry, problems, nested=False, prefix=f"{mloc}.")
        if len(problems) > n_before:
            continue
        pipe.metrics = []  # members are scored by the ensemble's metrics (Ensemble.fit)
        name = ms.preset or pipe.solver.name
        for c in range(ms.count):
            label = f"members[{i}] {name}" + (f"#{c}" if ms.count > 1 else "")
            members.append(EnsembleMember(copy.deepcopy(pipe) if c else pipe,
                                          ms.n_clusters, label, name))
    consensus = None
    if spec.consensus is not None:
        consensus = build_part("consensus", spec.consensus, f"{loc}.consensus", registry,
                               problems)
    metrics = build_metrics(top.metrics, prefix, registry, problems)
    if consensus is None or len(members) != sum(ms.count for ms in spec.members):
        return None
    return Ensemble(members=members, consensus=consensus, metrics=metrics,
                    n_clusters=top.n_clusters, seed=top.seed, scale=top.scale)


def _member_data(ms: MemberSpec, loc: str, registry, problems: list[Problem]) -> dict | None:
    if ms.preset is None:
        if not ms.spec:
            return None  # its shape was already reported by the parser
        return ms.spec
    if ms.preset not in registry.presets:
        where = loc if not ms.spec else f"{loc}.preset"
        problems.append(Problem(where, unknown_name_message("preset", ms.preset,
                                                            registry.presets.names()),
                                ProblemKind.UNKNOWN_PRESET))
        return None
    base = registry.presets.get(ms.preset)
    if "ensemble" in base:
        problems.append(Problem(loc, f"preset {ms.preset!r} is an ensemble; a member cannot "
                                "itself be an ensemble"))
        return None
    return merge_overrides(base, ms.spec)


def _raise(problems: list[Problem]) -> None:
    """Raise the error for ``problems`` (none: return); its class comes from the problems'
    kinds (:func:`graphclust._errors.spec_error`)."""
    if problems:
        raise spec_error(problems)


def rule_needs_data(name: str) -> SpecError:
    """The error for a rule preset composed without a data profile."""
    return SpecError(Problem("", f"preset {name!r} is a rule over the data: its concrete spec "
                             "is decided at fit from n, d, k and the column scales; fit "
                             f"GraphClustering({name!r}), or print the spec for a data set "
                             f"with 'graphclust fill {name} --dataset X'"),
                     title="rule preset needs data")


def needs_data(spec: Any, registry: Registry | None = None) -> bool:
    """Whether ``spec`` names a rule preset, whose concrete spec the data decide."""
    return isinstance(spec, str) and spec in _registry(registry).rules


def resolve_spec(spec: str | dict, registry: Registry | None = None,
                 profile=None) -> dict:
    """The spec dict of ``spec``: a preset's table (a copy), a rule preset's concrete spec
    for ``profile`` (a :class:`~graphclust._rules.DataProfile`), or the parsed spec itself.

    Raises
    ------
    SpecError
        For a rule preset without a profile.
    UnknownPartError
        For a bare name that is no preset (listing the presets, with the closest one).
    """
    registry = _registry(registry)
    if isinstance(spec, str) and spec in registry.rules:
        if profile is None:
            raise rule_needs_data(spec)
        return registry.rules.get(spec).resolve(profile)
    if isinstance(spec, str) and spec in registry.presets:
        return copy.deepcopy(registry.presets.get(spec))
    if isinstance(spec, str) and not any(c in spec for c in "=[{./\\"):
        registry.presets.record(spec)  # raises with the list of presets
    return read_spec(spec)


#: The metrics a spec without a ``metrics`` key scores when ``fit`` is given ``y`` (those
#: registered): the ones the built-in presets declare, so a preset, a rule preset's
#: decision, a hand-written spec and an ensemble are all scored alike. ``metrics = []``
#: scores nothing.
DEFAULT_METRICS = ("acc", "nmi")


def with_default_metrics(data: dict, registry: Registry) -> dict:
    """``data`` with :data:`DEFAULT_METRICS` as its ``metrics`` when it has none."""
    if not isinstance(data, dict) or "metrics" in data:
        return data
    return {**data, "metrics": [{"name": name} for name in DEFAULT_METRICS
                                if name in registry.metrics]}


def compose(spec: str | dict, registry: Registry | None = None, profile=None):
    """Validate a spec and build its :class:`~graphclust.Pipeline` (no data is touched),
    or its :class:`~graphclust.Ensemble` for a spec with an ``ensemble`` section.

    Parameters
    ----------
    spec : dict, path or text
        A pipeline spec (see :mod:`graphclust._spec`), or a preset name.
    registry : Registry, optional
        Defaults to the process-wide registry of installed plugins.
    profile : DataProfile, optional
        The data's profile, which a rule preset (``"auto"``) needs to decide its spec
        (:func:`graphclust._rules.profile_data`).

    Raises
    ------
    SpecError
        Listing every problem, each with its path.
    """
    registry = _registry(registry)
    data = with_default_metrics(resolve_spec(spec, registry, profile), registry)
    problems: list[Problem] = []
    pipe = _compose(data, registry, problems, nested=False)
    _raise(problems)
    return pipe


def validate_spec(spec: str | dict, registry: Registry | None = None) -> list[Problem]:
    """Every problem of a spec (empty when valid). A rule preset's name is valid: its
    concrete spec is checked when the data decide it."""
    if isinstance(spec, str) and spec in _registry(registry).rules:
        return []
    try:
        compose(spec, registry)
    except SpecError as exc:
        return exc.problems
    return []


def resolve_part(value: Any, kind: str, registry: Registry | None = None):
    """Turn a nested part parameter into a part (or a :class:`~graphclust.Pipeline` for
    ``kind="pipeline"``).

    ``value`` is a part instance (returned as is), or a table ``{"name": ..., ...}``
    (for ``"pipeline"``: a table with ``solver``, ``rounding`` and optional ``graph``).
    """
    from graphclust._pipeline import Pipeline

    if isinstance(value, (Part, Pipeline)):
        return value
    registry = _registry(registry)
    problems: list[Problem] = []
    if kind == "pipeline":
        if not isinstance(value, dict):
            raise SpecError(Problem("", f"a nested pipeline must be a table, got {value!r}"))
        out = _compose(value, registry, problems, nested=True)
    else:
        from graphclust._spec import parse_part

        ps = parse_part(value, kind, problems)
        out = None if ps is None else build_part(kind, ps, kind, registry, problems)
    _raise(problems)
    return out

