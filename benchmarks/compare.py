"""``python -m benchmarks compare``: a method against its baseline and the peers, from
result files, as the targets of issues 25 and 26 ask.

With k (the ``general`` battery's records, ``results-*.json`` or, for a run still going or
interrupted, its ``.jsonl`` stream): per data set the ARI of ``--method`` in the ``--new``
records against the ``--base`` records (means over seeds), the delta and a flag on a loss
above ``--tol`` (.02); then the battery table of the new method beside the peers (mean
rank by ARI, ties averaged, failures last, :mod:`benchmarks.ranking`; mean ARI with a
failed cell as 0 and over scored cells), the baseline's rank and mean ARI against the
same peers, and the three checks of issue 25 (best mean rank, mean ARI at least
``--margin`` above the best peer's, no set losing more than ``--tol``).

Without k (``nok-results.json`` of ``python -m benchmarks nok``): per method the share of
data sets with the exact ``k`` and within ±1, the mean ARI (a failure as 0), and the
checks of issue 26 for ``--method`` (exact on >= 70 %, ±1 on >= 85 %, mean ARI at least
``--margin`` above the best peer's over the same data sets).

Only the data sets ``--method`` has records on (in ``--new`` / ``--nok-new``) are compared,
so rerunning the method on some sets compares those. ``--write FILE`` also writes the
markdown into FILE.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.ranking import battery_rows, finite

__all__ = ["battery_summary", "deltas", "load_nok", "load_records", "main", "nok_summary",
           "paired_gains"]


def _files(paths: list[str], pattern: str) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(p.rglob(pattern)) if p.is_dir() else [p]
    return out


def load_records(paths: list[str]) -> list[dict]:
    """Cell records of ``results-*.json`` files (or their ``.jsonl`` streams when the
    ``.json`` is missing) in folders (and their subfolders) or named files; a later file
    (by modification time) replaces the same (method, data set, seed, setting)."""
    files = [f for f in _files(paths, "results-*.json*")
             if f.suffix == ".json" or not f.with_suffix(".json").exists()]
    cells: dict[tuple, dict] = {}
    for f in sorted(files, key=lambda f: f.stat().st_mtime):
        text = f.read_text()
        recs = ([json.loads(line) for line in text.splitlines() if line.strip()]
                if f.suffix == ".jsonl" else json.loads(text)["records"])
        for r in recs:
            cells[(r["method"], r["dataset"], r["seed"],
                   json.dumps(r.get("params", {}), sort_keys=True))] = r
    return list(cells.values())


def _rows(records: list[dict]) -> list[dict]:
    """One row per (method, data set): the mean ARI over its ok seeds (None if none ran
    ok), its kind and status."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:  # by kind too: a preset may share a peer's name (`genie`)
        groups.setdefault((r["method"], r["dataset"], r.get("kind", "preset")), []).append(r)
    rows = []
    for (method, ds, _), rs in groups.items():
        ok = [r["ari"] for r in rs if r["status"] == "ok" and finite(r.get("ari"))]
        rows.append({"method": method, "dataset": ds, "kind": rs[0].get("kind", "preset"),
                     "ari": float(np.mean(ok)) if ok else None, "seeds": len(ok),
                     "status": "ok" if ok else rs[0]["status"]})
    return rows


def deltas(base: list[dict], new: list[dict], method: str, tol: float = 0.02) -> list[dict]:
    """Per data set of ``method`` in ``new``: base and new ARI (means over seeds), the
    delta and ``loss`` (new below base by more than ``tol``; a failed new cell where the
    base scored is a loss; a set the base has no row on is not)."""
    b = {r["dataset"]: r for r in _rows(base) if r["method"] == method}
    out = []
    for r in _rows(new):
        if r["method"] != method:
            continue
        old = b.get(r["dataset"])
        ba, na = (old or {}).get("ari"), r["ari"]
        d = na - ba if finite(ba) and finite(na) else None
        loss = (d is not None and d < -tol) or (finite(ba) and not finite(na))
        out.append({"dataset": r["dataset"], "base": ba, "new": na, "delta": d, "loss": loss,
                    "base_status": (old or {}).get("status", "no row"), "status": r["status"]})
    return out


