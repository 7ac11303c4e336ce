"""NCER on USPS: why does ``ncer`` give 0.658/0.774 where Mizutani's Tables 3–4 report
0.802/0.834, when MNIST (Tables 2–5) and COIL20 match to the third decimal?

Each study is a function returning rows (dicts) and printing one line per row; all run
on at most 10 000 points. ``ncer`` = unit-length points, each point's 5 largest inner
products (others, no self-loop), kernel weights, "or" symmetrisation, normalized-
Laplacian embedding with v_1 = τD^{1/2}e, ellipsoid rounding (MVEE, SPA, NNLS).

Studies (``--study``, comma separated, or ``all``):

``components``
    Connected components of the p = 5 graph and the multiplicity of the Laplacian's
    eigenvalue 0 (USPS, MNIST test, COIL20). A degenerate zero eigenspace would make
    NCER depend on the eigensolver's basis (Proposition 1 / Remark 2 fix only v_1).
``eigen``
    The same USPS graph through other eigensolvers: ARPACK on the whole normalized
    adjacency (largest algebraic, what MATLAB ``eigs(.., 'la')`` does), shift-invert
    on the normalized Laplacian near 0 (``eigs(.., 'sm')``), dense LAPACK (``eigh``),
    and with 16 eigenpairs the alternative 10th vectors (eigengap check).
``precision``
    float32 vs float64 inner products: edges that differ, near-ties at the p-th
    similarity, exact duplicate images.
``order``
    NCER on row-permuted USPS (5 seeds; the paper's GPML file has another row order).
``rounding``
    MVEE active set (count, ω gap, FW vs cvxpy), and the best AC/NMI over *every*
    choice of r representatives among the active points (an upper bound for any SPA
    variant or tie rule).
``fingerprint``
    NC as the paper ran it (k-means with 100 random starts, ``start='sample'``,
    100 iterations) on the ``ncer`` embedding: average/min/max AC and NMI. The paper's
    Table 3–4 NC columns were computed on the same graph, so they fingerprint the
    embedding independently of the ellipsoid rounding.
``smoothing``
    Our USPS images smoothed by a Gaussian of σ pixels (``ncer_paper.smooth_usps``)
    before the ``ncer`` preset: NCER and the NC fingerprint against σ. The hypothesis it
    tests: the paper's GPML file holds smoother images than our Hull/ESL copy.
``coil20``
    The NC fingerprint on COIL20 (8 components) for the per-component eigensolve and for
    ARPACK on the whole matrix (which returns only part of the zero eigenspace).
``variants``
    The fingerprint and NCER for other USPS graphs/preprocessings (Euclidean
    neighbours with constructW-style cosine/heat/binary weights, unit length of the
    [−1, 1] data, centring, ...), and for p = 3, 10, 20, 40.

Usage::

    python -m benchmarks.ncer_usps_study --data-dir ../shared/data --study all
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import eigsh
from sklearn.cluster import KMeans
from sklearn.metrics import normalized_mutual_info_score

import graphclust
from graphclust.neighbors import knn
from graphclust_plugins.ncer import NcerEmbedding, PolyKnnGraph
from graphclust_plugins.ncer.ellipsoid import assign_by_nnls, ellipsoid_round
from graphclust_plugins.ncer.embedding import first_vector_basis

from benchmarks.ncer_paper import PAPER, PAPER_NC, _load, acc, smooth_usps

#: Tables 3–4, NC columns: (AC ave, min, max), (NMI ave, min, max).
PAPER_NC_FULL = {
    "usps": ((0.710, 0.395, 0.937), (0.800, 0.622, 0.877)),
    "mnist_test": ((0.664, 0.500, 0.810), (0.735, 0.642, 0.779)),
    "coil20": ((0.585, 0.386, 0.753), (0.813, 0.695, 0.887)),
}


def _nmi(y, lab):
    return float(normalized_mutual_info_score(y, lab))


def _unit(X):
    X = np.asarray(X, dtype=np.float64)
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)


def ncer_graph(X, p=5, dtype=np.float64):
    """The ``ncer`` preset's graph (poly-knn, unit length, p most similar others)."""
    return PolyKnnGraph(n_neighbors=p, normalize=True).build(
        np.asarray(X, dtype=dtype), None, graphclust.Context(seed=0))


