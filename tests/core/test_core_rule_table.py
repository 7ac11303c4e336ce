"""The core's rule table: first rule that applies wins, lazy memoised diagnostics, steps,
and the words generated from the table (no bundle involved)."""

from __future__ import annotations

import attrs
import pytest

import graphclust as gc
from graphclust import DataProfile, Rule, RuleContext, RuleStep, RuleTable, SpecError


def _small(p, ctx):
    return f"n = {p.n} <= 100" if p.n <= 100 else None


def _wide(p, ctx):
    if p.d <= 10:
        return None
    ctx.note(f"spread {ctx['spread']:g}")
    return f"d = {p.d} > 10" if ctx["spread"] > 1 else None


def _calls_table(counter: list) -> RuleTable:
    def spread(p, ctx):
        counter.append(p.n)
        return p.range_spread

    return RuleTable(
        "demo",
        [Rule(1, "few points: exact", _small, lambda p, ctx: {"graph": {"name": "exact"}}),
         Rule(7, "wide and spread: pca", _wide,
              lambda p, ctx: {"graph": {"name": "pca"}, "scale": "l2"}),
         Rule(3, "otherwise: anchors", lambda p, ctx: "the rest",
              lambda p, ctx: {"graph": {"name": "anchor"}})],
        steps=[RuleStep("scale", "standard when spread",
                        lambda p, ctx: ({"scale": "standard"}, "scaled"))],
        diagnostics={"spread": spread})


def test_the_first_rule_that_applies_builds_the_spec_with_its_number_and_reason():
    table = _calls_table([])
    assert table(DataProfile(n=50, d=30, k=2, range_spread=5.0)) == {
        "summary": "demo: rule 1: n = 50 <= 100; scaled", "scale": "standard",
        "graph": {"name": "exact"}}
    rule, reason, _ = table.decide(DataProfile(n=500, d=3, k=2))
    assert (rule.number, reason) == (3, "the rest")


def test_a_key_the_rule_builds_overrides_the_step_and_its_reason():
    spec = _calls_table([])(DataProfile(n=500, d=30, k=2, range_spread=5.0))
    assert spec == {"summary": "demo: spread 5; rule 7: d = 30 > 10", "scale": "l2",
                    "graph": {"name": "pca"}}
    assert list(spec) == ["summary", "scale", "graph"]


def test_a_consulted_rule_that_declines_leaves_its_note_before_the_winner():
    spec = _calls_table([])(DataProfile(n=500, d=30, k=2, range_spread=1.0))
    assert spec["summary"] == "demo: spread 1; rule 3: the rest; scaled"


def test_diagnostics_are_computed_when_asked_and_once_per_call():
    counter: list = []
    table = _calls_table(counter)
    table(DataProfile(n=50, d=30, k=2))  # rule 1 wins: nobody asked
    assert counter == []
    table(DataProfile(n=500, d=30, k=2, range_spread=5.0))  # asked twice by rule 7
    assert counter == [500]
    table(DataProfile(n=600, d=30, k=2, range_spread=5.0))  # a new call, a new context
    assert counter == [500, 600]


def test_the_context_memoises_names_its_diagnostics_and_refuses_cycles():
    seen = []
    ctx = RuleContext(DataProfile(n=5, d=1, k=None),
                      {"a": lambda p, c: seen.append("a") or 1,
                       "b": lambda p, c: c["a"] + 1,
                       "loop": lambda p, c: c["loop"]})
    assert ctx["b"] == 2 and ctx["b"] == 2 and seen == ["a"]
    assert ctx.computed == ("a", "b")
    with pytest.raises(KeyError, match="no diagnostic 'c'.*'a', 'b', 'loop'"):
        ctx["c"]
    with pytest.raises(RecursionError, match="loop -> loop"):
        ctx["loop"]


def test_no_rule_applying_is_a_spec_error_naming_the_table():
    table = RuleTable("partial", [Rule(4, "only small", _small, lambda p, c: {})])
    with pytest.raises(SpecError, match=r"rule preset 'partial': none of rules \[4\]"):
        table(DataProfile(n=1000, d=2, k=None))


def test_rules_and_tables_are_checked_when_built():
    with pytest.raises(ValueError, match="one non-empty line"):
        Rule(1, "two\nlines", _small, _small)
    with pytest.raises(TypeError):
        Rule("1", "x", _small, _small)
    with pytest.raises(TypeError):
        Rule(1, "x", "not callable", _small)
    with pytest.raises(ValueError, match="repeat"):
        RuleTable("t", [Rule(1, "a", _small, _small), Rule(1, "b", _small, _small)])
    with pytest.raises(ValueError, match="no rule"):
        RuleTable("t", [])


def test_the_words_follow_the_precedence_order():
    table = _calls_table([])
    assert table.numbers() == [1, 7, 3]
    text = table.describe("Header.", "Footer.")
    assert text.splitlines() == [
        "Header.",
        "The first rule that applies builds the spec (precedence order 1, 7, 3):",
        "- rule 1: few points: exact", "- rule 7: wide and spread: pca",
        "- rule 3: otherwise: anchors", "Every spec, whichever rule wins:",
        "- scale: standard when spread", "Footer."]
    assert table.paragraph() == (
        "the first rule that applies: rule 1, few points: exact; rule 7, wide and spread: "
        "pca; rule 3, otherwise: anchors; for every spec, scale: standard when spread")
    detailed = attrs.evolve(table, rules=[attrs.evolve(table.rules[0], details="a\nb")])
    assert "- rule 1: few points: exact\n    a\n    b\n" in detailed.describe()


def test_a_table_is_a_rule_preset_the_core_resolves():
    table = _calls_table([])
    assert hash(table) == hash(table) and table != _calls_table([])  # identity
    record = gc.RulePresetRecord("demo", table, table.paragraph(), table.describe(), None)
    spec = record.resolve(DataProfile(n=50, d=3, k=2))
    assert spec["graph"] == {"name": "exact"} and spec["summary"].startswith("demo: rule 1")
