"""auto as one rule table: precedence, lazy diagnostics, generated words, short functions.

The rule list in docs/auto.rst is generated here from the table; a changed table fails
this test with the difference; rewrite the list with
``GRAPHCLUST_WRITE_DOCS=1 python -m pytest tests/auto/test_auto_rule_table.py``.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from pathlib import Path

import attrs
import numpy as np
import pytest

import graphclust as gc
from graphclust import DataProfile, RuleTable
from graphclust.cli import main
from graphclust_plugins.auto import _rules_low_dim, rule_auto
from graphclust_plugins.auto.rule_auto import (AUTO_RULES, DESCRIPTION, REGISTRATION_SUMMARY,
                                               auto_row_text, auto_rule)

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "plugins" / "graphclust_plugins" / "auto"
DOC = ROOT / "docs" / "auto.rst"
START = ("\n.. rule table: generated from AUTO_RULES by tests/auto/test_auto_rule_table.py\n"
         "   (GRAPHCLUST_WRITE_DOCS=1 rewrites it)\n")
END = "\n.. end of the generated rule table\n"
MAX_FUNCTION_LINES = 60


def test_the_table_is_the_precedence():
    assert isinstance(AUTO_RULES, RuleTable)
    assert AUTO_RULES.numbers() == [6, 10, 7, 11, 8, 9, 5, 4, 2, 3]
    assert [s.name for s in AUTO_RULES.steps] == ["scale"]


@pytest.mark.parametrize("profile,number", [
    (DataProfile(n=5000, d=50_000, k=10, sparse=True, zero_fraction=0.99), 6),
    (DataProfile(n=70_000, d=784, k=10), 7),
    (DataProfile(n=20_000, d=2, k=None), 9),
    (DataProfile(n=300_000, d=20, k=10), 5),
    (DataProfile(n=1797, d=64, k=10), 4),
    (DataProfile(n=1000, d=20, k=3), 2),
    (DataProfile(n=20_000, d=20, k=3), 3),
])
def test_the_summary_names_the_rule_that_built_the_spec(profile, number):
    rule, reason, _ = AUTO_RULES.decide(profile)
    assert rule.number == number
    summary = auto_rule(profile)["summary"]
    assert summary.startswith(f"auto: rule {number}: {reason}")


def _counting(monkeypatch):
    calls = []
    real = _rules_low_dim.low_dim_diagnostics

    def counted(p, scale):
        calls.append(scale)
        return real(p, scale)

    monkeypatch.setattr(_rules_low_dim, "low_dim_diagnostics", counted)
    return calls


def test_diagnostics_run_only_when_rule_8_asks_and_once(monkeypatch):
    calls = _counting(monkeypatch)
    rng = np.random.default_rng(0)
    S = np.r_[rng.standard_normal((150, 2)), rng.standard_normal((150, 2)) + 8]
    S.flags.writeable = False
    low = DataProfile(n=300, d=2, k=2, sample=S)
    spec = auto_rule(low)
    assert calls == ["none"] and spec["summary"].startswith("auto: rule 8: ")
    ctx = AUTO_RULES.context(low)
    AUTO_RULES.decide(low, ctx)
    assert ctx.computed == ("scale", "low_dim") and len(calls) == 2
    assert ctx["low_dim"] is ctx["low_dim"] and len(calls) == 2
    # rules 6 and 7 win before rule 8 is consulted
    for p in (DataProfile(n=500, d=100, k=2, sparse=True, zero_fraction=0.99),
              DataProfile(n=5000, d=100, k=2, sample=np.zeros((10, 100)))):
        assert auto_rule(p)["summary"].startswith(("auto: rule 6", "auto: rule 7"))
    assert len(calls) == 2


def test_a_declining_rule_8_leads_the_winning_rules_summary(monkeypatch):
    diag = {"rows": 300, "two_nn_dimension": 2.0, "mixture_parameters": 35,
            "mixture_fits_size": True, "mixture_gain": 0.5, "kernel_z": float("nan"),
            "mixture": False,
            "ncut_genie": 0.3, "ncut_spectral": 0.2, "ncut_density": 0.4}
    monkeypatch.setattr(_rules_low_dim, "low_dim_diagnostics", lambda p, s: diag)
    summary = auto_rule(DataProfile(n=1000, d=2, k=3, sample=np.zeros((1, 2))))["summary"]
    head, rule = summary.split("; rule ", 1)
    assert head.startswith("auto: d = 2 <= 16") and ">= spectral's 0.2000" in head
    assert rule.startswith("2: n = 1000 <= 5000") and rule.endswith("unscaled")


def test_rule_6_sets_its_own_scale_and_the_step_gives_way():
    p = DataProfile(n=2000, d=5000, k=5, sparse=True, zero_fraction=0.99, nonnegative=True,
                    range_spread=100.0)
    spec = auto_rule(p)
    assert spec["scale"] == "l2" and list(spec)[:2] == ["summary", "scale"]
    assert "standardised" not in spec["summary"] and spec["summary"].endswith("geometry)")


def test_describe_and_the_registration_summary_are_the_table_in_order(capsys):
    record = gc.get_registry().rules.record("auto")
    assert record.description == DESCRIPTION and record.summary == REGISTRATION_SUMMARY
    for text in (DESCRIPTION, REGISTRATION_SUMMARY, auto_row_text()):
        places = [text.index(rule.statement) for rule in AUTO_RULES.rules]
        assert places == sorted(places), text
        assert all(f"rule {r.number}" in text for r in AUTO_RULES.rules)
        assert AUTO_RULES.steps[0].statement in text
        second = AUTO_RULES.second_opinion
        assert text.index(second.statement) > places[-1]
        assert f"rule {second.number}" in text
    assert main(["describe", "auto"]) == 0
    out = capsys.readouterr().out
    numbers = [int(n) for n in re.findall(r"^- rule (\d+):", out, flags=re.M)]
    assert numbers == [*AUTO_RULES.numbers(), AUTO_RULES.second_opinion.number]


def test_auto_row_text_is_one_paragraph():
    text = auto_row_text()
    assert "\n" not in text and text.endswith(".") and "rule 6, sparse X" in text


def _rule_list() -> str:
    lines = [f"- **Rule {r.number}** — {r.statement}." for r in AUTO_RULES.rules]
    lines += [f"- **{s.name}** (every spec, rule 1 below) — {s.statement}."
              for s in AUTO_RULES.steps]
    second = AUTO_RULES.second_opinion
    lines.append(f"- **Rule {second.number}** (a second opinion, when the fit of the rule "
                 f"that decided finds no cluster structure) — {second.statement}.")
    return START + "\n" + "\n".join(lines) + "\n" + END


def test_the_rule_list_of_auto_rst_is_the_table():
    text = DOC.read_text()
    start, end = text.index(START), text.index(END) + len(END)
    want = text[:start] + _rule_list() + text[end:]
    if os.environ.get("GRAPHCLUST_WRITE_DOCS") == "1":
        DOC.write_text(want)
        text = want
    diff = "\n".join(difflib.unified_diff(text.splitlines(), want.splitlines(), lineterm=""))
    assert text == want, f"docs/auto.rst's rule list differs from the table:\n{diff}"


def test_every_rule_is_argued_in_auto_rst():
    text = DOC.read_text()
    for number in [1, *AUTO_RULES.numbers(), AUTO_RULES.second_opinion.number]:
        assert re.search(rf"^\*\*{number}\. ", text, flags=re.M), number


def _long_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [f"{path.name}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def test_no_function_in_the_auto_bundle_is_over_60_lines():
    files = sorted(BUNDLE.glob("*.py"))
    assert {f.name for f in files} >= {"__init__.py", "rule_auto.py", "_rules_base.py"}
    long = [entry for f in files for entry in _long_functions(f)]
    assert not long, long


def test_the_long_function_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    path = tmp_path / "m.py"
    path.write_text(f"def f():\n{body}\n")
    assert _long_functions(path) == [f"m.py:1 f ({MAX_FUNCTION_LINES + 1})"]


def _genie_samples() -> dict:
    rng = np.random.default_rng(4)
    t = rng.uniform(0, np.pi, 300)
    return {
        "blobs": np.r_[rng.standard_normal((200, 3)), rng.standard_normal((200, 3)) + 5],
        "moons": np.c_[np.r_[np.cos(t), 1 - np.cos(t)], np.r_[np.sin(t), 0.5 - np.sin(t)]]
        + 0.05 * rng.standard_normal((600, 2)),
        "uniform": rng.uniform(0, 1, (400, 4)),
        "one column": rng.standard_normal((300, 1)),
    }


def _check_genie(S: np.ndarray, k: int) -> None:
    """The registered ``genie`` rounding on the sample (what rule 8's diagnostics call)
    gives the partition genieclust's Genie (Gini cap 0.3, M = 1) gives on it directly."""
    genieclust = pytest.importorskip("genieclust")
    from sklearn.metrics import adjusted_rand_score

    ours = _rules_low_dim.genie_labels(S, k)
    P = S if S.shape[1] > 1 else np.c_[S, np.zeros(len(S))]
    theirs = genieclust.Genie(n_clusters=k, gini_threshold=0.3, M=1).fit_predict(P)
    assert adjusted_rand_score(theirs, ours) == 1.0 and len(set(ours)) == k


def test_genie_of_the_diagnostics_is_the_registered_part_with_genieclusts_labels():
    _check_genie(_genie_samples()["moons"], 2)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["blobs", "moons", "uniform", "one column"])
@pytest.mark.parametrize("k", [2, 3, 7])
def test_genie_of_the_diagnostics_has_genieclusts_labels_on_every_sample(name, k):
    _check_genie(_genie_samples()[name], k)


def test_the_table_is_deterministic_and_ignores_the_sample_identity():
    p = DataProfile(n=150_000, d=100, k=None)
    assert auto_rule(p) == auto_rule(attrs.evolve(p))
    assert rule_auto.auto_rule is auto_rule
