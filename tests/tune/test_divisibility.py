"""Divisors by factorization and tile-count breakpoints in closed form, checked against
brute force on small numbers (hypothesis) and timed on large ones."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odyssey.tune.divisibility import TileBreaks, divisors, factorize, is_prime


def _brute_divisors(n: int) -> tuple[int, ...]:
    return tuple(d for d in range(1, n + 1) if n % d == 0)


def _brute_breaks(sources: set[tuple[str, int]], top: int) -> list[int]:
    """Every T in [2, top] where some ceil(n/T) or floor(n/T) differs from its value at T-1."""
    out = []
    for t in range(2, top + 1):
        for kind, n in sources:
            f = (lambda a, b: -(-a // b)) if kind == "ceildiv" else (lambda a, b: a // b)
            if f(n, t) != f(n, t - 1):
                out.append(t)
                break
    return out


@given(st.integers(1, 5000))
def test_divisors_match_brute_force(n: int) -> None:
    assert divisors(n) == _brute_divisors(n)


@given(st.integers(1, 2**62))
def test_factorization_multiplies_back(n: int) -> None:
    f = factorize(n)
    assert math.prod(p**k for p, k in f) == n
    assert all(is_prime(p) for p, _ in f)
    assert [p for p, _ in f] == sorted({p for p, _ in f})


def test_is_prime_small_and_strong_pseudoprimes() -> None:
    primes = [n for n in range(200) if is_prime(n)]
    assert primes == [n for n in range(2, 200) if all(n % d for d in range(2, n))]
    assert not is_prime(3215031751)  # a strong pseudoprime to bases 2, 3, 5, 7
    assert is_prime(2**61 - 1) and not is_prime(2**62 - 1)


def test_divisors_of_large_numbers_are_fast() -> None:
    start = time.perf_counter()
    for n in (2**48, 2**62, 2**61 - 1, (2**31 - 1) * (2**31 + 11), 3**39, 720720 * 2**40):
        d = divisors(n)
        assert d[0] == 1 and d[-1] == n and all(n % x == 0 for x in d[:50])
    assert divisors(2**62) == tuple(2**k for k in range(63))
    assert time.perf_counter() - start < 5.0


@settings(max_examples=200)
@given(st.sets(st.tuples(st.sampled_from(["ceildiv", "floordiv"]), st.integers(1, 400)),
               min_size=1, max_size=3),
       st.lists(st.floats(1.0, 500.0), min_size=1, max_size=20))
def test_breakpoints_match_brute_force(sources: set[tuple[str, int]], xs: list[float]) -> None:
    brute = np.array(_brute_breaks(sources, 600))
    prev, nxt = TileBreaks.of(sources).around(np.array(xs))
    for x, p, n in zip(xs, prev, nxt, strict=True):
        below, above = brute[brute < x], brute[brute >= x]
        assert p == (below.max() if len(below) else 0)
        assert n == (above.min() if len(above) else 0)


def test_breakpoints_at_2_to_the_48_are_closed_form() -> None:
    n = 2**48
    breaks = TileBreaks.of({("ceildiv", n), ("floordiv", n)})
    x = np.array([1.0, 1e3, 2.0**24 + 0.5, 1e12, 2.0**47 + 3, 2.0**48 + 5])
    prev, nxt = breaks.around(x)
    for t, p, q in zip(x, prev, nxt, strict=True):
        # a breakpoint changes floor(m/T) for m = n or n-1; none lies strictly between
        for b in (p, q):
            if b:
                assert any(m // b != m // (b - 1) for m in (n, n - 1))
        assert p == 0 or p < t
        assert q == 0 or q >= t
    assert nxt[-1] == 0 and prev[-1] == n + 1  # beyond n: floor(n/T) = 0 from n + 1 on


def test_search_space_samples_roots_log_uniformly_beyond_the_sweep_limit() -> None:
    from odyssey.model.design_model import ParamSpec
    from odyssey.tune.space import SearchSpace

    n = 2**60
    space = SearchSpace([ParamSpec("T_i1", "i", "array_part", 1, n, None),
                         ParamSpec("T_i2", "i", "latency", 1, 32, "T_i1")])
    g = space.sample(np.random.default_rng(0), 2000)
    assert all(space.is_legal(row) for row in g.tolist())
    # log-uniform: about half the roots below 2**30 (uniform: a 2**-30 chance each)
    assert 0.4 < float(np.mean(g[:, 0] < 2**30)) < 0.6
    assert space.legal_divisors(1, 2**59 * 3) == (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


def test_pareto_grid_of_a_huge_space_is_estimated_not_listed() -> None:
    from odyssey.errors import TunerError
    from odyssey.model.design_model import ParamSpec
    from odyssey.tune.pareto.enumeration import TilingGrid, neighbours
    from odyssey.tune.space import SearchSpace

    def space(n: int) -> SearchSpace:
        return SearchSpace([ParamSpec("T_i1", "i", "array_part", 1, n, None),
                            ParamSpec("T_i2", "i", "latency", 1, 8, "T_i1")])

    small = TilingGrid(space(4096))
    assert small.listed and small.exact_size
    # the estimate's method on a small space, where the exact count is known
    from odyssey.tune.pareto.enumeration import _estimate
    est = _estimate(small.space, small.space.chains[0])
    assert abs(est - small.size) < 0.15 * small.size
    huge = TilingGrid(space(2**40))
    assert not huge.listed and not huge.exact_size and huge.size > 2**40
    with pytest.raises(TunerError, match="too many to enumerate"):
        huge.block(0, 10)
    g = (3 * 2**30, 4)
    moves = neighbours(huge, g)
    assert 0 < len(moves) <= 2**15 and all(huge.space.is_legal(m) for m in moves.tolist())
    assert all((m[0] == g[0]) != (m[1] == g[1]) for m in moves.tolist())  # one factor moved
