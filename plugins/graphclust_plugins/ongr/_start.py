"""Starting points of the ONGR alternation (Algorithm 1, step 3, and the default start).

Private maths of the ``ongr`` solver: the initial ``F`` of Eq. 7. Every step that
touches ``n`` rows is written once against the chunk protocol
(:mod:`graphclust.chunks`): sums over row blocks and per-block states. The in-memory
solver runs it on **one** block (:func:`one_block`, the rows as that block's state), the
chunked solver on the run's row chunks, so both compute the same formula and differ only
in how the sums are cut (round-off). Random directions come from
:func:`graphclust.numerics.random_block_rows` (keyed by row, not by the cut).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
from graphclust.chunks import BlockState, InMemoryChunks
from graphclust.numerics import fixed_threads, normalize_rows, random_block_rows
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
from threadpoolctl import threadpool_limits

__all__ = ["canonical_eigenbasis", "complete_orthonormal", "drop_trivial", "gram_polar", "indicator_start",
           "kmeans_start", "one_block", "random_start", "spectral_kmeans_start"]


def one_block(state) -> tuple[InMemoryChunks, BlockState]:
    """The in-memory solver's rows as one block whose state is ``state`` (rows inside)."""
    U = state["U"] if isinstance(state, dict) else state
    n = int(U.shape[0])
    return InMemoryChunks(np.zeros((n, 0)), block_rows=max(n, 1)), BlockState([state])


def gram_polar(C: np.ndarray) -> np.ndarray:
    """``M = V w^{-1/2} Vᵀ`` from the Gram ``C = YᵀY = V w Vᵀ``, so that ``Y M`` is the
    polar factor of ``Y`` (orthonormal columns), for a well-conditioned ``Y``."""
    w, V = np.linalg.eigh(C)
    w = np.maximum(w, np.finfo(float).tiny)
    return (V / np.sqrt(w)[None, :]) @ V.T


def canonical_eigenbasis(vals: np.ndarray, V: np.ndarray, rtol: float = 1e-8) -> np.ndarray:
    """``V`` with the basis of every repeated eigenvalue (a run of ``vals`` closer than
    ``rtol·max|vals|``; e.g. eigenvalue 1 once per connected component) rotated to a
    canonical one, so it no longer depends on round-off in the matrix.

    For a run's columns ``V_c`` the pivoted QR ``V_cᵀ Π = Q R`` picks rows by the
    basis-free norms of the projector ``V_c V_cᵀ``; ``V_c Q`` (with ``diag R > 0``) is
    then lower triangular with a positive diagonal on the pivot rows, whatever basis the
    eigensolver returned. Used by the ``svd`` start, whose ``F`` (not only its span)
    depends on the basis: without it the in-memory and the chunked Gram (summed in
    another order) gave two different starts on a graph with several components.
    """
    from scipy.linalg import qr

    V = np.array(V, dtype=np.float64)
    scale = max(float(np.max(np.abs(vals))) if len(vals) else 0.0, np.finfo(float).tiny)
    i = 0
    while i < len(vals):
        j = i + 1
        while j < len(vals) and abs(vals[j - 1] - vals[j]) <= rtol * scale:
            j += 1
        if j - i > 1:
            Q, R, _ = qr(V[:, i:j].T, pivoting=True, mode="economic")
            sign = np.sign(np.diag(R))
            sign[sign == 0] = 1.0
            V[:, i:j] = V[:, i:j] @ (Q * sign[None, :])
        i = j
    return V


# -- orthonormal completion (random directions orthogonal to kept columns) ------------

def _u(state) -> np.ndarray:
    return state["U"] if isinstance(state, dict) else state


def _put(state, U: np.ndarray):
    """``state`` with its rows ``U`` replaced (a dict state keeps its other entries)."""
    return {**state, "U": U} if isinstance(state, dict) else U


def _fill(block, keep, seed):
    """The block's rows with the columns ``~keep`` replaced by row-keyed random normals."""
    U = np.array(_u(block.state), dtype=np.float64)
    U[:, ~keep] = random_block_rows(seed, block.start, block.start + U.shape[0],
                                    int((~keep).sum()))
    return _put(block.state, U)


def _cross(block, keep):
    U = _u(block.state)
    return U[:, keep].T @ U[:, ~keep]


def _project(block, keep, KtR):
    """``R ← R − K (KᵀR)``; summand ``RᵀR``."""
    U = np.array(_u(block.state))
    if keep.any():
        U[:, ~keep] -= U[:, keep] @ KtR
    R = U[:, ~keep]
    return _put(block.state, U), R.T @ R


