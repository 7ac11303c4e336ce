"""Layers of one fit (issue 45, deliverable 4): the targets, measured.

* MNIST-70k (pixels/255), no ``n_clusters``: the layer with ``k = 10`` at ACC >= .97,
  and the layers nested;
* three groups of three Gaussian blobs: the 3-partition and the 9-partition among the
  layers at ARI >= .95.

Usage::

    python -m benchmarks.layers --data-dir /work/shared/data [--sets mnist,blobs]
        [--n-clusters K] [--json out.json]

Each set is fitted once with ``GraphClustering()`` (the ``auto`` default, seed 0); the
layers are read afterwards (``layers_``, ``partition_at``), so the time printed as
``layers`` is their whole cost on top of the fit.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.metrics import adjusted_rand_score

import graphclust
from graphclust.data import load_dataset

ACC = graphclust.resolve_part({"name": "acc"}, "metric")


def three_groups_of_three_blobs(n_per: int = 300, seed: int = 0):
    """Three well separated groups (40 apart) of three blobs each (6 apart, unit
    spread), 2-d: the blob labels and the group labels."""
    rng = np.random.default_rng(seed)
    groups = np.array([[0, 0], [40, 0], [20, 35]], float)
    offsets = np.array([[0, 0], [6, 0], [3, 5]], float)
    X = np.vstack([groups[g] + offsets[b] + rng.normal(size=(n_per, 2))
                   for g in range(3) for b in range(3)])
    blob = np.repeat(np.arange(9), n_per)
    return X, blob // 3, blob


def nested(layers) -> bool:
    """Every group of each layer lies in one group of the next coarser layer."""
    found = [labels for _, _, labels in layers]
    for coarse, fine in zip(found, found[1:]):
        keep = fine >= 0
        pairs = np.unique(np.c_[fine[keep], coarse[keep]], axis=0)
        if np.unique(pairs[:, 0]).size != pairs.shape[0]:
            return False
    return True


def measure(name: str, X, truths: dict[str, tuple[np.ndarray, int]], n_clusters=None):
    t0 = time.perf_counter()
    model = graphclust.GraphClustering(n_clusters=n_clusters, random_state=0).fit(X)
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    layers = model.layers_
    listed = layers.layers(max(model.n_clusters_, model.k_selection_.k_max))
    cost = time.perf_counter() - t0
    out = {"set": name, "n": int(X.shape[0]), "fit_s": round(fit, 2),
           "layers_s": round(cost, 3), "k_fitted": int(model.n_clusters_),
           "source": layers.source, "ks": [layers.k_min, layers.n_atoms],
           "nested": nested(listed), "stability": {k: round(s, 3) for k, s, _ in listed},
           "rule": model.k_selection_.rule}
    for what, (y, k) in truths.items():
        if not layers.k_min <= k <= layers.n_atoms:
            out[what] = {"k": k, "missing": True}
            continue
        labels = layers.partition_at(k)
        out[what] = {"k": k, "acc": round(float(ACC.score(labels, y, None)), 4),
                     "ari": round(float(adjusted_rand_score(y, labels)), 4)}
    return out


def battery_layers(half: str, out: str | None) -> list[dict]:
    """``auto`` without ``k`` on every set of the generated battery's ``half`` (as the
    ``generated`` suite's ``auto-nok`` runs it, seed 0): the fitted ``k``, whether it
    found structure, and every layer's ``k`` and stability, one JSON line a set. Only
    the tune half may be used to argue a rule that chooses among the layers."""
    import warnings

    from benchmarks.generated_sets import generate, half_ids

    rows = []
    for set_id in half_ids(half):
        data = generate(set_id)
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = graphclust.GraphClustering(random_state=0).fit(data.X)
        fit = time.perf_counter() - t0
        layers = model.layers_
        sel = model.k_selection_
        row = {"set": set_id, "family": data.spec.family, "k_true": int(data.k),
               "k_fitted": int(model.n_clusters_), "structure": bool(sel.structure),
               "warned_none": any(w.category is graphclust.NoClusterStructureWarning
                                  for w in caught),
               "k_max": int(sel.k_max), "fit_s": round(fit, 2), "source": layers.source,
               "layers": [[d["k"], round(d["stability"], 4)]
                          for d in layers.summary(max(sel.k_max, model.n_clusters_))]}
        rows.append(row)
        print(json.dumps(row), flush=True)
        if out:
            with open(out, "w") as fh:
                json.dump(rows, fh)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--sets", default="blobs,mnist")
    ap.add_argument("--n-clusters", type=int, default=None,
                    help="fit with this k instead of estimating it")
    ap.add_argument("--json", default=None)
    ap.add_argument("--battery", default=None, choices=("tune", "check"),
                    help="instead: auto without k on a half of the generated battery, "
                    "recording every layer's k and stability")
    args = ap.parse_args(argv)
    if args.battery:
        battery_layers(args.battery, args.json)
        return 0
    rows = []
    for name in args.sets.split(","):
        if name == "blobs":
            X, group, blob = three_groups_of_three_blobs()
            rows.append(measure(name, X, {"groups": (group, 3), "blobs": (blob, 9)},
                                args.n_clusters))
        else:
            X, y = load_dataset(name, args.data_dir)
            X = np.asarray(X, dtype=np.float64)
            if name.startswith("mnist"):
                X /= 255.0
            rows.append(measure(name, X, {"classes": (y, len(np.unique(y)))},
                                args.n_clusters))
        print(json.dumps(rows[-1]), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
