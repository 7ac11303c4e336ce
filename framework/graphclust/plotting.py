"""Pictures of a fitted clustering: :func:`plot_report`.

Needs matplotlib (``pip install "graphclust[plot]"``). Nothing here is imported by
``import graphclust``; the module loads matplotlib only when a function is called, and
never chooses a backend (scripts and servers use Agg, notebooks their own).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["plot_report", "embedding_2d"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("graphclust.plotting needs matplotlib: "
                          'pip install "graphclust[plot]"') from exc
    return plt


def _pca_2d(A: np.ndarray) -> np.ndarray:
    """The rows of ``A`` on their two leading principal axes (fewer than two columns
    are padded with zeros)."""
    C = np.asarray(A, dtype=np.float64)
    C = C - C.mean(axis=0)
    if C.shape[1] >= 2:
        _, _, Vt = np.linalg.svd(C[: min(len(C), 5000)], full_matrices=False)
        return C @ Vt[:2].T
    return C @ np.eye(C.shape[1], 2)


def embedding_2d(model: Any, X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, str]:
    """The 2-D view :func:`plot_report` draws.

    Parameters
    ----------
    model : GraphClustering
        A fitted estimator.
    X : ndarray of shape (n, d)
        The data it was fitted on.

    Returns
    -------
    points : ndarray of shape (n, 2)
        The solver's embedding (or soft assignment) projected on its two leading
        principal axes; the principal axes of ``X`` when the solution has neither.
    anchors : ndarray of shape (m', 2) or None
        The anchors of an anchor graph in the same view, each at the weighted mean of
        the points linked to it; ``None`` for other graphs.
    what : str
        What the axes are, for the title.
    """
    sol = getattr(model, "solution_", None)  # None for an ensemble
    values = None if sol is None else (sol.embedding if sol.embedding is not None else sol.soft)
    if values is not None and np.asarray(values).shape[1] >= 2:
        pts = _pca_2d(values)
        what = f"solver embedding ({model.pipeline_.solver.name}), principal axes"
    else:
        pts = _pca_2d(np.asarray(X))
        what = "data, principal axes"
    return pts, _anchor_positions(model, pts), what


def _anchor_positions(model: Any, pts: np.ndarray) -> np.ndarray | None:
    """Each anchor at the Z-weighted mean of the points linked to it (anchors no point
    chose are left out): where the anchor sits in whatever view ``pts`` is."""
    Z = getattr(getattr(model, "graph_", None), "Z", None)
    if Z is None or getattr(model, "anchors_", None) is None:
        return None
    weight = np.asarray(Z.sum(axis=0)).ravel()
    used = weight > 0
    return (np.asarray(Z.T @ pts)[used]) / weight[used, None]


def plot_report(model: Any, X: np.ndarray, y: np.ndarray | None = None, *,
                max_points: int = 20000, random_state: int = 0, figsize=(11, 8.5)):
    """One figure summarising a fitted clustering.

    Four panels: the points in 2-D coloured by cluster (see :func:`embedding_2d`), each
    as opaque as its ``confidence_`` (noise, ``-1``, in grey), with the anchors marked;
    the cluster sizes; the wall time of each stage; and, when
    ``y`` is given, the confusion matrix of true classes against clusters (rows and
    columns ordered by the best one-to-one matching) with ACC / NMI / ARI, else a
    summary of the run.

    Parameters
    ----------
    model : GraphClustering
        A fitted estimator.
    X : array-like of shape (n, d)
        The data the model was fitted on.
    y : array-like of shape (n,), optional
        True labels.
    max_points : int, default=20000
        At most this many points are drawn (a seeded uniform sample); every count and
        score uses all points.
    random_state : int, default=0
        Seed of that sample.
    figsize : tuple, default=(11, 8.5)

    Returns
    -------
    matplotlib.figure.Figure
        Save it with ``fig.savefig("report.png")``.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "labels_")
    plt = _pyplot()
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
    labels = np.asarray(model.labels_)
    if X.shape[0] != labels.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but the model was fitted on "
                         f"{labels.shape[0]}: pass the training data")
    k = int(max(labels.max(initial=-1) + 1, 1))
    fig, axes = plt.subplots(2, 2, figsize=figsize, constrained_layout=True)
    _scatter(axes[0, 0], model, X, labels, k, max_points, random_state)
    _sizes(axes[0, 1], labels, k)
    _timings(axes[1, 0], model)
    if y is not None:
        kept = labels >= 0  # noise (noise=True) has no cluster to match
        _confusion(axes[1, 1], np.asarray(y)[kept], labels[kept])
    else:
        _summary(axes[1, 1], model, X, k)
    return fig


def _colours(k: int):
    plt = _pyplot()
    cmap = plt.get_cmap("tab10" if k <= 10 else "tab20" if k <= 20 else "turbo")
    return [cmap(i / max(k - 1, 1)) if k > 20 else cmap(i) for i in range(k)]


