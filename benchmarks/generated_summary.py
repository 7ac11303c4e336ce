"""The generated battery's summary: ``python -m benchmarks generated --out DIR [--write FILE]``.

Reads every ``results-generated*.json`` (or, for a run still going, ``.jsonl``) in
``DIR`` — a later file replaces the same cell of an earlier one — and prints, for each
method, per half (tune, check) and per family: the sets with a record, exact ``k``,
within ±1, nulls answered ``k = 1`` with a ``NoClusterStructureWarning``, clustered
sets answered ``k = 1``, mean ARI and median fit time. A cell that failed or went over
its cap counts as a miss (never exact, never an answer of 1). The found ``k`` is the
estimator's ``n_clusters_``. A method fitted with ``k`` (its cells lack
``n_clusters=None``) gets its ARI and fit time only. Under the check half's totals, the
targets of issue 44 (exact ≥ 75 %, within ±1 ≥ 90 %, nulls ≥ 95 %, clustered answered 1
≤ 1 %) are printed met or missed for a method without ``k``. ``--record`` also writes
the suite's summary record ``DIR/today-generated.json`` (:func:`summary_record`) and
prints it as HISTORY.md keeps it (:func:`record_markdown`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks import generated_sets

__all__ = ["HISTORY_HEADING", "TARGETS", "load_records", "main", "record_markdown",
           "summary_record",
           "summarise", "table", "without_k"]

#: Issue 44's targets on the check half without k: (field, bound, at least?).
TARGETS = (("exact", 0.75, True), ("near", 0.90, True), ("null_ok", 0.95, True),
           ("clustered_one", 0.01, False))
NULL_WARNING = "NoClusterStructureWarning"
#: The section of ``benchmarks/HISTORY.md`` holding the full tables of the summary record.
HISTORY_HEADING = "2026-11-28 generated battery: k that generalises (issue 44, deliverable 3)"


def _result_files(out: str | Path) -> list[Path]:
    return sorted(Path(out).glob("results-generated*.json*"),
                  key=lambda p: (p.stat().st_mtime, p.suffix == ".json"))


def load_records(out: str | Path) -> list[dict]:
    """The generated suite's records in ``out``, one per cell (later files win)."""
    cells: dict[tuple, dict] = {}
    for path in _result_files(out):
        if path.suffix == ".jsonl":
            recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        else:
            recs = json.loads(path.read_text())["records"]
        for r in recs:
            cells[(r["method"], r["dataset"], json.dumps(r.get("params", {}),
                                                         sort_keys=True))] = r
    return list(cells.values())


def _found(r: dict) -> int | None:
    return r.get("k_found", r.get("n_found")) if r.get("status") == "ok" else None


def _true_k(r: dict) -> int:
    """The set's true ``k``: from the record, else (a cell over its cap or in error
    records none) from the generated set itself."""
    if "k" in r:
        return int(r["k"])
    return generated_sets.generate(r["dataset"]).k


def summarise(records: list[dict]) -> dict:
    """Counts of one group of records (sets, ok, exact, near, nulls, null_ok, clustered,
    clustered_one) and the mean ARI / median fit time over the cells that ran."""
    halves = generated_sets.split()
    s = {"sets": len(records), "ok": 0, "exact": 0, "near": 0, "nulls": 0, "null_ok": 0,
         "clustered": 0, "clustered_one": 0}
    aris, times = [], []
    for r in records:
        if r["dataset"] not in halves:
            continue
        k_true, found = _true_k(r), _found(r)
        null = k_true == 1
        s["nulls" if null else "clustered"] += 1
        if found is None:
            continue
        s["ok"] += 1
        aris.append(r["ari"])
        times.append(r["time_fit"])
        s["exact"] += found == k_true
        s["near"] += abs(found - k_true) <= 1
        if null:
            s["null_ok"] += found == 1 and NULL_WARNING in r.get("warning_classes", ())
        else:
            s["clustered_one"] += found == 1
    s["ari"] = float(np.mean(aris)) if aris else float("nan")
    s["time"] = float(np.median(times)) if times else float("nan")
    return s


def _pct(num: int, den: int) -> str:
    return f"{num}/{den} ({100 * num / den:.0f} %)" if den else "–"


def _row(label: str, s: dict, nok: bool = True) -> str:
    if not nok:  # k was given: nothing was estimated
        return (f"| {label} | {s['sets']} | {s['ok']} | (k given) | | | | {s['ari']:.3f} | "
                f"{s['time']:.2f} |")
    return (f"| {label} | {s['sets']} | {s['ok']} | {_pct(s['exact'], s['sets'])} | "
            f"{_pct(s['near'], s['sets'])} | {_pct(s['null_ok'], s['nulls'])} | "
            f"{_pct(s['clustered_one'], s['clustered'])} | {s['ari']:.3f} | {s['time']:.2f} |")


