"""Readings of DLC's final representation (Shao et al., IJCAI 2015), measured side by side.

Session-2 investigation of the accuracy gap. One dense, self-contained implementation of
Algorithms 1–2 (samples as rows; the bundle's Gaussian codes and W/ridge updates), then
k-means (10 restarts) on several candidate representations, same landmarks per seed:

* ``ridge``        k-means on the last layer's ridge codes A_L (Eq. 7) — the literal text
                   ("Run K-means on the column space of A_L"), our preset;
* ``ridge-rownorm`` the same on unit-length rows of A_L (not in the paper);
* ``svd-ridge``   "K-means on the column space of A_L" read as in spectral clustering: the
                   top-c right singular vectors of A_L (n×c, orthonormal columns), k-means on
                   their rows; ``svd-ridge-rownorm`` with unit-length rows (Ng–Jordan–Weiss);
* ``Z1`` / ``ZL``  k-means on the sparse Gaussian kNN codes (Algorithm 1 step 2) of the
                   first / last layer (the last layer's are computed on A_{L-1});
* ``lsc-Z1`` / ``lsc-ZL`` LSC-style spectral embedding of those codes
                   (Z D^{-1/2}, top-c left singular vectors, k-means) = LSC-K;
* ``sparse``       a re-sparsified DLC: after every ridge update the codes keep their k
                   largest entries, clipped at 0, normalised to sum one (so X̃ = DA stays a
                   kNN-style reconstruction) and the layer passes these sparse codes on;
* ``input``        k-means on the unit-length input (reference).

``python -m benchmarks.dlc_variants --data-dir ../shared/data --datasets pendigits,coil20 --seeds 3``
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.metrics import normalized_mutual_info_score
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from graphclust.data import load_dataset
from graphclust_plugins.dlc import _slc
from graphclust_plugins.dlc._codes import gaussian_codes

from benchmarks.dlc_paper import PAPER_ACC, PAPER_NMI, acc_score

VARIANTS = ("input", "ridge", "ridge-rownorm", "svd-ridge", "svd-ridge-rownorm", "Z1", "ZL",
            "lsc-Z1", "lsc-ZL", "sparse")


def _landmarks(Y, m, seed, iters=10):
    rng = np.random.default_rng(seed)
    m = min(m, Y.shape[0])
    init = Y[np.sort(rng.choice(Y.shape[0], m, replace=False))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        km = KMeans(m, init=init, n_init=1, max_iter=iters, random_state=seed).fit(Y)
    return km.cluster_centers_


def _slc_dense(Y, U, Z, lam, T, sparse_k=None):
    """Algorithm 1 on dense rows: returns the final codes C (n×m) (ridge, or
    re-sparsified when ``sparse_k``)."""
    C = Z
    for _ in range(T):
        Xt = np.asarray(C @ U)                               # rows of X̃ = DA
        P = Y.T @ Xt
        Q = Xt.T @ Xt
        W = _slc.w_update(P, Q)                              # Eq. 5
        R = _slc.ridge_map(U @ W.T, lam)                     # Eq. 7
        C = Y @ R
        if sparse_k:
            k = sparse_k
            idx = np.argpartition(-C, k - 1, axis=1)[:, :k]
            v = np.maximum(np.take_along_axis(C, idx, axis=1), 0.0)
            s = v.sum(axis=1, keepdims=True)
            v = np.where(s > 0, v / np.where(s > 0, s, 1.0), 1.0 / k)
            n = C.shape[0]
            C = sp.csr_array((v.ravel(), idx.ravel(), np.arange(0, n * k + 1, k)),
                             shape=C.shape)
    return C


def _lsc(Z, c, seed):
    Z = sp.csr_array(Z)
    deg = np.asarray(Z.sum(axis=0)).ravel()
    deg[deg == 0] = 1.0
    Zh = Z @ sp.diags_array(1.0 / np.sqrt(deg))
    G = (Zh.T @ Zh).toarray()
    w, V = np.linalg.eigh(G)
    V = V[:, ::-1][:, :c]
    w = w[::-1][:c]
    return np.asarray(Zh @ (V / np.sqrt(np.maximum(w, 1e-12))))


def _top_right_singular(C, c):
    """Top-c left singular vectors of C (n×p) = right singular vectors of A = Cᵀ."""
    G = C.T @ C
    w, V = np.linalg.eigh(G)
    V = V[:, ::-1][:, :c]
    w = w[::-1][:c]
    return (C @ V) / np.sqrt(np.maximum(w, 1e-300))


def _km(E, c, seed):
    if sp.issparse(E):
        E = sp.csr_matrix(E)
        E.indices = E.indices.astype(np.int32)
        E.indptr = E.indptr.astype(np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return KMeans(c, n_init=10, random_state=seed).fit_predict(E)


def run_one(X, y, seed, m=1000, k=5, sigma=1.0, lam=1.0, T=5, L=2, variants=VARIANTS):
    c = int(np.unique(y).size)
    Y = normalize(np.asarray(X, dtype=np.float64))
    reps = {}
    with threadpool_limits(1):
        if "input" in variants:
            reps["input"] = Y
        # ridge DLC (the paper's text)
        Yl = Y
        Zs = []
        for layer in range(L):
            U = _landmarks(Yl, m, seed + 1000 * layer)
            Z = gaussian_codes(Yl, U, k, sigma)
            Zs.append(Z)
            Yl = _slc_dense(Yl, U, Z, lam, T)
        reps["ridge"] = Yl
        reps["ridge-rownorm"] = normalize(Yl)
        reps["Z1"], reps["ZL"] = Zs[0], Zs[-1]
        reps["svd-ridge"] = _top_right_singular(Yl, c)
        reps["svd-ridge-rownorm"] = normalize(reps["svd-ridge"])
        if "lsc-Z1" in variants:
            reps["lsc-Z1"] = _lsc(Zs[0], c, seed)
        if "lsc-ZL" in variants:
            reps["lsc-ZL"] = _lsc(Zs[-1], c, seed)
        if "sparse" in variants:
            Yl = Y
            for layer in range(L):
                Yd = Yl.toarray() if sp.issparse(Yl) else Yl
                U = _landmarks(Yd, m, seed + 1000 * layer)
                Z = gaussian_codes(Yd, U, k, sigma)
                Yl = _slc_dense(Yd, U, Z, lam, T, sparse_k=k)
            reps["sparse"] = Yl
        out = {}
        for name in variants:
            t = time.perf_counter()
            lab = _km(reps[name], c, seed)
            out[name] = (acc_score(y, lab), normalized_mutual_info_score(y, lab),
                         time.perf_counter() - t)
    return out


def run(data_dir, datasets=("pendigits", "coil20"), seeds=range(3), variants=VARIANTS, L=2):
    rows = []
    for name in datasets:
        X, y = load_dataset(name, data_dir)
        res = [run_one(X, y, s, variants=variants, L=L) for s in seeds]
        for v in variants:
            a = np.array([r[v][0] for r in res])
            nm = np.array([r[v][1] for r in res])
            rows.append({"dataset": name, "variant": v, "L": L, "runs": len(res),
                         "acc": a.mean(), "acc_std": a.std(), "nmi": nm.mean(),
                         "paper_acc": PAPER_ACC.get((name, "dlc" if L == 2 else "slc")),
                         "paper_nmi": PAPER_NMI.get((name, "dlc" if L == 2 else "slc"))})
    return rows


def _main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--datasets", default="pendigits,coil20")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    a = ap.parse_args()
    rows = run(a.data_dir, tuple(a.datasets.split(",")), range(a.seeds),
               tuple(a.variants.split(",")), a.layers)
    print("| dataset | L | variant | runs | ACC % | paper ACC % | NMI | paper NMI |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['dataset']} | {r['L']} | {r['variant']} | {r['runs']} | "
              f"{100 * r['acc']:.2f} ± {100 * r['acc_std']:.2f} | {r['paper_acc']} | "
              f"{r['nmi']:.3f} | {r['paper_nmi'] or '–'} |")


if __name__ == "__main__":
    _main()
