"""Pipeline specs: TOML, JSON or a dict, parsed into attrs value objects.

A spec is::

    n_clusters = 10            # optional (the estimator's n_clusters wins)
    seed = 0                   # optional (the estimator's random_state wins)
    scale = "standard"         # optional preprocessing, default "none" (see below)
    starts = 1                 # optional: whole runs from independent seeds (see below)
    anchors  = { name = "kmeans", n_anchors = 1000 }   # optional section
    graph    = { name = "gaussian-anchor", n_neighbors = 5 }
    adapter  = "anchor-level"  # optional section, see below
    solver   = { name = "spectral" }
    rounding = { name = "kmeans", n_init = 10 }
    metrics  = [{ name = "acc" }, { name = "nmi" }]

Each section names a registered part and gives its parameters. A spec selects parts
by registered name only: it can never import or execute code (a name that looks
like an import path, or a ``_target_`` key, is rejected).

The optional ``adapter`` section names a registered :class:`~graphclust.Adapter` that
sits between the graph and the solver (e.g. one that runs a solver needing an explicit
affinity graph on the ``m x m`` anchor-level graph of an anchor graph). Having no
parameters of its own in most cases, it may be given by name alone,
``adapter = "<name>"``, which is shorthand for ``adapter = { name = "<name>" }``.

The optional top-level ``scale`` (``"none"``, the default, ``"center"``, ``"standard"``,
``"minmax"`` or ``"l2"``) preprocesses ``X`` before the anchors and the graph; it is
fitted at ``fit`` and reapplied at ``predict`` (see :mod:`graphclust.numerics.scaling`).

The optional top-level ``starts`` (an integer from 1, the default, to
:data:`MAX_STARTS`) runs the whole pipeline that many times, start 0 with the run's
seed and start ``r`` with ``ctx.child("start{r}")``, and keeps the labels whose
Newman–Girvan modularity on their own graph is the highest
(:meth:`graphclust._pipeline.Pipeline.run`).

An ensemble spec has an ``ensemble`` section instead of the part sections::

    n_clusters = 10
    ensemble = { members = ["anchor-spectral", { preset = "uspec", count = 20,
                                                 n_clusters = [20, 60] }],
                 consensus = { name = "tcut" } }

Each member is a preset name, a table ``{ preset = "...", ... }`` whose other keys
override the preset's sections, or a whole pipeline spec; a member table may add
``n_clusters`` (an integer or an inclusive ``[lo, hi]`` range drawn per member) and
``count`` (that many members with their own seeds). See :mod:`graphclust._ensemble`.
An ensemble's ``scale`` applies once to ``X``; its members may not set their own.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import attrs

from graphclust._errors import Problem, SpecError
from graphclust._pipeline import STAGES
from graphclust._registry import NAME_PATTERN
from graphclust.numerics.scaling import SCALE_KINDS

__all__ = ["PartSpec", "PipelineSpec", "MemberSpec", "EnsembleSpec", "read_spec", "parse_spec",
           "parse_ensemble", "parse_scale", "merge_overrides", "SECTIONS"]

#: A spec's part sections: the pipeline's stages.
SECTIONS = STAGES
#: ``k_max`` is read by the plan (the largest ``k`` searched when neither the estimator
#: nor the call gives one: a rule preset states the range its estimator resolves), and
#: ``k_from`` (``"auto"`` or ``"parts"``: who estimates ``k`` for an eigengap pipeline,
#: :mod:`graphclust._kshared`). ``second_opinion`` is a whole pipeline spec fitted when
#: the spec's own estimate of ``k`` finds no cluster structure (:mod:`graphclust._ksecond`).
K_FROM = ("auto", "parts")
TOP_KEYS = ("n_clusters", "k_max", "k_from", "seed", "scale", "starts", "metrics", *SECTIONS,
            "ensemble", "second_opinion")
ENSEMBLE_KEYS = ("members", "consensus")
MEMBER_KEYS = ("preset", "n_clusters", "count")
#: Bounds on the members an ensemble spec may ask for, checked before any work: one
#: entry's ``count``, and all members together (each member is a whole pipeline run;
#: U-SENC uses 20, and a thousand are hours of work on a large data set already).
MAX_MEMBER_COUNT = 1000
#: Seeds are integers in [0, SEED_LIMIT), NumPy's and scikit-learn's seed range, used as
#: given (see :func:`graphclust._plan._seed`).
SEED_LIMIT = 2**32
MAX_MEMBERS = 1000
#: Most starts a pipeline spec may ask for (each is a whole run of the pipeline).
MAX_STARTS = 100
META_KEYS = ("summary", "paper")
#: sections that may be given as a bare registered name (``adapter = "<name>"``)
NAME_SHORTHAND = ("adapter",)


@attrs.frozen
class PartSpec:
    """One section: a registered ``name`` and that part's parameters (or a given part)."""

    name: str
    params: dict = attrs.field(factory=dict)
    instance: Any = None  # a Part object given directly (Python API only)


