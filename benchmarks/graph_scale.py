"""A planted partition of a million nodes: graph ``auto`` against leidenalg (issue 47's target).

The target: on a planted-partition graph of ``n = 1 000 000`` nodes, about ``10 000 000``
edges and 100 blocks, ``GraphClustering(graph="precomputed").fit(A)`` (graph ``auto``, no
``k``) reaches NMI ≥ .95 in no more time than Leiden in the same run, with a peak memory
above the loaded graph of at most twice the graph's CSR size.

The graph (:func:`planted_partition`): ``n`` nodes in ``blocks`` blocks of equal size (the
block of each node drawn as a random permutation of ``arange(n) % blocks``), and ``edges``
undirected edges, a share ``mixing`` of them between blocks: ``(1 - mixing) · edges``
node pairs drawn uniformly inside the blocks (the block with probability proportional to
its pairs), ``mixing · edges`` uniformly among pairs in different blocks; self-pairs and
repeats dropped. That is a stochastic block model conditioned on its edge counts, with
``p_in = (1 - mixing) · edges / Σ_b C(s_b, 2)`` and ``p_out = mixing · edges / (C(n, 2)
- Σ_b C(s_b, 2))`` (printed with every run). It is built from the edge list, in
``O(edges)`` memory (never ``n²``), as a binary symmetric CSR matrix.

Each method runs in its own subprocess, which imports graphclust (its plugins
registered), igraph and leidenalg, loads the saved graph, then measures from the loaded
CSR to the labels: wall time, CPU time (user + system: the machine may be shared, and
every method here runs on one thread), and the peak resident memory above the resident
memory once the graph is loaded (the kernel's high-water mark, ``VmHWM``, reset after
loading through ``/proc/self/clear_refs``; a 10 ms sampling thread where that cannot be
written). Imports come first because their memory is the libraries', not the graph's.
The methods run in turn, a different one first each repeat. The methods:

* ``auto``: ``GraphClustering(graph="precomputed", random_state=seed).fit(A)``, nothing
  else given;
* ``leiden-mod``: what a Leiden user writes: the igraph graph of the upper triangle's
  edges (``igraph.Graph(n, edges)``), then ``leidenalg.find_partition(g,
  ModularityVertexPartition, seed=seed)``, leidenalg's defaults otherwise;
* ``leiden-rb``: the same with ``RBConfigurationVertexPartition`` (resolution 1).

Leiden's time is reported both end to end (igraph graph + partition: what it costs to go
from the CSR the user holds to labels, as for ``auto``) and for ``find_partition`` alone.
Usage::

    python -m benchmarks graph_scale [--n 1000000] [--edges 10000000] [--blocks 100]
                                     [--mixing 0.2] [--repeats 3] [--write FILE]
                                     [--iterations 2,4,-1] [--resolution 4]

``--n`` alone scales the edges (ten per node) for a quick run, e.g. ``--n 100000``.
``--iterations`` runs every method once per Leiden ``n_iterations`` listed (``auto``
through ``solver={"n_iterations": it}``, the others through ``find_partition``), each a
row of its own (``auto it=4``); without it each method runs with its default (``auto``
what its rule chose, leidenalg its default 2). ``--resolution G`` runs ``auto`` with
``solver={"resolution": G}`` and ``leiden-rb`` with ``resolution_parameter=G`` (rows
``auto res=G``; ``leiden-mod`` has no resolution and is refused with it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["METHODS", "csr_bytes", "main", "planted_partition", "run", "table"]

METHODS = ("auto", "leiden-mod", "leiden-rb")
#: Targets of issue 47 at this scale.
NMI_TARGET = 0.95
MEMORY_TARGET = 2.0


def planted_partition(n: int, blocks: int, edges: int, mixing: float, seed: int
                      ) -> tuple[sp.csr_array, np.ndarray, dict]:
    """``(A, y, info)``: the planted-partition graph described in the module docstring.

    ``A`` is binary, symmetric, without loops (int32 indices where they fit); ``y`` the
    block of each node; ``info`` holds ``p_in``, ``p_out``, the edges kept and the share
    of them between blocks.
    """
    if not 0.0 <= mixing < 1.0:
        raise ValueError(f"mixing must be in [0, 1), got {mixing}")
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % blocks)
    members = np.argsort(y, kind="stable")
    sizes = np.bincount(y, minlength=blocks)
    start = np.concatenate([[0], np.cumsum(sizes)])
    pairs_in = sizes.astype(np.float64) * (sizes - 1) / 2
    m_in = round((1.0 - mixing) * edges)
    m_out = edges - m_in
    # inside: the block by its number of pairs, then two members of it
    b = rng.choice(blocks, size=m_in, p=pairs_in / pairs_in.sum())
    u_in = members[start[b] + (rng.random(m_in) * sizes[b]).astype(np.int64)]
    v_in = members[start[b] + (rng.random(m_in) * sizes[b]).astype(np.int64)]
    del b
    # between: uniform pairs, redrawn until their blocks differ
    u_out = rng.integers(0, n, m_out)
    v_out = rng.integers(0, n, m_out)
    same = y[u_out] == y[v_out]
    while same.any():
        v_out[same] = rng.integers(0, n, int(same.sum()))
        same = y[u_out] == y[v_out]
    u = np.concatenate([u_in, u_out])
    v = np.concatenate([v_in, v_out])
    del u_in, v_in, u_out, v_out
    keep = u != v
    u, v = u[keep], v[keep]
    idx = np.int32 if n < 2**31 - 1 else np.int64
    rows = np.concatenate([u, v]).astype(idx)
    cols = np.concatenate([v, u]).astype(idx)
    del u, v, keep
    A = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
    del rows, cols
    A.sum_duplicates()
    A.data[:] = 1.0
    between = float(np.sum(y[np.repeat(np.arange(n), np.diff(A.indptr))] != y[A.indices]))
    total_pairs = n * (n - 1) / 2
    info = {"n": n, "blocks": blocks, "edges": int(A.nnz // 2), "mixing": mixing,
            "between_share": between / max(A.nnz, 1),
            "p_in": m_in / pairs_in.sum(), "p_out": m_out / (total_pairs - pairs_in.sum()),
            "mean_degree": A.nnz / n, "csr_bytes": csr_bytes(A)}
    return A, y, info


def csr_bytes(A) -> int:
    """Bytes of a CSR matrix's three arrays (data, indices, indptr)."""
    return int(A.data.nbytes + A.indices.nbytes + A.indptr.nbytes)


