"""Affine expressions, isl construction by name, and integer reuse lattices."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from odyssey.polyhedral.affine import Affine, box_set, count_points, integer_null_space


def test_affine_arithmetic_and_printing() -> None:
    e = Affine.var("h") + Affine.var("p") - Affine.constant(1)
    assert e.coeff("h") == 1 and e.const == -1
    assert str(e) == "h + p - 1"
    assert e.evaluate({"h": 3, "p": 2}) == 4
    assert (e - e).is_constant() and (e - e).const == 0


def test_box_set_is_built_by_name() -> None:
    n = Affine.var("N")
    i, j = Affine.var("i"), Affine.var("j")
    tri = box_set(["i", "j"], ["N"], [(i, ">=0"), (n - i - Affine.constant(1), ">=0"),
                                      (j, ">=0"), (i - j, ">=0")])
    assert "j <= i" in str(tri)


def test_null_space_of_convolution_input() -> None:
    """fi[i][h+p][w+q] over (o,h,w,i,p,q): reuse along o, and diagonally along (h,-p), (w,-q)."""
    rows = [[0, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1]]
    assert integer_null_space(rows, 6) == [(1, 0, 0, 0, 0, 0), (0, 1, 0, 0, -1, 0), (0, 0, 1, 0, 0, -1)]


@given(st.lists(st.lists(st.integers(-3, 3), min_size=4, max_size=4), min_size=0, max_size=3))
def test_null_space_vectors_are_in_the_kernel_and_lex_positive(rows: list[list[int]]) -> None:
    basis = integer_null_space(rows, 4)
    for v in basis:
        assert any(v)
        assert next(x for x in v if x) > 0
        for row in rows:
            assert sum(a * b for a, b in zip(row, v, strict=True)) == 0
    rank = 4 - len(basis)
    assert rank <= len([r for r in rows if any(r)])


@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), st.integers(-3, 3),
       st.permutations([0, 1, 2]))
def test_count_points_equals_isl_count(n: int, m: int, k: int, shift: int, order: list[int]) -> None:
    """A triangle times a free loop, in every dimension order: the same count as isl's scan."""
    import islpy as isl

    names = [("i", n), ("j", m), ("k", k)]
    dims = ", ".join(names[d][0] for d in order)
    s = isl.Set(f"{{ S[{dims}] : 0 <= i < {n} and 0 <= j < {m} and j <= i + {shift} "
                f"and 0 <= k < {k} }}")
    assert count_points(s, max_scanned=10**6) == s.count_val().to_python()


def test_count_points_factors_free_loops_and_refuses_a_long_scan() -> None:
    """SYRK's domain at N = K = 2**40: the free loop is a factor (no scan), but the triangle
    would scan 2**40 points; isl's own count of it never returned."""
    import islpy as isl

    big = 2**40
    syrk = isl.Set(f"{{ S[i, j, k] : 0 <= j <= i < {2**20} and 0 <= k < {big} }}")
    assert count_points(syrk, max_scanned=2**22) == big * 2**20 * (2**20 + 1) // 2
    huge = isl.Set(f"{{ S[i, j, k] : 0 <= j <= i < {big} and 0 <= k < {big} }}")
    assert count_points(huge, max_scanned=2**22) is None
