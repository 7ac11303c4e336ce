"""The point × base-cluster membership matrix an ensemble hands its consensus part."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np
import scipy.sparse as sp

__all__ = ["Memberships"]


def _check_matrix(instance: "Memberships", attribute: attrs.Attribute, value: sp.csr_array) -> None:
    if value.ndim != 2:
        raise ValueError(f"memberships must be 2-D, got shape {value.shape}")


@attrs.frozen(eq=False)
class Memberships:
    """Which base cluster of every ensemble member each point belongs to.

    ``matrix`` is the sparse ``n x Σk_i`` 0/1 matrix of the bipartite graph between
    points and base clusters: column block ``i`` (``offsets[i]:offsets[i + 1]``) holds
    member ``i``'s ``k_i`` clusters, and a point has at most one nonzero per block
    (exactly one on the training points; none for a new point that a member could not
    place).

    Attributes
    ----------
    matrix : scipy.sparse.csr_array of shape (n, Σk_i)
        The 0/1 membership matrix (float64).
    sizes : tuple of int
        ``k_i``: the number of (nonempty) clusters of each member.
    """

    matrix: sp.csr_array = attrs.field(validator=_check_matrix)
    sizes: tuple[int, ...] = attrs.field(converter=tuple)

    def __attrs_post_init__(self) -> None:
        if sum(self.sizes) != self.matrix.shape[1]:
            raise ValueError(f"memberships: member sizes {self.sizes} sum to {sum(self.sizes)}, "
                             f"but the matrix has {self.matrix.shape[1]} columns")

    @property
    def n_samples(self) -> int:
        """Number of points (rows)."""
        return int(self.matrix.shape[0])

    @property
    def n_members(self) -> int:
        """Number of ensemble members (column blocks)."""
        return len(self.sizes)

    @property
    def n_base_clusters(self) -> int:
        """``Σk_i``: number of base clusters (columns)."""
        return int(self.matrix.shape[1])

    @property
    def offsets(self) -> np.ndarray:
        """Column offsets of the members' blocks, length ``n_members + 1``."""
        return np.concatenate([[0], np.cumsum(self.sizes, dtype=np.int64)])

    def member_labels(self, i: int) -> np.ndarray:
        """Member ``i``'s labels ``0..k_i-1`` (``-1`` for a point without a cluster)."""
        lo, hi = self.offsets[i], self.offsets[i + 1]
        block = sp.csr_array(self.matrix[:, lo:hi])
        labels = np.full(self.n_samples, -1, dtype=np.int64)
        rows, cols = block.nonzero()
        labels[rows] = cols
        return labels

    @classmethod
    def from_labels(cls, labels: Sequence[np.ndarray],
                    sizes: Sequence[int] | None = None) -> "Memberships":
        """Build the membership matrix from each member's labels.

        Parameters
        ----------
        labels : sequence of ndarray of shape (n,)
            Member ``i``'s labels in ``0..k_i-1``; a negative label marks a point the
            member left unassigned (an all-zero row in its block).
        sizes : sequence of int, optional
            ``k_i``; default ``max(labels[i]) + 1``. Give the training sizes when building
            rows for new points, so the column layout matches.
        """
        labels = [np.asarray(lab).astype(np.int64, copy=False).ravel() for lab in labels]
        if not labels:
            raise ValueError("memberships need at least one member's labels")
        n = labels[0].shape[0]
        if any(lab.shape[0] != n for lab in labels):
            raise ValueError("every member must label the same points: got lengths "
                             f"{[lab.shape[0] for lab in labels]}")
        if sizes is None:
            sizes = [int(lab.max()) + 1 if lab.size and lab.max() >= 0 else 0 for lab in labels]
        sizes = [int(s) for s in sizes]
        rows, cols = [], []
        offset = 0
        for lab, k in zip(labels, sizes, strict=True):
            if lab.size and lab.max() >= k:
                raise ValueError(f"a label {int(lab.max())} is out of range for a member "
                                 f"with {k} clusters")
            keep = lab >= 0
            rows.append(np.flatnonzero(keep))
            cols.append(lab[keep] + offset)
            offset += k
        r = np.concatenate(rows)
        c = np.concatenate(cols)
        matrix = sp.csr_array((np.ones(r.size), (r, c)), shape=(n, offset))
        return cls(matrix, tuple(sizes))
