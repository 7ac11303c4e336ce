"""``python -m benchmarks compare``: its arithmetic on tiny record lists, against hand
results and a brute-force reference."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import compare


def _rec(method, ds, ari, seed=0, kind=None, status="ok"):
    kind = kind or ("preset" if method.startswith("auto") else "peer")
    return {"method": method, "dataset": ds, "seed": seed, "kind": kind, "params": {},
            "status": status, **({"ari": ari} if status == "ok" else {})}


def test_deltas_by_hand():
    base = [_rec("auto", "a", 0.5, 0), _rec("auto", "a", 0.7, 1),  # mean .6
            _rec("auto", "b", 0.8), _rec("auto", "c", 0.4), _rec("auto", "d", 0.3)]
    new = [_rec("auto", "a", 0.55, 0), _rec("auto", "a", 0.55, 1),  # -.05: a loss
           _rec("auto", "b", 0.79),  # -.01: within .02
           _rec("auto", "c", None, status="over cap"),  # failed where the base scored
           _rec("auto", "e", 0.9),  # no base row: not a loss
           _rec("sk-kmeans", "a", 0.1)]  # another method: ignored
    got = {r["dataset"]: r for r in compare.deltas(base, new, "auto", tol=0.02)}
    assert set(got) == {"a", "b", "c", "e"}
    assert got["a"]["base"] == pytest.approx(0.6) and got["a"]["delta"] == pytest.approx(-0.05)
    assert got["a"]["loss"] and not got["b"]["loss"] and got["c"]["loss"] and not got["e"]["loss"]
    assert got["b"]["delta"] == pytest.approx(-0.01)
    assert got["c"]["delta"] is None and got["e"]["base_status"] == "no row"


def test_battery_summary_by_hand():
    mine = [_rec("auto", "a", 0.9), _rec("auto", "b", 0.5), _rec("auto", "c", 0.2)]
    peers = [_rec("p", "a", 0.9), _rec("p", "b", 0.6), _rec("p", "c", None, status="error"),
             _rec("q", "a", 0.1), _rec("q", "b", 0.1), _rec("q", "c", 0.3),
             _rec("q", "z", 1.0),  # a set auto has no row on: left out
             _rec("auto-x", "a", 1.0, kind="preset"),  # not a peer: left out
             _rec("p", "b", 0.0, kind="preset")]  # a preset named as a peer: left out
    got = {r["method"]: r for r in compare.battery_summary(mine, peers, "auto")}
    assert set(got) == {"auto", "p", "q"}
    # a: auto .9 = p .9 > q -> 1.5, 1.5, 3;  b: p > auto > q -> 2, 1, 3;  c: q > auto > p(failed)
    assert got["auto"]["mean_rank"] == pytest.approx((1.5 + 2 + 2) / 3)
    assert got["p"]["mean_rank"] == pytest.approx((1.5 + 1 + 3) / 3)
    assert got["q"]["mean_rank"] == pytest.approx((3 + 3 + 1) / 3)
    assert got["p"]["mean_ari0"] == pytest.approx((0.9 + 0.6 + 0) / 3)
    assert got["p"]["mean_ari"] == pytest.approx(0.75)
    assert got["p"]["scored"] == 2 and got["p"]["datasets"] == 3 and got["q"]["of"] == 3


_ARI = st.one_of(st.sampled_from([0.0, 0.2, 0.5, 0.9]), st.none())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_ARI, _ARI, _ARI), min_size=1, max_size=5))
def test_battery_summary_matches_brute_force(table):
    """Per set the scores of auto, p, q; ranks and failure-as-0 means by brute force."""
    recs = [_rec(m, f"s{i}", a, status="ok" if a is not None else "error")
            for i, row in enumerate(table) for m, a in zip(("auto", "p", "q"), row)]
    got = {r["method"]: r for r in compare.battery_summary(
        [r for r in recs if r["method"] == "auto"], recs, "auto")}
    for j, m in enumerate(("auto", "p", "q")):
        ranks = []
        for row in table:
            v = [-math.inf if a is None else a for a in row]
            ranks.append(1 + sum(x > v[j] for x in v) + (sum(x == v[j] for x in v) - 1) / 2)
        assert got[m]["mean_rank"] == pytest.approx(np.mean(ranks))
        assert got[m]["mean_ari0"] == pytest.approx(np.mean([row[j] or 0.0 for row in table]))


def _nok(method, ds, k_found, k_true, ari, status="ok"):
    return {"method": method, "dataset": ds, "seed": 0, "k_true": k_true, "status": status,
            **({"k_found": k_found, "ari": ari} if status == "ok" else {})}


def test_nok_summary_by_hand():
    recs = [_nok("auto", "a", 3, 3, 0.9), _nok("auto", "b", 5, 4, 0.5),
            _nok("auto", "c", 9, 2, 0.1), _nok("auto", "d", 0, 2, 0, status="over cap"),
            _nok("evoc", "a", 3, 3, 0.8), _nok("evoc", "x", 3, 3, 1.0)]
    got = {r["method"]: r for r in compare.nok_summary(recs, {"a", "b", "c", "d"})}
    assert (got["auto"]["datasets"], got["auto"]["ok"]) == (4, 3)
    assert (got["auto"]["exact"], got["auto"]["near"]) == (1, 2)
    assert got["auto"]["mean_ari0"] == pytest.approx((0.9 + 0.5 + 0.1 + 0) / 4)
    assert got["evoc"]["datasets"] == 1 and got["evoc"]["mean_ari0"] == pytest.approx(0.8)


def test_load_records_later_file_wins_and_jsonl_only_without_json(tmp_path):
    old = tmp_path / "results-general-a.json"
    old.write_text(json.dumps({"meta": {}, "records": [_rec("auto", "a", 0.1)]}))
    # the stream of a finished run is ignored (its .json exists) ...
    (tmp_path / "results-general-a.jsonl").write_text(json.dumps(_rec("auto", "a", 0.3)) + "\n")
    # ... a stream alone (a run still going) is read, and being newer it wins
    (tmp_path / "sub").mkdir()  # subfolders are read too
    new = tmp_path / "sub" / "results-general-b.jsonl"
    new.write_text(json.dumps(_rec("auto", "a", 0.2)) + "\n" + json.dumps(_rec("p", "a", 0.4)))
    os.utime(old, (1, 1))
    got = {(r["method"], r["dataset"]): r["ari"] for r in compare.load_records([str(tmp_path)])}
    assert got == {("auto", "a"): 0.2, ("p", "a"): 0.4}


def test_cli_flags_loss_and_targets(tmp_path, capsys):
    for name, recs in {"base": [_rec("auto", "a", 0.9), _rec("auto", "b", 0.5)],
                       "new": [_rec("auto", "a", 0.8), _rec("auto", "b", 0.6),
                               _rec("p", "a", 0.7), _rec("p", "b", 0.4)]}.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "results-general.json").write_text(
            json.dumps({"meta": {}, "records": recs}))
    (tmp_path / "nok").mkdir()
    (tmp_path / "nok" / "nok-results.json").write_text(json.dumps(
        [_nok("auto", "a", 2, 2, 0.8), _nok("auto", "b", 3, 2, 0.6), _nok("p", "a", 7, 2, 0.2),
         _nok("p", "b", 2, 2, 0.3)]))
    out = tmp_path / "cmp.md"
    assert compare.main(["--new", str(tmp_path / "new"), "--base", str(tmp_path / "base"),
                         "--nok-new", str(tmp_path / "nok"), "--write", str(out)]) == 0
    text = capsys.readouterr().out
    assert text == out.read_text()
    assert "| a | 0.900 | 0.800 | -0.100 | **LOSS** | 0.700 |" in text
    assert "| b | 0.500 | 0.600 | +0.100 |  | 0.400 |" in text
    # with k: auto .7 vs p .55 (+.15, met); auto ranks 1 on both sets
    assert "2 sets both ran: 0.7000 vs 0.5500 of p, the closest peer: +0.1500 (met" in text
    assert "best mean rank: yes" in text
    assert "sets losing more than 0.02 ARI against the base: a" in text
    # without k: exact on 1 of 2 (50 %), ±1 on both; ARI .7 vs p .25
    assert "exact k on 50 % of the sets (NOT met" in text and "on 100 % (met" in text
    assert "0.7000 vs 0.2500 of p, the closest peer: +0.4500 (met" in text


def test_nok_peer_found_k_counts_noise_as_one_cluster():
    from benchmarks.nok_peers import found_k, umap_hdbscan_size

    assert found_k(np.array([-1, 0, 0, 1, -1])) == 3
    assert found_k(np.array([2, 2, 5])) == 2
    assert found_k(np.array([-1, -1])) == 1
    assert [umap_hdbscan_size(n) for n in (150, 1797, 70000)] == [5, 18, 700]


@pytest.mark.slow
def test_nok_peer_record_on_iris():
    """The no-k HDBSCAN peer on iris: its k is its labels' count with noise as a cluster
    and its ARI is scikit-learn's on those labels (computed here from a separate fit)."""
    from sklearn.cluster import HDBSCAN
    from sklearn.datasets import load_iris
    from sklearn.metrics import adjusted_rand_score

    from benchmarks.nok_peers import run_peer_cell

    rec = run_peer_cell("sk-hdbscan", "iris", 0, None, 60)
    X, y = load_iris(return_X_y=True)
    raw = HDBSCAN(copy=True).fit_predict(X)
    labels = np.where(raw < 0, raw.max() + 1, raw)
    assert rec["status"] == "ok" and rec["k_true"] == 3
    assert rec["k_found"] == len(set(labels.tolist()))
    assert rec["ari"] == pytest.approx(adjusted_rand_score(y, labels))


def test_paired_gains_only_on_sets_both_ran():
    mine = {"a": 0.9, "b": 0.5, "c": None, "d": 0.7}
    peers = {"p": {"a": 0.8, "c": 0.4},  # c: mine failed, counts 0
             "q": {"b": 0.6, "x": 1.0},  # x: not one of mine, left out
             "r": {"x": 0.3}}  # nothing in common: no entry
    got = compare.paired_gains(mine, peers)
    assert set(got) == {"p", "q"}
    assert got["p"] == (2, pytest.approx(0.45), pytest.approx(0.6))
    assert got["q"] == (1, pytest.approx(0.5), pytest.approx(0.6))


def test_nok_structure_rows_say_k_and_the_warning():
    """The no-structure benchmark on a small uniform square and Gaussian: one row per
    fit with the k found and whether the warning came, from a real fit."""
    from benchmarks.nok_structure import fit_one

    for make in ("uniform", "gaussian"):
        row = fit_one("auto", make, 1500, 2, 0)
        assert row["k"] == 1 and row["warned"] and row["d"] == 2
        assert row["estimator"].startswith("density-tree")
