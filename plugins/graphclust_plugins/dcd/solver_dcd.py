"""The DCD solver: low-rank doubly stochastic decomposition by relaxed MM (Yang & Oja 2012)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import graphclust
from graphclust.numerics import normalize_rows
from graphclust_plugins.dcd._mm import indicator_init, kl_objective, prepare_pattern, run_dcd

__all__ = ["DCDSolver", "NCUT_INIT"]

#: The default initialisation of Sections 2.4 / 4.1: Ncut on the same graph, i.e. the solver
#: and rounding of the common ``ncut`` preset (normalised spectral embedding + k-means).
NCUT_INIT = {
    "solver": {"name": "spectral", "drop_trivial": True, "normalize_rows": True},
    "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True},
}


def _check_alphas(value):
    if not isinstance(value, (list, tuple)):
        return f"must be a list of numbers > 0, got {value!r} ({type(value).__name__})"
    for a in value:
        if isinstance(a, bool) or not isinstance(a, numbers.Real) or not a > 0 or a != a:
            return f"must be a list of numbers > 0, got {value!r}"
    return None


_alphas_check = graphclust.Check("a list of numbers > 0", _check_alphas)


@graphclust.part
class DCDSolver(graphclust.Solver):
    """DCD: KL approximation of A by a doubly stochastic Â = W diag(1/s) Wᵀ (relaxed MM, Alg. 1).

    Finds cluster-assigning probabilities ``W`` (``n x r``, rows on the simplex, Eq. 5)
    minimising ``D_KL(A || Â)`` (Eq. 4) with ``Â_ij = Σ_k W_ik W_jk / s_k``,
    ``s_k = Σ_v W_vk`` (Eq. 6), by the relaxed majorization–minimization update of
    Algorithm 1 / Eq. (13). ``Â`` is only evaluated on the nonzeros of the sparse ``A``,
    so one iteration costs ``O(nnz(A)·r)``; nothing ``n x n`` is formed.

    Initialisation (Sections 2.4 and 4.1): the labels of the ``init`` pipeline (Ncut by
    default: spectral embedding of the same graph + k-means) as a binary indicator plus
    ``init_offset`` (rows normalised). From it, one DCD run with ``α = 1``; and for each
    ``α`` in ``alphas`` a DCD run with that Dirichlet prior (Eq. 8–9) whose result starts
    another ``α = 1`` run. The solution is the ``α = 1`` run with the smallest
    approximation error (Eq. 4); the Dirichlet priors only serve as initialisations.

    Stopping: relative change of the minimised objective below ``tol``, or ``max_iter``
    iterations (the paper ran a fixed 10 000 iterations; see the bundle docs).

    Deviations from the paper
    -------------------------
    * Algorithm 1 only *drives* rows of ``W`` towards the simplex (exactly on it at a
      fixed point); the iterates drift off it by up to a few percent. ``soft`` is the
      final ``W`` with rows renormalised, and the reported/selected KL is that of the
      renormalised ``W`` (a feasible point of Eq. 4–5). The raw drift is in
      ``info["max_row_deviation"]``.
    * ``α`` other than 1 uses the same update with ``α`` in ``∇⁻`` (Algorithm 1 as printed).

    Solution: ``soft = W`` (``n x r``), ``objective`` = KL after each iteration of the
    selected ``α = 1`` run, ``history["kl/<start>"]`` the KL traces of every run,
    ``info["start_kl"]`` the final KL of each ``α = 1`` run.

    Rules: an isolated vertex (zero row of ``A``) contributes nothing to the KL and keeps
    a valid probability row; ``n_clusters = 1`` returns the single all-ones column.
    """

    name = "dcd"
    accepts = frozenset({graphclust.GraphKind.AFFINITY})
    needs_features = False
    provides = frozenset({graphclust.SolutionField.SOFT})

    init: dict | None = graphclust.param(
        None,
        doc="Pipeline spec whose labels start DCD (Sec. 2.4); None = Ncut on the same graph "
            "(solver 'spectral' + rounding 'kmeans').",
        check=graphclust.optional(graphclust.part_spec("pipeline")),
    )
    alphas: tuple = graphclust.param(
        (1.2, 2.0, 5.0),
        doc="Dirichlet parameters α (Eq. 8) of the extra starts: DCD with each α initialises "
            "an α = 1 run (Sec. 4.1); empty = only the direct α = 1 run.",
        check=_alphas_check,
    )
    init_offset: float = graphclust.param(
        0.2, doc="Constant added to the binary init indicator before normalising (Sec. 4.1).",
        check=graphclust.real(0, low_open=True),
    )
    max_iter: int = graphclust.param(
        1000, doc="Maximum iterations of Algorithm 1 per run.", check=graphclust.integer(1),
    )
    tol: float = graphclust.param(
        1e-5, doc="Stop when the relative change of the objective (Eq. 4/9) is below tol.",
        check=graphclust.real(0),
    )

    # ------------------------------------------------------------------ work
    def solve(self, graph, X, n_clusters, ctx):
        n = graph.n
        if n_clusters == 1:
            return self._trivial(n)
        labels = self._init_labels(graph, X, n_clusters, ctx)
        W0 = indicator_init(labels, n_clusters, self.init_offset)
        return self.solve_from(graph, W0, ctx)

    def _init_labels(self, graph, X, n_clusters, ctx):
        spec = NCUT_INIT if self.init is None else self.init
        resolve = getattr(graphclust, "resolve_part", None)
        if resolve is None:  # pragma: no cover - until the core provides it
            raise NotImplementedError("the DCD init pipeline needs graphclust.resolve_part")
        pipeline = resolve(spec, "pipeline")
        return np.asarray(pipeline.fit_labels(graph, X, n_clusters, ctx.child("init")))

    def solve_from(self, graph, W0, ctx):
        """Run the multi-start DCD of Section 4.1 from an explicit initial ``W0`` (n x r)."""
        A = prepare_pattern(graph.adjacency)  # the pattern of A prepared once for every run
        W0 = normalize_rows(np.asarray(W0, dtype=np.float64), "l1")
        n, r = W0.shape
        if r == 1:
            return self._trivial(n)
        progress = ctx.progress
        runs = {"init": run_dcd(A, W0, 1.0, max_iter=self.max_iter, tol=self.tol,
                                progress=progress, label="init ")}
        history = {"kl/init": runs["init"]["kl"]}
        for alpha in self.alphas:
            alpha = float(alpha)
            pre = run_dcd(A, W0, alpha, max_iter=self.max_iter, tol=self.tol,
                          progress=progress, label="prior ")
            key = f"alpha={alpha:g}"
            history[f"kl/{key}/prior"] = pre["kl"]
            runs[key] = run_dcd(A, pre["W"], 1.0, max_iter=self.max_iter, tol=self.tol,
                                progress=progress, label=f"{key} → ")
            history[f"kl/{key}"] = runs[key]["kl"]
        final = {key: normalize_rows(run["W"], "l1") for key, run in runs.items()}
        start_kl = {key: kl_objective(A, Wn) for key, Wn in final.items()}
        best = min(start_kl, key=lambda k: (start_kl[k], list(start_kl).index(k)))
        chosen = runs[best]
        if not chosen["converged"]:
            kl = np.asarray(chosen["kl"], dtype=float)
            resid = (abs(kl[-1] - kl[-2]) / max(abs(kl[-2]), 1e-300)
                     if kl.size >= 2 else float("nan"))
            warnings.warn(
                f"solver 'dcd': the selected run ({best}) reached max_iter={self.max_iter} "
                f"before the relative objective change fell below tol={self.tol} "
                f"(residual: last relative change {resid:.2e})",
                graphclust.ConvergenceWarning, stacklevel=2,
            )
        return graphclust.Solution(
            soft=final[best],
            objective=chosen["kl"],
            n_iter=int(sum(len(h) for h in history.values())),
            converged=bool(chosen["converged"]),
            history=history,
            info={
                "start_kl": start_kl,
                "selected": best,
                "selected_n_iter": int(chosen["n_iter"]),
                "max_row_deviation": max(run["max_row_deviation"] for run in runs.values()),
                "kl": start_kl[best],
            },
        )

    @staticmethod
    def _trivial(n):
        return graphclust.Solution(soft=np.ones((n, 1)), objective=np.empty(0), n_iter=0,
                                   converged=True, info={"selected": "trivial"})