@attrs.frozen
class MemberSpec:
    """One entry of ``ensemble.members``.

    Attributes
    ----------
    spec : dict
        The member's pipeline spec, or the overrides of ``preset``.
    preset : str or None
        A preset the member starts from.
    n_clusters : int, (lo, hi) or None
        The member's number of clusters, a range drawn from per member, or ``None``
        (the member's spec, else the ensemble's ``n_clusters``).
    count : int
        How many members this entry stands for (each with its own seed and draw).
    """

    spec: dict = attrs.field(factory=dict)
    preset: str | None = None
    n_clusters: int | tuple[int, int] | None = None
    count: int = 1


@attrs.frozen
class EnsembleSpec:
    """A parsed ``ensemble`` section: members and the consensus part."""

    members: tuple[MemberSpec, ...]
    consensus: PartSpec | None


@attrs.frozen
class PipelineSpec:
    """A parsed pipeline spec (``ensemble`` set for an ensemble spec, whose part
    sections are then empty)."""

    graph: PartSpec | None
    solver: PartSpec | None
    rounding: PartSpec | None
    anchors: PartSpec | None = None
    metrics: tuple[PartSpec, ...] = ()
    n_clusters: int | None = None
    seed: int | None = None
    adapter: PartSpec | None = None
    ensemble: EnsembleSpec | None = None
    #: the preprocessing stage, one of :data:`~graphclust.numerics.SCALE_KINDS`
    scale: str = "none"
    #: whole runs from independent seeds; the most modular labels are kept
    starts: int = 1


def read_spec(source: str | os.PathLike | dict) -> dict:
    """Read a spec from a dict, a ``.toml``/``.json`` file, or TOML/JSON text.

    Returns a deep copy, so the caller's dict is never modified.
    """
    if isinstance(source, dict):
        return copy.deepcopy(source)
    if not isinstance(source, (str, os.PathLike)):
        raise SpecError(Problem("", "a spec must be a preset name, a dict, a .toml/.json path "
                                f"or TOML/JSON text, got {type(source).__name__}"))
    text = str(source)
    path = Path(text)
    if path.suffix.lower() in (".toml", ".json") and path.is_file():
        raw = path.read_text()
        return _parse_text(raw, path.suffix.lower(), str(path))
    if path.suffix.lower() in (".toml", ".json"):
        raise SpecError(Problem("", f"spec file {text!r} does not exist"))
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _parse_text(text, ".json", "<json>")
    if "=" in text or "[" in text:
        return _parse_text(text, ".toml", "<toml>")
    raise SpecError(Problem("", f"{text!r} is neither a spec file, TOML/JSON text, nor a dict"))


def _parse_text(text: str, kind: str, where: str) -> dict:
    try:
        return json.loads(text) if kind == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(Problem("", f"{where}: cannot parse {kind[1:].upper()}: {exc}")) from None


def merge_overrides(spec: dict, overrides: dict | None) -> dict:
    """Apply per-section overrides: ``{"graph": {"n_neighbors": 15}}`` updates the section;
    an override with a different ``name`` replaces the section; ``None`` removes it;
    scalar top-level keys replace."""
    out = copy.deepcopy(spec)
    for key in NAME_SHORTHAND:
        if isinstance(out.get(key), str):
            out[key] = {"name": out[key]}
    for key, value in (overrides or {}).items():
        if key in NAME_SHORTHAND and isinstance(value, str):
            value = {"name": value}
        if key in SECTIONS and isinstance(value, dict) and isinstance(out.get(key), dict):
            if "name" in value and value["name"] != out[key].get("name"):
                out[key] = dict(value)
            else:
                out[key] = {**out[key], **value}
        elif value is None and key in SECTIONS:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def _closest(word: str, options) -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _looks_like_code(name: str) -> bool:
    return any(ch in name for ch in ".:/\\()") or name.startswith("_")


