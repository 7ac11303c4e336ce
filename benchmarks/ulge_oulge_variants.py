"""OULGE variants on one anchor graph per seed (issue 4, item 1).

Per seed: BKHK anchors (m = 1024) and the adaptive anchor graph (k = 5) are built once;
every variant of the projection step of Algorithm 2 runs on that graph; each embedding is
rounded by k-means, reported two ways: best inertia of 10 starts (``best10``) and the mean
ACC of 10 single k-means runs (``mean1``, the paper's "10 times k-means" protocol).

``python -m benchmarks.ulge_oulge_variants --data-dir ../shared/data --dataset usps --seeds 5``
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import graphclust
from graphclust.data import load_dataset

from benchmarks.ulge_paper import acc_score


def _orth_keep(W, tol=1e-10):
    U, s, _ = np.linalg.svd(W, full_matrices=False)
    return U[:, s > tol * s[0]]


def _ridge(X, F, alpha, center=True):
    X = X.astype(np.float64)
    mean = X.mean(axis=0) if center else np.zeros(X.shape[1])
    Xc = X - mean
    C = Xc.T @ Xc
    C[np.diag_indices_from(C)] += alpha
    return np.linalg.solve(C, Xc.T @ F), mean


def variants(X, graph, c, alpha=0.01, alphas=None):
    from graphclust_plugins.ulge.ulge import anchor_spectral_vectors

    Xf = X.astype(np.float64)
    mu = Xf.mean(axis=0)
    F, sig = anchor_spectral_vectors(graph, c)
    Fd, _ = anchor_spectral_vectors(graph, c, drop_trivial=True)
    Fd1, _ = anchor_spectral_vectors(graph, c - 1, drop_trivial=True)
    out = {}
    W, _ = _ridge(X, F, alpha)
    out["ulge"] = (Xf - mu) @ W
    out["oulge(H, p-1 dims)"] = (Xf - mu) @ _orth_keep(W)
    U, s, _ = np.linalg.svd(W, full_matrices=False)
    out["oulge(H, full svd p dims)"] = (Xf - mu) @ U
    # no centring (H left out of Eq. 23): the trivial column becomes a real direction
    Wn, _ = _ridge(X, F, alpha, center=False)
    out["ulge(noH)"] = Xf @ Wn
    out["oulge(noH)"] = Xf @ _orth_keep(Wn)
    # the nontrivial vectors only
    Wd, _ = _ridge(X, Fd, alpha)
    out["oulge(drop, p dims)"] = (Xf - mu) @ _orth_keep(Wd)
    Wd1, _ = _ridge(X, Fd1, alpha)
    out["oulge(drop, p-1 dims)"] = (Xf - mu) @ _orth_keep(Wd1)
    # F scaled by singular values (F Λ^{1/2} = B V): span unchanged for OULGE
    out["ulge(F*sigma)"] = (Xf - mu) @ (W * sig[None, :])
    n = X.shape[0]
    for a in (alphas or (1.0, 100.0, 1e4, alpha * n)):
        Wa, _ = _ridge(X, F, a)
        out[f"oulge(alpha={a:g})"] = (Xf - mu) @ _orth_keep(Wa)
        out[f"ulge(alpha={a:g})"] = (Xf - mu) @ Wa
    # row-normalised embeddings
    for key in ("ulge", "oulge(H, p-1 dims)"):
        E = out[key]
        out[key + "+rownorm"] = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-12)
    return out


def kmeans_scores(E, y, c, seed, runs=10, init="k-means++"):
    from sklearn.cluster import KMeans

    best = KMeans(n_clusters=c, n_init=runs, random_state=seed, init=init).fit_predict(E)
    singles = [acc_score(y, KMeans(n_clusters=c, n_init=1, init=init,
                                   random_state=1000 * seed + r).fit_predict(E))
               for r in range(runs)]
    return acc_score(y, best), float(np.mean(singles))


def run(data_dir, dataset="usps", seeds=range(5), only=None, scale="", init="k-means++",
        alphas=None):
    from graphclust_plugins.ulge import BKHK, AdaptiveAnchorGraph

    X, y = load_dataset(dataset, data_dir)
    if scale == "pm1":  # [0,1] -> [-1,1] (the usual USPS scaling)
        X = 2.0 * X.astype(np.float32) - 1.0
    elif scale == "unit":  # rows to unit length
        X = X.astype(np.float32)
        X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    c = int(np.unique(y).size)
    res: dict = {}
    for seed in seeds:
        ctx = graphclust.Context(seed=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", graphclust.ConvergenceWarning)
            anchors = BKHK(n_anchors=1024).select(X, ctx)
        graph = AdaptiveAnchorGraph(n_neighbors=5).build(X, anchors, ctx)
        embs = variants(X, graph, c, alphas=alphas)
        if seed == list(seeds)[0] and X.shape[0] <= 20000:
            embs["raw k-means"] = X.astype(np.float64)
        for key, E in embs.items():
            if only and not any(o in key for o in only):
                continue
            b, m1 = kmeans_scores(E, y, c, seed, init=init)
            res.setdefault(key, []).append((b, m1))
            print(f"seed {seed} {key:32s} best10 {100 * b:5.1f} mean1 {100 * m1:5.1f}",
                  flush=True)
    return res


def _main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--dataset", default="usps")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--init", default="k-means++", help="k-means init: k-means++ or random")
    ap.add_argument("--alphas", default="", help="comma list of ridge values to try")
    ap.add_argument("--seed-list", default="", help="comma list of seeds (overrides --seeds)")
    ap.add_argument("--scale", default="", help="'' (raw), pm1 or unit")
    a = ap.parse_args()
    seeds = [int(v) for v in a.seed_list.split(",")] if a.seed_list else range(a.seeds)
    res = run(a.data_dir, a.dataset, seeds,
              only=[s for s in a.only.split(",") if s] or None, scale=a.scale, init=a.init,
              alphas=[float(v) for v in a.alphas.split(",") if v] or None)
    print(f"\n| variant ({a.dataset}, {len(list(seeds))} seeds) | ACC best of 10 | ACC mean of 10 single |")
    print("|---|---|---|")
    for key, v in res.items():
        v = 100 * np.array(v)
        print(f"| {key} | {v[:, 0].mean():.1f} ± {v[:, 0].std():.1f} "
              f"| {v[:, 1].mean():.1f} ± {v[:, 1].std():.1f} |")


if __name__ == "__main__":
    _main()
