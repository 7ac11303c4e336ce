"""A small TOML writer for specs (the standard library reads TOML but cannot write it).

Writes what a spec holds: strings, booleans, integers, floats (``nan``/``inf``
included), lists, and tables, with parts given as instances turned back into their
``{name = ..., parameters...}`` tables. TOML has no null: a ``None`` value is left out
and named in a comment, which reads back as the parameter's default when that
default is ``None`` (the only case :func:`spec_to_toml` is used for).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from graphclust._pipeline import STAGES

__all__ = ["spec_to_toml", "plain_spec"]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def plain_spec(value: Any) -> Any:
    """``value`` with parts and pipelines replaced by spec tables, tuples by lists and
    NumPy scalars by Python ones (what a spec file can hold)."""
    from graphclust._parts import Part
    from graphclust._pipeline import Pipeline

    if isinstance(value, Part):
        return {"name": value.name, **{k: plain_spec(v)
                                       for k, v in value.get_params(deep=False).items()}}
    if isinstance(value, Pipeline):
        out: dict[str, Any] = {sec: plain_spec(p) for sec, p in value.named_parts().items()}
        if getattr(value, "adapter", None) is not None and "adapter" not in out:
            out["adapter"] = plain_spec(value.adapter)
        return out
    if isinstance(value, dict):
        return {str(k): plain_spec(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_spec(v) for v in value]
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()  # NumPy scalar
    return value


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        items = [f"{_key(k)} = {_scalar(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as TOML")


def _table(lines: list[str], path: str, table: dict) -> None:
    nulls = [k for k, v in table.items() if v is None]
    scalars = {k: v for k, v in table.items() if v is not None and not isinstance(v, dict)}
    tables = {k: v for k, v in table.items() if isinstance(v, dict)}
    if path:
        lines.append(f"[{path}]")
    for k, v in scalars.items():
        lines.append(f"{_key(k)} = {_scalar(v)}")
    if nulls:
        lines.append(f"# None (the default): {', '.join(nulls)}")
    if path:
        lines.append("")
    for k, v in tables.items():
        _table(lines, f"{path}.{_key(k)}" if path else _key(k), v)


def spec_to_toml(spec: dict) -> str:
    """TOML text of a spec dict (parts may be given as instances).

    Top-level scalars come first, then one ``[section]`` table per part, nested part
    parameters as sub-tables (``[anchors.base]``).
    """
    plain = plain_spec(spec)
    lines: list[str] = []
    head = {k: v for k, v in plain.items() if not isinstance(v, dict)}
    _table(lines, "", head)
    if lines:
        lines.append("")
    order = [k for k in STAGES if isinstance(plain.get(k), dict)]
    order += [k for k, v in plain.items() if isinstance(v, dict) and k not in order]
    for k in order:
        _table(lines, _key(k), plain[k])
    return "\n".join(lines).rstrip("\n") + "\n"


def resolved_spec(pipe, graph, n_clusters: int, seed: int) -> dict:
    """The spec a fit actually ran: every part parameter written out, the run's
    ``n_clusters``, ``seed`` and ``scale`` (and ``starts`` when not 1), and the graph builder's parameters replaced
    by the values it reports having used in ``graph.info`` (a clamped ``n_neighbors``,
    the ``method`` the kNN size rule chose)."""
    out: dict[str, Any] = {"n_clusters": int(n_clusters), "seed": int(seed),
                           "scale": str(getattr(pipe, "scale", "none"))}
    if getattr(pipe, "starts", 1) != 1:
        out["starts"] = int(pipe.starts)
    if getattr(pipe, "adapter", None) is not None:
        out["adapter"] = plain_spec(pipe.adapter)
    for sec, part in pipe.named_parts().items():
        out[sec] = plain_spec(part)
    info = getattr(graph, "info", None) or {}
    if "graph" in out:
        for key, value in info.items():
            if key in out["graph"] and key != "name" and isinstance(value, (str, int, float,
                                                                              bool)):
                out["graph"][key] = plain_spec(value)
    if pipe.metrics:
        out["metrics"] = [plain_spec(m) for m in pipe.metrics]
    return out


def resolved_ensemble_spec(ensemble, result, n_clusters: int, seed: int) -> dict:
    """The ensemble spec a fit ran: every member as the pipeline spec it ran (its
    ``n_clusters`` and seed), and the consensus with its parameters."""
    members = [resolved_spec(m.pipeline, r.graph, k, s) for m, r, k, s in
               zip(ensemble.members, result.members, result.member_n_clusters,
                   result.member_seeds)]
    for member in members:
        member.pop("scale", None)  # the ensemble's, applied once to X
    return {"n_clusters": int(n_clusters), "seed": int(seed), "scale": ensemble.scale,
            "ensemble": {"members": members, "consensus": plain_spec(ensemble.consensus)}}