def battery_summary(method_records: list[dict], peer_records: list[dict], method: str,
                    label: str | None = None) -> list[dict]:
    """``method`` beside the peers on the data sets ``method`` has records on: per method
    mean rank by ARI (:func:`benchmarks.ranking.battery_rows`), sets with a row / scored,
    mean ARI with a failure as 0 (``mean_ari0``) and over scored sets (``mean_ari``);
    ``method`` renamed ``label``. Sorted by mean rank."""
    mine = [{**r, "method": label or method} for r in _rows(method_records)
            if r["method"] == method]
    sets = {r["dataset"] for r in mine}
    peers = [r for r in _rows(peer_records) if r["kind"] == "peer" and r["dataset"] in sets]
    rows = mine + peers
    out = []
    for b in battery_rows(rows, []):
        scores = [r["ari"] if finite(r["ari"]) else 0.0 for r in rows
                  if r["method"] == b["method"]]
        out.append({"method": b["method"], "kind": b["kind"], "datasets": b["datasets"],
                    "scored": b["scored"], "of": len(sets), "mean_rank": b["mean_rank"],
                    "mean_ari": b["mean_ari"], "mean_ari0": float(np.mean(scores))})
    return out


def load_nok(paths: list[str]) -> list[dict]:
    """Records of ``nok-results.json`` files (folders or files); a later file replaces the
    same (method, data set, seed)."""
    cells: dict[tuple, dict] = {}
    for f in sorted(_files(paths, "nok-results.json"), key=lambda f: f.stat().st_mtime):
        for r in json.loads(f.read_text()):
            cells[(r["method"], r["dataset"], r["seed"])] = r
    return list(cells.values())


def nok_summary(records: list[dict], sets: set[str] | None = None) -> list[dict]:
    """Per method over ``sets`` (default: all): data sets with a record, exact ``k``,
    within ±1, and the mean ARI (a failed cell counts 0, exact/±1 as misses)."""
    by: dict[str, list[dict]] = {}
    for r in records:
        if sets is None or r["dataset"] in sets:
            by.setdefault(r["method"], []).append(r)
    out = []
    for method, rs in sorted(by.items()):
        ok = [r for r in rs if r["status"] == "ok"]
        out.append({"method": method, "datasets": len(rs), "ok": len(ok),
                    "exact": sum(r["k_found"] == r["k_true"] for r in ok),
                    "near": sum(abs(r["k_found"] - r["k_true"]) <= 1 for r in ok),
                    "mean_ari0": float(np.mean([r["ari"] if r["status"] == "ok" else 0.0
                                                for r in rs]))})
    return out


def paired_gains(mine: dict[str, float | None], peers: dict[str, dict[str, float | None]]
                 ) -> dict[str, tuple[int, float, float]]:
    """Per peer, on the data sets it has a row on that ``mine`` has too: ``(sets, mean ARI
    of mine, mean ARI of the peer)``, a failure (None) counting 0 on either side; the
    target's gain is their difference (sets a peer did not run on are left out of both)."""
    out = {}
    for peer, scores in peers.items():
        common = [ds for ds in scores if ds in mine]
        if common:
            out[peer] = (len(common), float(np.mean([mine[d] or 0.0 for d in common])),
                         float(np.mean([scores[d] or 0.0 for d in common])))
    return out


def _gain_check(gains: dict[str, tuple[int, float, float]], margin: float) -> str:
    if not gains:
        return "- mean ARI: no peer to compare with"
    peer, (n, a, b) = min(gains.items(), key=lambda kv: kv[1][1] - kv[1][2])
    return (f"- mean ARI (failure = 0) on the {n} sets both ran: {a:.4f} vs {b:.4f} of "
            f"{peer}, the closest peer: {a - b:+.4f} "
            f"({'met' if a - b >= margin else 'NOT met'}, target +{margin:.2f})")


