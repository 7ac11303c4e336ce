"""What a choice of ``n_clusters`` is: the record (:class:`KSelection`, the fitted
``k_selection_``), the searched range and the eigengap rule's record.

A leaf of the core: it imports the errors and :mod:`graphclust.numerics` only, so every
part interface, run loop and bundle can use it without closing an import circle. Which
part estimates ``k`` and when (the one dispatch every run loop calls) is
:mod:`graphclust._kselect`.
"""

from __future__ import annotations

import warnings
from typing import Any

import attrs
import numpy as np

from graphclust._errors import KRangeWarning, NoClusterStructureWarning
from graphclust.numerics.eigengap import RELATIVE_GAP, choose_by_eigengap, group_floor

__all__ = ["KSelection", "DEFAULT_K_MAX", "eigengap_selection", "warn_selection",
           "k_range_for", "given_selection"]

#: The largest ``k`` searched when none is given (``k_max``; CLI ``--k-max``).
DEFAULT_K_MAX = 20


@attrs.frozen
class KSelection:
    """How the number of clusters of a fit was chosen (the fitted ``k_selection_``).

    Attributes
    ----------
    method : str
        ``"given"`` (the user's or the spec's integer), or the estimating part's
        declared method (``"eigengap"``, ``"density-tree"``, ...).
    k : int
        The number of clusters used.
    candidates : tuple of int
        The ``k`` values examined (empty for ``"given"``).
    scores : tuple of float
        One score per candidate, in the method's own units (the eigengap
        ``λ_{k+1} − λ_k``; a density tree's total stability).
    rule : str
        The rule that chose, in words.
    part : str
        The part that estimated, as ``"graph 'knn'"`` (empty for ``"given"``).
    k_min, k_max : int
        The searched range.
    structure : bool
        ``False`` when the method found no cluster structure (``k = 1`` then, with a
        :class:`~graphclust.NoClusterStructureWarning`).
    details : dict
        Method-specific values (the eigenvalues, relative gaps, ...), JSON-friendly.
    """

    method: str
    k: int
    candidates: tuple = ()
    scores: tuple = ()
    rule: str = ""
    part: str = ""
    k_min: int = 1
    k_max: int = DEFAULT_K_MAX
    structure: bool = True
    details: dict = attrs.field(factory=dict)

    @property
    def estimated(self) -> bool:
        return self.method != "given"

    def as_dict(self) -> dict[str, Any]:
        """Plain Python values (for ``--json`` and reports)."""
        return {"method": self.method, "k": int(self.k), "part": self.part, "rule": self.rule,
                "k_min": int(self.k_min), "k_max": int(self.k_max),
                "structure": bool(self.structure),
                "candidates": [int(c) for c in self.candidates],
                "scores": [float(s) for s in self.scores],
                "details": self.details}

    def describe(self) -> str:
        """One line: ``estimated: eigengap of graph 'knn', k in [1, 20], ...``."""
        if not self.estimated:
            return "given"
        return (f"estimated: {self.method} of {self.part}, k in [{self.k_min}, {self.k_max}]"
                f"; {self.rule}")


def given_selection(k: int) -> KSelection:
    return KSelection("given", int(k), rule="n_clusters given")


def k_range_for(k_min: int, k_max: int, n: int) -> tuple[int, int]:
    """The searched range on ``n`` points: ``k_max`` clipped to ``n - 1`` (the eigengap
    needs ``k_max + 1`` eigenvalues), ``k_min`` to ``k_max``."""
    top = max(1, min(int(k_max), int(n) - 1))
    return min(int(k_min), top), top


def eigengap_selection(mu, k_min: int, k_max: int, part: str, tiny_rows: int = 0,
                       dropped: int = 0, n: int | None = None) -> KSelection:
    """The :class:`KSelection` of the eigengap rule on the leading eigenvalues ``mu`` of
    a normalised adjacency (:func:`graphclust.numerics.eigengap.choose_by_eigengap`);
    ``dropped`` eigenvalues, of groups holding ``tiny_rows`` of the ``n`` rows, were left
    out of ``mu`` (:func:`~graphclust.numerics.eigengap.anchor_spectrum_without_tiny_groups`)."""
    c = choose_by_eigengap(mu, k_min, k_max)
    rule = (f"largest eigengap λ(k+1) − λ(k) among the k whose relative gap is at least "
            f"{RELATIVE_GAP:g} (von Luxburg 2007, §8.3)")
    if dropped:
        rule += (f"; {dropped} eigenvalues of groups of fewer than {group_floor(n or 2)} "
                 f"(ln n) rows ({tiny_rows} rows) left out: such groups are not clusters")
    if not c.significant:
        rule += f"; none was (largest gap at k = {c.best}, relative {c.relative.max():.2f})"
    mu = np.asarray(mu, dtype=np.float64)
    return KSelection("eigengap", c.k, tuple(int(x) for x in c.candidates),
                      tuple(float(g) for g in c.gaps), rule, part, k_min, k_max,
                      structure=c.k > 1,
                      details={"laplacian_eigenvalues": [float(1 - v) for v in mu],
                               "tiny_group_rows": int(tiny_rows),
                               "tiny_group_eigenvalues": int(dropped),
                               "relative_gaps": [float(r) for r in c.relative],
                               "largest_gap_at": c.best})


def warn_selection(sel: KSelection, who: str, stacklevel: int = 3) -> None:
    """The bad cases, said: no structure (``k = 1``), or ``k`` at the top of the range
    (``stacklevel`` as :func:`warnings.warn`'s, counted from inside this function)."""
    if not sel.estimated:
        return
    if sel.k == 1 and not sel.structure and sel.k_max > 1:
        warnings.warn(f"{who}: no cluster structure found by the {sel.method} of {sel.part} "
                      f"(k searched in [{sel.k_min}, {sel.k_max}]): returning one cluster "
                      "rather than an arbitrary split; give n_clusters to split anyway",
                      NoClusterStructureWarning, stacklevel=stacklevel)
    elif sel.k >= sel.k_max > 1:
        warnings.warn(f"{who}: the {sel.method} of {sel.part} chose k = {sel.k}, the top of "
                      f"the searched range [{sel.k_min}, {sel.k_max}]: the range may be too "
                      "small; raise k_max (CLI --k-max) or give n_clusters",
                      KRangeWarning, stacklevel=stacklevel)
