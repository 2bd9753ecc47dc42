"""`optimum_reach`: the largest ``#PE * SIMD`` a box's legal tilings reach within the DSP
budget, against plain enumeration of the box's legal tilings (MM and CNN models on small
platforms, where the budget binds), and the latency bounds taken with it."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odyssey.expr import compile_vectorized
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import DesignModel, build_model
from odyssey.platforms import load_platform, with_kernel_resources
from odyssey.tune.exact.optimum_bounds import IntervalProgram
from odyssey.tune.exact.optimum_boxes import _Boxes, _enumerate, _Space, _tighten
from odyssey.tune.exact.optimum_budget import MonomialBudget, model_budgets
from odyssey.tune.exact.optimum_reach import Reach, reach

ROOT = Path(__file__).resolve().parents[2]
MM = str(ROOT / "kernels" / "mm.c")
CNN = str(ROOT / "kernels" / "cnn.c")
_SIZES = {MM: (("I", 24), ("J", 20), ("K", 34)),
          CNN: (("O", 12), ("I", 8), ("H", 5), ("W", 6), ("P", 3), ("Q", 2))}
_CASES = st.sampled_from([(MM, "ij-ij.k"), (MM, "ij-jk.i"), (MM, "i-ij.k"), (MM, "k-ik.j"),
                          (CNN, "oh-oipq.hw"), (CNN, "oi-oipq.hw"), (CNN, "hw-oipq.hw")])


@functools.cache
def _setup(kernel: str, design: str) -> tuple[DesignModel, _Space, MonomialBudget, dict[str, Any], Any]:
    """A design on a U250 cut to 100 DSPs and 40 BRAM18Ks: its model, space, DSP cap (the
    monomial ``#PE * SIMD * 5``), rewritten expressions and integrality."""
    ks = analyse(load_scop(kernel, {k: str(v) for k, v in _SIZES[kernel]}))
    plat = load_platform("u250")
    plat = with_kernel_resources(plat, dsp=100, bram18k=40)
    model = build_model(ks, ks.design(design), platform=plat)
    space = _Space.of(model)
    exprs, integral = space.coords.rewrite({k: model.exprs[k] for k in ("latency", "dsp", "bram18k")})
    (cap,) = model_budgets(model, space.coords, exprs)
    return model, space, cap, exprs, integral


def _draw_boxes(space: _Space, data: st.DataObject, n: int) -> _Boxes:
    """``n`` random boxes, tightened (as the search bounds them), some with fixed parents."""
    rows = []
    for _ in range(n):
        lo, hi, mod = [], [], []
        for d in range(len(space.names)):
            a = data.draw(st.integers(int(space.lower[d]), int(space.upper[d])))
            m = data.draw(st.sampled_from([1, 1, 2, 3, 4]))
            k = data.draw(st.sampled_from([0, 0, 1, 2, 5, 40]))
            lo.append(a)
            hi.append(a + min(k, (int(space.upper[d]) - a) // m) * m)
            mod.append(m)
        rows.append((lo, hi, mod))
    box = _Boxes(*(np.array([r[j] for r in rows], dtype=np.int64) for j in range(3)))
    tight, ok = _tighten(box, space)
    return tight.take(np.nonzero(ok)[0])


def _products(space: _Space, cap: MonomialBudget, box: _Boxes) -> tuple[np.ndarray, np.ndarray]:
    """The legal tilings of one box (coordinate rows) and their ``prod(x_d ** k_d)``."""
    pts = _enumerate(box, space)
    p = np.ones(len(pts))
    for d, k in cap.powers:
        p *= pts[:, d].astype(np.float64) ** k
    return pts, p


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_CASES, st.data())
def test_reach_is_at_least_every_product_within_the_budget(case: tuple[str, str], data: st.DataObject) -> None:
    """Containment against enumeration: every legal tiling of a box within the DSP budget has
    ``#PE * SIMD`` at most the box's reach (0 only when there is none), and the reach is at
    most the cap; a batch gives each box the reach it has alone."""
    _, space, cap, _, _ = _setup(*case)
    boxes = _draw_boxes(space, data, 6)
    got = reach(cap, boxes, space)
    top = cap.cap / cap.coef
    for b in range(len(boxes)):
        one = boxes.take(np.array([b]))
        _, p = _products(space, cap, one)
        within = p[p * cap.coef <= cap.cap]
        assert got[b] <= top * (1 + 1e-6)
        if len(within):
            assert got[b] >= within.max()
        assert reach(cap, one, space)[0] == got[b]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_CASES, st.data())
def test_reach_is_exact_on_single_tilings_and_fixed_parents(case: tuple[str, str], data: st.DataObject) -> None:
    """Where every PE and SIMD coordinate is listed (parents with few values), the reach is
    the largest product of the listed values: on a box of one legal tiling, that tiling's
    product when it is within the budget, else 0 (the box is over budget)."""
    model, space, cap, _, _ = _setup(*case)
    boxes = _draw_boxes(space, data, 4)
    pts = np.concatenate([np.zeros((0, len(space.names)), dtype=np.int64)]
                         + [_enumerate(boxes.take(np.array([b])), space) for b in range(len(boxes))])
    if not len(pts):
        return
    one = _Boxes(pts, pts.copy(), np.ones_like(pts))
    _, p = _products(space, cap, one)
    expect = np.where(p * cap.coef <= cap.cap, p, 0.0)
    assert (reach(cap, one, space) == expect).all()
    params = space.coords.to_params(pts)
    dsp = compile_vectorized({"dsp": model.exprs["dsp"]}, model.param_names)(
        {n: params[:, i] for i, n in enumerate(model.param_names)})["dsp"]
    fits = np.broadcast_to(dsp, (len(pts),)) <= model.budget["dsp"]
    assert (~fits | (expect > 0)).all()  # sound: a tiling within the budget keeps its reach
    if "dsp_cut" not in model.exprs:  # the cap is the DSP itself: exact
        assert ((expect > 0) == fits).all()


def test_reach_of_powers_of_two_is_below_the_cap() -> None:
    """Closed form: with every parent a power of two, the PE counts and SIMD factors are
    powers of two, so their product within a cap of ``B`` reaches the largest power of two
    at most ``B`` (and the cap itself where a parent allows other divisors)."""
    _, space, cap, _, _ = _setup(MM, "ij-ij.k")  # 5 * q_i * q_j * T_k2 <= 70: P <= 14
    names = space.names
    lo = np.array([[int(space.lower[d]) for d in range(len(names))]], dtype=np.int64)
    hi = np.array([[int(space.upper[d]) for d in range(len(names))]], dtype=np.int64)
    fixed = {"T_i1": 16, "T_j1": 8, "T_k1": 16}
    for n, v in fixed.items():
        lo[0, names.index(n)] = hi[0, names.index(n)] = v
    box, ok = _tighten(_Boxes(lo, hi, np.ones_like(lo)), space)
    assert ok[0] and cap.cap / cap.coef == 14
    assert reach(cap, box, space)[0] == 8
    lo[0, names.index("T_k1")] = hi[0, names.index("T_k1")] = 14  # T_k2 = 7 or 14: 2 * 7 = 14
    box, _ = _tighten(_Boxes(lo, hi, np.ones_like(lo)), space)
    assert reach(cap, box, space)[0] == 14


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_CASES, st.data())
def test_the_memo_gives_the_reach_of_each_box(case: tuple[str, str], data: st.DataObject) -> None:
    _, space, cap, _, _ = _setup(*case)
    memo = Reach(cap, space)
    first = _draw_boxes(space, data, 5)
    both = _Boxes.concat([first, _draw_boxes(space, data, 5), first], len(space.names))
    assert (memo(first) == reach(cap, first, space)).all()
    assert (memo(both) == reach(cap, both, space)).all()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_CASES, st.data())
