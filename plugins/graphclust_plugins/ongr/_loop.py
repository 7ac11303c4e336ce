"""The iteration bookkeeping of Algorithm 1 shared by the in-memory and chunked ONGR
solves: progress per iteration, the label-change stop (Section 4.3), the warning when
``max_iter`` runs out."""

from __future__ import annotations

import warnings

import graphclust

__all__ = ["finish_iterations", "iteration_done"]


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
