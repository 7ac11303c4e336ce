"""NCER graph study: which reading of Section 2's p-nearest-neighbour graph reproduces
Tables 2–4 of Mizutani (arXiv:1503.01128)?

Variants of the adjacency ``K`` (all with the inner-product kernel of Eq. 1, b = 0, c = 1):

* ``select``: ``similarity`` (p largest ``a_iᵀa_j``), ``distance`` (p smallest
  ``||a_i - a_j||²`` = the kernel-induced distance ``k(a,a) + k(b,b) - 2k(a,b)``),
  ``cosine`` (p largest ``a_iᵀa_j / (||a_i|| ||a_j||)``);
* ``self``: whether ``a_i`` counts as one of its own ``p`` neighbours (then it has
  ``p - 1`` others and a self-loop ``k(a_i, a_i)``), as ``p = m`` ⇒ ``K = AᵀA`` in Section 4.3
  implies;
* ``weight``: ``kernel`` (``k_ij = a_iᵀa_j``, Section 2), ``binary`` (1) or ``cosine``
  (``a_iᵀa_j / (||a_i|| ||a_j||)``, the weights of Deng Cai's ``constructW``, not the paper's);
* ``sym``: ``or`` (edge if either side chose it, Section 2), ``and`` (mutual), ``mean``
  (``(S + Sᵀ)/2``).

``--unit`` scales the points to unit length first (what the paper's numbers need, see
docs/bundles/ncer.rst). Every variant runs the same NCER embedding (``ncer-embedding``) and ellipsoid rounding;
the NC peer (k-means, 10 single starts) on the same embedding is reported for
``--nc``, since the paper's NC numbers (Tables 3–4) used the same graph.

Usage::

    python -m benchmarks.ncer_graph_study --data-dir ../shared/data \\
        --datasets usps,mnist456,orl,jaffe,coil20 [--nc] [--variants all|main]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.metrics import normalized_mutual_info_score

import graphclust
from graphclust.neighbors import nearest_anchors
from graphclust_plugins.ncer import NcerEmbedding
from graphclust_plugins.ncer.ellipsoid import ellipsoid_round

from benchmarks.ncer_paper import PAPER, _load, acc

PAPER_EXTRA = {("orl", 5): (0.792, 0.875), ("jaffe", 5): (0.948, 0.938)}


def variant_graph(X, p, select="distance", self_=True, weight="kernel", sym="or"):
    """Adjacency of one reading of Section 2 (see module docstring)."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    q = p if self_ else p + 1  # with self excluded, take p+1 and drop the point itself
    if select == "distance":
        idx, _ = nearest_anchors(X, X, q, metric="sqeuclidean")
    elif select == "similarity":
        idx, _ = nearest_anchors(X, X, q, metric="inner_product")
    elif select == "cosine":
        Xn = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
        idx, _ = nearest_anchors(Xn, Xn, q, metric="inner_product")
    else:
        raise ValueError(select)
    if not self_:
        rows_ = []
        for i in range(n):
            r = [j for j in idx[i] if j != i][:p]
            rows_.append(r)
        idx = np.asarray(rows_)
    k = idx.shape[1]
    rows = np.repeat(np.arange(n), k)
    cols = idx.ravel()
    if weight == "kernel":
        vals = np.einsum("ij,ij->i", X[rows], X[cols])
    elif weight == "cosine":  # Deng Cai's constructW 'Cosine' weights (not the paper's)
        nrm = np.maximum(np.linalg.norm(X, axis=1), 1e-300)
        vals = np.einsum("ij,ij->i", X[rows], X[cols]) / (nrm[rows] * nrm[cols])
    else:
        vals = np.ones(rows.size)
    S = sp.csr_array((vals, (rows, cols)), shape=(n, n))
    S.sum_duplicates()
    if sym == "or":
        K = S.maximum(S.T)
    elif sym == "and":
        K = S.minimum(S.T)
    else:
        K = 0.5 * (S + S.T)
    K = sp.csr_array(K)
    K.eliminate_zeros()
    return K