def parse_part(value: Any, loc: str, problems: list[Problem]) -> PartSpec | None:
    """Parse one section value into a :class:`PartSpec`, appending problems."""
    from graphclust._parts import Part

    if isinstance(value, Part):
        return PartSpec(value.name or type(value).__name__, {}, value)
    if not isinstance(value, dict):
        problems.append(Problem(loc, f"must be a table with a 'name', got {type(value).__name__}"))
        return None
    if "_target_" in value:
        problems.append(Problem(f"{loc}._target_", "a spec selects parts by registered name "
                                "only; '_target_' (an import path) is not allowed"))
    name = value.get("name")
    if name is None:
        problems.append(Problem(f"{loc}.name", "missing: every section needs the registered "
                                "name of a part"))
        return None
    if not isinstance(name, str):
        problems.append(Problem(f"{loc}.name", f"must be a string, got {type(name).__name__}"))
        return None
    if _looks_like_code(name):
        problems.append(Problem(f"{loc}.name", f"{name!r} looks like an import path; a spec "
                                "selects parts by registered name only and never imports code"))
        return None
    if not NAME_PATTERN.match(name):
        problems.append(Problem(f"{loc}.name", f"{name!r} is not a valid part name"))
        return None
    params = {k: v for k, v in value.items() if k not in ("name", "_target_")}
    return PartSpec(name, params)


def parse_spec(data: dict, *, nested: bool = False) -> tuple[PipelineSpec, list[Problem]]:
    """Check a spec's structure; return the parsed spec and every problem found.

    ``nested=True`` parses a pipeline given as a part parameter (its ``graph`` is
    optional: it reuses its parent's graph).
    """
    problems: list[Problem] = []
    if not isinstance(data, dict):
        return PipelineSpec(None, None, None), [Problem("", "a spec must be a table")]
    for key in data:
        if not isinstance(key, str):
            problems.append(Problem(repr(key), "spec keys must be strings"))
        elif key not in TOP_KEYS and key not in META_KEYS:
            if key == "_target_":
                problems.append(Problem(key, "a spec selects parts by registered name only; "
                                        "'_target_' (an import path) is not allowed"))
            else:
                problems.append(Problem(key, "unknown key" + _closest(key, TOP_KEYS) +
                                        f" Allowed: {', '.join(TOP_KEYS)}"))
    sections: dict[str, PartSpec | None] = {}
    required = ("solver", "rounding") if nested else ("graph", "solver", "rounding")
    ensemble = None
    if "ensemble" in data and nested:
        problems.append(Problem("ensemble", "a nested pipeline cannot be an ensemble"))
    elif "ensemble" in data:
        required = ()
        ensemble = parse_ensemble(data["ensemble"], "ensemble", problems)
        for key in SECTIONS:
            if data.get(key) is not None:
                problems.append(Problem(key, "an ensemble spec takes no part sections: each "
                                        f"member carries its own {key}"))
    for sec in SECTIONS:
        if sec in data and data[sec] is not None:
            value = data[sec]
            if sec in NAME_SHORTHAND and isinstance(value, str):
                value = {"name": value}
            sections[sec] = parse_part(value, sec, problems)
        else:
            sections[sec] = None
            if sec in required:
                problems.append(Problem(sec, "missing section"))
    metrics: list[PartSpec] = []
    raw_metrics = data.get("metrics", [])
    if isinstance(raw_metrics, (dict, str)):
        raw_metrics = [raw_metrics]
    if not isinstance(raw_metrics, list):
        problems.append(Problem("metrics", "must be a list of tables"))
        raw_metrics = []
    for i, m in enumerate(raw_metrics):
        if isinstance(m, str):
            m = {"name": m}
        ps = parse_part(m, f"metrics[{i}]", problems)
        if ps is not None:
            metrics.append(ps)
    n_clusters = data.get("n_clusters")
    if n_clusters is not None and (isinstance(n_clusters, bool) or not isinstance(n_clusters, int)
                                   or n_clusters < 1):
        problems.append(Problem("n_clusters", f"must be an integer >= 1, got {n_clusters!r}"))
    k_max = data.get("k_max")
    if k_max is not None and (isinstance(k_max, bool) or not isinstance(k_max, int)
                              or k_max < 1):
        problems.append(Problem("k_max", f"must be an integer >= 1, got {k_max!r}"))
    k_from = data.get("k_from", "auto")
    if k_from not in K_FROM:
        problems.append(Problem("k_from", "must be 'auto' (auto's estimate of n_clusters when "
                                "the pipeline's would be an eigengap) or 'parts' (the "
                                f"pipeline's own estimating part), got {k_from!r}"))
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                             or not 0 <= seed < SEED_LIMIT):
        problems.append(Problem("seed", f"must be an integer in [0, 2**32), got {seed!r}"))
    scale = parse_scale(data.get("scale", "none"), "scale", problems)
    if nested and scale != "none":
        problems.append(Problem("scale", "a nested pipeline works on its parent's data, "
                                "already scaled; set 'scale' at the top of the spec"))
    starts = data.get("starts", 1)
    if isinstance(starts, bool) or not isinstance(starts, int) or not 1 <= starts <= MAX_STARTS:
        problems.append(Problem("starts", f"must be an integer in [1, {MAX_STARTS}], got "
                                f"{starts!r}"))
        starts = 1
    elif ensemble is not None and starts != 1:
        problems.append(Problem("starts", "an ensemble's members are its starts; give a "
                                "member its own 'starts' instead"))
    if "second_opinion" in data:
        _check_second_opinion(data["second_opinion"], nested, problems)
    spec = PipelineSpec(
        graph=sections["graph"], solver=sections["solver"], rounding=sections["rounding"],
        anchors=sections["anchors"], metrics=tuple(metrics),
        n_clusters=n_clusters if not problems else (n_clusters if isinstance(n_clusters, int) else None),
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        adapter=sections["adapter"], ensemble=ensemble, scale=scale, starts=starts,
    )
    return spec, problems


