"""README.md's presets table is the registry's: every built-in preset once, with its
bundle, nothing else; and the ``auto`` row is the text auto's rule table generates
(regenerate it with ``GRAPHCLUST_WRITE_DOCS=1 python -m pytest tests/docs/test_readme_presets.py``).

Built-in means registered by this distribution's own entry points (``graphclust``), as
``graphclust plugins`` shows in its bundle column; presets of separately installed
plugins (``contrib``'s ``nystrom``) are named below the table, not in it.
"""

from __future__ import annotations

import os
import re

import pytest
from graphclust import get_registry
from test_code_blocks import ROOT

README = ROOT / "README.md"
DISTRIBUTION = "graphclust"


def presets_table() -> dict[str, tuple[str, str]]:
    """``{preset: (bundle, what it is)}`` from the README's ``## Presets`` table (a row
    may name several presets: `ongr-k`, `ongr-r`)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Presets\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue  # the header, its rule, the prose around the table
        for name in re.findall(r"`([^`]+)`", cells[0]):
            assert name not in rows, f"{name} is listed twice"
            rows[name] = (cells[1], cells[2])
    return rows


def builtin_presets() -> dict[str, str]:
    """``{preset: bundle}`` of the presets and rule presets this distribution registers."""
    registry = get_registry()
    records = [*registry.presets.records(), *registry.rules.records()]
    return {r.name: r.provider.bundle for r in records
            if r.provider.distribution == DISTRIBUTION}


def test_the_table_lists_exactly_the_registered_presets_with_their_bundles():
    table = presets_table()
    registered = builtin_presets()
    assert len(registered) >= 20  # the registry was read (a failed load would leave few)
    assert sorted(table) == sorted(registered), (
        f"missing from README: {sorted(set(registered) - set(table))}; "
        f"not registered: {sorted(set(table) - set(registered))}")
    wrong = {n: (table[n][0], b) for n, b in registered.items() if table[n][0] != b}
    assert not wrong, f"README bundle vs registry: {wrong}"


def test_presets_of_other_distributions_stay_out_of_the_table():
    """contrib's presets (when installed) are not built in: the table leaves them out."""
    registry = get_registry()
    others = [r.name for r in registry.presets.records()
              if r.provider.distribution != DISTRIBUTION]
    assert not set(others) & set(presets_table())


def test_the_auto_row_names_every_family_its_rules_choose():
    """The families are read from the rule code (its table of how each family estimates
    k), so a family added to the rules and not to the README fails here."""
    rule_auto = pytest.importorskip("graphclust_plugins.auto.rule_auto")
    families = set(rule_auto.K_ESTIMATORS)
    assert {"spectral", "manifold"} <= families  # the table is the one meant
    row = presets_table()["auto"][1].lower()
    missing = sorted(f for f in families if f not in row)
    assert not missing, f"README's auto row does not mention {missing}"
    assert "k" in re.findall(r"\bk\b", row) and "estimated" in row  # k estimation said


def test_the_auto_row_is_the_rule_tables_text():
    """The row is generated from the table (the rules in precedence order, each with its
    statement), so a rule added, removed or reordered changes the README with it."""
    rule_auto = pytest.importorskip("graphclust_plugins.auto.rule_auto")
    generated = rule_auto.auto_row_text()
    text = README.read_text(encoding="utf-8")
    row = re.search(r"^\| `auto` \(default\) \| auto \| (.*) \|$", text, re.M)
    assert row is not None, "README.md has no auto row"
    if os.environ.get("GRAPHCLUST_WRITE_DOCS") == "1":
        README.write_text(text.replace(row.group(1), generated), encoding="utf-8")
        return
    assert row.group(1) == generated, "README's auto row is stale: regenerate it (module notes)"
