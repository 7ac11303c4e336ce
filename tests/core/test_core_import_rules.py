"""ARCHITECTURE's import rule for the Dask layer: the estimator hands one plan to an
executor (in memory or Dask) instead of reaching into the Dask layer, so of the core's
modules outside ``graphclust/_dask/`` only the executors import it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "framework" / "graphclust"


def imported_modules(path: Path) -> list[str]:
    """Every module an ``import`` / ``from ... import`` of ``path`` names (at any depth,
    inside functions too), relative imports resolved against ``path``'s package."""
    package = ["graphclust", *path.parent.relative_to(CORE).parts]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out.append(module)
            # ``from graphclust import _dask`` names the module in the alias
            out += [f"{module}.{a.name}" for a in node.names]
    return out


def reaches_dask(path: Path) -> list[str]:
    return [m for m in imported_modules(path)
            if m == "graphclust._dask" or m.startswith("graphclust._dask.")]


@pytest.mark.parametrize("module", ["_estimator.py", "_pipeline.py", "_plan.py"])
def test_estimator_pipeline_and_plan_do_not_import_the_dask_layer(module):
    assert reaches_dask(CORE / module) == []


def test_only_the_executors_import_the_dask_layer():
    users = sorted(str(p.relative_to(CORE)) for p in CORE.rglob("*.py")
                   if "_dask" not in p.relative_to(CORE).parts[:1] and reaches_dask(p))
    assert users == ["_executors.py"]


def test_the_check_sees_every_form_of_import(tmp_path, monkeypatch):
    """The checker is not blind: absolute, nested, relative and alias imports all count."""
    pkg = tmp_path / "graphclust"
    pkg.mkdir()
    monkeypatch.setattr(f"{__name__}.CORE", pkg)
    forms = ["import graphclust._dask._chunks",
             "def f():\n    from graphclust._dask._chunks import check_held",
             "from ._dask import require_dask",
             "from . import _dask",
             "from graphclust import _dask"]
    for i, text in enumerate(forms):
        (pkg / f"m{i}.py").write_text(text + "\n")
        assert reaches_dask(pkg / f"m{i}.py"), text
    (pkg / "clean.py").write_text("from graphclust._executors import held\nimport dask\n")
    assert reaches_dask(pkg / "clean.py") == []