def _check_second_opinion(value: Any, nested: bool, problems: list[Problem]) -> None:
    """Check a spec's ``second_opinion``: a pipeline spec (no ensemble, no ``n_clusters``:
    it estimates ``k``, and no second opinion of its own), its problems located under
    ``second_opinion.``."""
    loc = "second_opinion"
    if nested:
        problems.append(Problem(loc, "a nested pipeline takes no second opinion; set it at "
                                "the top of the spec"))
        return
    if not isinstance(value, dict):
        problems.append(Problem(loc, f"must be a pipeline spec (a table), got "
                                f"{type(value).__name__}"))
        return
    for key, why in (("ensemble", "must be a pipeline, not an ensemble"),
                     ("n_clusters", ("estimates k (it is fitted when the spec's own estimate "
                                     "finds no cluster structure): it takes no n_clusters")),
                     ("second_opinion", "takes no second opinion of its own")):
        if key in value:
            problems.append(Problem(f"{loc}.{key}", why))
    if "ensemble" in value or "second_opinion" in value:
        return
    _, inner = parse_spec(value)
    problems.extend(problem.at(f"{loc}.{problem.loc}" if problem.loc else loc)
                    for problem in inner)


def parse_scale(value: Any, loc: str, problems: list[Problem]) -> str:
    """Check a ``scale`` value; return it, or ``"none"`` after appending a problem."""
    if isinstance(value, str) and value in SCALE_KINDS:
        return value
    allowed = ", ".join(repr(k) for k in SCALE_KINDS)
    if isinstance(value, str):
        problems.append(Problem(loc, f"unknown value {value!r}{_closest(value, SCALE_KINDS)} "
                                f"Allowed: {allowed}"))
    else:
        problems.append(Problem(loc, f"must be a string, one of {allowed}; got {value!r} "
                                f"({type(value).__name__})"))
    return "none"


def _parse_k(value: Any, loc: str, problems: list[Problem]) -> int | tuple[int, int] | None:
    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool)

    if value is None:
        return None
    if is_int(value):
        if value < 1:
            problems.append(Problem(loc, f"must be an integer >= 1, got {value!r}"))
            return None
        return value
    if isinstance(value, (list, tuple)):
        if len(value) != 2 or not all(is_int(v) for v in value):
            problems.append(Problem(loc, "a range must be two integers [lo, hi], "
                                    f"got {list(value)!r}"))
            return None
        lo, hi = value
        if lo < 1 or lo > hi:
            problems.append(Problem(loc, f"a range [lo, hi] needs 1 <= lo <= hi, got [{lo}, {hi}]"))
            return None
        return (lo, hi)
    problems.append(Problem(loc, "must be an integer >= 1 or a range [lo, hi], "
                            f"got {value!r} ({type(value).__name__})"))
    return None


