"""`find_optimum`: sound interval bounds (property tests) and the branch and bound against a
plain exhaustive enumeration of every legal tiling on problems small enough to enumerate."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odyssey.cli import main
from odyssey.codegen.geometry import pow2_lanes
from odyssey.errors import TunerError
from odyssey.expr import (
    Expr,
    Mul,
    Pow,
    ceil_div,
    compile_vectorized,
    const,
    div,
    eceil,
    elog2,
    emax,
    emin,
    epow,
    eq,
    floor_div,
    is_integer_valued,
    le,
    sym,
    where,
)
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import DesignModel, build_model
from odyssey.platforms import load_platform, with_kernel_resources
from odyssey.tune.exact.optimum import OptimumResult, find_optimum
from odyssey.tune.exact.optimum_bounds import ChildRange, IntervalProgram
from odyssey.tune.exact.optimum_budget import model_budgets
from odyssey.tune.exact.optimum_interval import _first_multiple
from odyssey.tune.exact.optimum_rewrite import Coordinates

ROOT = Path(__file__).resolve().parents[2]
MM = str(ROOT / "kernels" / "mm.c")
CNN = str(ROOT / "kernels" / "cnn.c")


@functools.cache
def _model(kernel: str, sizes: tuple[tuple[str, int], ...], design: str, dsp: int = 100,
           bram: int = 40) -> DesignModel:
    """A design's model on a small U250 (``dsp`` DSPs, ``bram`` BRAM18Ks, 70 % usable), so the
    resource constraints bind on small problems."""
    ks = analyse(load_scop(kernel, {k: str(v) for k, v in sizes}))
    plat = load_platform("u250")
    plat = with_kernel_resources(plat, dsp=dsp, bram18k=bram)
    return build_model(ks, ks.design(design), platform=plat)


def _mm(i: int, j: int, k: int, design: str, **kw: int) -> DesignModel:
    return _model(MM, (("I", i), ("J", j), ("K", k)), design, **kw)


def _legal_tilings(model: DesignModel) -> dict[str, np.ndarray]:
    """Every legal tiling: per loop, the chains (T1, T2 | T1), then their cartesian product."""
    loops: dict[str, list[dict[str, int]]] = {}
    for p in sorted(model.params, key=lambda p: p.divides is not None):
        combos = loops.setdefault(p.loop, [{}])
        loops[p.loop] = [dict(c, **{p.name: v}) for c in combos for v in range(p.lower, p.upper + 1)
                         if p.divides is None or c[p.divides] % v == 0]
    grids = np.meshgrid(*[np.arange(len(c)) for c in loops.values()], indexing="ij")
    out: dict[str, np.ndarray] = {}
    for g, combos in zip(grids, loops.values(), strict=True):
        for name in combos[0]:
            out[name] = np.array([c[name] for c in combos])[g.ravel()]
    return out


def _brute_force(model: DesignModel) -> float:
    """The lowest latency of a feasible legal tiling, by evaluating every one."""
    pts = _legal_tilings(model)
    ev = model.evaluate(pts)
    assert ev.legal.all()
    return float(np.min(np.where(ev.feasible, ev.latency_cycles, np.inf)))


# ------------------------------------------------------------ interval soundness

_SYMS = ("x", "y")
_LANES_ARGS = st.sampled_from([sym("x"), sym("y"), sym("x") * sym("y"), sym("x") + sym("y") - 1])


def _words_of(k: Expr, y: Expr) -> Expr:
    """``k * y * lanes(y)**-1`` as one product, as the rewritten models hold it."""
    return Mul((k, *(y.factors if isinstance(y, Mul) else (y,)), Pow(pow2_lanes([y], 32), -1)))


def _expressions() -> st.SearchStrategy[Expr]:
    x = st.sampled_from([sym(n) for n in _SYMS])
    leaf = st.one_of(x, st.integers(-6, 40).map(const))

    def grow(kid: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        pair = st.tuples(kid, kid)
        modulus = st.sampled_from([2, 3, 4, 8, 16])
        return st.one_of(
            pair.map(lambda t: t[0] + t[1]), pair.map(lambda t: t[0] - t[1]),
            pair.map(lambda t: t[0] * t[1]), pair.map(lambda t: emax(*t)), pair.map(lambda t: emin(*t)),
            st.tuples(kid, st.integers(1, 9)).map(lambda t: floor_div(*t)),
            st.tuples(kid, x).map(lambda t: ceil_div(*t)),
            st.tuples(st.integers(1, 3000), x).map(lambda t: ceil_div(*t)),
            st.tuples(kid, x).map(lambda t: div(*t)),
            st.tuples(kid, x).map(lambda t: eceil(div(*t))),
            st.tuples(kid, modulus).map(lambda t: t[0] - t[1] * floor_div(t[0], t[1])),  # t mod k
            st.tuples(kid, modulus).map(lambda t: eq(t[0] - t[1] * floor_div(t[0], t[1]), 0)),
            st.tuples(kid, kid, kid, kid).map(lambda t: where(le(t[0], t[1]), t[2], t[3])),
            st.tuples(kid, kid, kid).map(lambda t: where(eq(t[0], t[1]), t[2], 1)),
            kid.map(lambda e: epow(e, 2)), x.map(lambda e: elog2(e) * 3),
            # the words of a packed transfer, y / lanes(y), within a product
            st.tuples(kid, _LANES_ARGS).map(lambda t: _words_of(t[0], t[1])),
        )

    return st.recursive(leaf, grow, max_leaves=10)


@st.composite
def _boxes(draw: st.DrawFn, dims: int, upper: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo, hi, mod = [], [], []
    for _ in range(dims):
        a = draw(st.integers(1, upper))
        m = draw(st.sampled_from([1, 1, 2, 3, 4, 8, 16]))
        n = draw(st.integers(0, upper // m))
        lo.append(a)
        hi.append(a + n * m)
        mod.append(m)
    return (np.array([lo], dtype=np.int64), np.array([hi], dtype=np.int64), np.array([mod], dtype=np.int64))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expressions(), _boxes(len(_SYMS)), st.integers(0, 2**32 - 1))
def test_interval_contains_every_value_in_the_box(e: Expr, box: tuple[np.ndarray, ...], seed: int) -> None:
    lo, hi, mod = box
    bounds = IntervalProgram({"e": e}, _SYMS)(lo, hi, mod)
    rng = np.random.default_rng(seed)
    pts = {n: lo[0, d] + mod[0, d] * rng.integers(0, (hi[0, d] - lo[0, d]) // mod[0, d] + 1, 200)
           for d, n in enumerate(_SYMS)}
    run = compile_vectorized({"e": e}, _SYMS)
    vals = run(pts)["e"].astype(np.float64)
    # int64 arithmetic wraps around beyond 2**63 (x**16 ...): keep the points it represents
    approx = run({n: v.astype(np.float64) for n, v in pts.items()})["e"]
    vals = vals[~np.isnan(vals) & ~(np.abs(approx) >= 2.0**50)]
    assert (bounds.lo["e"][0] <= vals).all() and (vals <= bounds.hi["e"][0]).all(), (
        str(e), bounds.lo["e"][0], bounds.hi["e"][0], vals.min(), vals.max())


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5000), st.integers(0, 300), st.sampled_from([1, 2, 3, 4, 6, 8, 16, 32, 512]))
def test_first_multiple_is_the_least_member_of_the_progression(first: int, step: int, c: int) -> None:
    """``_first_multiple`` (a modular inverse for powers of two) against a search."""
    got = _first_multiple(np.array([first]), np.array([step]), c)[0]
    want = next((first + t * step for t in range(c) if (first + t * step) % c == 0), math.inf)
    assert got == want


def test_a_transfer_counts_its_words_at_the_lanes_each_size_allows() -> None:
    """``ceil(3/T) * T / lanes(T)`` (the words of a padded row; ``T`` in ``{1, 2}``: 3 and 2
    words) is bounded by its minimum, 2, from the grouping ``ceil(3/T) * (T/lanes(T))`` with
    the words' own bound (``T/lanes(T) >= 1``); the padded extent ``ceil(3/T)*T >= 3`` over
    the largest lanes (2) gives 1.5, and the two groupings meet. With ``T = 0 (mod 5)`` over
    ``[500, 540]`` (``T`` a multiple of a child 5), 16 lanes need ``T = 0 (mod 80)``, which no
    member is: the words are at least 520/8 = 65 (at 16 lanes, 500/16)."""
    t = sym("T")
    words = _words_of(const(1), t)
    e = Mul((ceil_div(3, t), t, Pow(pow2_lanes([t], 32), -1)))
    prog = IntervalProgram({"e": e, "w": words}, ("T",))
    b = prog(np.array([[1], [500]]), np.array([[2], [540]]), np.array([[1], [5]]))
    assert 2 - 1e-9 <= b.lo["e"][0] <= 2  # rounded outward: the product is not integral here
    assert 65 - 1e-9 <= b.lo["w"][1] <= 65


def test_a_tile_count_reaches_into_a_rounded_time() -> None:
    """``ceil(3/T) * ceil(7*T + 22)`` (the per-row cycles of a reader, rounded up, times the
    rows) is rewritten ``max(ceil(3/T)*ceil(7*T + 22), 7*ceil(3/T)*T + 22*ceil(3/T))``, where
    the padded extent is bounded as a whole: over ``T`` in ``[2, 3]`` the bound is the
    minimum, 43 (at ``T = 3``); factor-wise it is ``1 * 36``."""
    t = sym("T")
    e = ceil_div(3, t) * eceil(7 * t + 22)
    coords = Coordinates(("T",), ("T",), (-1,), (False,))
    exprs, integral = coords.rewrite({"e": e})
    b = IntervalProgram(exprs, ("T",), integral=integral)(np.array([[2]]), np.array([[3]]), np.array([[1]]))
    assert b.lo["e"][0] == 43


def test_a_child_over_its_ratio_is_bounded_within_its_range() -> None:
    """``T_p * q**-1`` (``q = T_p/T_c``) is the child ``T_c``: with the ratio declared
    (:class:`ChildRange`) its bound is ``T_c``'s range (here ``[1, 4]``) over a box where
    the factor-wise quotient ``lo(T_p)/hi(q)`` is 1/13; without, the quotient. Both contain
    every legal point (``q`` dividing ``T_p``)."""
    tp, q = sym("T_p"), sym("q")
    e = Mul((const(5), tp, Pow(q, -1)))
    lo, hi, mod = np.array([[1, 1]]), np.array([[13, 13]]), np.array([[1, 1]])
    plain = IntervalProgram({"e": e}, ("T_p", "q"))(lo, hi, mod)
    child = IntervalProgram({"e": e}, ("T_p", "q"), children=[ChildRange(1, 0, 1, 4)])(lo, hi, mod)
    assert plain.lo["e"][0] < 0.4  # rounded outward below: the product is not integral here
    assert 5 - 1e-9 <= child.lo["e"][0] <= 5 and 20 <= child.hi["e"][0] <= 20 + 1e-9
    values = [5 * a // b for a in range(1, 14) for b in range(1, 14) if a % b == 0 and a // b <= 4]
    assert child.lo["e"][0] <= min(values) and max(values) <= child.hi["e"][0]


def test_selections_on_one_condition_are_merged_before_they_are_bounded() -> None:
    """``where(c, X + Y, 0) - where(c, X, 0)`` is rewritten ``where(c, Y, 0)``: with ``X =
    T**2`` and ``Y = T`` over ``T`` in ``[1, 10]`` the bound is ``[0, 10]``, where the
    difference of the two selections would be bounded below by ``-100``."""
    t = sym("T")
    c = le(t, 5)
    e = where(c, t * t + t, 0) - where(c, t * t, 0)
    coords = Coordinates(("T",), ("T",), (-1,), (False,))
    exprs, integral = coords.rewrite({"e": e})
    b = IntervalProgram(exprs, ("T",), integral=integral)(np.array([[1]]), np.array([[10]]), np.array([[1]]))
    assert b.lo["e"][0] == 0 and b.hi["e"][0] == 10


def test_a_tile_count_goes_only_into_the_terms_of_its_tile() -> None:
    """``ceil(14/T) * (T + Q - 1)`` (an input tile's padded width) is rewritten
    ``ceil(14/T)*T + ceil(14/T)*(Q - 1)``: over ``T`` in ``[1, 13]``, ``Q`` in ``[1, 3]`` the
    bound is the minimum, 14 (the padded extent is at least 14, ``Q - 1`` at least 0); the
    expansion ``... - ceil(14/T)`` would give 14 + 2 - 14."""
    t, q = sym("T"), sym("Q")
    e = ceil_div(14, t) * (t + q - 1)
    coords = Coordinates(("T", "Q"), ("T", "Q"), (-1, -1), (False, False))
    exprs, integral = coords.rewrite({"e": e})
    b = IntervalProgram(exprs, ("T", "Q"), integral=integral)(
        np.array([[1, 1]]), np.array([[13, 3]]), np.array([[1, 1]]))
    assert b.lo["e"][0] == 14


def _same_bounds(a: Any, b: Any, rows: Any = slice(None)) -> None:
    for k in a.lo:
        assert np.array_equal(a.lo[k][rows], b.lo[k]) and np.array_equal(a.hi[k][rows], b.hi[k]), k
    assert np.array_equal(a.undecided[rows], b.undecided)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expressions(), st.lists(_boxes(len(_SYMS)), min_size=1, max_size=6))
def test_compiled_bounds_equal_the_interpreter_box_by_box(e: Expr, boxes: list[tuple[np.ndarray, ...]]) -> None:
    """Differential: the compiled tape over a batch of boxes gives, for every box, exactly
    the bounds of the plain interpreter (:meth:`IntervalProgram.reference`) on that box
    alone: no static specialisation, and no decision taken for the whole batch (the sign
    checks of products), changes a bound."""
    lo, hi, mod = (np.concatenate([b[j] for b in boxes]) for j in range(3))
    prog = IntervalProgram({"e": e, "twice": e * e}, _SYMS)
    batch = prog(lo, hi, mod)
    _same_bounds(batch, prog.reference(lo, hi, mod))
    for r in range(len(boxes)):
        _same_bounds(batch, prog.reference(lo[r:r + 1], hi[r:r + 1], mod[r:r + 1]), slice(r, r + 1))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expressions(), st.lists(_boxes(len(_SYMS)), min_size=2, max_size=7))
def test_bounds_in_chunks_equal_one_run(e: Expr, boxes: list[tuple[np.ndarray, ...]]) -> None:
    """A batch larger than the chunk runs in chunks (bounded memory): the same bounds."""
    import odyssey.tune.exact.optimum_bounds as bounds_mod
    lo, hi, mod = (np.concatenate([b[j] for b in boxes]) for j in range(3))
    prog = IntervalProgram({"e": e, "twice": e * e}, _SYMS)
    whole = prog(lo, hi, mod)
    saved = bounds_mod._CHUNK_BOXES
    try:
        bounds_mod._CHUNK_BOXES = 2
        _same_bounds(whole, prog(lo, hi, mod))
    finally:
        bounds_mod._CHUNK_BOXES = saved


def test_residues_are_exact_on_congruence_classes() -> None:
    x = sym("x")
    lanes = where(eq(x - 16 * floor_div(x, 16), 0), 16, where(eq(x - 8 * floor_div(x, 8), 0), 8, 1))
    prog = IntervalProgram({"lanes": lanes}, ("x",))
    # x odd, x = 8 (mod 16), x = 0 (mod 16): the lanes are 1, 8 and 16 whatever the range
    lo = np.array([[1], [8], [16]])
    hi = np.array([[999], [1000], [1024]])
    mod = np.array([[2], [16], [16]])
    b = prog(lo, hi, mod)
    assert b.lo["lanes"].tolist() == [1, 8, 16] and b.hi["lanes"].tolist() == [1, 8, 16]
    assert not b.undecided.any()


_SMALL_CNN = (("O", 6), ("I", 4), ("H", 5), ("W", 6), ("P", 3), ("Q", 2))


def _draw_box(space: Any, data: st.DataObject) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo, hi, mod = [], [], []
    for d in range(len(space.coords.dims)):
        a = data.draw(st.integers(int(space.lower[d]), int(space.upper[d])))
        m = data.draw(st.sampled_from([1, 1, 2, 4]))
        n = data.draw(st.integers(0, max(0, (int(space.upper[d]) - a) // m)))
        lo.append(a)
        hi.append(a + n * m)
        mod.append(m)
    return np.array([lo]), np.array([hi]), np.array([mod])


_BOUND_CASES = st.sampled_from([(MM, "ij-ij.k"), (MM, "ij-jk.i"), (MM, "i-ij.k"), (MM, "k-ik.j"),
                                (CNN, "hw-oipq.hw"), (CNN, "oh-ohw.ipq"), (CNN, "oh-oipq.hw")])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_BOUND_CASES, st.data())
def test_model_bounds_contain_every_legal_tiling(case: tuple[str, str], data: st.DataObject) -> None:
    """The rewritten model (ratio coordinates, simplifications valid at legal points) bounds
    every legal tiling of a box; with the DSP budget as a cap on ``#PE * SIMD``, every legal
    tiling of the box within the budget."""
    from odyssey.tune.exact.optimum_boxes import _Boxes, _enumerate, _Space, _tighten

    kernel, design = case
    model = _mm(24, 20, 34, design) if kernel == MM else _model(CNN, _SMALL_CNN, design)
    space = _Space.of(model)
    coords = space.coords
    dims = len(coords.dims)
    box = _Boxes(*_draw_box(space, data))
    boxes, ok = _tighten(box, space)
    pts = _enumerate(boxes, space) if ok[0] else np.zeros((0, dims), dtype=np.int64)
    assert len(pts) == len(_enumerate(box, space))  # tightening drops no legal tiling
    if not len(pts):
        return
    names = ("latency", "dsp", "bram18k")
    exprs, integral = coords.rewrite({k: model.exprs[k] for k in names})
    params = coords.to_params(pts)
    vals = compile_vectorized({k: model.exprs[k] for k in names}, model.param_names)(
        {n: params[:, i] for i, n in enumerate(model.param_names)})
    budgets = model_budgets(model, coords, exprs)
    assert [b.resource for b in budgets] == ["dsp"]  # #PE * SIMD * cost: a monomial
    for caps, inside in (((), vals["dsp"] >= 0), (budgets, vals["dsp"] <= model.budget["dsp"])):
        bounds = IntervalProgram(exprs, coords.dims, integral=integral, caps=caps,
                                 children=space.children())(boxes.lo, boxes.hi, boxes.mod)
        for k in names:
            v = vals[k][inside]
            assert (bounds.lo[k][0] <= v).all() and (v <= bounds.hi[k][0]).all(), (k, caps)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_BOUND_CASES, st.data())
def test_model_bounds_of_a_batch_equal_the_interpreter_box_by_box(case: tuple[str, str], data: st.DataObject) -> None:
    """Differential, on the rewritten MM and CNN models with the DSP cap: a batch of random
    boxes through the compiled tape, against the interpreter on each box alone."""
    from odyssey.tune.exact.optimum_boxes import _Space

    kernel, design = case
    model = _mm(24, 20, 34, design) if kernel == MM else _model(CNN, _SMALL_CNN, design)
    space = _Space.of(model)
    coords = space.coords
    exprs, integral = coords.rewrite({k: model.exprs[k] for k in ("latency", "dsp", "bram18k", "uram")})
    prog = IntervalProgram(exprs, coords.dims, integral=integral,
                           caps=model_budgets(model, coords, exprs), children=space.children())
    boxes = [_draw_box(space, data) for _ in range(8)]
    lo, hi, mod = (np.concatenate([b[j] for b in boxes]) for j in range(3))
    batch = prog(lo, hi, mod)
    for r in range(len(boxes)):
        _same_bounds(batch, prog.reference(lo[r:r + 1], hi[r:r + 1], mod[r:r + 1]), slice(r, r + 1))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_BOUND_CASES, st.data())
def test_the_budget_cut_removes_only_tilings_over_the_budget(case: tuple[str, str], data: st.DataObject) -> None:
    """Cutting a box to the DSP budget (a coordinate at most what the budget leaves at the
    others' smallest values) keeps every legal tiling within it."""
    from odyssey.tune.exact.optimum_boxes import _Boxes, _enumerate, _Space

    kernel, design = case
    model = _mm(24, 20, 34, design) if kernel == MM else _model(CNN, _SMALL_CNN, design)
    space = _Space.of(model)
    exprs, _ = space.coords.rewrite({"dsp": model.exprs["dsp"]})
    (budget,) = model_budgets(model, space.coords, exprs)
    lo, hi, mod = _draw_box(space, data)
    cut_lo, cut_hi = budget.cut(lo, hi, mod)
    assert (cut_lo >= lo).all() and (cut_hi <= hi).all()
    before = _enumerate(_Boxes(lo, hi, mod), space)
    after = _enumerate(_Boxes(cut_lo, cut_hi, mod), space) if (cut_lo <= cut_hi).all() else before[:0]
    params = space.coords.to_params(before)
    dsp = compile_vectorized({"dsp": model.exprs["dsp"]}, model.param_names)(
        {n: params[:, i] for i, n in enumerate(model.param_names)})["dsp"]
    dsp = np.broadcast_to(dsp, (len(before),))
    assert {tuple(p) for p in before[dsp <= model.budget["dsp"]]} <= {tuple(p) for p in after}
    assert {tuple(p) for p in after} <= {tuple(p) for p in before}


@pytest.mark.parametrize("design", ["ij-ij.k", "i-ij.k", "k-ik.j", "ik-ij.k"])
def test_the_budget_cut_keeps_a_single_tiling_exactly_when_it_fits(design: str) -> None:
    """On one-point boxes (every legal tiling of MM 24x20x34) the cut never removes a tiling
    within the budget, and where the DSP is the monomial ``#PE * SIMD * 5`` itself it is exact:
    the box is left non-empty exactly when the tiling's DSP is within the budget."""
    from odyssey.tune.exact.optimum_boxes import _Space

    model = _mm(24, 20, 34, design)
    space = _Space.of(model)
    exprs, _ = space.coords.rewrite({"dsp": model.exprs["dsp"]})
    (budget,) = model_budgets(model, space.coords, exprs)
    tilings = _legal_tilings(model)
    params = np.stack([tilings[n] for n in space.names], axis=1)
    pts = space.coords.to_coords(params)
    lo, hi = budget.cut(pts, pts, np.ones_like(pts))
    fits = model.evaluate(tilings).dsp <= model.budget["dsp"]
    kept = (lo <= hi).all(axis=1)
    assert 0 < fits.sum() < len(fits)
    assert (kept | ~fits).all()  # sound: no tiling within the budget is cut
    if "dsp_cut" not in model.exprs:  # the DSP is the monomial itself: the cut is exact
        assert (kept == fits).all()
    else:  # a lower bound of the DSP (drains' adds besides #PE * SIMD * 5): it cuts some
        assert (~kept).any()


def test_a_quotient_keeps_the_twos_its_denominator_cannot_take() -> None:
    """``a/q * b`` with ``a = 1024`` and ``q <= 1024`` (so ``v2(q) <= 10``) is a multiple of 16
    when ``b`` is, whatever ``q``: the packing lanes of an ``i-ij.k`` output block
    ``T_i2*T_j1`` (``T_i2 = T_i1/q``) are 16 without splitting ``q`` into residue classes."""
    a, q, b = sym("a"), sym("q"), sym("b")
    y = Mul((a, b, Pow(q, -1)))  # as the rewrite builds it: factors in name order
    lanes = where(eq(y - 16 * floor_div(y, 16), 0), 16, where(eq(y - 8 * floor_div(y, 8), 0), 8, 1))
    prog = IntervalProgram({"lanes": lanes}, ("a", "q", "b"),
                           integral=lambda e: e == y or is_integer_valued(e))
    # b = 0 (mod 16): 16 lanes; b = 8 (mod 16): v2(y) >= 10 + 3 - 10, 8 lanes at least (16
    # unless q = 1024); b odd, a over 4 values: nothing
    bounds = prog(np.array([[1024, 1, 16], [1024, 1, 8], [1021, 1, 1]]),
                  np.array([[1024, 1024, 1008], [1024, 1024, 1000], [1024, 1024, 999]]),
                  np.array([[1, 1, 16], [1, 1, 16], [1, 1, 2]]))
    assert bounds.lo["lanes"].tolist() == [16, 8, 1] and bounds.hi["lanes"].tolist() == [16, 16, 16]
    assert bounds.undecided.tolist()[:2] == [[False, False], [True, False]]


def test_a_tile_count_meets_its_tile_in_the_per_tile_time() -> None:
    """``n*((1 - 1/n)*M1 + (1 - (1 - 1/n))*M2)`` (``n = ceil(512/T)`` tiles, the last one
    different: the shape of every latency model) is bounded through the padded extent
    ``ceil(512/T)*T`` inside ``M1``, not through ``n - 1`` times ``M1``'s smallest value: the
    tile count goes where it pairs with ``T``, the weights' ``-(x - 1) + x`` cancel. Over
    ``8 <= T <= 64`` the bound is 1,664 against a true minimum of 1,944 (``M2 = 5*T`` is
    bounded apart, at ``T = 8``); it was 488 when ``(n - 1)*M1`` was bounded factor-wise."""
    t = sym("T")
    n = ceil_div(512, t)
    m1, m2 = 3 * t + 40, 5 * t
    w1 = 1 - div(1, n)
    e = n * (w1 * m1 + (1 - w1) * m2)
    coords = Coordinates(("T",), ("T",), (-1,), (False,))
    exprs, integral = coords.rewrite({"e": e})
    bounds = IntervalProgram(exprs, ("T",), integral=integral)(np.array([[8]]), np.array([[64]]), np.array([[1]]))
    values = compile_vectorized({"e": e}, ("T",))({"T": np.arange(8, 65)})["e"]
    assert values.min() * 0.85 <= bounds.lo["e"][0] <= values.min()


def test_every_tile_count_of_a_product_is_paired() -> None:
    """``ceil(I/T_i)*ceil(J/T_j)*where(c, T_i*T_j*k + 3, 0)``: both tile counts reach their
    tiles (``ceil(I/T_i)*T_i`` and ``ceil(J/T_j)*T_j`` bounded as wholes), so the bound is
    the minimum, 63,018 (with the first tile count only, it was 10,518)."""
    ti, tj = sym("T_i"), sym("T_j")
    e = ceil_div(100, ti) * ceil_div(90, tj) * where(le(1, ti), ti * tj * 7 + 3, 0)
    coords = Coordinates(("T_i", "T_j"), ("T_i", "T_j"), (-1, -1), (False, False))
    exprs, integral = coords.rewrite({"e": e})
    lo, hi = np.array([[7, 5]]), np.array([[60, 40]])
    bounds = IntervalProgram(exprs, ("T_i", "T_j"), integral=integral)(lo, hi, np.ones((1, 2), dtype=np.int64))
    grid = np.meshgrid(np.arange(7, 61), np.arange(5, 41), indexing="ij")
    values = compile_vectorized({"e": e}, ("T_i", "T_j"))({"T_i": grid[0].ravel(), "T_j": grid[1].ravel()})["e"]
    assert bounds.lo["e"][0] == values.min()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["ij-ij.k", "k-ik.j"]), st.data())
