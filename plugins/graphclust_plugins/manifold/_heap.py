"""Bounded max-heaps of ``(priority, index)`` pairs: the ``k`` smallest kept while a
search runs, the largest at the root (replaced when a smaller pair is offered). Shared
by NN-descent's neighbour lists (:mod:`._nndescent`) and the k-d tree's queries
(:mod:`._kdtree`)."""

from __future__ import annotations

import numba

__all__ = ["above", "sift_down"]


@numba.njit(forceinline=True, cache=True)
def above(p1, i1, p2, i2):
    """Whether heap entry ``(p1, i1)`` ranks above ``(p2, i2)``: by priority, then by
    index, an empty slot (index −1) above every entry."""
    if p1 != p2:
        return p1 > p2
    if i1 < 0 or i2 < 0:
        return i1 < 0 and i2 >= 0
    return i1 > i2


@numba.njit(forceinline=True, cache=True)
def sift_down(pri, ind, flag, size):
    """Restore the max-heap order (:func:`above`) after the root was replaced; ``ind``
    and ``flag`` move with ``pri``."""
    i = 0
    while True:
        left = 2 * i + 1
        right = left + 1
        top = i
        if left < size and above(pri[left], ind[left], pri[top], ind[top]):
            top = left
        if right < size and above(pri[right], ind[right], pri[top], ind[top]):
            top = right
        if top == i:
            return
        pri[i], pri[top] = pri[top], pri[i]
        ind[i], ind[top] = ind[top], ind[i]
        flag[i], flag[top] = flag[top], flag[i]
        i = top
