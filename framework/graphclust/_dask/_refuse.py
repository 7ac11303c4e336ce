"""Which specs run on row chunks: checked before anything runs."""

from __future__ import annotations

from graphclust._errors import Problem, SpecError

__all__ = ["check_chunkwise"]

#: What each kind needs in the chunked execution, for the refusal message.
_WHY = {
    "anchors": "it is not declared to select its anchors from a row sample",
    "graph": "it needs all points at once (only anchor graphs are built per chunk)",
    "anchor-graph": "it has no chunk-wise form (prepare_chunked: its fitted state from sums "
                    "over chunks, rows per chunk by transform)",
    "solver": "it has no chunk-wise solve (m-sized sums over chunks, rows lifted per chunk)",
    "rounding": "it is not declared to be fitted on a row sample and applied per chunk",
}


def _alternatives(kind: str, extra=None) -> str:
    from graphclust._plugins import get_registry

    catalog = getattr(get_registry(), {"anchors": "anchors", "graph": "graphs",
                                       "solver": "solvers", "rounding": "roundings"}[kind])
    names = []
    for name in sorted(catalog.names()):
        cls = catalog.get(name)
        if getattr(cls, "chunkwise", False) and (extra is None or extra(cls)):
            names.append(name)
    return ", ".join(names) if names else "none registered"


def check_chunkwise(pipe) -> None:
    """Raise :class:`SpecError` unless every stage of ``pipe`` runs chunk-wise.

    The message names the part, why it cannot, and the registered chunk-wise parts of the
    same kind. Ensembles, adapters, precomputed graphs and column-wise ``scale`` stages
    are refused too (see :doc:`/dask`).
    """
    from graphclust._ensemble import Ensemble

    if isinstance(pipe, Ensemble):
        raise SpecError(Problem("ensemble", "ensemble specs do not run on Dask chunks yet; "
                                "run one member's preset (e.g. 'uspec') on the dask array, or "
                                "compute() the array for the in-memory ensemble"),
                        title="spec cannot run chunk-wise")
    problems = []
    if pipe.scale not in ("none", "l2"):
        problems.append(Problem("scale", f"scale {pipe.scale!r} needs column statistics, "
                                "which the chunked execution does not fit; scale the dask "
                                "array first (e.g. (X - X.mean(0)) / X.std(0)) or use "
                                "'none' / 'l2' (row-local)"))
    if pipe.adapter is not None:
        problems.append(Problem("adapter", f"adapter {pipe.adapter.name!r} does not run "
                                "chunk-wise; chunk-wise solvers work on the anchor graph "
                                "directly: " + _alternatives("solver")))
    if pipe.anchors is None and pipe.graph is not None and pipe.graph.produces == "anchor":
        pass  # the composer already requires anchors for anchor builders
    for section in ("anchors", "graph", "solver", "rounding"):
        part = getattr(pipe, section)
        if part is None:
            if section == "anchors":
                continue
            problems.append(Problem(section, "the chunked execution needs this stage"))
            continue
        if getattr(part, "chunkwise", False):
            continue
        if section == "graph" and getattr(part, "name", "") == "precomputed":
            problems.append(Problem("graph", "a precomputed graph cannot be split into "
                                    "chunks; give the features as a dask array instead"))
            continue
        why = _WHY[section]
        if section == "graph" and getattr(part, "produces", "") == "anchor":
            why = _WHY["anchor-graph"]
        extra = None
        if section == "solver":
            extra = lambda cls: "anchor" in cls.accepts
        problems.append(Problem(section, f"{section} {part.name!r} does not run on row "
                                f"chunks: {why}; chunk-wise {section} parts: "
                                f"{_alternatives(section, extra)}"))
    if not problems and pipe.graph.produces != "anchor":  # pragma: no cover - defensive
        problems.append(Problem("graph", "the chunked execution needs an anchor graph"))
    if problems:
        raise SpecError(problems, title="spec cannot run chunk-wise")
