"""benchmarks.today: RESULTS.md (today's numbers per suite) generated from summary records,
and the committed page, records and history kept consistent."""

from __future__ import annotations

import json
import re

import pytest

from benchmarks import today

HISTORY = today.HERE / "HISTORY.md"


def _record(suite, order, rows, **extra):
    return {"suite": suite, "order": order, "title": f"Suite {suite.upper()}",
            "history": f"Suite {suite.upper()} (`{suite}`)",
            "runs": [f"`python -m benchmarks run --suite {suite}` — 2026-01-01 00:00 UTC"],
            "tables": [{"caption": "Reproduction targets",
                        "header": ["measurement", "target", "ours", "status"],
                        "rows": rows}], **extra}


@pytest.fixture
def records(tmp_path):
    folder = tmp_path / "records"
    folder.mkdir()
    later = {"caption": "Later", "header": ["a", "b"], "rows": [["1", "2"]],
             "history": "A later look (issue 9)"}
    fixtures = [_record("zeta", 1, [["x", "≥ 1×", "1.20×", "met"]], note="A note."),
                _record("alpha", 2, [["y", "50.00", "40.00", "missed (−10.0)"],
                                     ["z", "50.00", "not run", "not run"]])]
    fixtures[1]["tables"].append(later)
    for r in fixtures:
        (folder / f"{r['suite']}.json").write_text(json.dumps(r, ensure_ascii=False))
    return folder


def test_summary_from_fixture_records(records):
    text = today.summary_markdown(today.load_records(records), ["alpha", "beta", "zeta"])
    assert text.startswith(today.HEADER)
    body = text[len(today.HEADER):]
    # ordered by "order", not by name; each section: title, note, runs, tables, link
    assert body.index("## Suite ZETA (`zeta`)") < body.index("## Suite ALPHA (`alpha`)")
    zeta = body[body.index("## Suite ZETA"):body.index("## Suite ALPHA")]
    assert zeta == (
        "## Suite ZETA (`zeta`)\n\nA note.\n\nFrom:\n\n"
        "- `python -m benchmarks run --suite zeta` — 2026-01-01 00:00 UTC\n\n"
        "Reproduction targets:\n\n| measurement | target | ours | status |\n|---|---|---|---|\n"
        "| x | ≥ 1× | 1.20× | met |\n\n"
        "Full report: [HISTORY.md, \"Suite ZETA (`zeta`)\"](HISTORY.md#suite-zeta-zeta).\n\n")
    assert ("| y | 50.00 | 40.00 | missed (−10.0) |\n| z | 50.00 | not run | not run |\n"
            in body)
    assert ("Later:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
            "From [HISTORY.md, \"A later look (issue 9)\"](HISTORY.md#a-later-look-issue-9).\n"
            in body)
    # a registered suite with no record is named, not silently left out
    assert body.rstrip().endswith("No summary record yet (their runs, if any, are in "
                                  "[HISTORY.md](HISTORY.md)): `beta`.")


def test_write_then_check_then_drift(records, tmp_path):
    page = tmp_path / "RESULTS.md"
    assert today.main(["--records", str(records), "--results", str(page), "--check"]) == 1
    assert not page.exists()  # --check writes nothing
    assert today.main(["--records", str(records), "--results", str(page)]) == 0
    assert "| x | ≥ 1× | 1.20× | met |" in page.read_text()
    assert today.main(["--records", str(records), "--results", str(page), "--check"]) == 0
    page.write_text(page.read_text().replace("1.20×", "1.30×"))  # a hand edit
    assert today.main(["--records", str(records), "--results", str(page), "--check"]) == 1


def test_a_record_whose_rows_do_not_fit_its_header_is_refused(records):
    bad = json.loads((records / "alpha.json").read_text())
    bad["tables"][0]["rows"].append(["only", "three", "cells"])
    (records / "alpha.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="Reproduction targets.*3 cells under 4 columns"):
        today.load_records(records)


@pytest.mark.parametrize("heading, anchor", [
    ("NCER — Mizutani, Tables 2–4 (`ncer`)", "ncer--mizutani-tables-24-ncer"),
    ("ULGE / OULGE with BKHK — Nie, Zhu, Li, Table 5 (`ulge`)",
     "ulge--oulge-with-bkhk--nie-zhu-li-table-5-ulge"),
    ("MNIST-extend@630000: more layout epochs (issue 27)",
     "mnist-extend630000-more-layout-epochs-issue-27"),
])
def test_history_anchor_follows_the_markdown_rule(heading, anchor):
    assert today.history_anchor(heading) == anchor


# -- the committed page ------------------------------------------------------------
def test_committed_results_is_what_the_records_give():
    assert today.write_summary(check=True), (
        "benchmarks/RESULTS.md differs from benchmarks/records: run `python -m benchmarks today`")


def test_every_committed_number_is_in_the_history():
    """No number is invented: every row of every record is a row of HISTORY.md as the
    harness printed it, every harness run a run line there, every linked heading one of
    its headings (once, so the link lands on it)."""
    lines = HISTORY.read_text(encoding="utf-8").splitlines()
    present = set(lines)
    headings = [re.sub(r"^#+ ", "", x) for x in lines if x.startswith("#")]
    records = today.load_records()
    assert {r["suite"] for r in records} >= {"ncer", "dcd", "ongr", "ulge", "uspec", "dlc",
                                              "ensemble", "ncut", "general", "families"}
    for r in records:
        for t in r["tables"]:
            for row in t["rows"]:
                assert "| " + " | ".join(row) + " |" in present, (r["suite"], row)
            for h in filter(None, (t.get("history"), r["history"])):
                assert headings.count(h) == 1, (r["suite"], h)
        for run in r["runs"]:
            if run.startswith("`python -m benchmarks run "):
                assert f"- {run}" in present, (r["suite"], run)