def embed(graph, k):
    return NcerEmbedding().solve(graph, None, k, graphclust.Context(seed=0)).embedding


def ncer_labels(P, k, **kw):
    return ellipsoid_round(P, k, **kw)


def embedding_from_vectors(V, d):
    """Rows of D^{-1/2} V after forcing v_1 = τ D^{1/2} e (Remark 2)."""
    sqrt_d = np.sqrt(d)
    V, _, _ = first_vector_basis(V, sqrt_d / np.linalg.norm(sqrt_d))
    return V / sqrt_d[:, None]


def nc_fingerprint(P, y, k, starts=100, seed=0):
    """k-means as MATLAB's default ``kmeans`` (random data points as the start, one
    replicate, at most 100 iterations), ``starts`` times on the embedding ``P``."""
    rng = np.random.default_rng(seed)
    A, N = [], []
    for _ in range(starts):
        init = P[rng.choice(P.shape[0], k, replace=False)]
        lab = KMeans(k, init=init, n_init=1, max_iter=100).fit_predict(P)
        A.append(acc(y, lab))
        N.append(_nmi(y, lab))
    A, N = np.array(A), np.array(N)
    return {"nc_acc": (float(A.mean()), float(A.min()), float(A.max())),
            "nc_nmi": (float(N.mean()), float(N.min()), float(N.max()))}


def _fmt3(t):
    return "/".join(f"{v:.3f}" for v in t)


def _show(row):
    parts = [f"{k}={_fmt3(v) if isinstance(v, tuple) else (f'{v:.4f}' if isinstance(v, float) else v)}"
             for k, v in row.items()]
    print("  " + " | ".join(parts), flush=True)


# --------------------------------------------------------------------------- studies
def study_components(data_dir):
    rows = []
    for name in ("usps", "mnist_test", "coil20"):
        X, y = _load(name, data_dir)
        k = int(np.unique(y).size)
        g = ncer_graph(X)
        nc, comp = connected_components(g.adjacency, directed=False)
        sol = NcerEmbedding().solve(g, X, k, graphclust.Context(seed=0))
        sizes = np.sort(np.bincount(comp))[::-1]
        row = {"study": "components", "dataset": name, "n": int(X.shape[0]),
               "components": int(nc), "largest": int(sizes[0]),
               "zero_eig_dim": sol.info["zero_eigenspace_dim"],
               "lap_eig_r": float(sol.info["laplacian_eigenvalues"][-1])}
        rows.append(row)
        _show(row)
    return rows


