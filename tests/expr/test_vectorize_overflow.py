"""Integer arithmetic that would overflow int64 runs in float64 instead of wrapping around."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from odyssey.expr import ceil_div, compile_vectorized, emax, sym

SI, SJ, SK, ST = (sym(n) for n in ("I", "J", "K", "T"))


def test_products_beyond_int64_become_floats() -> None:
    fn = compile_vectorized({"work": SI * SJ * SK, "tiles": ceil_div(SI * SJ * SK, ST) + 37}, ["I", "J", "K", "T"])
    n = 10**8
    out = fn({"I": np.array([n, 2]), "J": np.array([n, 3]), "K": np.array([n, 5]), "T": np.array([7, 2])})
    assert out["work"].dtype == np.float64
    assert out["work"][0] == float(n**3) and out["work"][1] == 30.0
    assert np.isclose(out["tiles"][0], n**3 / 7 + 37, rtol=1e-15)
    assert out["tiles"][1] == 15 + 37


def test_small_values_stay_exact_int64() -> None:
    fn = compile_vectorized({"work": SI * SJ * SK, "pow": (SI + SJ) ** 3}, ["I", "J", "K"])
    out = fn({"I": np.array([1024, 3]), "J": np.array([1024, 1]), "K": np.array([1023, 7])})
    assert out["work"].dtype == np.int64 and out["work"].tolist() == [1024 * 1024 * 1023, 21]
    assert out["pow"].dtype == np.int64 and out["pow"].tolist() == [2048**3, 64]


def test_constant_beyond_int64() -> None:
    fn = compile_vectorized({"y": emax(SI, 2**70) - 1}, ["I"])
    assert fn({"I": np.array([5])})["y"][0] == float(2**70)


@given(st.lists(st.integers(1, 2**62), min_size=3, max_size=3), st.integers(1, 2**62))
def test_never_wraps(sizes: list[int], t: int) -> None:
    """The sign and magnitude are right at every size up to 2**62 (no silent wrap)."""
    fn = compile_vectorized({"y": ceil_div(SI * SJ * SK, ST) + SI * SJ}, ["I", "J", "K", "T"])
    i, j, k = sizes
    got = float(fn({"I": np.array([i]), "J": np.array([j]), "K": np.array([k]), "T": np.array([t])})["y"][0])
    want = -(-(i * j * k) // t) + i * j
    assert got > 0 and abs(got - want) <= 1e-12 * want + 1


def test_integers_beside_a_float_do_not_wrap_first() -> None:
    """``I * J * x`` with ``x`` a float: numpy would form ``I * J`` in int64 first."""
    fn = compile_vectorized({"y": SI * SJ * (SK / 2)}, ["I", "J", "K"])
    n = 2**40
    got = fn({"I": np.array([n]), "J": np.array([n]), "K": np.array([4])})["y"][0]
    assert got == float(n) * n * 2