# -- one method in its own process --------------------------------------------------------
def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _hwm() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


class PeakMemory:
    """Peak resident memory of this process during a ``with`` block, above its start."""

    def __enter__(self):
        self.reset = False
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
                fh.write("5")  # reset VmHWM to the current RSS
            self.reset = True
        except OSError:
            pass
        self.base = _rss()
        self.peak = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())
        hwm = _hwm() if self.reset else None
        if hwm is not None:
            self.peak = max(self.peak, hwm)
        self.above = self.peak - self.base
        return False


def _igraph_edges(A):
    upper = sp.triu(A, k=1).tocoo()
    return np.column_stack([upper.row, upper.col]).tolist()


def _cpu() -> float:
    import resource

    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _worker(method: str, graph_path: str, seed: int, iterations: int | None = None,
            resolution: float | None = None) -> dict:
    import gc
    import warnings

    import graphclust

    # the libraries are imported (and graphclust's plugins registered) before the graph
    # is loaded: their code and import-time state are a fixed cost, not the graph's
    import igraph
    import leidenalg

    graphclust.get_registry()
    A = sp.csr_array(sp.load_npz(graph_path))
    gc.collect()
    out: dict = {"method": _label(method, iterations, resolution)}
    given = {} if iterations is None else {"n_iterations": int(iterations)}
    solver = dict(given, **({} if resolution is None else {"resolution": float(resolution)}))
    with PeakMemory() as mem:
        t0, c0 = time.perf_counter(), _cpu()
        if method == "auto":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = graphclust.GraphClustering(graph="precomputed", random_state=seed,
                                                   solver=solver or None).fit(A)
            labels = model.labels_
            out["resolved"] = str(model.resolved_spec_.get("summary", ""))
        else:
            g = igraph.Graph(n=A.shape[0], edges=_igraph_edges(A))
            t1 = time.perf_counter()
            quality = (leidenalg.ModularityVertexPartition if method == "leiden-mod"
                       else leidenalg.RBConfigurationVertexPartition)
            if resolution is not None:
                given["resolution_parameter"] = float(resolution)
            part = leidenalg.find_partition(g, quality, seed=int(seed), **given)
            labels = np.asarray(part.membership)
            out["partition_seconds"] = time.perf_counter() - t1
        out["seconds"] = time.perf_counter() - t0
        out["cpu_seconds"] = _cpu() - c0
    out["peak_above_bytes"] = int(mem.above)
    out["hwm_reset"] = bool(mem.reset)
    out["labels_path"] = graph_path + f".{method}.{iterations}.{resolution}.{seed}.npy"
    np.save(out["labels_path"], np.asarray(labels, dtype=np.int64))
    return out