def study_eigen(data_dir, extra=16):
    X, y = _load("usps", data_dir)
    k = 10
    g = ncer_graph(X)
    d = g.degrees
    N = sp.csr_array(g.normalized_adjacency())
    n = N.shape[0]
    rows = []

    def record(label, P, seconds, **more):
        out = ncer_labels(P, k)
        row = {"study": "eigen", "solver": label, "acc": acc(y, out["labels"]),
               "nmi": _nmi(y, out["labels"]), "active": int(out["active"].size),
               "seconds": seconds, **more}
        rows.append(row)
        _show(row)
        return out

    t = time.perf_counter()
    P0 = embed(g, k)
    record("ncer-embedding (per component; USPS is connected)", P0, time.perf_counter() - t)

    t = time.perf_counter()
    vals, V = eigsh(N, k=k, which="LA", v0=np.ones(n), tol=0.0)
    o = np.argsort(-vals)
    P = embedding_from_vectors(V[:, o], d)
    record("eigsh(D^-1/2 K D^-1/2, 'LA') whole matrix", P, time.perf_counter() - t,
           max_abs_diff=float(np.abs(np.abs(P) - np.abs(P0)).max()))

    t = time.perf_counter()
    Lap = sp.csr_array(sp.identity(n) - N)
    vals, V = eigsh(Lap, k=k, sigma=-1e-3, which="LM", v0=np.ones(n))
    o = np.argsort(vals)
    P = embedding_from_vectors(V[:, o], d)
    record("eigsh(L_sym, sigma=-1e-3) shift-invert ('SM')", P, time.perf_counter() - t)

    # MATLAB eigs defaults: p = 2k Lanczos vectors, maxit = 300, tol = eps; smallest
    # algebraic of the normalized Laplacian (the slowest-converging way to ask)
    from scipy.sparse.linalg import ArpackNoConvergence
    t = time.perf_counter()
    try:
        vals, V = eigsh(Lap, k=k, which="SA", ncv=2 * k, maxiter=300, tol=0.0)
        o = np.argsort(vals)
        record("eigsh(L_sym, 'SA', ncv=2k, maxiter=300) = eigs defaults",
               embedding_from_vectors(V[:, o], d), time.perf_counter() - t, converged=True)
    except ArpackNoConvergence as e:
        row = {"study": "eigen", "solver": "eigsh(L_sym, 'SA', ncv=2k, maxiter=300)",
               "converged": False, "n_converged": len(e.eigenvalues)}
        rows.append(row)
        _show(row)

    t = time.perf_counter()
    Nd = N.toarray()
    vals, V = sla.eigh(Nd, subset_by_index=[n - k, n - 1])
    del Nd
    o = np.argsort(-vals)
    P = embedding_from_vectors(V[:, o], d)
    record("dense LAPACK eigh (top 10)", P, time.perf_counter() - t)

    vals, V = eigsh(N, k=extra, which="LA", v0=np.ones(n), tol=0.0)
    o = np.argsort(-vals)
    vals, V = vals[o], V[:, o]
    lap = 1.0 - vals
    print("  Laplacian eigenvalues 1..%d: %s" % (extra, np.array2string(lap, precision=5)))
    for j in range(k, extra):
        cols = list(range(k - 1)) + [j]
        record(f"eigenvectors 1..9 + {j + 1}", embedding_from_vectors(V[:, cols], d), 0.0,
               lap_eig=float(lap[j]))
    return rows