def test_the_memo_in_chunks_gives_the_reach_of_each_box(case: tuple[str, str], data: st.DataObject) -> None:
    """The memo calls :func:`reach` on chunks of its new boxes (bounded memory): the same
    results as one call on all of them."""
    import odyssey.tune.exact.optimum_reach as reach_mod
    _, space, cap, _, _ = _setup(*case)
    boxes = _draw_boxes(space, data, 11)
    saved = reach_mod._CHUNK
    try:
        reach_mod._CHUNK = 3
        chunked = Reach(cap, space)(boxes)
    finally:
        reach_mod._CHUNK = saved
    assert (chunked == reach(cap, boxes, space)).all()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_CASES, st.data())
def test_bounds_within_the_reach_contain_every_tiling_within_the_budget(
        case: tuple[str, str], data: st.DataObject) -> None:
    """The latency, DSP and BRAM bounds of a box, its ``1/(#PE * SIMD)`` taken at most at its
    reach, contain the values of every legal tiling of the box within the DSP budget; the
    compiled tape gives each box of a batch the interpreter's bounds on that box alone."""
    model, space, cap, exprs, integral = _setup(*case)
    boxes = _draw_boxes(space, data, 5)
    if not len(boxes):
        return
    prog = IntervalProgram(exprs, space.coords.dims, integral=integral, caps=(cap,), children=space.children())
    limits = [reach(cap, boxes, space)]
    bounds = prog(boxes.lo, boxes.hi, boxes.mod, limits)
    fn = compile_vectorized({k: model.exprs[k] for k in exprs}, model.param_names)
    for b in range(len(boxes)):
        one = boxes.take(np.array([b]))
        ref = prog.reference(one.lo, one.hi, one.mod, [limits[0][b:b + 1]])
        for k in exprs:
            assert bounds.lo[k][b] == ref.lo[k][0] and bounds.hi[k][b] == ref.hi[k][0]
        pts = _enumerate(one, space)
        if not len(pts):
            continue
        params = space.coords.to_params(pts)
        vals = fn({n: params[:, i] for i, n in enumerate(model.param_names)})
        inside = np.broadcast_to(vals["dsp"], (len(pts),)) <= model.budget["dsp"]
        for k in exprs:
            v = np.broadcast_to(vals[k], (len(pts),))[inside]
            assert (bounds.lo[k][b] <= v).all() and (v <= bounds.hi[k][b]).all(), k