def _rotate(block, keep, M):
    """``R ← R M``; summand the next ``KᵀR``."""
    U = np.array(_u(block.state))
    U[:, ~keep] = U[:, ~keep] @ M
    return _put(block.state, U), U[:, keep].T @ U[:, ~keep]


def complete_orthonormal(chunks, state: BlockState, keep: np.ndarray, seed: int) -> BlockState:
    """The per-block rows ``U`` (state: an array, or a dict whose ``"U"`` it is) with
    their columns ``~keep`` replaced by random orthonormal directions orthogonal to the
    (orthonormal) columns ``keep``.

    The random columns (:func:`~graphclust.numerics.random_block_rows`, ``seed``) are
    projected off the kept ones (``R − K KᵀR``, ``KᵀR`` a sum over blocks) and made
    orthonormal by their polar factor (``R (RᵀR)^{-1/2}``, a ``c x c`` Gram sum), twice
    (re-orthogonalisation, as classical Gram-Schmidt needs). Six passes; the kept
    columns are untouched. The released input state is not usable afterwards.
    """
    keep = np.asarray(keep, dtype=bool)
    old = state
    state = chunks.map(_fill, keep, int(seed), state=state)
    old.release()
    KtR = chunks.sum(_cross, keep, state=state) if keep.any() else None
    for _ in range(2):
        old = state
        state, C = chunks.map_sum(_project, keep, KtR, state=state)
        old.release()
        old = state
        state, KtR = chunks.map_sum(_rotate, keep, gram_polar(C), state=state)
        old.release()
    return state


# -- the trivial direction and the k-means start ---------------------------------------

def _t_cross(block):
    s = block.state
    return s["t"] @ s["U"]


def _residual(s, tU):
    return s["U"] if tU is None else s["U"] - np.outer(s["t"], tU)


def _residual_gram(block, tU):
    R = _residual(block.state, tU)
    return R.T @ R


def _embed(s, tU, coef):
    """Unit rows of ``(U − t tᵀU) V w^{-1/2}`` (or ``U[:, 1:]`` / ``U`` when given)."""
    return normalize_rows(_residual(s, tU) @ coef)


def drop_trivial_coef(chunks, state: BlockState, k: int, q: int, has_t: bool
                      ) -> tuple[np.ndarray | None, np.ndarray]:
    """``(tᵀU, coef)`` such that the rows ``(U − t tᵀU) coef`` are an orthonormal basis
    of ``span(U)`` with the unit trivial direction ``t`` projected out: the ``q − 1``
    leading eigenvectors ``V`` (eigenvalues ``w``) of ``RᵀR``, ``R = U − t tᵀU``, give
    ``coef = V w^{-1/2}`` (two sums over blocks; the dropped eigenvalue is ~0 when ``t``
    lies in ``span(U)``). The state holds ``{"U": U_b, "t": t_b}`` per block (``t_b``
    ``None`` when there is no trivial direction, ``has_t`` false: the first column is
    dropped). ``U`` of ``q <= k`` columns is kept as it is (``coef = I``)."""
    if q <= k:
        return None, np.eye(q)
    if not has_t:
        return None, np.eye(q)[:, 1:]
    tU = chunks.sum(_t_cross, state=state)
    w, V = np.linalg.eigh(chunks.sum(_residual_gram, tU, state=state))
    w, V = w[::-1][: q - 1], V[:, ::-1][:, : q - 1]
    return tU, V / np.sqrt(np.maximum(w, np.finfo(float).tiny))[None, :]


def drop_trivial(U: np.ndarray, t: np.ndarray | None) -> np.ndarray:
    """An orthonormal basis of ``span(U)`` with the unit direction ``t`` projected out.

    ``U`` (n × q, orthonormal) spans the leading invariant subspace of ``W``; ``t`` is
    its trivial eigenvector (``W t = t``: the constant vector for an anchor graph with
    row-stochastic ``Z``, ``√d`` for ``D^{-1/2} A D^{-1/2}``). The ``q − 1`` leading
    left singular vectors of ``U − t tᵀU`` are returned, through the ``q x q`` Gram
    (:func:`drop_trivial_coef`; the basis is only defined up to a rotation, which
    k-means on unit rows does not see). ``t=None`` drops the first column.
    """
    if t is None or U.shape[1] < 2:
        return U[:, 1:]
    chunks, state = one_block({"U": U, "t": t})
    tU, coef = drop_trivial_coef(chunks, state, U.shape[1] - 1, U.shape[1], True)
    return _residual(state.values[0], tU) @ coef


