"""Exact sums of float64 values: the same bits whatever the order, the chunking or the
scheduler.

Floating-point addition is not associative, so a sum over row blocks differs in its last
bits from one sum over all rows, and from a sum over other blocks. Where a step after the
sum amplifies round-off (U-SPEC's transfer cut is rounded by a k-means whose result moved
under a one-ulp change of the bandwidth: ARI 0.82 between 1797 digits in one chunk and in
4), the labels then depend on how the rows were cut. :class:`ExactSum` removes the cause:
every value is split into integer digits of 32 bits on a fixed grid and the digits are
added in 64-bit integers, which is exact and associative; only the final conversion to
float64 rounds, once, from the exact total, so the result is a function of the multiset
of values alone.

The grid spans ``2**top`` (values must be smaller in magnitude) down to
``2**(top - 32 * n_digits)``; the bits of a value below that floor are dropped (the value
is truncated towards zero, the same way wherever it is summed). The defaults cover every
float64 (``top = 1024``, 69 digits), which suits a few sums; a sum of many groups (a sparse
``m x m`` matrix) passes a narrower window.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ExactSum"]

_BITS = 32
_MASK = (1 << _BITS) - 1
#: Values added per ``bincount`` (float64 counts are exact below 2**53: 2**20 values of
#: digits below 2**32 each).
_SLAB = 1 << 20
FULL_TOP = 1024
FULL_DIGITS = 69  # 1024 + 1074 + 53 bits of float64's range, in 32-bit digits


class ExactSum:
    """The exact sum of float64 values in ``n_groups`` groups (or at ``keys``).

    Build one with :meth:`of`; add two with ``+`` (exact, associative); read the float64
    sums with :meth:`value`. Objects of different windows do not add.

    Attributes
    ----------
    top, n_digits : int
        The grid (see the module notes).
    digits : ndarray of shape (n_digits + 2, n_groups), int64
        Normalised digits (every one in ``[0, 2**32)`` but the last, which holds the sign
        and any overflow).
    keys : ndarray of shape (n_groups,), int64, or None
        Sorted group identifiers of a sparse sum (:meth:`of` with ``keys``); ``None`` for
        groups ``0..n_groups-1``.
    """

    def __init__(self, digits: np.ndarray, top: int, n_digits: int,
                 keys: np.ndarray | None = None):
        self.digits = digits
        self.top, self.n_digits = int(top), int(n_digits)
        self.keys = keys

    @classmethod
    def of(cls, values, groups=None, n_groups: int = 1, *, keys: bool = False,
           top: int = FULL_TOP, n_digits: int = FULL_DIGITS) -> ExactSum:
        """The exact sums of ``values`` by ``groups`` (int indices in ``[0, n_groups)``;
        all in group 0 when ``None``). With ``keys=True`` the groups are arbitrary int64
        identifiers and only those present are kept (a sparse sum).

        Raises
        ------
        ValueError
            A value that is not finite or not below ``2**top`` in magnitude.
        """
        v = np.asarray(values, dtype=np.float64).ravel()
        g = (np.zeros(v.size, dtype=np.int64) if groups is None
             else np.asarray(groups, dtype=np.int64).ravel())
        key_list = None
        if keys:
            key_list, g = np.unique(g, return_inverse=True)
            n_groups = key_list.size
        n_groups = int(n_groups)
        if v.size and not np.all(np.isfinite(v)):
            raise ValueError("ExactSum: values must be finite")
        if v.size and top < FULL_TOP and np.abs(v).max() >= 2.0 ** top:
            raise ValueError(f"ExactSum: a value of magnitude >= 2**{top}")
        width = n_digits + 2
        digits = np.zeros((width, n_groups), dtype=np.int64)
        for lo in range(0, v.size, _SLAB):
            _add_slab(digits, v[lo:lo + _SLAB], g[lo:lo + _SLAB], top - _BITS * n_digits,
                      n_groups)
            _normalise(digits)
        return cls(digits, top, n_digits, key_list)

    def __add__(self, other: ExactSum) -> ExactSum:
        if not isinstance(other, ExactSum):
            return NotImplemented
        if (self.top, self.n_digits) != (other.top, other.n_digits):
            raise ValueError("ExactSum: cannot add sums of different windows")
        if (self.keys is None) != (other.keys is None):
            raise ValueError("ExactSum: cannot add a dense and a keyed sum")
        if self.keys is None:
            if self.digits.shape != other.digits.shape:
                raise ValueError("ExactSum: cannot add sums of different numbers of groups")
            out = self.digits + other.digits
            keys = None
        else:
            keys = np.union1d(self.keys, other.keys)
            out = np.zeros((self.digits.shape[0], keys.size), dtype=np.int64)
            out[:, np.searchsorted(keys, self.keys)] += self.digits
            out[:, np.searchsorted(keys, other.keys)] += other.digits
        _normalise(out)
        return ExactSum(out, self.top, self.n_digits, keys)

    def value(self) -> np.ndarray:
        """The float64 sums, one per group (per key): each exact total (a Python integer
        times ``2**floor``) rounded once, correctly (Python's integer true division)."""
        floor = self.top - _BITS * self.n_digits
        rows = [row.tolist() for row in self.digits]
        out = np.empty(self.digits.shape[1])
        scale = 1 << max(-floor, 0)
        for j in range(out.size):
            total = 0
            for k in range(len(rows) - 1, -1, -1):
                total = (total << _BITS) + rows[k][j]
            out[j] = total / scale if floor < 0 else float(total << floor)
        return out


def _add_slab(digits: np.ndarray, v: np.ndarray, g: np.ndarray, floor: int,
              n_groups: int) -> None:
    """Add the digits of at most ``_SLAB`` values into ``digits`` (exact: each bin of the
    float64 ``bincount`` stays below 2**53)."""
    sign = np.where(v < 0, -1, 1).astype(np.int64)
    mant, ex = np.frexp(np.abs(v))
    M = np.ldexp(mant, 53).astype(np.int64)  # |v| = M * 2**(ex - 53), exactly
    rel = ex.astype(np.int64) - 53 - floor  # the position of M's lowest bit on the grid
    keep = (M > 0) & (rel > -53)
    M, rel, g, sign = M[keep], rel[keep], g[keep], sign[keep]
    # a value wholly or partly below the floor: drop its low bits (towards zero)
    low = rel < 0
    M[low] = M[low] >> (-rel[low])
    rel[low] = 0
    k0 = rel // _BITS
    sh = rel - _BITS * k0
    lo_part = (M & _MASK) << sh  # < 2**63
    hi_part = (M >> _BITS) << sh  # < 2**52
    width = digits.shape[0]
    for k, part in ((k0, lo_part & _MASK), (k0 + 1, lo_part >> _BITS),
                    (k0 + 1, hi_part & _MASK), (k0 + 2, hi_part >> _BITS)):
        ok = part != 0
        if not ok.any():
            continue
        flat = k[ok] * n_groups + g[ok]
        counts = np.bincount(flat, weights=(sign[ok] * part[ok]).astype(np.float64),
                             minlength=width * n_groups)
        digits += np.rint(counts).astype(np.int64).reshape(width, n_groups)


def _normalise(digits: np.ndarray) -> None:
    """Carry every digit but the last into ``[0, 2**32)`` (floor division), in place."""
    for k in range(digits.shape[0] - 1):
        carry = digits[k] >> _BITS
        digits[k] -= carry << _BITS
        digits[k + 1] += carry