def _parse_member(value: Any, loc: str, problems: list[Problem]) -> MemberSpec | None:
    if isinstance(value, str):
        if _looks_like_code(value) or not NAME_PATTERN.match(value):
            problems.append(Problem(loc, f"{value!r} is not a preset name; a member is a "
                                    "preset name or a table"))
            return None
        return MemberSpec(preset=value)
    if not isinstance(value, dict):
        problems.append(Problem(loc, "must be a preset name or a table (a pipeline spec, or "
                                f"{{ preset = ... }}), got {type(value).__name__}"))
        return None
    if "ensemble" in value:
        problems.append(Problem(f"{loc}.ensemble", "a member cannot itself be an ensemble"))
        return None
    if "seed" in value:
        problems.append(Problem(f"{loc}.seed", "members take seeds derived from the run's "
                                "seed; set 'seed' at the top of the spec"))
    if "scale" in value:
        problems.append(Problem(f"{loc}.scale", "members share the ensemble's scaling, "
                                "applied once to X; set 'scale' at the top of the spec"))
    preset = value.get("preset")
    if preset is not None and (not isinstance(preset, str) or _looks_like_code(preset)
                               or not NAME_PATTERN.match(preset)):
        problems.append(Problem(f"{loc}.preset", f"must be a registered preset name, got "
                                f"{preset!r}"))
        return None
    n_clusters = _parse_k(value.get("n_clusters"), f"{loc}.n_clusters", problems)
    count = value.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        problems.append(Problem(f"{loc}.count", f"must be an integer >= 1, got {count!r}"))
        count = 1
    elif count > MAX_MEMBER_COUNT:
        problems.append(Problem(f"{loc}.count", f"must be at most {MAX_MEMBER_COUNT} (each "
                                f"member is a whole pipeline run), got {count}"))
        count = 1
    spec = {k: v for k, v in value.items() if k not in (*MEMBER_KEYS, "seed", "scale")}
    if preset is None and not any(key in SECTIONS for key in spec):
        problems.append(Problem(loc, "names no pipeline: give a preset ({ preset = \"uspec\" "
                                "}) or the member's parts (graph, solver, rounding, ...)"))
        return None
    return MemberSpec(spec=spec, preset=preset, n_clusters=n_clusters, count=count)


def parse_ensemble(data: Any, loc: str, problems: list[Problem]) -> EnsembleSpec | None:
    """Parse an ``ensemble`` section (members and consensus), appending problems.

    Members are only checked for their shape here; the composer validates each one as
    a pipeline spec, with problems under ``ensemble.members[i]``.
    """
    if not isinstance(data, dict):
        problems.append(Problem(loc, "must be a table with 'members' and 'consensus', got "
                                f"{type(data).__name__}"))
        return None
    for key in data:
        if key not in ENSEMBLE_KEYS:
            problems.append(Problem(f"{loc}.{key}", "unknown key" + _closest(key, ENSEMBLE_KEYS)
                                    + f" Allowed: {', '.join(ENSEMBLE_KEYS)}"))
    raw = data.get("members")
    members: list[MemberSpec] = []
    if raw is None:
        problems.append(Problem(f"{loc}.members", "missing: an ensemble needs a list of members"))
    elif not isinstance(raw, list):
        problems.append(Problem(f"{loc}.members", f"must be a list, got {type(raw).__name__}"))
    elif not raw:
        problems.append(Problem(f"{loc}.members", "is empty: an ensemble needs at least one "
                                "member"))
    else:
        for i, value in enumerate(raw):
            member = _parse_member(value, f"{loc}.members[{i}]", problems)
            members.append(member if member is not None else MemberSpec())
        total = sum(m.count for m in members)
        if total > MAX_MEMBERS:
            problems.append(Problem(f"{loc}.members", f"together ask for {total} members, more "
                                    f"than {MAX_MEMBERS} (each member is a whole pipeline "
                                    "run)"))
    consensus = None
    if data.get("consensus") is None:
        problems.append(Problem(f"{loc}.consensus", "missing: name the consensus part, e.g. "
                                "{ name = \"tcut\" }"))
    else:
        raw_c = data["consensus"]
        consensus = parse_part({"name": raw_c} if isinstance(raw_c, str) else raw_c,
                               f"{loc}.consensus", problems)
    return EnsembleSpec(tuple(members), consensus)