def _fit_kmeans(parts, k, n_init, seed):
    """k-means (``n_init`` restarts, k-means++, one OpenMP thread so the result does not
    depend on the thread count) on the stacked sampled rows."""
    E = np.ascontiguousarray(np.vstack(parts), dtype=np.float64)
    km = KMeans(n_clusters=k, n_init=n_init, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkConvergenceWarning)  # fewer distinct rows than k
        with fixed_threads():
            km.fit(E)
    return km


def _sample_rows(block, local, tU, coef):
    return _embed(block.state, tU, coef)[local]


def _assign(block, km, tU, coef, k):
    with threadpool_limits(limits=1, user_api="openmp"):
        labels = km.predict(np.ascontiguousarray(_embed(block.state, tU, coef)))
    return labels, np.bincount(labels, minlength=k)


def _indicator(block, counts, k):
    """Rows of the scaled indicator (Eq. 1 with ``|A_j|``) of the block's labels."""
    labels = block.state
    H = np.zeros((labels.shape[0], k))
    H[np.arange(labels.shape[0]), labels] = 1.0
    keep = counts > 0
    H[:, keep] /= np.sqrt(counts[keep])[None, :]
    return H


def indicator_rows(chunks, labels: BlockState, counts: np.ndarray, k: int,
                   rng: np.random.Generator) -> BlockState:
    """The scaled indicator of per-block ``labels`` with cluster sizes ``counts``:
    orthonormal and nonnegative, so a feasible point of Eq. 6. Columns of empty clusters
    are random directions orthogonal to the others (:func:`complete_orthonormal`; they
    are then not nonnegative)."""
    H = chunks.map(_indicator, counts, k, state=labels)
    keep = counts > 0
    if not keep.all():
        H = complete_orthonormal(chunks, H, keep, int(rng.integers(2**31)))
    return H


def indicator_start(labels: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`indicator_rows` of in-memory ``labels``."""
    labels = np.asarray(labels)
    chunks, state = one_block(labels)
    H = indicator_rows(chunks, state, np.bincount(labels, minlength=k), k, rng)
    return H.values[0]


def kmeans_start(chunks, state: BlockState, k: int, q: int, has_t: bool, seed: int,
                 n_init: int, rng: np.random.Generator, rows: np.ndarray | None = None
                 ) -> tuple[BlockState, BlockState]:
    """Initial ``F`` from k-means on the ``k`` nontrivial leading eigenvectors of ``W``.

    ``state`` holds per block ``{"U": U_b, "t": t_b}``: the rows of the ``q = k + 1``
    leading eigenvectors (fewer when ``n`` is smaller) and of the unit trivial direction
    ``t`` (``has_t``), projected out (:func:`drop_trivial_coef`); rows are scaled to unit length
    (Ng–Jordan–Weiss) and k-means (``n_init`` restarts, k-means++ seeding) is fitted on
    the rows ``rows`` (sorted; ``None``: all, as in memory) in one task, then every block
    is assigned to the nearest centre; ``F`` is the scaled indicator of that partition
    (:func:`indicator_rows`, the sizes summed over blocks).

    Returns ``(F, labels)`` as per-block states.
    """
    tU, coef = drop_trivial_coef(chunks, state, k, q, has_t)
    km = chunks.on_sample(_sample_rows, functools.partial(_fit_kmeans, k=k, n_init=n_init,
                                                          seed=seed),
                          rows, tU, coef, state=state)
    labels, counts = chunks.map_sum(_assign, km, tU, coef, k, state=state)
    return indicator_rows(chunks, labels, counts, k, rng), labels


def spectral_kmeans_start(U: np.ndarray, t: np.ndarray | None, k: int, seed: int,
                          n_init: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """:func:`kmeans_start` on in-memory rows (all of them). Returns ``(F, labels)``."""
    chunks, state = one_block({"U": U, "t": t})
    F, labels = kmeans_start(chunks, state, k, U.shape[1], t is not None, seed, n_init, rng)
    return F.values[0], labels.values[0]


def _random_rows(block, k, seed):
    return random_block_rows(seed, block.start, block.start + block.X.shape[0], k)


def _gram(block):
    return block.state.T @ block.state


def _times(block, M):
    return block.state @ M


def random_start(chunks, k: int, seed: int) -> BlockState:
    """A random orthonormal ``F`` (Section 3.2, Initialization): the polar factor
    ``R (RᵀR)^{-1/2}`` of a standard normal ``n x k`` matrix ``R`` drawn row-keyed
    (:func:`~graphclust.numerics.random_block_rows`), uniformly distributed over the
    orthonormal ``n x k`` matrices; one Gram sum over blocks."""
    R = chunks.map(_random_rows, k, int(seed))
    F = chunks.map(_times, gram_polar(chunks.sum(_gram, state=R)), state=R)
    R.release()
    return F
