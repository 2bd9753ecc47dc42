"""`find_optimum`: sound interval bounds (property tests) and the branch and bound against a
plain exhaustive enumeration of every legal tiling on problems small enough to enumerate."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odyssey.cli import main
from odyssey.errors import TunerError
from odyssey.expr import (
    Expr,
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
    le,
    sym,
    where,
)
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import DesignModel, build_model
from odyssey.platforms import load_platform
from odyssey.tune.exact.optimum import OptimumResult, find_optimum
from odyssey.tune.exact.optimum_bounds import IntervalProgram
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
    plat = dataclasses.replace(plat, resources=dataclasses.replace(plat.resources, dsp=dsp, bram18k=bram))
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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([(MM, "ij-ij.k"), (MM, "ij-jk.i"), (MM, "i-ij.k"), (MM, "k-ik.j"),
                        (CNN, "hw-oipq.hw"), (CNN, "oh-ohw.ipq")]), st.data())
def test_model_bounds_contain_every_legal_tiling(case: tuple[str, str], data: st.DataObject) -> None:
    """The rewritten model (ratio coordinates, simplifications valid at legal points) bounds
    every legal tiling of a box."""
    from odyssey.tune.exact.optimum import _Boxes, _enumerate, _Space, _tighten

    kernel, design = case
    model = _mm(24, 20, 16, design) if kernel == MM else _model(CNN, _SMALL_CNN, design)
    space = _Space.of(model)
    coords = space.coords
    dims = len(coords.dims)
    lo, hi, mod = [], [], []
    for d in range(dims):
        a = data.draw(st.integers(int(space.lower[d]), int(space.upper[d])))
        m = data.draw(st.sampled_from([1, 1, 2, 4]))
        n = data.draw(st.integers(0, max(0, (int(space.upper[d]) - a) // m)))
        lo.append(a)
        hi.append(a + n * m)
        mod.append(m)
    boxes, ok = _tighten(_Boxes(np.array([lo]), np.array([hi]), np.array([mod])), space)
    pts = _enumerate(boxes, space) if ok[0] else np.zeros((0, dims), dtype=np.int64)
    full = _enumerate(_Boxes(np.array([lo]), np.array([hi]), np.array([mod])), space)
    assert len(pts) == len(full)  # tightening drops no legal tiling
    if not len(pts):
        return
    names = ("latency", "dsp", "bram18k")
    exprs, integral = coords.rewrite({k: model.exprs[k] for k in names})
    rewritten = IntervalProgram(exprs, coords.dims, integral=integral)(boxes.lo, boxes.hi, boxes.mod)
    params = coords.to_params(pts)
    vals = compile_vectorized({k: model.exprs[k] for k in names}, model.param_names)(
        {n: params[:, i] for i, n in enumerate(model.param_names)})
    for k in names:
        assert (rewritten.lo[k][0] <= vals[k]).all() and (vals[k] <= rewritten.hi[k][0]).all(), k


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["ij-ij.k", "k-ik.j"]), st.data())
def test_tightening_keeps_exactly_the_legal_tilings(design: str, data: st.DataObject) -> None:
    """Small boxes (where the divisor rules apply): tightening keeps every legal tiling and
    says a box is empty only when it holds none."""
    from odyssey.tune.exact.optimum import _Boxes, _enumerate, _Space, _tighten

    space = _Space.of(_mm(24, 20, 16, design))
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


def test_ratio_coordinates_follow_the_dsp_model() -> None:
    coords = Coordinates.choose(_mm(24, 20, 16, "ij-ij.k").params, [_mm(24, 20, 16, "ij-ij.k").exprs["dsp"]])
    assert coords.dims == ("T_i1", "T_j1", "T_k1", "T_i1/T_i2", "T_j1/T_j2", "T_k2")
    dsp = coords.rewrite({"dsp": _mm(24, 20, 16, "ij-ij.k").exprs["dsp"]})[0]["dsp"]
    assert str(dsp) == "5*T_i1/T_i2*T_j1/T_j2*T_k2"


# ------------------------------------------------------- branch and bound = brute force


@pytest.mark.parametrize(("sizes", "design"), [
    ((32, 32, 32), "ij-ij.k"),
    ((32, 32, 32), "ij-jk.i"),  # partial sums of C travel off chip
    ((48, 40, 36), "i-ij.k"),  # a 1D array
    ((40, 36, 32), "jk-ik.j"),
])
def test_branch_and_bound_equals_brute_force_on_mm(sizes: tuple[int, int, int], design: str) -> None:
    model = _mm(*sizes, design)
    r = find_optimum(model)
    assert r.status == "optimal"
    assert r.latency_cycles == _brute_force(model)
    assert r.lower_bound_cycles == r.latency_cycles and r.gap == 0


@pytest.mark.parametrize("design", ["oh-ohw.ipq", "hw-oipq.hw"])
def test_branch_and_bound_equals_brute_force_on_a_cnn_layer(design: str) -> None:
    model = _model(CNN, (("O", 8), ("I", 8), ("H", 8), ("W", 8), ("P", 3), ("Q", 3)), design,
                   dsp=60, bram=20)
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