def _f(x: Any, digits: int = 3) -> str:
    return f"{x:.{digits}f}" if finite(x) else "—"


def _table(header: list[str], body: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                      *("| " + " | ".join(row) + " |" for row in body)])


def with_k_markdown(base: list[dict], new: list[dict], peers: list[dict], method: str,
                    tol: float, margin: float) -> str:
    dl = deltas(base, new, method, tol)
    summ = battery_summary(new, peers, method)
    names = [r["method"] for r in summ if r["kind"] == "peer"]
    cell = {(r["method"], r["dataset"]): r for r in _rows(peers) if r["kind"] == "peer"}

    def peer_cell(m: str, ds: str) -> str:
        r = cell.get((m, ds))
        return "—" if r is None else _f(r["ari"]) if finite(r["ari"]) else r["status"]

    body = [[r["dataset"], _f(r["base"]) if finite(r["base"]) else r["base_status"],
             _f(r["new"]) if finite(r["new"]) else r["status"],
             f"{r['delta']:+.3f}" if r["delta"] is not None else "—",
             "**LOSS**" if r["loss"] else "", *(peer_cell(m, r["dataset"]) for m in names)]
            for r in sorted(dl, key=lambda r: r["dataset"])]
    base_summ = {r["method"]: r for r in battery_summary(base, peers, method, f"{method} (base)")}
    brow = base_summ.get(f"{method} (base)")
    rows = [[f"`{r['method']}`", r["kind"], f"{r['scored']}/{r['datasets']}/{r['of']}",
             f"{r['mean_rank']:.2f}", _f(r["mean_ari0"]), _f(r["mean_ari"])] for r in summ]
    if brow:
        rows.append([f"`{brow['method']}` (ranked in place of `{method}`)", "preset",
                     f"{brow['scored']}/{brow['datasets']}/{brow['of']}",
                     f"{brow['mean_rank']:.2f}", _f(brow["mean_ari0"]), _f(brow["mean_ari"])])
    me = next((r for r in summ if r["method"] == method), None)
    peer_rows = [r for r in summ if r["kind"] == "peer"]
    best = peer_rows[0] if peer_rows else None
    losses = [r["dataset"] for r in dl if r["loss"]]
    checks = []
    if me and best:
        top = min(peer_rows, key=lambda r: r["mean_rank"])
        checks = [
            (f"- best mean rank: {'yes' if me['mean_rank'] < top['mean_rank'] else 'NO'} "
             f"({me['mean_rank']:.2f}; best peer {top['method']} {top['mean_rank']:.2f})"),
            _gain_check(paired_gains(
                {r["dataset"]: r["ari"] for r in _rows(new) if r["method"] == method},
                {m: {r["dataset"]: r["ari"] for r in _rows(peers)
                     if r["method"] == m and r["kind"] == "peer"} for m in names}), margin),
            f"- sets losing more than {tol:.2f} ARI against the base: "
            + (", ".join(losses) if losses else "none")]
    return "\n".join([
        (f"Per data set, ARI (mean over seeds) of `{method}`, new against base, and of the "
        "peers (best mean rank first):"), "",
        _table(["data set", "base", "new", "Δ", f"loss > {tol:.2f}", *names], body), "",
        (f"Battery on the {len(dl)} data sets of `{method}` (rank by ARI per set, ties "
        "averaged, a failed cell last; scored/rows/sets; mean ARI with a failure as 0, "
        "and over scored sets):"), "",
        _table(["method", "kind", "scored/rows/sets", "mean rank", "mean ARI (fail = 0)",
                "mean ARI (scored)"], rows), "", *checks])