def test_tightening_keeps_exactly_the_legal_tilings(design: str, data: st.DataObject) -> None:
    """Small boxes (where the divisor rules apply): tightening keeps every legal tiling and
    says a box is empty only when it holds none."""
    from odyssey.tune.exact.optimum_boxes import _Boxes, _enumerate, _Space, _tighten

    space = _Space.of(_mm(24, 20, 34, design))
    lo, hi, mod = [], [], []
    for d in range(len(space.coords.dims)):
        a = data.draw(st.integers(int(space.lower[d]), int(space.upper[d])))
        m = data.draw(st.sampled_from([1, 2, 3, 4]))
        n = data.draw(st.integers(0, min(5, (int(space.upper[d]) - a) // m)))
        lo.append(a)
        hi.append(a + n * m)
        mod.append(m)
    box = _Boxes(np.array([lo]), np.array([hi]), np.array([mod]))
    tight, ok = _tighten(box, space)
    before = {tuple(p) for p in _enumerate(box, space)}
    after = {tuple(p) for p in _enumerate(tight, space)} if ok[0] else set()
    assert before == after
    assert (tight.counts <= box.counts).all()


@given(st.integers(1, 400), st.integers(1, 40), st.integers(1, 200))
def test_first_multiple_in_a_progression_is_the_least(start: int, step: int, v: int) -> None:
    """``lo + t*m`` divisible by ``v`` (``gcd(m, v) | lo``): the least, as a plain search."""
    from odyssey.tune.exact.optimum_boxes import _first_multiple_in

    lo = start * math.gcd(step, v)
    t = next(t for t in range(v + 1) if (lo + t * step) % v == 0)
    assert _first_multiple_in(np.array([lo]), np.array([step]), np.array([v]))[0] == lo + t * step


def test_a_fixed_child_keeps_its_multiples_in_the_parents_progression() -> None:
    """A PE count fixed at 104 in a box whose ``T_o1`` runs over ``256, 272, ..., 512``: the
    only multiple of 104 there is 416 (``lcm(16, 104) = 208``), so ``T_o1`` is fixed too."""
    from odyssey.tune.exact.optimum_boxes import _Boxes, _enumerate, _Space, _tighten

    model = _model(CNN, (("O", 512), ("I", 4), ("H", 2), ("W", 2), ("P", 1), ("Q", 1)), "oh-oipq.hw")
    space = _Space.of(model)
    names = space.names
    lo, hi, mod = space.lower[None, :].copy(), space.upper[None, :].copy(), np.ones((1, len(names)), dtype=np.int64)
    o1, q = names.index("T_o1"), names.index("T_o2")  # T_o2's coordinate is the ratio T_o1/T_o2
    assert space.coords.ratio[q]
    lo[0, o1], hi[0, o1], mod[0, o1] = 256, 512, 16
    lo[0, q] = hi[0, q] = 104
    box = _Boxes(lo, hi, mod)
    tight, ok = _tighten(box, space)
    assert ok[0] and tight.lo[0, o1] == tight.hi[0, o1] == 416
    assert {tuple(p) for p in _enumerate(box, space)} == {tuple(p) for p in _enumerate(tight, space)}


def test_ratio_coordinates_follow_the_dsp_model() -> None:
    coords = Coordinates.choose(_mm(24, 20, 34, "ij-ij.k").params, [_mm(24, 20, 34, "ij-ij.k").exprs["dsp"]])
    assert coords.dims == ("T_i1", "T_j1", "T_k1", "T_i1/T_i2", "T_j1/T_j2", "T_k2")
    dsp = coords.rewrite({"dsp": _mm(24, 20, 34, "ij-ij.k").exprs["dsp"]})[0]["dsp"]
    assert str(dsp) == "5*T_i1/T_i2*T_j1/T_j2*T_k2"


# ------------------------------------------------------- branch and bound = brute force


@pytest.mark.parametrize(("sizes", "design"), [
    ((32, 32, 32), "ij-ij.k"),
    ((32, 32, 32), "ij-jk.i"),  # partial sums of C travel off chip
    ((48, 40, 36), "i-ij.k"),  # a 1D array
    ((40, 36, 32), "jk-ik.j"),
    ((9, 7, 5), "ik-ij.k"),  # the chains' heads add nothing: the DSP cut is 5 - 2/K per MAC lane
    ((7, 9, 5), "jk-ij.k"),
])
def test_branch_and_bound_equals_brute_force_on_mm(sizes: tuple[int, int, int], design: str) -> None:
    model = _mm(*sizes, design)
    r = find_optimum(model)
    assert r.status == "optimal"
    assert r.latency_cycles == _brute_force(model)
    assert r.lower_bound_cycles == r.latency_cycles and r.gap == 0


@pytest.mark.parametrize("design", ["oh-ohw.ipq", "hw-oipq.hw", "oh-oipq.hw"])
def test_branch_and_bound_equals_brute_force_on_a_cnn_layer(design: str) -> None:
    model = _model(CNN, (("O", 8), ("I", 8), ("H", 8), ("W", 8), ("P", 3), ("Q", 3)), design,
                   dsp=60, bram=20)
    r = find_optimum(model)
    assert r.status == "optimal" and r.latency_cycles == _brute_force(model)


@pytest.mark.parametrize(("trials", "design"), [(1, "ij-ij.k"), (2, "ij-jk.i"), (1, "oh-oipq.hw")])
def test_strong_branching_on_a_few_coordinates_keeps_the_optimum(
        monkeypatch: pytest.MonkeyPatch, trials: int, design: str) -> None:
    """With the trial splits restricted from the start (no warm-up) to the ``trials``
    coordinates that won most often, the search still proves the brute-force optimum:
    which coordinates are tried changes the boxes, never what is pruned (every pruned trial
    half, the cut of the box included, holds nothing feasible and faster)."""
    from odyssey.tune.exact import optimum

    monkeypatch.setattr(optimum, "_WARMUP", 0)
    monkeypatch.setattr(optimum, "_TRIALS", trials)
    model = (_mm(32, 32, 32, design) if design.endswith((".k", ".i")) else
             _model(CNN, (("O", 8), ("I", 8), ("H", 8), ("W", 8), ("P", 3), ("Q", 3)), design, dsp=60, bram=20))
    r = find_optimum(model)
    assert r.status == "optimal" and r.latency_cycles == _brute_force(model)


def test_no_feasible_tiling_is_reported_as_infeasible() -> None:
    model = _mm(16, 16, 16, "ij-ij.k", dsp=4)  # 2.8 usable DSPs: not one fp32 MAC lane
    r = find_optimum(model)
    assert r.status == "infeasible" and r.tiling is None and r.throughput_gops == 0


def test_result_fields_and_json() -> None:
    model = _mm(32, 32, 32, "ij-ij.k")
    r = find_optimum(model, seed=3)
    assert isinstance(r, OptimumResult) and r.tiling is not None
    point = model.evaluate_one(dict(r.tiling))
    assert point["feasible"] and point["latency_cycles"] == r.latency_cycles
    assert r.throughput_gops == pytest.approx(point["throughput_gops"])
    assert (r.dsp, r.bram18k) == (point["dsp"], point["bram18k"])
    assert r.points_evaluated > 0 and r.regions_explored >= r.regions_enumerated > 0
    assert set(r.regions_pruned) == {"bound", "resources", "empty"}
    assert "Optimal" in r.proof and f"{r.latency_cycles:,.0f}" in r.proof
    doc = r.to_json()
    assert set(doc) >= {"tiling", "latency_cycles", "throughput_gops", "dsp", "bram18k", "seconds",
                        "points_evaluated", "regions_pruned", "proof", "status"}
    json.dumps(doc)
    # the seed only changes the path to the optimum, not its latency
    assert find_optimum(model, seed=11).latency_cycles == r.latency_cycles


def test_the_mm_1024_optimum_at_the_dsp_budget_is_proven_in_few_boxes() -> None:
    """MM 1024^3 ``i-ik.j`` on U250: the optimum (848.8 GOP/s) uses 99% of the DSPs, where the
    latency bound (at a box's largest ``#PE * SIMD``) and the DSP bound (at its smallest) fall
    apart. The budget cut and the caps on ``#PE * SIMD`` prove it in 8,861 boxes (2026-11-27);
    the guard leaves room for model changes. (``i-ij.k`` was the case until its drain chain's
    pace entered the model, which made its optimum drain-bound: ``docs/optimum.md``.)"""
    ks = analyse(load_scop(MM, {"I": "1024", "J": "1024", "K": "1024"}))
    model = build_model(ks, ks.design("i-ik.j"), platform=load_platform("u250"))
    r = find_optimum(model)
    assert r.status == "optimal" and r.regions_explored < 100_000


def test_time_limit_returns_the_best_found_and_the_gap() -> None:
    ks = analyse(load_scop(MM, {"I": "1024", "J": "1024", "K": "1024"}))
    model = build_model(ks, ks.design("ij-ij.k"), platform=load_platform("u250"))
    r = find_optimum(model, time_limit_s=0.5)
    assert r.status == "time_limit" and r.tiling is not None
    point = model.evaluate_one(dict(r.tiling))
    assert point["feasible"] and point["latency_cycles"] == r.latency_cycles
    assert r.lower_bound_cycles < r.latency_cycles and 0 < r.gap < 1
    assert "Time limit" in r.proof


@pytest.mark.parametrize(("option", "value"), [("time_limit_s", 0), ("leaf_points", 0), ("batch", 0)])
def test_bad_options_name_the_argument(option: str, value: float) -> None:
    with pytest.raises(TunerError, match=option):
        find_optimum(_mm(16, 16, 16, "ij-ij.k"), **{option: value})  # type: ignore[arg-type]


def test_cli_optimum_prints_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "opt.json"
    code = main(["optimum", MM, "-D", "I=32", "-D", "J=32", "-D", "K=32", "--design", "ij-ij.k",
                 "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["status"] == "optimal" and set(doc["tiling"]) == {"T_i1", "T_j1", "T_k1", "T_i2", "T_j2", "T_k2"}
    assert f"{doc['latency_cycles']:,.0f}" in text and "GOP/s" in text and "optimal" in text


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 1 << 20), min_size=1, max_size=12), st.integers(0, 2**32 - 1), st.integers(1, 400))
def test_unique_rows_equal_numpys(upper: list[int], seed: int, n: int) -> None:
    """The polish's packed-key row sort gives exactly ``np.unique(rows, axis=0)``."""
    from odyssey.tune.exact.optimum import _unique_rows

    rng = np.random.default_rng(seed)
    top = np.array(upper, dtype=np.int64)
    rows = np.stack([rng.integers(0, min(int(u), 3) + 1 if seed % 2 else int(u) + 1, n) for u in top], axis=1)
    assert np.array_equal(_unique_rows(rows, top), np.unique(rows, axis=0))
