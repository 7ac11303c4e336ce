"""The generated battery of issue 44: its size, the split, reproducibility, true k, caps,
the suite and the summary's counts."""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import cli, datasets, generated_sets, generated_summary
from benchmarks.generated_shapes import MAKERS
from benchmarks.suites.generated import SUITE


def _expected_k(spec: generated_sets.SetSpec) -> int:
    """The true k read from the drawn parameters, independently of the makers."""
    p = spec.params
    if spec.family == "null":
        return 1
    if spec.family == "nested":
        return 2 * p["groups"] + int(p["outer"])
    return p["k"]


def _cheap(per_family: int = 2) -> list[generated_sets.SetSpec]:
    """Per family the ``per_family`` sets with the fewest expected points (fast to make)."""
    def size(s):
        p = s.params
        return p.get("n", p.get("per", 0) * p.get("k", 1))
    out = []
    for fam in generated_sets.FAMILIES:
        specs = sorted((s for s in generated_sets.battery() if s.family == fam), key=size)
        out += specs[:per_family]
    return out


def test_battery_has_at_least_200_sets_with_unique_ids():
    specs = generated_sets.battery()
    assert len(specs) >= 200
    assert len({s.id for s in specs}) == len(specs)
    assert set(Counter(s.family for s in specs)) == set(generated_sets.FAMILIES)


def test_every_family_is_in_both_halves_about_half_each():
    halves = generated_sets.split()
    by = Counter((s.family, halves[s.id]) for s in generated_sets.battery())
    for fam, count in generated_sets.FAMILIES.items():
        assert by[fam, "tune"] >= 1 and by[fam, "check"] >= 1
        assert abs(by[fam, "tune"] - by[fam, "check"]) <= 1, fam
    assert set(halves.values()) == {"tune", "check"}


@settings(max_examples=10, deadline=None)
@given(st.randoms(use_true_random=False))
def test_split_is_stable_whatever_the_order(rnd):
    specs = list(generated_sets.battery())
    shuffled = specs[:]
    rnd.shuffle(shuffled)
    assert generated_sets.split(tuple(shuffled)) == generated_sets.split(tuple(specs))
    assert generated_sets.split() == generated_sets.split()
    # the halves listed by half_ids partition the battery in battery order
    tune, check = generated_sets.half_ids("tune"), generated_sets.half_ids("check")
    assert not set(tune) & set(check)
    assert sorted(tune + check) == sorted(s.id for s in specs)


def test_parameters_are_drawn_from_the_battery_seed():
    generated_sets.battery.cache_clear()
    again = generated_sets.battery()
    assert [(s.id, s.params, s.seed) for s in again] == \
        [(s.id, s.params, s.seed) for s in generated_sets.battery()]


@pytest.mark.parametrize("spec", _cheap(), ids=lambda s: s.id)
def test_a_set_is_reproducible_from_its_seed_and_true_k_matches_labels(spec):
    a = generated_sets.generate(spec.id)
    X, y = MAKERS[spec.family](np.random.default_rng(spec.seed), **spec.params)
    np.testing.assert_array_equal(a.X, X)
    np.testing.assert_array_equal(a.labels, np.unique(y, return_inverse=True)[1])
    assert a.k == _expected_k(spec) == np.unique(a.labels).size
    assert np.bincount(a.labels).min() >= 5  # every true cluster is present
    assert a.n <= generated_sets.MAX_N and a.n * a.d <= generated_sets.MAX_CELLS
    assert np.isfinite(a.X).all()


def test_another_seed_gives_another_set():
    spec = _cheap(1)[0]
    X1, _ = MAKERS[spec.family](np.random.default_rng(spec.seed), **spec.params)
    X2, _ = MAKERS[spec.family](np.random.default_rng(spec.seed + 1), **spec.params)
    assert X1.shape[1] == X2.shape[1] and not np.array_equal(X1[:5], X2[:5])


def test_the_issue_ranges_are_covered():
    blobs = [s.params for s in generated_sets.battery() if s.family == "blobs"]
    assert {p["k"] for p in blobs} >= {2, 100}
    assert {p["d"] for p in blobs} >= {2, 1000}
    assert min(p["per"] for p in blobs) == 5
    assert max(p["per"] * p["k"] for p in blobs) > 10_000


def test_the_harness_loads_a_set_whole_even_in_quick_mode():
    spec = _cheap(1)[0]
    assert datasets.quick_name(spec.id) == spec.id
    X, y = datasets.load(spec.id)
    gen = generated_sets.generate(spec.id)
    np.testing.assert_allclose(X, gen.X)
    np.testing.assert_array_equal(y, gen.labels)