def nok_markdown(new: list[dict], peers: list[dict], method: str, margin: float) -> str:
    mine = [r for r in new if r["method"] == method]
    sets = {r["dataset"] for r in mine}
    summ = nok_summary(mine + [r for r in peers if r["method"] != method], sets)
    body = [[f"`{r['method']}`", f"{r['ok']}/{r['datasets']}/{len(sets)}",
             f"{r['exact']} ({100 * r['exact'] / max(1, r['datasets']):.0f} %)",
             f"{r['near']} ({100 * r['near'] / max(1, r['datasets']):.0f} %)",
             _f(r["mean_ari0"])] for r in summ]
    per = {}
    for r in mine + peers:
        if r["dataset"] in sets:
            per.setdefault(r["dataset"], {})[r["method"]] = r
    names = [r["method"] for r in summ]
    cells = [[ds, str(next(iter(per[ds].values()))["k_true"]),
              *(f"{t['k_found']} / {t['ari']:.3f}" if (t := per[ds].get(m)) and t["status"] == "ok"
                else (t["status"] if t else "—") for m in names)] for ds in sorted(per)]
    me = next((r for r in summ if r["method"] == method), None)
    others = [r for r in summ if r["method"] != method]
    checks = []
    if me:
        n = max(1, me["datasets"])
        exact, near = me["exact"] >= 0.7 * n, me["near"] >= 0.85 * n
        checks = [(f"- exact k on {100 * me['exact'] / n:.0f} % of the sets "
                   f"({'met' if exact else 'NOT met'}, target 70 %); within ±1 "
                   f"on {100 * me['near'] / n:.0f} % ({'met' if near else 'NOT met'}"
                   ", target 85 %)")]
        if others:
            ari = {(r["method"], r["dataset"]): r["ari"] if r["status"] == "ok" else None
                   for r in mine + peers if r["dataset"] in sets}
            checks.append(_gain_check(paired_gains(
                {d: a for (m, d), a in ari.items() if m == method},
                {o["method"]: {d: a for (m, d), a in ari.items() if m == o["method"]}
                 for o in others}), margin))
    return "\n".join([
        (f"Without k on the {len(sets)} data sets of `{method}` (ok/records/sets; a failed cell "
        "counts as a miss and ARI 0):"), "",
        _table(["method", "ok/records/sets", "exact k", "within ±1", "mean ARI (fail = 0)"], body),
        "", "k found / ARI per data set:", "", _table(["data set", "true k", *names], cells),
        "", *checks])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks compare", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", nargs="+", default=[], help="folders/files: the method's records")
    ap.add_argument("--base", nargs="+", default=[], help="the baseline's records")
    ap.add_argument("--peers", nargs="+", default=[], help="the peers' records (default: --new)")
    ap.add_argument("--nok-new", nargs="+", default=[], help="nok-results.json of the method")
    ap.add_argument("--nok-peers", nargs="+", default=[], help="nok-results.json of the peers")
    ap.add_argument("--method", default="auto")
    ap.add_argument("--tol", type=float, default=0.02)
    ap.add_argument("--margin", type=float, default=0.05)
    ap.add_argument("--write", help="also write the markdown here")
    args = ap.parse_args(argv)
    parts = []
    if args.new:
        new = load_records(args.new)
        parts += ["### With k", "", with_k_markdown(
            load_records(args.base) if args.base else [], new,
            load_records(args.peers) if args.peers else new, args.method, args.tol,
            args.margin), ""]
    if args.nok_new:
        new_nok = load_nok(args.nok_new)
        parts += ["### Without k", "", nok_markdown(
            new_nok, load_nok(args.nok_peers) if args.nok_peers else new_nok, args.method,
            args.margin), ""]
    if not parts:
        ap.error("nothing to compare: give --new and/or --nok-new")
    text = "\n".join(parts)
    print(text)
    if args.write:
        Path(args.write).write_text(text + "\n")
    return 0
