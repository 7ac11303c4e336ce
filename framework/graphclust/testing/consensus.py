"""Contract of consensus parts (kind ``"consensus"``, work method ``combine``).

``combine(memberships, k, ctx)`` turns an ensemble's point × base-cluster
:class:`graphclust.Memberships` into integer labels of shape ``(n,)`` in ``[0, k)``.
The kit's memberships come from three "members" on its blobs: the true partition, the
same relabelled, and a finer partition that splits one true cluster in two. Own checks:
``identical-members`` (members that all agree give their partition back, up to
relabelling), ``one-cluster`` (``k = 1`` works) and ``assign`` (when implemented, the
training points' membership rows get their ``combine`` labels back), and ``chunked``
for a ``chunkwise`` consensus (``combine_chunked`` over three row blocks of the
memberships, its ``rounding_`` fitted on ``embed_rows`` of every block then applied,
gives ``combine``'s labels). A consensus runs inside an ensemble, not a pipeline, so
the kind has no pipeline check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphclust import Memberships
from graphclust.numerics import same_partition
from graphclust import Consensus, Context, Part
from graphclust.testing._common import Session
from graphclust.testing._contract import (
    KindCheck,
    KindContract,
    Variant,
    check_labels,
    ensure,
    guard,
)
from graphclust.testing._fixture import Fixture

__all__ = ["ConsensusContract", "CONTRACT"]


def _members(fx: Fixture) -> Memberships:
    """Three members' labels on the fixture: truth, truth relabelled, one cluster split."""
    y = np.asarray(fx.y, dtype=np.int64)
    k = int(y.max()) + 1
    shifted = (y + 1) % k
    split = y.copy()
    first = np.flatnonzero(y == 0)
    split[first[: first.size // 2]] = k
    return Memberships.from_labels([y, shifted, split])


def _check_identical_members(session: Session) -> None:
    """Members that all give the same partition: ``combine`` gives it back."""
    cls, c = session.cls, "identical-members"
    fx = session.fixture()
    y = np.asarray(fx.y, dtype=np.int64)
    p = session.instance(c)
    with guard(cls, c, "combine(<three identical members>)"):
        labels = np.asarray(p.combine(Memberships.from_labels([y, y, y]), fx.n_clusters,
                                      Context(seed=0)))
    ensure(labels.shape == y.shape and same_partition(labels, y), cls, c,
           "identical members must give their common partition back (up to relabelling)")


def _check_one_cluster(session: Session) -> None:
    """``combine`` with ``n_clusters = 1`` labels everything 0."""
    cls, c = session.cls, "one-cluster"
    fx = session.fixture()
    p = session.instance(c)
    with guard(cls, c, "combine(memberships, n_clusters=1)"):
        labels = np.asarray(p.combine(_members(fx), 1, Context(seed=0)))
    ensure(labels.shape == (fx.X.shape[0],) and np.all(labels == 0), cls, c,
           "n_clusters = 1 must label every point 0")


def _check_assign(session: Session) -> None:
    """``assign`` after ``combine`` gives the training rows their labels back."""
    cls, c = session.cls, "assign"
    fx = session.fixture()
    p = session.instance(c)
    memberships = _members(fx)
    with guard(cls, c, "combine() then assign(<the training rows>)"):
        labels = np.asarray(p.combine(memberships, fx.n_clusters, Context(seed=0)))
        again = np.asarray(p.assign(memberships))
    ensure(again.shape == labels.shape and np.array_equal(again, labels), cls, c,
           "assign() must give the training points' membership rows their combine() labels")


def _check_chunked(session: Session) -> None:
    """``combine_chunked`` over three row blocks, the rounding fitted on every block's
    ``embed_rows`` and applied, gives the labels of ``combine`` (the chunked execution's
    consensus, :mod:`graphclust._dask._ensemble`, with a sample of all rows)."""
    from graphclust import Solution
    from graphclust.chunks import InMemoryChunks

    cls, c = session.cls, "chunked"
    fx = session.fixture()
    memberships = _members(fx)
    B, k = memberships.matrix, fx.n_clusters
    chunks = InMemoryChunks(np.zeros((B.shape[0], 0)), B, block_rows=-(-B.shape[0] // 3))
    with guard(cls, c, "combine(), then combine_chunked(), embed_rows() per block and "
               "rounding_.round() / assign()"):
        ref = np.asarray(session.instance(c).combine(memberships, k, Context(seed=0)))
        p = session.instance(c)
        p.combine_chunked(chunks, k, Context(seed=0))
        coords = np.vstack([p.embed_rows(b) for b in chunks.blocks()])
        p.rounding_.round(Solution(embedding=coords), k, Context(seed=0))
        got = np.concatenate([np.asarray(p.rounding_.assign(Solution(
            embedding=p.embed_rows(b)))) for b in chunks.blocks()])
    ensure(got.shape == ref.shape and np.array_equal(got, ref), cls, c,
           "the chunked consensus labels differ from combine()'s "
           f"({int((got != ref).sum()) if got.shape == ref.shape else got.shape} differ)")


class ConsensusContract(KindContract):
    """The consensus contract."""

    kind = "consensus"
    label = "consensus"
    work_method = "combine"
    float32_input = False
    attributes = (
        ("assign", "method, optional: labels of new points from their membership rows "
                   "after ``combine`` (enables an ensemble's ``predict``)"),
    )

    def inputs(self, inst: Part, fx: Fixture, X: Any, variant: Variant,
               n_clusters: int) -> tuple:
        return (_members(fx),)

    def invoke(self, inst: Part, args: tuple, ctx: Context, n_clusters: int) -> Any:
        return inst.combine(args[0], n_clusters, ctx)

    def check_output(self, inst: Part, out: Any, fx: Fixture, X: Any, *, check: str,
                     variant: Variant, n_clusters: int) -> None:
        check_labels(type(inst), check, out, X.shape[0], n_clusters, "combine()")

    def extra_checks(self, cls: type[Part]) -> list[KindCheck]:
        checks = [KindCheck("identical-members", "identical members give their partition "
                            "back.", _check_identical_members),
                  KindCheck("one-cluster", "n_clusters = 1 labels everything 0.",
                            _check_one_cluster)]
        if getattr(cls, "assign", None) is not Consensus.assign:
            checks.append(KindCheck("assign", "assign() gives training rows their labels.",
                                    _check_assign))
        if getattr(cls, "chunkwise", False):
            checks.append(KindCheck("chunked", "chunkwise: combine_chunked() over row blocks, "
                                    "rounding on embed_rows(), equals combine().",
                                    _check_chunked))
        return checks


CONTRACT = ConsensusContract()
