"""New nodes of a graph fit: ``predict`` and ``predict_proba`` after ``graph="precomputed"``.

A fit on a graph has no features, so a new node is given the only way a graph can hold
it: by its edges to the fitted nodes. ``predict(B)`` takes ``B``, an ``m x n`` nonnegative
matrix (scipy sparse or dense), row ``i`` holding the edge weights of new node ``i`` to
the ``n`` fitted nodes, in the order of ``labels_`` (``nodes_`` names them). Each new node
gets the label of the weighted vote of its fitted neighbours:

* its vote for cluster ``c`` is ``sum_j B_ij [labels_j = c]``, the weight of its edges
  into ``c`` (``B @ H``, ``H`` the one-hot ``n x k`` membership of the fitted labels);
  its label the cluster of the largest vote, the smallest label on a tie; fitted nodes
  labelled ``-1`` (``noise=True``) do not vote;
* ``predict_proba`` is the vote shares (each row divided by its sum), so its argmax is
  ``predict``;
* a new node with no vote (no edge to a labelled fitted node) carries no evidence: it gets
  the largest fitted cluster (the smallest label on a tie) — the rule the ``leiden``
  solver applies to an isolated node — and, as its probabilities, the fitted clusters'
  shares of the labelled nodes; after ``noise=True`` it gets ``-1`` instead (the label of
  a node attached to no cluster), as does a new node whose weight into the voted cluster
  is below what the configuration model expects of its degree (the fit's own noise rule,
  :mod:`graphclust.numerics.graph_noise`, applied with the fitted clusters' volumes).

This is the label a new node would take in one label-propagation step on the graph
extended by its edges, the fitted labels held fixed: no part is re-run, and the cost is
``O(nnz(B))`` (nothing ``m x n`` is densified; the votes are ``m x k`` sparse). Edges
between the new nodes themselves are not read: each new node is labelled from the
fitted ones alone, so a batch gives the labels its rows give one at a time.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphclust._errors import InputError

__all__ = ["new_node_edges", "predict_on_graph", "predict_proba_on_graph"]

_WHAT = ("predict on a model fitted with graph='precomputed' takes the new nodes' edge "
         "weights to the {n} fitted nodes: an m x {n} nonnegative matrix (scipy sparse or "
         "dense), row i the edges of new node i, columns in the order of labels_")


def new_node_edges(model, B) -> sp.csr_array:
    """``B`` checked and as a CSR float64 matrix: 2-D with one column per fitted node,
    numeric, finite and nonnegative (:class:`~graphclust.InputError` naming what is
    wrong otherwise). Stored zeros are dropped."""
    n = int(model.n_features_in_)
    what = _WHAT.format(n=n)
    module = (type(B).__module__ or "").split(".")[0]
    if B is None or module in ("networkx", "igraph") or hasattr(B, "__dask_graph__"):
        got = "None" if B is None else type(B).__name__
        raise InputError(f"{what}; got {got} (a graph object or a Dask collection has no "
                         "column order against the fitted nodes: build the matrix, e.g. "
                         "with networkx.to_scipy_sparse_array(G, nodelist=model.nodes_))")
    if not sp.issparse(B):
        try:
            B = np.asarray(B)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{what}; got {type(B).__name__} ({exc})") from None
    if len(B.shape) != 2 or B.shape[1] != n:
        raise InputError(f"{what}; got shape {tuple(B.shape)}")
    if B.dtype.kind not in "biuf":
        raise InputError(f"{what}; the weights must be numbers, got dtype {B.dtype}")
    B = sp.csr_array(B, dtype=np.float64)
    B.sum_duplicates()
    if not np.all(np.isfinite(B.data)):
        bad = int(np.count_nonzero(~np.isfinite(B.data)))
        raise InputError(f"{what}; {bad} edge weight(s) are NaN or infinite")
    if B.data.size and B.data.min() < 0:
        row = int(np.searchsorted(B.indptr, int(np.flatnonzero(B.data < 0)[0]), side="right")) - 1
        raise InputError(f"{what}; {int(np.count_nonzero(B.data < 0))} edge weight(s) are "
                         f"negative (the first in row {row}): an affinity is nonnegative")
    B.eliminate_zeros()
    return B


def _votes(model, B) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
    """``(V, voted, shares)``: the ``m x k`` votes (canonical CSR), whether each new node
    has any vote, and the fitted clusters' shares of the labelled nodes."""
    labels = np.asarray(model.labels_, dtype=np.int64)
    k = int(model.n_clusters_)
    keep = np.flatnonzero(labels >= 0)
    H = sp.csr_array((np.ones(keep.size), (keep, labels[keep])), shape=(labels.size, k))
    V = sp.csr_array(B @ H)
    V.sum_duplicates()  # canonical: sorted columns, one entry each
    V.eliminate_zeros()
    voted = np.diff(V.indptr) > 0
    sizes = np.bincount(labels[keep], minlength=k).astype(np.float64)
    shares = sizes / sizes.sum() if sizes.sum() > 0 else np.full(k, 1.0 / max(k, 1))
    return V, voted, shares


