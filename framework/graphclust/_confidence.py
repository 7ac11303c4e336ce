"""A confidence for every point, class probabilities and noise (:doc:`/confidence`).

The protocol is part-level: a :class:`~graphclust.Rounding` may implement
``confidence(solution, labels)``, ``probabilities(solution, labels)`` and
``outliers(solution, labels)``; an :class:`~graphclust.Adapter` ``confidence(Z, solution,
labels)`` and ``outliers(Z, solution, labels)``. A row's confidence comes from

1. the adapter, when the pipeline has one that implements it (the rounding after an
   adapter only reads what the adapter lifted, so the adapter knows more);
2. else the rounding, when it implements it;
3. else the framework's fallback, :func:`graph_agreement`: the weighted share of the
   point's neighbours in the graph the fit built that carry its label (for an anchor
   graph ``W = Z Λ⁻¹ Zᵀ``, computed as ``Z (Λ⁻¹ Zᵀ Y)`` from the ``m x k`` label profile
   ``Zᵀ Y`` of the anchors, a sum over row blocks).

Class probabilities (``predict_proba``) come from the rounding's ``probabilities``, else
from the same anchor label profile (``Z Λ⁻¹ Zᵀ Y``, a point's neighbours' label shares);
:func:`agree` then makes the label the strict argmax of every row. An ensemble's
confidence is the share of its members that agree with the consensus
(:func:`member_agreement`). Everything here is row-local given an ``m``- or ``k``-sized
state, so the chunked execution computes it block by block (:mod:`graphclust._dask`).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp

from graphclust._graphs import AnchorGraph

__all__ = ["ConfidenceState", "FitConfidence", "agree", "clean_confidence", "graph_agreement",
           "label_profile", "member_agreement", "member_probabilities",
           "profile_agreement", "profile_probabilities", "rows_confidence",
           "rows_outliers", "rows_probabilities", "source_of"]


@attrs.define
class ConfidenceState:
    """What ``predict_proba`` and the chunked confidence need of a fit (global-small).

    Attributes
    ----------
    width : int
        Columns of the probabilities (the fit's number of clusters).
    profile : ndarray of shape (m, width) or None
        The anchors' label profile ``Zᵀ Y`` of the training labels (anchor pipelines);
        for an ensemble, each base cluster's consensus cluster (``Σk_j`` integers).
    source : str
        Where the training confidence came from (``"adapter 'on-sample'"``,
        ``"rounding 'kmeans'"``, ``"graph neighbours"``, ``"ensemble members"``).
    noise_rule : str
        Who flagged the noise with ``noise=True`` (the part, or ``"cluster Gaussians"``,
        the framework's rule); empty without ``noise``.
    noise_model : ClusterGaussians or None
        The framework's fitted noise rule (``k`` robust Gaussians, the uniform's density
        and the weights), which ``predict`` applies to new points; ``None`` when a part
        flags the noise or without ``noise``.
    """

    width: int
    profile: np.ndarray | None = None
    source: str = ""
    noise_rule: str = ""
    noise_model: Any = None


def clean_confidence(values: Any, n: int, who: str) -> np.ndarray:
    """``values`` as float64 of shape ``(n,)`` in ``[0, 1]`` (NaN read as 0)."""
    c = np.asarray(values, dtype=np.float64).reshape(-1)
    if c.shape != (n,):
        raise ValueError(f"{who} returned a confidence of shape {c.shape}, expected ({n},)")
    c = np.nan_to_num(c, nan=0.0, posinf=1.0, neginf=0.0)
    return np.clip(c, 0.0, 1.0)


def agree(P: Any, labels: np.ndarray, width: int | None = None) -> np.ndarray:
    """Rows of ``P`` as probabilities whose strict argmax is ``labels``.

    Negative or non-finite entries are read as 0 and the rows scaled to sum to one (an
    all-zero row is uniform). Where a row's label is not its strict argmax (a tie, or a
    part whose labels are not its probabilities' argmax), the row is mixed with the
    label's one-hot row, ``(p + δ e_label) / (1 + δ)``, with the least ``δ`` that makes
    the label the strict argmax: ``δ = max_{c≠label} p_c − p_label + 1e-9``."""
    labels = np.asarray(labels, dtype=np.int64)
    P = np.asarray(P.toarray() if sp.issparse(P) else P, dtype=np.float64)
    n = labels.size
    width = int(max(width or 0, P.shape[1] if P.ndim == 2 else 0,
                    int(labels.max()) + 1 if n else 1))
    if P.shape[1] < width:
        P = np.hstack([P, np.zeros((n, width - P.shape[1]))])
    P = np.where(np.isfinite(P) & (P > 0), P, 0.0)
    s = P.sum(axis=1, keepdims=True)
    P = np.divide(P, s, out=np.full_like(P, 1.0 / width), where=s > 0)
    rows = np.arange(n)
    own = P[rows, labels]
    other = P.copy()
    other[rows, labels] = -np.inf
    rival = other.max(axis=1) if width > 1 else np.full(n, -np.inf)
    bad = own <= rival
    if bad.any():
        delta = rival[bad] - own[bad] + 1e-9
        P[bad] = P[bad] / (1.0 + delta)[:, None]
        P[rows[bad], labels[bad]] += delta / (1.0 + delta)
    return P


def _one_hot(labels: np.ndarray, width: int) -> sp.csr_array:
    labels = np.asarray(labels, dtype=np.int64)
    keep = labels >= 0
    return sp.csr_array((np.ones(int(keep.sum())), (np.flatnonzero(keep), labels[keep])),
                        shape=(labels.size, width))


def label_profile(Z: Any, labels: np.ndarray, width: int) -> np.ndarray:
    """``Zᵀ Y``: each anchor's membership mass per label (``m x width``); the anchor
    graph's label profile, a sum over row blocks."""
    return np.asarray((sp.csr_array(Z).T @ _one_hot(labels, width)).toarray())


def _profile_shares(Z: Any, profile: np.ndarray) -> np.ndarray:
    """``Z Λ⁻¹ Zᵀ Y`` row-normalised: each row's neighbours' label shares through the
    anchors (``Λ`` the anchors' total mass, the profile's row sums)."""
    lam = profile.sum(axis=1, keepdims=True)
    A = np.divide(profile, lam, out=np.zeros_like(profile, dtype=np.float64), where=lam > 0)
    R = np.asarray(sp.csr_array(Z) @ A)
    s = R.sum(axis=1, keepdims=True)
    return np.divide(R, s, out=np.zeros_like(R), where=s > 0)


def profile_agreement(Z: Any, labels: np.ndarray, profile: np.ndarray) -> np.ndarray:
    """The share of a row's anchor-graph neighbours (``W = Z Λ⁻¹ Zᵀ``) that carry its
    label: ``(Z Λ⁻¹ Zᵀ Y)_{i, label_i}`` over the row's total."""
    labels = np.asarray(labels, dtype=np.int64)
    R = _profile_shares(Z, profile)
    out = np.zeros(labels.size)
    ok = (labels >= 0) & (labels < R.shape[1])
    out[ok] = R[np.flatnonzero(ok), labels[ok]]
    return out


def profile_probabilities(Z: Any, profile: np.ndarray) -> np.ndarray:
    """Each row's neighbours' label shares through the anchors (before :func:`agree`)."""
    return _profile_shares(Z, profile)


def graph_agreement(graph, labels: np.ndarray, width: int) -> np.ndarray:
    """The framework's fallback: the weighted share of each point's neighbours in
    ``graph`` (an affinity graph's ``A``, an anchor graph's ``W = Z Λ⁻¹ Zᵀ``) that carry
    its label; a point without neighbours gets 0."""
    labels = np.asarray(labels, dtype=np.int64)
    if isinstance(graph, AnchorGraph):
        return profile_agreement(graph.Z, labels, label_profile(graph.Z, labels, width))
    A = sp.csr_array(graph.adjacency)
    same = np.asarray(A @ _one_hot(labels, width).toarray())
    total = np.asarray(A.sum(axis=1)).ravel()
    own = same[np.arange(labels.size), np.clip(labels, 0, width - 1)]
    return np.divide(own, total, out=np.zeros(labels.size), where=total > 0)


def source_of(pipe) -> str:
    """Which part gives a pipeline's confidence: its adapter, its rounding, or the
    framework's fallback (``"graph neighbours"``)."""
    adapter, rounding = getattr(pipe, "adapter", None), pipe.rounding
    if adapter is not None and type(adapter).gives_confidence():
        return f"adapter {adapter.name!r}"
    if rounding is not None and type(rounding).gives_confidence():
        return f"rounding {rounding.name!r}"
    return "graph neighbours"


def rows_confidence(pipe, Z, solution, labels: np.ndarray,
                    profile: np.ndarray | None = None, graph=None) -> np.ndarray:
    """The confidence of rows (their anchor rows ``Z``, lifted ``solution`` rows and
    ``labels``), by the first of: the adapter's, the rounding's, the fallback (on
    ``graph`` in memory, else on the anchors' label ``profile``)."""
    labels = np.asarray(labels, dtype=np.int64)
    n = labels.size
    adapter, rounding = getattr(pipe, "adapter", None), pipe.rounding
    if adapter is not None and type(adapter).gives_confidence():
        return clean_confidence(adapter.confidence(Z, solution, labels), n,
                                f"adapter {adapter.name!r}")
    if type(rounding).gives_confidence():
        return clean_confidence(rounding.confidence(solution, labels), n,
                                f"rounding {rounding.name!r}")
    if graph is not None:
        width = int(labels.max()) + 1 if n else 1
        return clean_confidence(graph_agreement(graph, labels, width), n, "the fallback")
    if profile is None or Z is None:
        raise ValueError("the fallback confidence needs the graph or the anchors' label "
                         "profile")
    return clean_confidence(profile_agreement(Z, labels, profile), n, "the fallback")


def rows_probabilities(pipe, Z, solution, labels: np.ndarray, width: int,
                       profile: np.ndarray | None) -> np.ndarray:
    """Class probabilities of rows: the rounding's, else the anchors' label profile
    through ``Z``; then :func:`agree` with ``labels``."""
    rounding = pipe.rounding
    if type(rounding).implements("probabilities"):
        P = rounding.probabilities(solution, labels)
    elif profile is not None and Z is not None:
        P = profile_probabilities(Z, profile)
    else:  # pragma: no cover - predict needs an anchor graph
        P = _one_hot(labels, width).toarray()
    return agree(P, labels, width)


def rows_outliers(pipe, Z, solution, labels: np.ndarray) -> np.ndarray | None:
    """The rows the adapter or the rounding flags as belonging to no cluster (the same
    part order as :func:`rows_confidence`); ``None`` when neither flags any itself."""
    adapter, rounding = getattr(pipe, "adapter", None), pipe.rounding
    if adapter is not None and type(adapter).gives_confidence():
        flags = (adapter.outliers(Z, solution, labels)
                 if type(adapter).implements("outliers") else None)
    elif type(rounding).gives_confidence() and type(rounding).implements("outliers"):
        flags = rounding.outliers(solution, labels)
    else:
        flags = None
    return None if flags is None else np.asarray(flags, dtype=bool)


def member_probabilities(memberships, labels: np.ndarray, width: int,
                         owner: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The share of an ensemble's members that place each point in each consensus
    cluster, and each base cluster's consensus cluster (``owner``).

    A base cluster belongs to the consensus cluster that holds most of its points
    (``argmax`` of the ``Σk_j x k`` table ``Mᵀ Y``; the lowest on ties); row ``i``,
    column ``c`` is the share of members whose base cluster of ``i`` belongs to ``c``.
    Give the training ``owner`` for new points."""
    M = sp.csr_array(memberships.matrix)
    if owner is None:
        table = np.asarray((M.T @ _one_hot(labels, width)).toarray())
        owner = table.argmax(axis=1) if table.size else np.zeros(M.shape[1], np.int64)
    O = sp.csr_array((np.ones(owner.size), (np.arange(owner.size), owner)),
                     shape=(owner.size, width))
    P = np.asarray((M @ O).toarray()) / max(memberships.n_members, 1)
    return P, owner


def member_agreement(memberships, labels: np.ndarray, width: int) -> np.ndarray:
    """The share of an ensemble's members that agree with each point's consensus label
    (:func:`member_probabilities` at the label)."""
    labels = np.asarray(labels, dtype=np.int64)
    P, _ = member_probabilities(memberships, labels, width)
    return clean_confidence(P[np.arange(labels.size), labels], labels.size, "the ensemble")


@attrs.define
class FitConfidence:
    """A fit's confidence (``(n,)``, a dask array after a chunked fit), its labels with
    ``-1`` for noise when asked, and the state ``predict_proba`` needs."""

    confidence: Any
    labels: Any
    state: ConfidenceState
    n_noise: Any = 0