def _label(method: str, iterations: int | None, resolution: float | None = None) -> str:
    """The row name of a method run with ``iterations`` and ``resolution`` (``None``: its
    default)."""
    label = method if iterations is None else f"{method} it={iterations}"
    return label if resolution is None else f"{label} res={resolution:g}"


def _run_worker(method: str, graph_path: str, seed: int, iterations: int | None = None,
                resolution: float | None = None) -> dict:
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "benchmarks.graph_scale", "--worker", method,
           "--graph-file", graph_path, "--seed", str(seed)]
    if iterations is not None:
        cmd += ["--worker-iterations", str(iterations)]
    if resolution is not None:
        cmd += ["--worker-resolution", str(resolution)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False,
                          cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        raise RuntimeError(f"{method} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(n: int, edges: int, blocks: int, mixing: float, repeats: int, methods=METHODS,
        progress=sys.stderr, iterations=(None,), resolution=None) -> tuple[dict, list[dict]]:
    """The graph's ``info`` and one record per (repeat, method): seconds, peak memory
    above the loaded graph, NMI and clusters found."""
    from sklearn.metrics import normalized_mutual_info_score

    t0 = time.perf_counter()
    A, y, info = planted_partition(n, blocks, edges, mixing, seed=0)
    info["generate_seconds"] = time.perf_counter() - t0
    records = []
    with tempfile.TemporaryDirectory(prefix="graph_scale_") as tmp:
        path = str(Path(tmp) / "graph.npz")
        sp.save_npz(path, A, compressed=False)
        del A
        if progress is not None:
            print(_describe(info), file=progress, flush=True)
        runs = [(m, it) for it in iterations for m in methods]
        for r in range(repeats):
            turn = r % len(runs)  # each method runs first in turn (load drifts)
            for method, it in runs[turn:] + runs[:turn]:
                rec = _run_worker(method, path, seed=r, iterations=it, resolution=resolution)
                labels = np.load(rec.pop("labels_path"))
                rec.update(repeat=r, nmi=float(normalized_mutual_info_score(y, labels)),
                           clusters=int(np.unique(labels).size),
                           memory_ratio=rec["peak_above_bytes"] / info["csr_bytes"])
                records.append(rec)
                if progress is not None:
                    print(f"repeat {r} {rec['method']}: {rec['seconds']:.1f} s, "
                          f"CPU {rec['cpu_seconds']:.1f} s, NMI "
                          f"{rec['nmi']:.4f}, {rec['clusters']} clusters, peak "
                          f"{rec['peak_above_bytes'] / 2**20:.0f} MiB above the graph "
                          f"({rec['memory_ratio']:.2f} x CSR)", file=progress, flush=True)
    return info, records


def _describe(info: dict) -> str:
    return (f"planted partition: n = {info['n']:,}, {info['blocks']} blocks, "
            f"{info['edges']:,} edges (mean degree {info['mean_degree']:.1f}), "
            f"{info['between_share']:.3f} of edge ends between blocks; p_in = "
            f"{info['p_in']:.3g}, p_out = {info['p_out']:.3g}; CSR "
            f"{info['csr_bytes'] / 2**20:.0f} MiB")


def table(info: dict, records: list[dict]) -> tuple[str, bool]:
    """The markdown table of medians per method, the ratios to Leiden and whether the
    targets were met."""
    methods = list(dict.fromkeys(r["method"] for r in records))  # labels, in run order

    def med(m, key):
        vals = [r[key] for r in records if r["method"] == m and key in r]
        return float(np.median(vals)) if vals else float("nan")

    lines = [_describe(info), "",
             ("| method | seconds (median) | CPU seconds | find_partition s | peak MiB above "
              "graph | x CSR | NMI (median) | clusters |"), "|---|---|---|---|---|---|---|---|"]
    for m in methods:
        lines.append(f"| {m} | {med(m, 'seconds'):.1f} | {med(m, 'cpu_seconds'):.1f} | "
                     f"{med(m, 'partition_seconds'):.1f} | "
                     f"{med(m, 'peak_above_bytes') / 2**20:.0f} | {med(m, 'memory_ratio'):.2f} "
                     f"| {med(m, 'nmi'):.4f} | {med(m, 'clusters'):.0f} |")
    ok = True
    autos = [m for m in methods if m.split(" ")[0] == "auto"]
    if autos:
        lines.append("")
    for a in autos:  # each auto row against the Leiden rows of the same iterations
        suffix = a[len("auto"):]
        ok &= med(a, "nmi") >= NMI_TARGET and med(a, "memory_ratio") <= MEMORY_TARGET
        for m in (m for m in methods if m not in autos and m.endswith(suffix)
                  and m.split(" ")[0] + suffix == m):
            ratio = med(a, "seconds") / med(m, "seconds")
            ok &= ratio <= 1.0
            lines.append(f"{a} / {m} time: {ratio:.2f} (end to end), "
                         f"{med(a, 'seconds') / med(m, 'partition_seconds'):.2f} "
                         "(against find_partition alone), CPU "
                         f"{med(a, 'cpu_seconds') / med(m, 'cpu_seconds'):.2f}; memory "
                         f"{med(a, 'peak_above_bytes') / med(m, 'peak_above_bytes'):.2f}")
    return "\n".join(lines), bool(ok)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks graph_scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000, help="nodes")
    ap.add_argument("--edges", type=int, default=None,
                    help="undirected edges (default 10 per node)")
    ap.add_argument("--blocks", type=int, default=100)
    ap.add_argument("--mixing", type=float, default=0.2,
                    help="share of the edges drawn between blocks")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each method (seeds 0..)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--write", default=None, help="also write the table to this file")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--graph-file", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--worker-iterations", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--worker-resolution", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--resolution", type=float, default=None,
                    help="the modularity resolution of auto's Leiden and of leiden-rb "
                         "(default: 1)")
    ap.add_argument("--iterations", default=None,
                    help="Leiden n_iterations to run every method with, comma-separated "
                         "(e.g. 2,4,-1; -1 = until stable); default: each method's own")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(args.worker, args.graph_file, args.seed,
                                 args.worker_iterations, args.worker_resolution)))
        return 0
    iterations: tuple = (None,)
    if args.iterations:
        try:
            iterations = tuple(int(v) for v in args.iterations.split(",") if v)
        except ValueError:
            ap.error(f"--iterations: integers separated by commas, got {args.iterations!r}")
        if any(it == 0 or it < -1 for it in iterations):
            ap.error("--iterations: each a positive count or -1 (until stable)")
    methods = [m for m in args.methods.split(",") if m]
    unknown = set(methods) - set(METHODS)
    if unknown:
        ap.error(f"unknown methods {sorted(unknown)}; known: {', '.join(METHODS)}")
    edges = args.edges if args.edges is not None else 10 * args.n
    t0 = time.perf_counter()
    if args.resolution is not None and ("leiden-mod" in methods or args.resolution <= 0):
        ap.error("--resolution: a positive number, for auto and leiden-rb (leiden-mod's "
                 "modularity has no resolution)")
    info, records = run(args.n, edges, args.blocks, args.mixing, args.repeats, methods,
                        iterations=iterations, resolution=args.resolution)
    text, ok = table(info, records)
    text += (f"\n\nTargets (auto NMI >= {NMI_TARGET}, time <= every Leiden's end to end, peak "
             f"memory above the graph <= {MEMORY_TARGET} x CSR): {'met' if ok else 'MISSED'}. "
             f"{time.perf_counter() - t0:.0f} s in all.")
    print(text)
    if args.write:
        with open(args.write, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