def evaluate(X, y, K, k, nc_seeds=()):
    ncomp, _ = connected_components(K, directed=False)
    g = graphclust.AffinityGraph(K)
    ctx = graphclust.Context(seed=0)
    t0 = time.perf_counter()
    sol = NcerEmbedding().solve(g, X, k, ctx)
    out = ellipsoid_round(sol.embedding, k)
    sec = time.perf_counter() - t0
    lab = out["labels"]
    row = {"acc": acc(y, lab), "nmi": float(normalized_mutual_info_score(y, lab)),
           "components": int(ncomp), "active": int(out["active"].size), "seconds": sec,
           "zero_eig": sol.info["zero_eigenspace_dim"]}
    if nc_seeds:
        from sklearn.cluster import KMeans
        a = [acc(y, KMeans(k, n_init=1, random_state=s).fit_predict(sol.embedding))
             for s in nc_seeds]
        row["nc_acc"] = float(np.mean(a))
    return row


VARIANTS_MAIN = [
    ("similarity", False, "kernel", "or"),   # the old default (literal "most similar")
    ("similarity", True, "kernel", "or"),
    ("distance", False, "kernel", "or"),     # old ncer-l2nn
    ("distance", True, "kernel", "or"),      # N_p(a_i) ∋ a_i (p = m ⇒ K = AᵀA)
    ("distance", True, "binary", "or"),
    ("distance", False, "binary", "or"),
    ("distance", True, "kernel", "mean"),
    ("distance", True, "kernel", "and"),
    ("cosine", True, "kernel", "or"),
    ("cosine", False, "kernel", "or"),
]


def run(data_dir, datasets=("usps", "mnist456", "orl", "jaffe"), p=5, variants=None,
        nc_seeds=(), unit=False):
    variants = variants or VARIANTS_MAIN
    rows = []
    for name in datasets:
        X, y = _load(name, data_dir)
        if unit:  # unit-length points, as the ncer preset's normalize = true
            X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
        k = int(np.unique(y).size)
        paper = PAPER.get((name, p)) or PAPER_EXTRA.get((name, p))
        for sel, self_, w, sym in variants:
            K = variant_graph(X, p, sel, self_, w, sym)
            r = evaluate(X, y, K, k, nc_seeds)
            r.update(dataset=name, select=sel, self=self_, weight=w, sym=sym, p=p,
                     paper=paper)
            rows.append(r)
            print(f"| {name} | {sel} | {self_} | {w} | {sym} | {r['acc']:.3f} | {r['nmi']:.3f} | "
                  f"{paper} | {r['components']} | {r['zero_eig']} | {r['active']} | "
                  f"{r.get('nc_acc', float('nan')):.3f} | {r['seconds']:.1f} |", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--datasets", default="usps,mnist456,orl,jaffe")
    ap.add_argument("--p", type=int, default=5)
    ap.add_argument("--nc", action="store_true")
    ap.add_argument("--variants", default="main")
    ap.add_argument("--unit", action="store_true", help="scale points to unit length first")
    args = ap.parse_args()
    if args.variants == "all":
        variants = list(itertools.product(["similarity", "distance", "cosine"], [True, False],
                                          ["kernel", "binary"], ["or", "and", "mean"]))
    elif args.variants == "main":
        variants = VARIANTS_MAIN
    else:  # e.g. distance:1:kernel:or;distance:0:binary:or
        variants = [(a, b == "1", c, d) for a, b, c, d in
                    (v.split(":") for v in args.variants.split(";"))]
    print("| dataset | select | self | weight | sym | AC | NMI | paper | comps | zero eig | "
          "active | NC AC ave | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    run(args.data_dir, args.datasets.split(","), args.p, variants,
        range(10) if args.nc else (), unit=args.unit)


if __name__ == "__main__":
    main()