def study_precision(data_dir):
    rows = []
    for name in ("usps", "mnist_test"):
        X, y = _load(name, data_dir)
        k = int(np.unique(y).size)
        U = _unit(X)
        S = U @ U.T
        np.fill_diagonal(S, -np.inf)
        top = -np.sort(np.partition(-S, 5, axis=1)[:, :6], axis=1)
        gap = top[:, 4] - top[:, 5]  # 5th vs 6th most similar
        del S
        _, cnt = np.unique(U.round(12), axis=0, return_counts=True)
        g64 = ncer_graph(X, dtype=np.float64)
        g32 = ncer_graph(X, dtype=np.float32)
        A64 = (g64.adjacency > 0).astype(np.int8)
        A32 = (g32.adjacency > 0).astype(np.int8)
        diff = int(abs(A64 - A32).sum() // 2)
        o64 = ncer_labels(embed(g64, k), k)["labels"]
        o32 = ncer_labels(embed(g32, k), k)["labels"]
        row = {"study": "precision", "dataset": name, "duplicate_images": int((cnt > 1).sum()),
               "ties_5th_6th_lt_1e-12": int((gap < 1e-12).sum()),
               "near_ties_lt_1e-6": int((gap < 1e-6).sum()),
               "edges_f32_vs_f64_differ": diff, "acc_f64": acc(y, o64), "acc_f32": acc(y, o32),
               "nmi_f64": _nmi(y, o64), "nmi_f32": _nmi(y, o32)}
        rows.append(row)
        _show(row)
    return rows


def study_order(data_dir, seeds=range(5)):
    X, y = _load("usps", data_dir)
    rows = []
    for s in seeds:
        perm = np.random.default_rng(s).permutation(X.shape[0])
        g = ncer_graph(X[perm])
        lab = ncer_labels(embed(g, 10), 10)["labels"]
        row = {"study": "order", "seed": s, "acc": acc(y[perm], lab), "nmi": _nmi(y[perm], lab)}
        rows.append(row)
        _show(row)
    a = np.array([r["acc"] for r in rows])
    print(f"  spread over {len(a)} row orders: AC {a.min():.4f} .. {a.max():.4f}")
    return rows


def study_rounding(data_dir, cvxpy=True):
    rows = []
    for name in ("usps", "mnist_test"):
        X, y = _load(name, data_dir)
        k = int(np.unique(y).size)
        P = embed(ncer_graph(X), k)
        out = ncer_labels(P, k)
        om = np.sort(out["mvee"].omega)[::-1]
        act = out["active"]
        best = (0.0, 0.0)
        accs = []
        for J in itertools.combinations(act.tolist(), k):
            lab = assign_by_nnls(P, P[list(J)])
            a = acc(y, lab)
            accs.append(a)
            if a > best[0]:
                best = (a, _nmi(y, lab))
        row = {"study": "rounding", "dataset": name, "acc": acc(y, out["labels"]),
               "nmi": _nmi(y, out["labels"]), "active": int(act.size),
               "omega_next": float(om[act.size]),
               "classes_of_active": " ".join(map(str, np.sort(y[act]))),
               "subsets": len(accs), "best_subset_acc": best[0], "best_subset_nmi": best[1],
               "median_subset_acc": float(np.median(accs))}
        if cvxpy:
            ref = ncer_labels(P, k, mvee_backend="cvxpy")
            row["cvxpy_same_active"] = bool(np.array_equal(np.sort(ref["active"]), np.sort(act)))
            row["cvxpy_acc"] = acc(y, ref["labels"])
        rows.append(row)
        _show(row)
    return rows


def study_fingerprint(data_dir, starts=100):
    rows = []
    for name in ("mnist_test", "usps"):
        X, y = _load(name, data_dir)
        k = int(np.unique(y).size)
        P = embed(ncer_graph(X), k)
        f = nc_fingerprint(P, y, k, starts)
        row = {"study": "fingerprint", "dataset": name, **f,
               "paper_nc_acc": PAPER_NC_FULL[name][0], "paper_nc_nmi": PAPER_NC_FULL[name][1]}
        rows.append(row)
        _show(row)
    return rows


def _edge_graph(Xsel, Xw, p, weight):
    """p Euclidean-nearest others on ``Xsel`` (Deng Cai's constructW picks neighbours by
    Euclidean distance on the data as given), weights from ``Xw``; "or" (maximum)."""
    n = Xsel.shape[0]
    idx, dist = knn(Xsel, p, metric="sqeuclidean")
    rows = np.repeat(np.arange(n), p)
    cols = idx.ravel()
    if weight == "ip":
        v = np.einsum("ij,ij->i", Xw[rows], Xw[cols])
    elif weight == "cos":
        U = _unit(Xw)
        v = np.einsum("ij,ij->i", U[rows], U[cols])
    elif weight == "heat":  # exp(-d²/2t²), t = mean neighbour distance
        t = float(np.mean(np.sqrt(np.maximum(dist, 0))))
        v = np.exp(-dist.ravel() / (2 * t * t))
    else:
        v = np.ones(rows.size)
    S = sp.csr_array((np.maximum(v, 0), (rows, cols)), shape=(n, n))
    return graphclust.AffinityGraph(sp.csr_array(S.maximum(S.T)))


def study_variants(data_dir, starts=100, ps=(3, 10, 20, 40)):
    X, y = _load("usps", data_dir)  # [0, 2]
    X = X.astype(np.float64)
    Z = X - 1.0  # the [-1, 1] data
    k = 10
    cases = {
        "ncer: unit([0,2]), p most similar, kernel weights": lambda: ncer_graph(X),
        "unit([-1,1]), p most similar": lambda: ncer_graph(Z),
        "Euclidean nn on [0,2], cosine weights (constructW 'Cosine')":
            lambda: _edge_graph(X, X, 5, "cos"),
        "Euclidean nn on [0,2], heat kernel (constructW default)":
            lambda: _edge_graph(X, X, 5, "heat"),
        "Euclidean nn on [0,2], binary": lambda: _edge_graph(X, X, 5, "bin"),
        "Euclidean nn on [0,2], inner-product weights (ncer-l2nn)":
            lambda: _edge_graph(X, X, 5, "ip"),
        "unit(unit([-1,1]) + 1)": lambda: ncer_graph(_unit(Z) + 1.0),
        "[0,2] centred per pixel, unit": lambda: ncer_graph(X - X.mean(0)),
        "[0,2] centred per image, unit": lambda: ncer_graph(X - X.mean(1, keepdims=True)),
        "sqrt([0,2]), unit (not a reading of the paper)": lambda: ncer_graph(np.sqrt(X)),
    }
    for p in ps:
        cases[f"ncer graph with p = {p}"] = (lambda p=p: ncer_graph(X, p))
    rows = []
    for label, make in cases.items():
        g = make()
        P = embed(g, k)
        lab = ncer_labels(P, k)["labels"]
        row = {"study": "variants", "graph": label, "acc": acc(y, lab), "nmi": _nmi(y, lab),
               **nc_fingerprint(P, y, k, starts)}
        rows.append(row)
        _show(row)
    return rows


def study_smoothing(data_dir, sigmas=(0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0, 1.25, 1.5),
                    starts=100):
    X, y = _load("usps", data_dir)
    rows = []
    for s in sigmas:
        Xs = smooth_usps(X, s) if s > 0 else X
        P = embed(ncer_graph(Xs), 10)
        out = ncer_labels(P, 10)
        row = {"study": "smoothing", "sigma": s, "acc": acc(y, out["labels"]),
               "nmi": _nmi(y, out["labels"]), "active": int(out["active"].size),
               **nc_fingerprint(P, y, 10, starts)}
        rows.append(row)
        _show(row)
    print(f"  paper: NCER {PAPER[('usps', 5)]}, NC AC {_fmt3(PAPER_NC_FULL['usps'][0])} "
          f"NMI {_fmt3(PAPER_NC_FULL['usps'][1])}")
    return rows


def study_coil20(data_dir, starts=100):
    X, y = _load("coil20", data_dir)
    k = 20
    g = ncer_graph(X)
    rows = []
    sol = NcerEmbedding().solve(g, X, k, graphclust.Context(seed=0))
    P = sol.embedding
    N = sp.csr_array(g.normalized_adjacency())
    vals, V = eigsh(N, k=k, which="LA", v0=np.ones(N.shape[0]), tol=0.0)
    o = np.argsort(-vals)
    Pw = embedding_from_vectors(V[:, o], g.degrees)
    for label, E, zero in (("per-component (ncer-embedding)", P, sol.info["zero_eigenspace_dim"]),
                           ("ARPACK on the whole matrix", Pw, int(np.sum(1 - vals < 1e-8)))):
        out = ncer_labels(E, k)
        row = {"study": "coil20", "eigensolver": label, "zero_eigenvectors": zero,
               "acc": acc(y, out["labels"]), "nmi": _nmi(y, out["labels"]),
               **nc_fingerprint(E, y, k, starts),
               "paper_nc_acc": PAPER_NC_FULL["coil20"][0], "paper_nc_nmi": PAPER_NC_FULL["coil20"][1]}
        rows.append(row)
        _show(row)
    return rows


STUDIES = {"components": study_components, "eigen": study_eigen, "precision": study_precision,
           "order": study_order, "rounding": study_rounding, "fingerprint": study_fingerprint,
           "variants": study_variants, "smoothing": study_smoothing, "coil20": study_coil20}


def run(data_dir, studies=("components", "eigen", "precision", "order", "rounding",
                           "fingerprint", "variants", "smoothing", "coil20")) -> list[dict]:
    rows = []
    for s in studies:
        print(f"## {s}", flush=True)
        rows += STUDIES[s](data_dir)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--study", default="all")
    args = ap.parse_args()
    studies = list(STUDIES) if args.study == "all" else args.study.split(",")
    print(f"paper NCER USPS {PAPER[('usps', 5)]}, NC ave {PAPER_NC['usps']}")
    run(args.data_dir, studies)


if __name__ == "__main__":
    main()
