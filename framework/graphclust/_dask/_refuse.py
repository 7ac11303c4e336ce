"""Which specs run on row chunks: checked before anything runs."""

from __future__ import annotations

from graphclust._contracts import GraphKind
from graphclust._errors import Problem, ProblemKind, SpecError
from graphclust._pipeline import STAGES

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
                                       "adapter": "adapters", "solver": "solvers",
                                       "rounding": "roundings",
                                       "consensus": "consensus"}[kind])
    names = []
    for name in sorted(catalog.names()):
        cls = catalog.get(name)
        if getattr(cls, "chunkwise", False) and (extra is None or extra(cls)):
            names.append(name)
    return ", ".join(names) if names else "none registered"


def _missing_hooks(where: str, part) -> list:
    """A part declaring ``chunkwise`` without the chunk hooks its kind needs (the
    declarations on its interface, :meth:`graphclust.Part.missing_chunk_hooks`)."""
    missing = type(part).missing_chunk_hooks()
    if not missing:
        return []
    return [Problem(where, f"{part.kind} {part.name!r} declares chunkwise = True but does not "
                    f"implement {', '.join(h + '()' for h in missing)} (the chunk protocol, "
                    "graphclust.chunks)", ProblemKind.NOT_CHUNKWISE)]


def check_chunkwise(pipe) -> None:
    """Raise :class:`SpecError` unless every stage of ``pipe`` runs chunk-wise.

    The message names the part, why it cannot, and the registered chunk-wise parts of the
    same kind. A chunk-wise adapter (``anchor-level``) lets any solver that accepts its
    graph kind run, unchanged, on the ``m``-sized problem it builds from sums over the
    chunks, so the solver itself need not be chunk-wise then; an adapter without a
    chunk-wise form and precomputed graphs are refused (see :doc:`/dask`); every
    ``scale`` kind runs (column statistics are sums over chunks). An ensemble runs when
    its consensus part and every member's pipeline do.
    """
    from graphclust._ensemble import Ensemble

    if isinstance(pipe, Ensemble):
        problems = []
        if pipe.consensus.chunkwise:
            problems.extend(_missing_hooks("ensemble.consensus", pipe.consensus))
        else:
            problems.append(Problem("ensemble.consensus", f"consensus {pipe.consensus.name!r} "
                                    "does not run on row chunks: it has no chunk-wise "
                                    "combine (sums over the membership rows); chunk-wise "
                                    "consensus parts: " + _alternatives("consensus"),
                                    ProblemKind.NOT_CHUNKWISE))
        seen = set()
        for member in pipe.members:
            for problem in _pipeline_problems(member.pipeline):
                if problem not in seen:  # once for a member repeated `count` times
                    seen.add(problem)
                    problems.append(problem.at(f"ensemble {member.label}: {problem.loc}"))
        if problems:
            raise SpecError(problems, title="spec cannot run chunk-wise")
        return
    problems = _pipeline_problems(pipe)
    if problems:
        raise SpecError(problems, title="spec cannot run chunk-wise")


def _pipeline_problems(pipe) -> list:
    """The reasons one pipeline cannot run chunk-wise (empty when it can)."""
    problems = []
    if pipe.adapter is not None and pipe.adapter.chunkwise:
        problems.extend(_missing_hooks("adapter", pipe.adapter))
    if pipe.adapter is not None and not getattr(pipe.adapter, "chunkwise", False):
        problems.append(Problem("adapter", f"adapter {pipe.adapter.name!r} does not run "
                                "chunk-wise: it has no adapt_chunked (its problem from sums "
                                "over chunks) and lift_rows (rows lifted per chunk); "
                                "chunk-wise adapters: " + _alternatives("adapter") + "; "
                                "chunk-wise solvers work on the anchor graph directly: "
                                + _alternatives("solver",
                                                lambda cls: GraphKind.ANCHOR in cls.accepts),
                                ProblemKind.NOT_CHUNKWISE))
    if pipe.anchors is None and pipe.graph is not None and pipe.graph.produces == GraphKind.ANCHOR:
        pass  # the composer already requires anchors for anchor builders
    for section in (s for s in STAGES if s != "adapter"):  # the adapter was asked above
        part = getattr(pipe, section)
        if part is None:
            if section == "anchors":
                continue
            problems.append(Problem(section, "the chunked execution needs this stage",
                                    ProblemKind.NOT_CHUNKWISE))
            continue
        if getattr(part, "chunkwise", False):
            if not (section == "solver" and pipe.adapter is not None):
                problems.extend(_missing_hooks(section, part))
            continue
        if section == "solver" and pipe.adapter is not None:
            # it solves the adapter's m-sized problem in memory, unchanged: whether that
            # runs is the adapter's question (named above when it cannot)
            continue
        if section == "graph" and getattr(part, "name", "") == "precomputed":
            problems.append(Problem("graph", "a precomputed graph cannot be split into "
                                    "chunks; give the features as a dask array instead",
                                    ProblemKind.NOT_CHUNKWISE))
            continue
        why = _WHY[section]
        if section == "graph" and getattr(part, "produces", None) == GraphKind.ANCHOR:
            why = _WHY["anchor-graph"]
        extra = None
        if section == "solver":
            extra = lambda cls: GraphKind.ANCHOR in cls.accepts
        problems.append(Problem(section, f"{section} {part.name!r} does not run on row "
                                f"chunks: {why}; chunk-wise {section} parts: "
                                f"{_alternatives(section, extra)}", ProblemKind.NOT_CHUNKWISE))
    if not problems and pipe.graph.produces != GraphKind.ANCHOR:  # pragma: no cover - defensive
        problems.append(Problem("graph", "the chunked execution needs an anchor graph",
                                ProblemKind.NOT_CHUNKWISE))
    return problems
