"""The eigengap estimate of the number of clusters (von Luxburg 2007, §8.3).

Von Luxburg, *A tutorial on spectral clustering*, Statistics and Computing 17 (2007),
§8.3: with ``k`` well separated clusters the normalised Laplacian
``L = I − D^{-1/2} W D^{-1/2}`` has ``k`` eigenvalues near 0 and a gap above them
(perturbation theory, §7), so choose ``k`` to make ``λ_{k+1} − λ_k`` large. Here
``λ_1 ≤ λ_2 ≤ …`` are the smallest eigenvalues of ``L``, i.e. ``λ_i = 1 − μ_i`` for the
largest eigenvalues ``μ_i`` of the normalised adjacency ``N = D^{-1/2} W D^{-1/2}``.

Cost, never ``n²``:

* an anchor graph ``W = Z Λ⁻¹ Zᵀ`` (``n x m``): the nonzero eigenvalues of ``N`` are
  those of the ``m x m`` matrix ``M = Λ^{-1/2} Zᵀ D⁻¹ Z Λ^{-1/2}`` (``N = C Cᵀ`` and
  ``M = Cᵀ C`` with ``C = D^{-1/2} Z Λ^{-1/2}``). ``Zᵀ D⁻¹ Z`` and ``λ = Zᵀ 1`` are sums
  over row blocks (:func:`anchor_block_sums`), so the chunked execution reduces them
  like the solver's Gram matrix: ``O(nnz(Z)·s)`` work, ``m²`` memory, one ``eigh``;
* an explicit sparse affinity graph: ``k_max + 1`` leading eigenvalues of ``N`` by
  Lanczos (ARPACK ``eigsh``), ``O(nnz · k_max)`` a restart; dense ``eigh`` below
  :data:`~graphclust.numerics.eigen.DENSE_MAX` vertices.

The rule (:func:`choose_by_eigengap`):

1. a candidate ``k`` counts only when its gap is *relatively* large:
   ``r_k = (λ_{k+1} − λ_k) / λ_{k+1} >= RELATIVE_GAP``, i.e. the ``k`` eigenvalues below
   the gap are at most ``1 − RELATIVE_GAP`` of the one above it (``k = 1`` always
   counts on a connected graph: ``λ_1 = 0``);
2. among those, ``k = argmax (λ_{k+1} − λ_k)`` (ties: the smaller ``k``). A gap at or
   below :data:`ZERO_EIGENVALUE` never counts. When none counts, either ``λ_{k_max+1}``
   is itself zero (more components than ``k_max``: clusters beyond the range, ``k =
   k_max``, and the caller warns that the range is too small), or the data show no
   cluster structure at this resolution: ``k = 1`` (``k_min`` if larger). The argument (docs/choosing-k.rst): on
   data without clusters the graph Laplacian approximates a Laplace operator on the
   data's support, whose eigenvalues grow smoothly (Weyl's law ``λ_k ∝ k^{2/d}``; on a
   square 0, 1, 1, 2, 4, 4, 5, …, the largest ratio ``λ_k/λ_{k+1}`` below 1 is 1/2
   for ``k >= 2``) while ``k`` separated clusters give ``λ_k ≈ 0`` below a gap of the order
   of one cluster's own ``λ_2``: ``r_k`` near 1.

Tiny groups are not clusters (:func:`anchor_spectrum_without_tiny_groups`,
:func:`affinity_spectrum_without_tiny_groups`). A handful of rows can be cut off from the
rest by the graph's construction alone — a tail point on its own representative (its
other edges underflow), two points sharing representatives no one else chose — and each
such group puts a Laplacian eigenvalue near 0 below the real gaps. Their eigenvectors are
concentrated on the group: a row of a group of ``s`` rows holds a *leverage*
``h_i = Σ_j u_j(i)²`` (over the ``2 (k_max + 1)`` leading unit eigenvectors of ``N``,
room for the values left out) of about ``1/s``, while rows of clusters of ``c`` rows
hold about ``1/c`` plus the smooth modes' share, ``2 (k_max + 1)/n`` on average. Rows
above :func:`leverage_limit` — both ``1/floor`` with ``floor = ⌈ln n⌉``
(:func:`group_floor`: a graph built with about ``ln n`` neighbours a point is connected
on data without clusters, von Luxburg 2007, §8.1, so fewer rows than that separated say
nothing about the data) and 4 times the average leverage — are in tiny groups; the
``round(Σ_j Σ_{tiny i} u_j(i)²)`` eigenvalues whose eigenvectors carry the most weight on
those rows are left out (each such group holds about one unit of it), and the rule runs
on the next ``k_max + 1``. The graph is not changed (removing rows would strand the next
tail rows, which then look alone). Leverage and the total weight do not depend on the basis chosen
inside a repeated eigenvalue, so a group is found whichever vectors the solver returns.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from graphclust.numerics.threads import fixed_threads

__all__ = ["RELATIVE_GAP", "anchor_block_sums", "anchor_spectrum", "affinity_spectrum",
           "spectrum_from_anchor_sums", "choose_by_eigengap", "EigengapChoice",
           "group_floor", "leverage_limit", "anchor_block_tiny_mass",
           "anchor_spectrum_without_tiny_groups", "affinity_spectrum_without_tiny_groups",
]

#: Smallest relative gap ``(λ_{k+1} − λ_k) / λ_{k+1}`` that counts as cluster structure
#: for ``k >= 2`` (see the module notes and docs/choosing-k.rst for the measurements).
RELATIVE_GAP = 0.6
#: Eigenvalues of the Laplacian at or below this are zero (the round-off of ``eigh`` and
#: of Lanczos at ``tol = 1e-8``); a gap at or below it is no gap.
ZERO_EIGENVALUE = 1e-6


def group_floor(n: int) -> int:
    """The fewest rows a cluster holds: ``⌈ln n⌉`` (at least 2), see the module notes."""
    return max(2, int(np.ceil(np.log(max(int(n), 2)))))


def leverage_limit(n: int, n_values: int) -> float:
    """The leverage above which a row is in a tiny group: ``1/floor`` and at least 4
    times the average ``n_values / n`` (on small ``n`` only rows alone are set aside)."""
    return max(1.0 / group_floor(n), 4.0 * n_values / max(int(n), 1))


def _inverse(v: np.ndarray, power: float = 1.0) -> np.ndarray:
    out = np.zeros_like(v, dtype=np.float64)
    pos = v > 0
    out[pos] = v[pos] ** -power
    return out


def anchor_block_sums(Z_block) -> tuple[np.ndarray, np.ndarray]:
    """One row block's share of the anchor-graph spectrum: ``(Z_bᵀ D_b⁻¹ Z_b, Z_bᵀ 1)``
    (dense ``m x m`` and ``m``), with ``D_b`` the block's degrees (row sums of ``Z_b``,
    the degrees of ``W`` for any ``Z``: an anchor a row chooses has ``λ_j > 0``)."""
    Z = sp.csr_array(Z_block, dtype=np.float64)
    deg = np.asarray(Z.sum(axis=1)).ravel()
    scaled = sp.csr_array(sp.dia_array((_inverse(deg)[None, :], [0]),
                                       shape=(Z.shape[0], Z.shape[0])) @ Z)
    G = (Z.T @ scaled).toarray()
    return np.asarray(G, dtype=np.float64), np.asarray(Z.sum(axis=0), dtype=np.float64).ravel()


def _anchor_eigh(G: np.ndarray, lam: np.ndarray, n_values: int):
    s = _inverse(np.asarray(lam, dtype=np.float64), 0.5)
    M = s[:, None] * np.asarray(G, dtype=np.float64) * s[None, :]
    M = 0.5 * (M + M.T)
    m = M.shape[0]
    top = min(n_values, m)
    with fixed_threads():  # numerics.threads: the same bits on any thread count
        vals, vecs = sla.eigh(M, subset_by_index=[m - top, m - 1])
    return vals[::-1], vecs[:, ::-1]


def _point_vectors(Z, lam: np.ndarray, vals: np.ndarray, vecs: np.ndarray) -> np.ndarray:
    """A row block's rows of the point-side unit eigenvectors
    ``u_j = D^{-1/2} Z Λ^{-1/2} v_j / sqrt(μ_j)`` of an anchor-level eigenbasis
    ``(vals, vecs)`` (row-local; the ``μ_j <= 1e-12`` are zero columns)."""
    deg = np.asarray(Z.sum(axis=1)).ravel()
    scale = np.zeros_like(vals)
    live = vals > 1e-12
    scale[live] = 1.0 / np.sqrt(vals[live])
    P = vecs * (_inverse(np.asarray(lam, dtype=np.float64), 0.5)[:, None] * scale[None, :])
    return _inverse(deg, 0.5)[:, None] * np.asarray(Z @ P)


def anchor_block_tiny_mass(Z_block, lam: np.ndarray, vals: np.ndarray, vecs: np.ndarray,
                           limit: float) -> tuple[np.ndarray, int]:
    """A row block's share of the tiny groups' weight in each eigenvector: the sum over
    the block's rows whose leverage exceeds ``limit`` of ``u_j(i)²`` (one value per
    eigenvector), and how many such rows the block holds (row-local, ``K``-sized)."""
    Z = sp.csr_array(Z_block, dtype=np.float64)
    U2 = _point_vectors(Z, lam, vals, vecs) ** 2
    tiny = U2.sum(axis=1) > limit
    return U2[tiny].sum(axis=0), int(tiny.sum())


def _without_tiny(vals: np.ndarray, mass: np.ndarray, n_values: int) -> np.ndarray:
    """The eigenvalues ``vals`` (descending) without the ``round(Σ mass)`` whose
    eigenvectors carry the most weight on tiny groups, the first ``n_values`` of the rest
    (padded with zeros)."""
    drop = int(round(float(mass.sum())))
    order = np.argsort(-mass, kind="stable")[:drop]
    kept = np.delete(vals, order)[:n_values]
    return np.concatenate([kept, np.zeros(n_values - kept.size)])


def anchor_spectrum_without_tiny_groups(sum_blocks, n: int, n_values: int
                                        ) -> tuple[np.ndarray, int, int]:
    """The ``n_values`` largest eigenvalues of ``N`` of an anchor graph, without the
    eigenvalues of its tiny groups (module notes); with the number of rows in tiny groups
    and of eigenvalues left out.

    ``sum_blocks(fn, *args)`` returns ``Σ_blocks fn(Z_b, *args)`` (in memory one block; on
    Dask a reduction over the chunks, so both executions leave out the same values)."""
    G, lam = sum_blocks(anchor_block_sums)
    wide = 2 * n_values  # room for the values left out
    vals, vecs = _anchor_eigh(G, lam, wide)
    mass, rows = sum_blocks(anchor_block_tiny_mass, np.asarray(lam), vals, vecs,
                            leverage_limit(n, wide))
    mass = np.concatenate([np.asarray(mass, dtype=np.float64), np.zeros(wide - vals.size)])
    vals = np.concatenate([vals, np.zeros(wide - vals.size)])
    return _without_tiny(vals, mass, n_values), int(rows), int(round(float(mass.sum())))


def spectrum_from_anchor_sums(G: np.ndarray, lam: np.ndarray, n_values: int) -> np.ndarray:
    """The ``n_values`` largest eigenvalues of ``N`` (descending) from the summed
    ``G = Zᵀ D⁻¹ Z`` and ``λ = Zᵀ 1``: those of ``M = Λ^{-1/2} G Λ^{-1/2}``, padded with
    zeros when ``m < n_values`` (the other eigenvalues of ``N`` are 0)."""
    s = _inverse(np.asarray(lam, dtype=np.float64), 0.5)
    M = s[:, None] * np.asarray(G, dtype=np.float64) * s[None, :]
    M = 0.5 * (M + M.T)
    m = M.shape[0]
    top = min(n_values, m)
    with fixed_threads():
        vals = sla.eigh(M, eigvals_only=True, subset_by_index=[m - top, m - 1])[::-1]
    return np.concatenate([vals, np.zeros(n_values - top)])


def anchor_spectrum(Z, n_values: int) -> np.ndarray:
    """The ``n_values`` largest eigenvalues of the normalised adjacency of the anchor
    graph ``W = Z Λ⁻¹ Zᵀ``, through the ``m x m`` problem (descending)."""
    G, lam = anchor_block_sums(Z)
    return spectrum_from_anchor_sums(G, lam, n_values)


def _affinity_eigen(A, n_values: int, rng, tol: float, vectors: bool = True):
    """Top eigenpairs of ``D^{-1/2} A D^{-1/2}`` (descending values, unit vectors; only
    the values, as ``(values, None)``, when ``vectors`` is false): dense ``eigh`` for
    small graphs, else Lanczos (``eigsh``) from a seeded start vector.

    A graph of several connected components is block diagonal, so its spectrum is the
    union of its components' spectra (each component's largest eigenvalue exactly 1):
    each component is solved on its own and the ``n_values`` largest are kept. Lanczos
    on the whole graph cannot be trusted there: a repeated eigenvalue (1, as many times
    as there are components) is found with a multiplicity lower than its own (12
    separated blobs gave 8 unit eigenvalues), which hides the gap after it."""
    A = sp.csr_array(A, dtype=np.float64)
    count, comp = connected_components(A, directed=False)
    if count == 1:
        return _connected_eigen(A, n_values, rng, tol, vectors)
    order = np.argsort(comp, kind="stable")
    bounds = np.searchsorted(comp[order], np.arange(count + 1))
    parts = []
    for c in range(count):
        rows = order[bounds[c]:bounds[c + 1]]
        parts.append((rows, *_connected_eigen(A[rows][:, rows], n_values, rng, tol,
                                              vectors)))
    values = np.concatenate([p[1] for p in parts])
    owner = np.concatenate([np.full(p[1].size, i) for i, p in enumerate(parts)])
    local = np.concatenate([np.arange(p[1].size) for p in parts])
    top = np.argsort(-values, kind="stable")[:min(n_values, values.size)]
    if not vectors:
        return values[top], None
    vecs = np.zeros((A.shape[0], top.size))
    for j, t in enumerate(top):
        rows, _, U = parts[owner[t]]
        vecs[rows, j] = U[:, local[t]]
    return values[top], vecs


def _connected_eigen(A, n_values: int, rng, tol: float, vectors: bool = True):
    """:func:`_affinity_eigen` on one graph as a whole (dense or Lanczos)."""
    from graphclust.numerics.eigen import DENSE_MAX
    from graphclust.numerics.random import start_vector

    A = sp.csr_array(A, dtype=np.float64)
    n = A.shape[0]
    s = _inverse(np.asarray(A.sum(axis=1)).ravel(), 0.5)
    S = sp.dia_array((s[None, :], [0]), shape=(n, n))
    N = sp.csr_array(S @ A @ S)
    top = min(n_values, n)
    if n <= DENSE_MAX or 4 * top >= n:
        Nd = N.toarray()
        Nd = 0.5 * (Nd + Nd.T)
        with fixed_threads():
            out = sla.eigh(Nd, eigvals_only=not vectors, subset_by_index=[n - top, n - 1])
    else:
        from scipy.sparse.linalg import eigsh

        rng = rng if rng is not None else np.random.default_rng(0)
        N = 0.5 * (N + N.T)
        out = eigsh(N, k=top, which="LA", v0=start_vector(rng, n), tol=tol,
                    return_eigenvectors=vectors, ncv=min(n, max(2 * top + 1, 40)))
    vals, vecs = out if vectors else (out, None)
    order = np.argsort(vals)[::-1]
    return vals[order], (vecs[:, order] if vectors else None)


def affinity_spectrum_without_tiny_groups(A, n_values: int,
                                          rng: np.random.Generator | None = None,
                                          tol: float = 1e-8) -> tuple[np.ndarray, int, int]:
    """:func:`affinity_spectrum` without the eigenvalues of tiny groups (module notes);
    with the number of rows in tiny groups and of eigenvalues left out."""
    A = sp.csr_array(A, dtype=np.float64)
    wide = 2 * n_values
    vals, vecs = _affinity_eigen(A, wide, rng, tol)
    U2 = vecs ** 2
    tiny = U2.sum(axis=1) > leverage_limit(A.shape[0], wide)
    mass = np.concatenate([U2[tiny].sum(axis=0), np.zeros(wide - vals.size)])
    vals = np.concatenate([vals, np.zeros(wide - vals.size)])
    return _without_tiny(vals, mass, n_values), int(tiny.sum()), int(round(float(mass.sum())))


def affinity_spectrum(A, n_values: int, rng: np.random.Generator | None = None,
                      tol: float = 1e-8) -> np.ndarray:
    """The ``n_values`` largest (algebraic) eigenvalues of ``D^{-1/2} A D^{-1/2}`` of a
    sparse symmetric affinity matrix ``A`` (descending): dense ``eigh`` for small graphs,
    else Lanczos (``eigsh``) from a seeded start vector."""
    vals, _ = _affinity_eigen(A, n_values, rng, tol, vectors=False)
    return np.concatenate([vals, np.zeros(n_values - vals.size)])


class EigengapChoice:
    """What :func:`choose_by_eigengap` decided.

    Attributes
    ----------
    k : int
        The chosen number of clusters.
    candidates : ndarray of int
        ``k_min .. k_max``.
    gaps, relative : ndarray
        ``λ_{k+1} − λ_k`` and ``(λ_{k+1} − λ_k) / λ_{k+1}`` for each candidate.
    best : int
        The plain argmax of the gap (before the relative-gap rule).
    significant : bool
        Whether any candidate passed the relative-gap rule.
    """

    def __init__(self, k, candidates, gaps, relative, best, significant):
        self.k, self.candidates, self.gaps = int(k), candidates, gaps
        self.relative, self.best, self.significant = relative, int(best), bool(significant)


def choose_by_eigengap(mu: np.ndarray, k_min: int, k_max: int,
                       relative_gap: float = RELATIVE_GAP) -> EigengapChoice:
    """The eigengap choice of ``k`` from the largest eigenvalues ``mu`` (descending, at
    least ``k_max + 1`` of them) of the normalised adjacency (see the module notes)."""
    mu = np.asarray(mu, dtype=np.float64)
    if mu.size < k_max + 1:
        raise ValueError(f"need {k_max + 1} eigenvalues for k_max = {k_max}, got {mu.size}")
    lam = np.clip(1.0 - mu[:k_max + 1], 0.0, None)
    lam = np.maximum.accumulate(lam)  # round-off: keep the Laplacian's order
    ks = np.arange(k_min, k_max + 1)
    gaps = lam[ks] - lam[ks - 1]
    safe = np.where(lam[ks] > 0, lam[ks], 1.0)
    rel = np.where(lam[ks] > 0, gaps / safe, 0.0)
    ok = (rel >= relative_gap) & (gaps > ZERO_EIGENVALUE)
    best = int(ks[int(np.argmax(gaps))]) if gaps.size else k_min
    if ok.any():
        k = int(ks[ok][int(np.argmax(gaps[ok]))])
    elif lam[k_max] <= ZERO_EIGENVALUE:  # more zero eigenvalues than k_max: clusters beyond
        k = k_max
    else:  # no gap stands out: no structure at this resolution
        k = 1 if k_min <= 1 else k_min
    return EigengapChoice(k, ks, gaps, rel, best, bool(ok.any()) or k == k_max > 1)