def test_datasets_option_selects_a_half_and_family():
    suite = SUITE
    args = argparse.Namespace(methods="auto-nok", grid=None, quick=False, time_cap=None,
                              mem_cap=None, seeds=None, datasets="generated:check:spirals",
                              where=None)
    got = [c.dataset for c in cli.plan(suite, args)]
    assert got == generated_sets.half_ids("check", "spirals") and got
    assert all(c.params == {"n_clusters": None} for c in cli.plan(suite, args))
    with pytest.raises(ValueError, match="unknown family"):
        generated_sets.expand("generated:check:nope")


def test_the_with_k_method_skips_the_nulls():
    suite = SUITE
    with_k = next(m for m in suite.methods if m.name == "auto-k")
    nulls = set(generated_sets.half_ids("all", "null"))
    assert nulls and not nulls & set(with_k.datasets)


def _record(set_id: str, found: int | None, warn: bool = False, ari: float = 0.5,
            with_k: bool = False) -> dict:
    spec = next(s for s in generated_sets.battery() if s.id == set_id)
    rec = {"method": "auto-k" if with_k else "auto-nok", "dataset": set_id,
           "params": {} if with_k else {"n_clusters": None}, "k": _expected_k(spec)}
    if found is None:
        return {**rec, "status": "over cap"}
    return {**rec, "status": "ok", "k_found": found, "ari": ari, "time_fit": 1.0,
            "warning_classes": ["NoClusterStructureWarning"] if warn else []}


def test_summary_counts_against_a_hand_count():
    null, null2 = generated_sets.half_ids("check", "null")[:2]
    blob = generated_sets.half_ids("check", "blobs")[2]
    k = _expected_k(next(s for s in generated_sets.battery() if s.id == blob))
    many = next(s.id for s in generated_sets.battery() if s.id in generated_sets.half_ids(
        "check", "rings") and _expected_k(s) >= 3)
    recs = [_record(null, 1, warn=True), _record(null2, 1, warn=False),
            _record(blob, k + 1), _record(many, 1),
            _record(generated_sets.half_ids("check", "chains")[0], None)]
    s = generated_summary.summarise(recs)
    assert (s["sets"], s["ok"], s["nulls"], s["clustered"]) == (5, 4, 2, 3)
    assert s["null_ok"] == 1  # k = 1 without the warning does not count
    assert s["exact"] == 2 and s["near"] == 3  # the over-cap cell is a miss
    assert s["clustered_one"] == 1
    text = generated_summary.table(recs)
    assert "auto-nok, check half" in text and "MISSED" in text


@pytest.mark.slow
def test_every_set_has_its_true_k_and_stays_under_the_caps():
    """All 225 sets (about 3 s): the quick test above checks the cheapest two a family."""
    for spec in generated_sets.battery():
        gen = generated_sets.generate(spec.id)
        assert gen.k == _expected_k(spec), spec.id
        assert np.bincount(gen.labels).min() >= 5, spec.id
        assert gen.n <= generated_sets.MAX_N and gen.n * gen.d <= generated_sets.MAX_CELLS


def test_summary_record_has_a_row_per_half_and_family_with_both_aris():
    tune = generated_sets.half_ids("tune", "null")[0]
    check = generated_sets.half_ids("check", "null")[0]
    blob = generated_sets.half_ids("check", "blobs")[0]
    k = _expected_k(next(s for s in generated_sets.battery() if s.id == blob))
    rec = generated_summary.summary_record(
        [_record(tune, 1, warn=True), _record(check, 2), _record(blob, k, ari=0.25),
         _record(blob, k, ari=0.75, with_k=True)], ["`run` — today"])
    assert rec["suite"] == "generated" and rec["runs"] == ["`run` — today"]
    totals = rec["tables"][0]["rows"]
    assert [(r[0], r[1], r[2], r[3], r[5], r[7], r[8]) for r in totals] == [
        ("all tune", "tune", "1/1", "1/1 (100 %)", "1/1 (100 %)", "0.500", "–"),
        ("all check", "check", "2/2", "1/2 (50 %)", "0/1 (0 %)", "0.375", "0.750")]
    assert [(r[0], r[1]) for r in rec["tables"][1]["rows"]] == [
        ("null", "tune"), ("blobs", "check"), ("null", "check")]
    md = generated_summary.record_markdown(rec).splitlines()
    assert "- `run` — today" in md  # as test_today looks the rows and runs up in HISTORY.md
    assert all("| " + " | ".join(row) + " |" in md for t in rec["tables"] for row in t["rows"])


def test_with_k_records_are_not_scored_as_estimates():
    blob = generated_sets.half_ids("check", "blobs")[0]
    text = generated_summary.table([_record(blob, 1, with_k=True)])
    assert "(k given)" in text and "target" not in text
    assert not generated_summary.without_k(_record(blob, 1, with_k=True))
    assert generated_summary.without_k(_record(blob, 1))