def _scatter(ax, model, X, labels, k, max_points, random_state):
    pts, anc, what = embedding_2d(model, X)
    n = len(pts)
    idx = np.arange(n)
    if n > max_points:
        idx = np.sort(np.random.default_rng(random_state).choice(n, max_points, replace=False))
    colours = np.vstack([np.array(_colours(k)), [0.55, 0.55, 0.55, 1.0]])  # last: noise
    rgba = colours[np.where(labels[idx] < 0, k, labels[idx])].copy()
    conf = _confidence(model, n)
    # each point as opaque as the fit is sure of it (confidence_), noise pale grey
    rgba[:, 3] = 0.8 if conf is None else 0.1 + 0.85 * conf[idx]
    ax.scatter(pts[idx, 0], pts[idx, 1], c=rgba, s=6 if n > 2000 else 14, linewidths=0)
    if anc is not None:
        ax.scatter(anc[:, 0], anc[:, 1], marker="x", c="black", s=18, linewidths=0.8,
                   label=f"{len(anc)} anchors")
        ax.legend(loc="best", fontsize=8)
    shown = f" ({len(idx)} of {n} points)" if len(idx) < n else f" ({n} points)"
    shade = "" if conf is None else f", shaded by confidence (mean {conf.mean():.2f})"
    noise = int((labels < 0).sum())
    shade += f", {noise} noise (grey)" if noise else ""
    ax.set_title(f"{k} clusters{shown}{shade}\n{what}", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def _confidence(model: Any, n: int) -> np.ndarray | None:
    """``model.confidence_`` in memory (``None`` for a model fitted without one)."""
    conf = getattr(model, "confidence_", None)
    if conf is None:
        return None
    conf = np.clip(np.nan_to_num(np.asarray(conf, dtype=np.float64)), 0.0, 1.0)
    return conf if conf.shape == (n,) else None


def _sizes(ax, labels, k):
    counts = np.bincount(labels[labels >= 0], minlength=k)
    ax.bar(np.arange(k), counts, color=_colours(k))
    ax.set_xlabel("cluster")
    ax.set_ylabel("points")
    ax.set_title(f"cluster sizes (smallest {counts.min()}, largest {counts.max()})", fontsize=9)
    if k <= 30:
        ax.set_xticks(np.arange(k))


def _timings(ax, model):
    timings = {s: t for s, t in getattr(model, "timings_", {}).items() if s != "total"}
    names = list(timings)
    ax.barh(names, [timings[s] for s in names], color="0.45")
    ax.invert_yaxis()
    ax.set_xlabel("seconds")
    parts = model.pipeline_.named_parts()
    ax.set_yticks(range(len(names)),
                  [f"{s}\n{parts[s].name}" if s in parts else s for s in names], fontsize=8)
    total = model.timings_.get("total", sum(timings.values()))
    ax.set_title(f"stage wall time (total {total:.2f} s)", fontsize=9)


def _confusion(ax, y, labels):
    from scipy.optimize import linear_sum_assignment
    from sklearn.metrics import adjusted_rand_score, confusion_matrix, normalized_mutual_info_score

    classes, y_idx = np.unique(y, return_inverse=True)
    M = confusion_matrix(y_idx, labels)
    M = M[: len(classes)]  # confusion_matrix squares the table; keep the true classes as rows
    M = M[:, : int(labels.max()) + 1]
    rows, cols = linear_sum_assignment(-M)
    order = list(cols[np.argsort(rows)]) + [c for c in range(M.shape[1]) if c not in cols]
    M = M[:, order]
    acc = M[rows, np.arange(len(rows))].sum() / M.sum() if len(rows) else 0.0
    ax.imshow(M, cmap="Blues", aspect="auto")
    if M.size <= 400:
        thr = M.max() / 2
        for (i, j), v in np.ndenumerate(M):
            ax.text(j, i, str(v), ha="center", va="center", fontsize=6,
                    color="white" if v > thr else "black")
    ax.set_xlabel("cluster (matched order)")
    ax.set_ylabel("true class")
    if len(classes) <= 30:
        ax.set_yticks(range(len(classes)), [str(c) for c in classes], fontsize=7)
    if M.shape[1] <= 30:
        ax.set_xticks(range(M.shape[1]), [str(c) for c in order], fontsize=7)
    nmi = normalized_mutual_info_score(y, labels)
    ari = adjusted_rand_score(y, labels)
    ax.set_title(f"confusion: ACC {acc:.3f}  NMI {nmi:.3f}  ARI {ari:.3f}", fontsize=9)


def _summary(ax, model, X, k):
    pipe = model.pipeline_
    lines = [f"n = {X.shape[0]}, d = {X.shape[1]}, k = {k}", ""]
    for stage, part in pipe.named_parts().items():
        lines.append(f"{stage:9s} {part.name}")
    members = getattr(pipe, "members", None)
    if members is not None:  # an ensemble: its members by name, and the consensus
        names = [getattr(m, "label", "") or getattr(m, "name", "") for m in members]
        counts = {n: names.count(n) for n in dict.fromkeys(names)}
        lines.append(f"ensemble of {len(members)} members:")
        lines.extend(f"  {c} x {n}" for n, c in counts.items())
        lines.append(f"consensus {pipe.consensus.name}")
    ax.text(0.02, 0.98, "\n".join(lines), va="top", ha="left", family="monospace",
            fontsize=9, transform=ax.transAxes)
    ax.set_axis_off()
    ax.set_title("run (no true labels given)", fontsize=9)
