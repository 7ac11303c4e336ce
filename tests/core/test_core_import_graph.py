"""The core's import graph has no circle but the one stated here.

The graph is read from the source (``ast``), with every import, at module level or inside
a function (a lazy import hides a circle from the interpreter, not from the design), and
without those under ``if TYPE_CHECKING:`` (never executed). A module depends on the
module it names: ``from graphclust.a import b`` on ``graphclust.a.b`` when that is a
module, else on ``graphclust.a``.

k selection closed a seven-module circle (``_kselect`` → ``_plugins`` → ``_registry`` →
``_parts`` → ``_kselect``, and ``_kselect`` → ``_ensemble`` → ``_pipeline`` →
``_kselect``; issue 45). Now the record of a choice and the eigengap rule's record live in
the leaf :mod:`graphclust._kselection` and the one dispatch, :mod:`graphclust._kselect`,
reads pipelines by their attributes. Two circles are left, each closed by one lazy
import for a stated reason:

* ``_checks`` ↔ ``_parts``: parameters are declared with ``_checks``'s checks, and the
  check of a nested part (``part_spec``) accepts an already built :class:`Part`, whose
  class is defined in ``_parts``. It is imported when the check runs.
* ``_pipeline`` → ``_executors`` → (``_ensemble``, ``_dask._run``, ``_dask._ensemble``,
  ``_dask._refuse``) → ``_pipeline``: a run's ``FitResult.labels`` (an ensemble member's
  labels) are read through the executor that made them, which checks that a chunked
  fit's cluster still holds them; and only the executors may import the Dask layer
  (tests/core/test_core_import_rules.py), so the pipeline asks them, at read time.
"""

from __future__ import annotations

import ast
import functools
import pathlib

from hypothesis import given, settings
from hypothesis import strategies as st

import graphclust

CORE = pathlib.Path(graphclust.__file__).parent

#: The strongly connected components allowed in the core's import graph, with why.
ALLOWED = {
    frozenset({"graphclust._checks", "graphclust._parts"}):
        "a nested part's check accepts a built Part (lazy import in part_spec)",
    frozenset({"graphclust._pipeline", "graphclust._executors", "graphclust._ensemble",
               "graphclust._dask._run", "graphclust._dask._ensemble",
               "graphclust._dask._refuse", "graphclust._dask._confidence"}):
        "FitResult.labels is read through the executor (lazy import of held): only the "
        "executors import the Dask layer (the chunked confidence, which slims the fitted "
        "result as the chunked run does, is part of that layer)",
}

#: Modules that import nothing of graphclust but these (k selection's leaf).
LEAVES = {
    "graphclust._kselection": {"graphclust._errors", "graphclust.numerics",
                               "graphclust.numerics.eigengap"},
}


def _modules(root: pathlib.Path) -> dict[str, pathlib.Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST, package: str):
    """Every imported dotted name in ``tree`` (``from a import b`` as ``a.b`` and ``a``),
    skipping ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for alias in node.names:
                yield base, f"{base}.{alias.name}"
        stack.extend(ast.iter_child_nodes(node))


@functools.lru_cache(maxsize=None)
def core_graph() -> dict[str, frozenset[str]]:
    """The core's import graph, read once a session."""
    return {m: frozenset(d) for m, d in import_graph(CORE).items()}


def import_graph(root: pathlib.Path) -> dict[str, set[str]]:
    """``module -> modules it imports`` within the package at ``root``."""
    mods = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for base, sub in _imports(ast.parse(path.read_text(encoding="utf-8")), package):
            target = sub if sub in mods else base
            while target and target not in mods:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(frozenset(comp))
    return out


def _reference_cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The slow obvious reference: ``a`` and ``b`` share a component iff each reaches the
    other (reachability by repeated expansion)."""
    reach = {v: set(graph[v]) for v in graph}
    changed = True
    while changed:
        changed = False
        for v in graph:
            new = set().union(*(reach[w] for w in reach[v])) - reach[v] if reach[v] else set()
            if new:
                reach[v] |= new
                changed = True
    comps = set()
    for v in graph:
        comp = frozenset({v} | {w for w in reach[v] if v in reach[w]})
        if len(comp) > 1:
            comps.add(comp)
    return comps


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9).flatmap(lambda n: st.lists(
    st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n)
    .map(lambda edges: (n, edges))))
def test_cycles_match_reachability(case):
    n, edges = case
    graph = {str(i): set() for i in range(n)}
    for a, b in edges:
        if a != b:
            graph[str(a)].add(str(b))
    assert set(cycles(graph)) == _reference_cycles(graph)


def test_the_graph_sees_lazy_imports_and_skips_type_checking(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg import b\n")
    (pkg / "b.py").write_text("from pkg.a import f\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from pkg import a\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a"}
    assert graph["pkg.c"] == set()
    assert cycles(graph) == [frozenset({"pkg.a", "pkg.b"})]


def test_the_core_has_no_import_circle_but_the_stated_ones():
    found = cycles(core_graph())
    new = [sorted(c) for c in found if c not in ALLOWED]
    assert not new, f"import circles in the core: {new}"


def test_k_selection_is_in_no_circle():
    found = cycles(core_graph())
    k_modules = {"graphclust._kselect", "graphclust._kselection"}
    assert not [sorted(c) for c in found if c & k_modules]


def test_k_selection_record_is_a_leaf():
    graph = core_graph()
    for module, allowed in LEAVES.items():
        assert graph[module] <= allowed, (module, graph[module] - allowed)


def test_numerics_imports_nothing_of_graphclust_but_errors():
    """The numerics layer's rule; ``graphclust.environ`` (the environment variables that
    bound a resource, such as the densify limit) is allowed because it is itself a leaf
    on the errors."""
    graph = core_graph()
    assert graph["graphclust.environ"] <= {"graphclust._errors"}
    for module, deps in graph.items():
        if module.startswith("graphclust.numerics"):
            outside = {d for d in deps if not d.startswith("graphclust.numerics")}
            assert outside <= {"graphclust._errors", "graphclust.environ"}, (module, outside)


def test_the_run_loops_share_one_k_dispatch():
    """No run loop calls the estimating hooks' record-keeping on its own: the in-memory
    and chunked runs and both ensembles import the dispatch, and none imports the
    pieces it is made of."""
    graph = core_graph()
    loops = ["graphclust._pipeline", "graphclust._dask._run", "graphclust._ensemble",
             "graphclust._dask._ensemble"]
    for loop in loops:
        assert "graphclust._kselect" in graph[loop], loop
        text = (CORE.parent / (loop.replace(".", "/") + ".py")).read_text(encoding="utf-8")
        for piece in ("warn_selection(", "check_estimable(", "given_selection("):
            assert piece not in text, (loop, piece)


def test_the_allowed_circles_still_exist():
    """A stated circle that is gone is taken off the list (the statement stays true)."""
    found = set(cycles(core_graph()))
    assert all(c in found for c in ALLOWED), [sorted(c) for c in ALLOWED if c not in found]