def table(records: list[dict]) -> str:
    """The markdown summary: per method, per half, the families and the half's total."""
    halves = generated_sets.split()
    families = {s.id: s.family for s in generated_sets.battery()}
    lines = []
    for method in sorted({r["method"] for r in records}):
        mine = [r for r in records if r["method"] == method and r["dataset"] in halves]
        nok = all(without_k(r) for r in mine)
        for half in ("tune", "check"):
            part = [r for r in mine if halves[r["dataset"]] == half]
            if not part:
                continue
            lines += [f"\n**{method}, {half} half**\n",
                      "| family | sets | ran | exact k | within ±1 | nulls → 1 + warning | "
                      "clustered → 1 | mean ARI | median fit s |",
                      "|---|---|---|---|---|---|---|---|---|"]
            for fam in generated_sets.FAMILIES:
                group = [r for r in part if families[r["dataset"]] == fam]
                if group:
                    lines.append(_row(fam, summarise(group), nok))
            total = summarise(part)
            lines.append(_row(f"**all {half}**", total, nok))
            if half == "check" and nok:
                lines.append("")
                lines += [_target_line(total, *t) for t in TARGETS]
    return "\n".join(lines) + "\n"


def _target_line(total: dict, field: str, bound: float, at_least: bool) -> str:
    den = total["nulls"] if field == "null_ok" else (
        total["clustered"] if field == "clustered_one" else total["sets"])
    if not den:
        return f"- target {field}: no sets of this kind ran"
    share = total[field] / den
    met = share >= bound if at_least else share <= bound
    what = {"exact": "exact k", "near": "within ±1", "null_ok": "nulls answered 1 with the "
            "warning", "clustered_one": "clustered sets answered 1"}[field]
    sign = "≥" if at_least else "≤"
    return (f"- target {what} {sign} {100 * bound:.0f} %: {100 * share:.1f} % "
            f"({total[field]}/{den}) — {'met' if met else 'MISSED'}")


def without_k(record: dict) -> bool:
    """Whether ``record`` is a fit without ``k`` (``n_clusters=None`` in its parameters)."""
    params = record.get("params") or {}
    return "n_clusters" in params and params["n_clusters"] is None


def _cells(label: str, half: str, nok: dict, ari_k: float) -> list[str]:
    return [label, half, f"{nok['ok']}/{nok['sets']}", _pct(nok["exact"], nok["sets"]),
            _pct(nok["near"], nok["sets"]), _pct(nok["null_ok"], nok["nulls"]),
            _pct(nok["clustered_one"], nok["clustered"]), f"{nok['ari']:.3f}",
            "–" if np.isnan(ari_k) else f"{ari_k:.3f}"]


def summary_record(records: list[dict], runs: list[str]) -> dict:
    """The suite's summary record for ``benchmarks/records/generated.json`` (see
    :mod:`benchmarks.today`): per half, and per half and family, the fits without ``k``
    (exact, ±1, nulls, clustered answered 1, ARI) beside the ARI of the fits with ``k``."""
    from benchmarks.suites.generated import SUITE
    from benchmarks.today import record_from_report

    halves = generated_sets.split()
    families = {s.id: s.family for s in generated_sets.battery()}
    mine = [r for r in records if r["dataset"] in halves]
    totals, per_family = [], []
    for half in ("tune", "check"):
        for fam in (None, *generated_sets.FAMILIES):
            group = [r for r in mine if halves[r["dataset"]] == half
                     and (fam is None or families[r["dataset"]] == fam)]
            nok = summarise([r for r in group if without_k(r)])
            if not nok["sets"]:
                continue
            ari_k = summarise([r for r in group if not without_k(r)])["ari"]
            (totals if fam is None else per_family).append(
                _cells(f"all {half}" if fam is None else fam, half, nok, ari_k))
    head = ["half", "ran/sets", "exact k", "within ±1", "nulls → 1 + warning",
            "clustered → 1", "ARI without k", "ARI with k (clustered sets)"]
    return record_from_report(
        "generated", SUITE.title, HISTORY_HEADING, runs,
        [("Without k, per half (targets on the check half: exact ≥ 75 %, ±1 ≥ 90 %, nulls "
          "→ 1 with the warning ≥ 95 %, clustered → 1 ≤ 1 %; a failed cell is a miss)",
          ["group", *head], totals),
         ("Per family", ["family", *head], per_family)])


def record_markdown(record: dict) -> str:
    """A summary record as HISTORY.md keeps it: its run lines and its tables, row by row
    as ``benchmarks today`` will print them."""
    lines = ["Runs:", "", *(f"- {run}" for run in record["runs"])]
    for t in record["tables"]:
        lines += ["", f"{t['caption']}:", "", "| " + " | ".join(t["header"]) + " |",
                  "|" + "---|" * len(t["header"]),
                  *("| " + " | ".join(row) + " |" for row in t["rows"])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks generated", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder with results-generated*.json")
    ap.add_argument("--write", default=None, help="also write the table to this file")
    ap.add_argument("--record", action="store_true",
                    help="also write the summary record DIR/today-generated.json (copy it to "
                    "benchmarks/records/generated.json, then `python -m benchmarks today`)")
    args = ap.parse_args(argv)
    records = load_records(args.out)
    if not records:
        print(f"no results-generated*.json in {args.out}")
        return 1
    text = table(records)
    print(text)
    if args.write:
        Path(args.write).write_text(text)
    if args.record:
        from benchmarks.report import run_line

        runs = [run_line(json.loads(p.read_text())["meta"]) for p in _result_files(args.out)
                if p.suffix == ".json"]
        record = summary_record(records, runs)
        path = Path(args.out) / "today-generated.json"
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        print(record_markdown(record))
        print(f"wrote {path}")
    return 0
