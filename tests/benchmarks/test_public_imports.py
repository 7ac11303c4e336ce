"""Benchmarks run what users run: no module of ``benchmarks/`` imports a private module
(a dotted path with an ``_``-part, such as ``graphclust._kselect`` or
``graphclust_plugins.manifold._nndescent``) or a private name of another package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _private(dotted: str) -> bool:
    """Whether a dotted path has a private part (``_x``; dunders such as ``__future__``
    are not private)."""
    return any(p.startswith("_") and not p.endswith("__") for p in dotted.split("."))


def private_imports(source: str) -> list[str]:
    """The private modules and names ``source`` imports, at any depth (inside functions
    too): ``import a._b``, ``from a._b import c``, ``from a import _b`` (a module or a
    name of another package; ``benchmarks``' own helpers are its own business) and
    ``importlib.import_module("a._b")`` / ``__import__("a._b")`` with a literal name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if _private(a.name)]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: inside benchmarks
                continue
            if _private(module):
                found.append(module)
            elif module.split(".")[0] != "benchmarks":
                found += [f"{module}.{a.name}" for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if (name in ("import_module", "__import__") and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str) and _private(node.args[0].value)):
                found.append(node.args[0].value)
    return found


def test_no_benchmark_imports_a_private_module():
    files = sorted(BENCHMARKS.rglob("*.py"))
    assert len(files) > 10  # the folder was found
    found = [f"{p.relative_to(BENCHMARKS.parent)}: {m}" for p in files
             for m in private_imports(p.read_text(encoding="utf-8"))]
    assert not found, found


@pytest.mark.parametrize("source", [
    "from graphclust._kselect import estimating_stage",
    "def f():\n    from graphclust_plugins.manifold._nndescent import nn_descent",
    "import graphclust._dask._chunks",
    "from graphclust_plugins.manifold import _neighbors",
    "from graphclust import _composer as c",
    "import importlib\nimportlib.import_module('graphclust._ensemble')",
    "__import__('graphclust_plugins.manifold._layout')",
])
def test_every_form_of_private_import_is_caught(source):
    assert private_imports(source)


@pytest.mark.parametrize("source", [
    "from __future__ import annotations",
    "import graphclust\nfrom graphclust.numerics import knn",
    "from graphclust_plugins.manifold.graph_fuzzy_knn import nn_descent",
    "from benchmarks.plots import _plt",
    "__import__('hashlib')",
])
def test_public_imports_pass(source):
    assert private_imports(source) == []
