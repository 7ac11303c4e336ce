"""The iteration bookkeeping of Algorithm 1 shared by the in-memory and chunked ONGR
solves: the Eq. 7 objective from its expanded pieces, progress per iteration, the
label-change stop (Section 4.3), the warning when ``max_iter`` runs out."""

from __future__ import annotations

import warnings

import graphclust
import numpy as np

__all__ = ["finish_iterations", "iteration_done", "objective_from_pieces"]


def iteration_done(solver, progress, it: int, frac: float, objective: list) -> bool:
    """Report iteration ``it`` (``frac`` of labels changed) and whether Algorithm 1 stops
    there (Section 4.3: fewer than ``tol`` changed, after the first iteration)."""
    progress.step(it, solver.max_iter, f"changed {frac:.4%}"
                  + (f", objective {objective[-1]:.6g}" if objective else ""))
    return it > 1 and frac < solver.tol


def finish_iterations(solver, progress, converged: bool, change: list, stacklevel: int) -> None:
    """End the iterations' progress; warn when ``max_iter`` ran out first."""
    progress.end()
    if not converged and solver.max_iter > 1:
        warnings.warn(
            f"solver 'ongr' did not converge in max_iter={solver.max_iter} iterations "
            f"({change[-1]:.3%} of labels changed in the last one, tol={solver.tol})",
            graphclust.ConvergenceWarning, stacklevel=stacklevel)


def objective_from_pieces(norm2_W: float, cross: float, FtF: np.ndarray, GtG: np.ndarray,
                          lam: float, gap: float) -> float:
    """Eq. 7 expanded: ``‖W‖² − 2 Tr(GᵀWF) + Tr((FᵀF)(GᵀG)) + λ ‖F − G‖²`` from
    ``cross = Tr(GᵀWF)``, the two ``k x k`` Grams and ``gap = ‖F − G‖²`` (in memory
    from the iterates, chunked from sums over blocks)."""
    return norm2_W - 2.0 * cross + float(np.sum(FtF * GtG)) + lam * gap
