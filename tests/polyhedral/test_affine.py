"""Affine expressions, isl construction by name, and integer reuse lattices."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from odyssey.polyhedral.affine import Affine, box_set, integer_null_space


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