def _row_argmax(V: sp.csr_array) -> np.ndarray:
    """Each row's column of the largest entry, the smallest column on a tie (rows with no
    entry: 0). ``V`` is canonical (sorted columns) with positive entries."""
    out = np.zeros(V.shape[0], dtype=np.int64)
    counts = np.diff(V.indptr)
    rows = np.flatnonzero(counts)
    if rows.size == 0:
        return out
    starts = V.indptr[rows]
    top = np.maximum.reduceat(V.data, starts)
    at_top = V.data == np.repeat(top, counts[rows])
    position = np.where(at_top, np.arange(V.data.size), V.data.size)
    out[rows] = V.indices[np.minimum.reduceat(position, starts)]
    return out


def _noise_fit(model) -> bool:
    """Whether the model was fitted with ``noise=True`` (its fitted noise rule)."""
    return bool(getattr(getattr(model, "_confidence_state", None), "noise_rule", ""))


def _weakly_attached(model, B: sp.csr_array, V: sp.csr_array, labels: np.ndarray) -> np.ndarray:
    """The new nodes the fit's noise rule flags: no vote, or (for the graph's own rule,
    :mod:`graphclust.numerics.graph_noise`) less weight into the voted cluster than the
    configuration model expects of a node of their degree to the fitted nodes."""
    voted = np.diff(V.indptr) > 0
    from graphclust._confidence_fit import GRAPH_RULE
    from graphclust.numerics.graph_noise import weakly_attached

    state = model._confidence_state
    if state.noise_rule != GRAPH_RULE:  # a part flagged the fit's noise: no volumes kept
        return ~voted

    degree = np.asarray(B.sum(axis=1)).ravel()
    own = np.asarray(V[np.arange(V.shape[0]), labels]).ravel() if V.shape[0] else np.zeros(0)
    return weakly_attached(own, degree, state.noise_model[labels]) | ~voted


def predict_on_graph(model, B) -> np.ndarray:
    """The label of each new node (the rule of :mod:`graphclust._graph_predict`)."""
    B = new_node_edges(model, B)
    V, voted, shares = _votes(model, B)
    labels = _row_argmax(V)
    if _noise_fit(model):
        labels[_weakly_attached(model, B, V, labels)] = -1
    else:
        labels[~voted] = int(np.argmax(shares))
    return labels


def predict_proba_on_graph(model, B) -> np.ndarray:
    """``m x n_clusters_`` vote shares of each new node, rows summing to one (a node with
    no vote: the fitted clusters' shares)."""
    B = new_node_edges(model, B)
    V, voted, shares = _votes(model, B)
    total = np.asarray(V.sum(axis=1)).ravel()
    scale = np.divide(1.0, total, out=np.zeros_like(total), where=voted)
    P = (sp.diags_array(scale) @ V).toarray()
    P[~voted] = shares
    return P
