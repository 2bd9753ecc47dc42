"""Divisors and tile-count breakpoints without ranges as long as a loop.

A tiling's loop bounds reach 2**62, so nothing here walks ``range(1, n)``:

* :func:`divisors` factors ``n`` (trial division by the primes below 2**10, then
  Pollard's rho with Brent's cycle finding and a deterministic Miller-Rabin test, exact
  for every ``n < 3.3 * 10**24``) and multiplies the prime powers out: milliseconds at any
  size, where trial division up to ``sqrt(n)`` takes minutes at 2**48.
* :class:`TileBreaks` answers "the nearest ``T`` around ``x`` at which ``floor(n/T)``
  (or ``ceil(n/T)``) changes" in closed form, per numerator ``O(1)`` numpy operations:
  ``floor(n/T) = q`` exactly for ``T`` in ``[floor(n/(q+1)) + 1, floor(n/q)]``, so the
  breakpoints (``T >= 2`` with ``floor(n/T) != floor(n/(T-1))``) are ``floor(n/q) + 1`` for
  ``q >= 1``; and ``ceil(n/T) = floor((n-1)/T) + 1`` has the breakpoints of ``n - 1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from odyssey.errors import TunerError

Array = np.ndarray[Any, Any]

_SMALL_PRIMES = tuple(p for p in range(2, 1024) if all(p % d for d in range(2, math.isqrt(p) + 1)))
_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin (the first 13 prime bases: exact below 3.3 * 10**24)."""
    if n < 2:
        return False
    for p in _SMALL_PRIMES[:13]:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _rho(n: int) -> int:
    """A non-trivial factor of the odd composite ``n`` (Pollard-Brent, deterministic seeds)."""
    for c in range(1, 1 << 20):
        y, m, g, r, q = 2, 128, 1, 1, 1
        x = ys = y
        while g == 1:
            x = y
            for _ in range(r):
                y = (y * y + c) % n
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(m, r - k)):
                    y = (y * y + c) % n
                    q = q * abs(x - y) % n
                g = math.gcd(q, n)
                k += m
            r *= 2
        if g == n:
            g = 1
            while g == 1:
                ys = (ys * ys + c) % n
                g = math.gcd(abs(x - ys), n)
        if g != n:
            return g
    raise AssertionError(f"Pollard's rho found no factor of {n}")  # pragma: no cover


@lru_cache(maxsize=65536)
def factorize(n: int) -> tuple[tuple[int, int], ...]:
    """The prime factorization of ``n >= 1`` as ``((p, k), ...)``, primes increasing."""
    if n < 1:
        raise TunerError(f"factorize: n must be a positive integer, got {n!r}")
    out: dict[int, int] = {}
    for p in _SMALL_PRIMES:
        if p * p > n:
            break
        while n % p == 0:
            out[p] = out.get(p, 0) + 1
            n //= p
    stack = [n] if n > 1 else []
    while stack:
        m = stack.pop()
        if is_prime(m):
            out[m] = out.get(m, 0) + 1
        else:
            f = _rho(m)
            stack += [f, m // f]
    return tuple(sorted(out.items()))


@lru_cache(maxsize=65536)
def divisors(n: int) -> tuple[int, ...]:
    """The positive divisors of ``n >= 1`` in increasing order (from :func:`factorize`;
    cached per integer)."""
    if n < 1:
        raise TunerError(f"divisors: n must be a positive integer, got {n!r}")
    divs = [1]
    for p, k in factorize(n):
        divs = [d * p**e for d in divs for e in range(k + 1)]
    return tuple(sorted(divs))


@dataclass(frozen=True, slots=True)
class TileBreaks:
    """The values ``T >= 2`` at which some ``floor(m/T)`` changes, for the numerators
    ``m`` in ``numerators`` (``floor(n/T)``: ``m = n``; ``ceil(n/T)``: ``m = n - 1``), never
    listed: :meth:`around` finds the nearest ones in closed form (module docstring)."""

    numerators: tuple[int, ...]

    @classmethod
    def of(cls, sources: set[tuple[Literal["ceildiv", "floordiv"] | str, int]]) -> TileBreaks:
        """From ``(kind, n)`` pairs: ``ceil(n/T)`` when ``kind`` is ``"ceildiv"``, else
        ``floor(n/T)``."""
        nums = {n - 1 if kind == "ceildiv" else n for kind, n in sources}
        return cls(tuple(sorted(m for m in nums if m >= 1)))

    def __len__(self) -> int:
        return len(self.numerators)

    def around(self, x: Array) -> tuple[Array, Array]:
        """Per value of ``x`` (floats ``>= 1``): the largest breakpoint below it and the
        smallest at or above it, as int64 arrays, 0 where there is none."""
        t0 = np.maximum(np.ceil(np.asarray(x, dtype=np.float64)), 2).astype(np.int64)
        t1 = t0 - 1
        prev = np.zeros(t0.shape, dtype=np.int64)
        nxt = np.zeros(t0.shape, dtype=np.int64)
        for m in self.numerators:
            # the smallest breakpoint >= t0: t0 itself, else the end of its run plus one
            q = m // t0
            here = q != m // (t0 - 1)
            cand = np.where(here, t0, np.where(q >= 1, m // np.maximum(q, 1) + 1, 0))
            nxt = np.where((cand > 0) & ((nxt == 0) | (cand < nxt)), cand, nxt)
            # the largest breakpoint <= t1 = t0 - 1: the start of t1's run, if it is >= 2
            start = m // (m // np.maximum(t1, 1) + 1) + 1
            ok = (t1 >= 2) & (start >= 2)
            prev = np.where(ok & (start > prev), start, prev)
        return prev, nxt


#: a sweep over a range at most this long visits every value (every bundled size does)
SWEEP_LIMIT = 1 << 14


def sweep_values(lo: int, hi: int, *, around: int, limit: int = SWEEP_LIMIT) -> Array:
    """The values of ``[lo, hi]`` a sweep of one coordinate visits, sorted (int64): all of
    them when there are at most ``limit``; else the ``limit // 2`` nearest ``around`` and
    ``limit // 2`` spread geometrically from ``lo`` to ``hi`` (both included), so a sweep
    costs the same at 2**48 as at 2**14."""
    if hi - lo + 1 <= limit:
        return np.arange(lo, hi + 1, dtype=np.int64)
    half = limit // 4
    c = min(max(int(around), lo + half), hi - half)
    near = np.arange(c - half, c + half, dtype=np.int64)
    spread = np.geomspace(max(lo, 1), hi, num=limit // 2)
    far = np.clip(np.rint(spread), lo, hi).astype(np.int64)
    return np.unique(np.concatenate([near, far, np.array([lo, hi], dtype=np.int64)]))
