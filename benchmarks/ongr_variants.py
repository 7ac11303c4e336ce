"""ONGR reproduction-gap diagnostics: initialisation, positive part and rounding variants.

Runs the ONGR alternation (Eq. 9 / Eq. 11) on one anchor graph per (data set, seed) with
several variants that the paper's text leaves open, and scores each with ACC/NMI:

* ``init``: ``svd`` = the k leading left singular vectors of Ẑ (incl. the trivial,
  constant one; Algorithm 1, the default); ``svd-drop`` = k + 1 leading, the trivial one
  dropped; ``random`` = random orthonormal F (Section 3.2 "Initialization" allows it);
  ``svd-rot`` = the k leading vectors times a random k × k rotation.
* ``sign``: rule fixing the signs of the initial singular vectors: ``posnorm`` (‖f₊‖ ≥ ‖f₋‖,
  the default), ``mass`` (column sum ≥ 0), ``none`` (as the eigensolver returns them).
* ``pp``: ``max`` (minimiser of Eq. 8, default) or ``abs`` (the text under Eq. 9);
  ``max@300`` = no label-change stop, exactly 300 iterations.
  ``lsc`` = start from the LSC labels below (G₀ = their normalised indicators,
  F₀ = polar(W G₀ + λ G₀)) and ``truth`` = the same from the true labels — diagnostics,
  not the paper's method: they show which local minima of Eq. 7 exist near good
  clusterings and what objective they have (column "Eq. 7", mean over seeds).
* rounding of the final solution: argmax of G (the paper), argmax of F, k-means on the
  rows of G, k-means on the rows of F.
* baselines on the same graph: ``lsc`` (k-means, 10 restarts, on the row-normalised
  non-trivial leading eigenvectors U[1:k]), k-means on U[0:k] (the k vectors ONGR starts
  from) with raw rows, and on U[1:k+1] (k non-trivial vectors, as the common bundle's
  ``anchor-spectral`` does) with raw and normalised rows; and the argmax of G after the
  first G-step only (iteration 0).

Also reports the number of empty clusters of argmax G and the number of zero rows.

Usage::

    python -m benchmarks.ongr_variants --data-dir ../shared/data --datasets usps pendigits \
        --seeds 0 1 2 [--m 1000 --s 5 --lam 1] [--preset ongr-k]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks.ongr_paper import _ensure_anchor_selectors, load, scores


def _graph(X, preset, m, s, seed, bandwidth=None, kernel="ongr"):
    """Anchors as the preset draws them (uncapped m), then the anchor graph Z:
    ``kernel="ongr"`` = ``ongr-anchor`` (Eq. 12, σ = mean s-th anchor distance, exp(-d²/σ²));
    ``"uniform"`` = equal weights 1/s on the s nearest anchors (the limit σ → ∞, which
    LSC's bandwidth, the mean of all squared distances inside exp(-d²/(2σ²)), is close to);
    ``"lsc"`` = the common bundle's ``gaussian-anchor`` (LSC's kernel)."""
    import graphclust
    from graphclust_plugins.ongr.anchor_graph import OngrAnchorGraph

    _ensure_anchor_selectors()
    reg = graphclust.get_registry()
    base = "kmeans" if preset == "ongr-k" else "random"
    ctx = graphclust.Context(seed=seed)
    m = min(m, X.shape[0])
    anchors = reg.anchors.get(base)(n_anchors=m).select(X, ctx)
    if kernel == "lsc":
        return reg.graphs.get("gaussian-anchor")(n_neighbors=s).build(X, anchors, ctx)
    if kernel == "uniform":
        bandwidth = 1e12
    return OngrAnchorGraph(n_neighbors=s, bandwidth=bandwidth).build(X, anchors, ctx)


def _leading(graph, k, seed):
    """The k leading eigenvectors of W (left singular vectors of Ẑ) and eigenvalues."""
    import scipy.linalg

    from graphclust_plugins.ongr.solver import OngrOperator

    op = OngrOperator(graph)
    m = op.gram.shape[0]
    vals, vecs = scipy.linalg.eigh(op.gram, subset_by_index=[m - k, m - 1])
    vals, vecs = vals[::-1], vecs[:, ::-1]
    U = np.asarray(graph.B() @ vecs) / np.sqrt(np.maximum(vals, 1e-300))[None, :]
    return op, U, vals


def _signs(F, rule):
    from graphclust_plugins.ongr.solver import _flip_signs

    F = F.copy()
    if rule == "posnorm":
        return _flip_signs(F)
    if rule == "mass":
        F[:, F.sum(0) < 0] *= -1
        return F
    return F


def alternate(op, F, lam, pp, max_iter=100, tol=1e-3):
    """Algorithm 1 from a given F; returns (F, G, M, n_iter, labels0)."""
    from graphclust_plugins.ongr.solver import _polar

    pos = (lambda A: np.maximum(A, 0.0)) if pp == "max" else np.abs
    labels = labels0 = None
    G = M = None
    it = 0
    for it in range(1, max_iter + 1):
        M = (op.matvec(F) + lam * F) / (1 + lam)
        G = pos(M)
        new = (M if pp == "max" else np.abs(M)).argmax(1)
        if labels0 is None:
            labels0 = new
        F = _polar(op.matvec(G) + lam * G)
        if labels is not None and tol >= 0 and np.mean(new != labels) < tol:
            labels = new
            break
        labels = new
    return F, G, M, it, labels0, labels


def _kmeans(Y, k, seed, normalize=False):
    from sklearn.cluster import KMeans

    if normalize:
        Y = Y / np.maximum(np.linalg.norm(Y, axis=1, keepdims=True), 1e-12)
    return KMeans(n_clusters=k, n_init=10, random_state=seed).fit(Y).labels_


def run_variants(X, y, preset="ongr-k", m=1000, s=5, lam=1.0, seeds=(0,), k=10,
                 variants=None, roundings=True, log=None, kernel="ongr"):
    """One row per (seed, variant): acc/nmi per rounding, empty clusters, iterations."""
    from threadpoolctl import threadpool_limits

    variants = variants or [
        ("svd", "posnorm", "max"), ("svd", "posnorm", "abs"),
        ("svd", "mass", "max"), ("svd", "none", "max"),
        ("svd-drop", "posnorm", "max"), ("svd-drop", "posnorm", "abs"),
        ("svd-rot", "posnorm", "max"), ("random", "none", "max"), ("random", "none", "abs"),
    ]
    rows = []
    say = log or (lambda *a: None)
    for seed in seeds:
        t = time.perf_counter()
        graph = _graph(X, preset, m, s, seed, kernel=kernel)
        with threadpool_limits(limits=1, user_api="blas"):
            op, U, vals = _leading(graph, k + 1, seed)
            lsc = _kmeans(U[:, 1:k], k, seed, normalize=True)
            rows.append({"seed": seed, "variant": "lsc (kmeans on U[1:k], row-normalised)",
                         "argmaxG": scores(y, lsc)})
            for a, b, nrm in ((0, k, False), (1, k + 1, False), (1, k + 1, True)):
                rows.append({"seed": seed, "variant": f"kmeans on U[{a}:k{'+1' if b > k else ''}]"
                             + (", row-normalised" if nrm else ", raw rows"),
                             "argmaxG": scores(y, _kmeans(U[:, a:b], k, seed, nrm))})
            rng = np.random.default_rng(seed)
            for init, sign, pp in variants:
                kind = init.split("#")[0]  # "random#2": another draw of the same variant
                if kind == "svd":
                    F0 = _signs(U[:, :k], sign)
                elif kind == "svd-drop":
                    F0 = _signs(U[:, 1:k + 1], sign)
                elif kind == "svd-rot":
                    R = np.linalg.qr(rng.standard_normal((k, k)))[0]
                    F0 = _signs(U[:, :k] @ R, sign)
                elif kind in ("lsc", "truth"):
                    # NOT the paper: G0 = normalised indicators of the LSC labels,
                    # F0 = polar(W G0 + λ G0) (Eq. 11), then Algorithm 1 as usual.
                    from graphclust_plugins.ongr.solver import _polar

                    H = np.zeros((X.shape[0], k))
                    start = lsc if kind == "lsc" else np.unique(y, return_inverse=True)[1]
                    H[np.arange(X.shape[0]), start] = 1.0
                    H /= np.sqrt(np.maximum(H.sum(0), 1.0))[None, :]
                    F0 = _polar(op.matvec(H) + lam * H)
                else:
                    F0 = np.linalg.qr(rng.standard_normal((X.shape[0], k)))[0]
                # "max@300": no label-change stop, exactly 300 iterations
                pp_, _, fixed = pp.partition("@")
                if fixed:
                    F, G, M, n_iter, lab0, lab = alternate(op, F0, lam, pp_, int(fixed), tol=-1)
                else:
                    F, G, M, n_iter, lab0, lab = alternate(op, F0, lam, pp_)
                from graphclust_plugins.ongr.solver import ongr_objective

                row = {"seed": seed, "variant": f"{init}/{sign}/{pp}", "n_iter": n_iter,
                       "objective": ongr_objective(op.norm2, F, G, WF=op.matvec(F), lam=lam),
                       "iter0": scores(y, lab0), "argmaxG": scores(y, lab),
                       "empty": int(k - len(np.unique(lab))),
                       "zero_rows": int((~(G > 0).any(1)).sum())}
                if roundings:
                    row["argmaxF"] = scores(y, F.argmax(1))
                    row["kmeansG"] = scores(y, _kmeans(G, k, seed))
                    row["kmeansF"] = scores(y, _kmeans(F, k, seed))
                rows.append(row)
                say(f"seed {seed} {row['variant']:24s} it {n_iter:3d} "
                    f"empty {row['empty']} G {100 * row['argmaxG']['acc']:.1f}/"
                    f"{100 * row['argmaxG']['nmi']:.1f}")
        say(f"seed {seed}: {time.perf_counter() - t:.0f}s")
    return rows


def table(rows):
    """Markdown: mean over seeds per variant and rounding (ACC/NMI in %)."""
    keys = ["iter0", "argmaxG", "argmaxF", "kmeansG", "kmeansF"]
    out = ["| variant | " + " | ".join(keys) + " | empty | zero rows | iters | Eq. 7 |",
           "|---|" + "---|" * (len(keys) + 4)]
    for v in dict.fromkeys(r["variant"] for r in rows):
        rs = [r for r in rows if r["variant"] == v]
        cells = []
        for key in keys:
            if key not in rs[0]:
                cells.append("")
                continue
            a = np.mean([r[key]["acc"] for r in rs]) * 100
            sd = np.std([r[key]["acc"] for r in rs]) * 100
            nmi = np.mean([r[key]["nmi"] for r in rs]) * 100
            cells.append(f"{a:.1f}±{sd:.1f} / {nmi:.1f}")
        emp = np.mean([r.get("empty", 0) for r in rs])
        its = np.mean([r.get("n_iter", 0) for r in rs])
        zr = np.mean([r.get("zero_rows", 0) for r in rs])
        obj = np.mean([r["objective"] for r in rs]) if "objective" in rs[0] else np.nan
        out.append(f"| {v} | " + " | ".join(cells)
                   + f" | {emp:.1f} | {zr:.0f} | {its:.0f} | {obj:.3f} |")
    return "\n".join(out)


def main(argv=None):
    import sys

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--datasets", nargs="+", default=["usps", "pendigits"])
    ap.add_argument("--preset", default="ongr-k", choices=["ongr-k", "ongr-r"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--lam", type=float, default=1.0)
    ap.add_argument("--variants", nargs="+", default=None,
                    help="init/sign/pp triples, e.g. svd/posnorm/max random/none/abs")
    ap.add_argument("--no-cap", dest="cap", action="store_false",
                    help="m as given (default: the presets' cap m <= n/10)")
    ap.add_argument("--kernel", default="ongr", choices=["ongr", "uniform", "lsc"])
    ap.add_argument("--raw", action="store_true", help="no Section 4.1 preprocessing")
    ap.add_argument("--minmax", action="store_true",
                    help="PenDigits: MinMaxScaler first (Section 4.1 does not say so)")
    args = ap.parse_args(argv)
    for ds in args.datasets:
        if args.raw:
            from graphclust.data import load_dataset

            X, y = load_dataset(ds, args.data_dir)
            X = np.asarray(X, dtype=np.float64)
        else:
            X, y, _ = load(ds, args.data_dir)
        if args.minmax and ds == "pendigits":
            from sklearn.preprocessing import MinMaxScaler

            X = MinMaxScaler().fit_transform(X)
        m = min(args.m, X.shape[0] // 10) if args.cap else min(args.m, X.shape[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            variants = [tuple(v.split("/")) for v in args.variants] if args.variants else None
            rows = run_variants(X, y, args.preset, m, args.s, args.lam, tuple(args.seeds),
                                k=len(np.unique(y)),
                                variants=variants, kernel=args.kernel,
                                log=lambda *a: print(*a, file=sys.stderr, flush=True))
        print(f"\n### {ds} {args.preset} m={m} s={args.s} λ={args.lam:g} "
              f"seeds={args.seeds} kernel={args.kernel}{' raw' if args.raw else ''}"
              f"{' minmax' if args.minmax else ''}\n")
        print(table(rows), flush=True)


if __name__ == "__main__":
    main()
