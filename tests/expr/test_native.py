"""The native evaluator (one compiled loop) against numpy's (the reference): differential on
every MM 1024^3 design's model at 100,000 random tilings, property-based on random
expressions with every node type, zero denominators, negative values and integer overflow,
and closed-form cases of each rule."""

from __future__ import annotations

import math

import cloudpickle
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odyssey.errors import ModelError
from odyssey.expr import compile_vectorized, native, sym
from odyssey.expr.core import (
    Add,
    Ceil,
    CeilDiv,
    Const,
    Div,
    Eq,
    Expr,
    Floor,
    FloorDiv,
    Le,
    Log2,
    Lt,
    Max,
    Min,
    Mul,
    Pow,
    Where,
)
from odyssey.frontend import load_scop
from odyssey.frontend.bundled import bundled_kernel
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.platforms import load_platform

pytestmark = pytest.mark.skipif(not native.available(), reason="llvmlite is not installed")

X, Y, Z = sym("x"), sym("y"), sym("z")


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values (NaN where the other is NaN) and equal dtype."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def _check(exprs: dict[str, Expr], points: dict[str, np.ndarray], bounds: dict[str, float]) -> None:
    ref = compile_vectorized(exprs, list(points))(points)
    fn = native.compile_native(exprs, list(points), bounds)
    assert fn is not None
    got = fn(points)
    for k in exprs:
        assert _same(ref[k], got[k]), (k, exprs[k], ref[k][:8], got[k][:8])


def _model_points(model, n: int, seed: int) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    return {p.name: rng.integers(p.lower, p.upper + 1, n) for p in model.params}


def _designs(kernel: str, sizes: dict[str, str], **kw: int) -> list[tuple[object, object]]:
    ks = analyse(load_scop(bundled_kernel(kernel), sizes), **kw)  # type: ignore[arg-type]
    return [(ks, d) for d in ks.designs]


MM = _designs("mm", {"I": "1024", "J": "1024", "K": "1024"})


@pytest.mark.parametrize("ks,design", MM, ids=[d.id for _, d in MM])  # type: ignore[attr-defined]
def test_mm_models_equal_numpy_at_100k_tilings(ks, design) -> None:  # type: ignore[no-untyped-def]
    """Every output of the model (latency, every resource, traffic) is the same number of the
    same dtype at 100,000 random tilings, legal or not (ranges only, divisibility ignored)."""
    m = build_model(ks, design, platform=load_platform("u250"))
    exprs = {k: m.exprs[k] for k in m.REQUIRED}
    _check(exprs, _model_points(m, 100_000, 1), {p.name: p.upper for p in m.params})


CNN = _designs("cnn", {"O": "128", "I": "64", "H": "112", "W": "112", "P": "3", "Q": "3"}, max_dim=2)


@pytest.mark.slow
@pytest.mark.parametrize("ks,design", CNN, ids=[d.id for _, d in CNN])  # type: ignore[attr-defined]
def test_cnn_models_equal_numpy_at_100k_tilings(ks, design) -> None:  # type: ignore[no-untyped-def]
    m = build_model(ks, design, platform=load_platform("u250"))
    exprs = {k: m.exprs[k] for k in m.REQUIRED}
    _check(exprs, _model_points(m, 100_000, 2), {p.name: p.upper for p in m.params})


def test_design_model_switches_to_native_with_the_same_results() -> None:
    ks, design = MM[10]
    m = build_model(ks, design, platform=load_platform("u250"))  # type: ignore[arg-type]
    pts = _model_points(m, 5_000, 3)
    m._core.compile_after_s = math.inf
    before = m.evaluate(pts)
    assert m._core.native is None
    m._core.compile_after_s = 0.0
    m.evaluate(pts)  # starts the compilation in the background, numpy's values meanwhile
    m._core.wait()
    after = m.evaluate(pts)
    assert m._core.native and m._core.native_error is None  # compiled
    for f in ("latency_cycles", "throughput_gops", "dsp", "lut", "ff", "bram18k", "uram", "offchip_bytes", "legal",
              "feasible", "reason_code"):
        assert np.array_equal(getattr(before, f), getattr(after, f)), f
    clone = cloudpickle.loads(cloudpickle.dumps(m))  # as Dask ships it: the compiled loop stays behind
    assert clone._core.native is None
    assert np.array_equal(clone.evaluate(pts).latency_cycles, before.latency_cycles)


def test_adaptive_evaluator_compiles_after_its_budget() -> None:
    ev = native.AdaptiveEvaluator({"y": FloorDiv(X * Y, Const(3))}, ["x", "y"], {"x": 100, "y": 100},
                                  compile_after_s=0.0)
    pts = {"x": np.arange(1, 50), "y": np.arange(1, 50)}
    first = ev(pts)  # numpy's: nothing spent yet
    assert ev.native is None
    second = ev(pts)  # numpy's again, the compilation started beside it
    ev.wait()
    assert ev.native and _same(ev(pts)["y"], first["y"]) and _same(second["y"], first["y"])


def test_rules_closed_form() -> None:
    x = np.array([-7, -1, 0, 1, 7, 9, 2**40 + 1, 8])
    y = np.array([2, -3, 0, 0, -2, 4, 3, 1])
    pts = {"x": x, "y": y}
    exprs = {
        "floor": FloorDiv(X, Y), "ceil": CeilDiv(X, Y), "div": Div(X, Y),
        "clog": Ceil(Log2(X)), "flog": Floor(Log2(X)), "log": Log2(X),
        "max": Max((Div(X, Y), Y)), "min": Min((X, Div(Y, X))), "pow": Pow(X, -2), "sq": Pow(Y, 2),
        "where": Where(X, Y, Div(X, Const(2))), "cmp": Add((Lt(X, Y), Le(Y, X), Eq(X, Const(9)))),
    }
    _check(exprs, pts, {"x": 2**41, "y": 8})
    out = native.compile_native({"f": FloorDiv(X, Y), "c": CeilDiv(X, Y)}, ["x", "y"], {"x": 2**41, "y": 8})
    assert out is not None
    r = out(pts)
    assert r["f"].tolist() == [-4, 0, 0, 0, -4, 2, (2**40 + 1) // 3, 8]  # numpy: zero denominator -> 0
    assert r["c"].tolist() == [-3, 1, 0, 0, -3, 3, -(-(2**40 + 1) // 3), 8]


def test_integer_division_beyond_double_precision() -> None:
    """Bounds above 2**51 take the integer divide (``sdiv`` with numpy's floor and zero
    rules) instead of the double-precision one: the same values, at magnitudes where a double
    quotient could round onto the next integer."""
    big = 2**60 + 7
    x = np.array([big, -big, big - 1, 5, -5, 0, 7])
    y = np.array([3, 3, -(2**31), 0, 2, 3, -7])
    exprs = {"floor": FloorDiv(X, Y), "ceil": CeilDiv(X, Y)}
    _check(exprs, {"x": x, "y": y}, {"x": float(2**61), "y": float(2**31)})
    fn = native.compile_native(exprs, ["x", "y"], {"x": float(2**61), "y": float(2**31)})
    assert fn is not None
    assert fn({"x": x, "y": y})["floor"].tolist() == [big // 3, -big // 3, (big - 1) // -(2**31), 0, -3, 0, -1]


def test_overflow_promotes_like_numpy() -> None:
    """A product that could pass 2**62 within the bounds runs in float64, as numpy's does."""
    exprs = {"p": Mul((X, Y, Z)), "q": FloorDiv(Mul((X, Y, Z)), Const(7)) + X}
    big = 10**8
    pts = {"x": np.array([big, 2]), "y": np.array([big, 3]), "z": np.array([big, 5])}
    _check(exprs, pts, {"x": big, "y": big, "z": big})
    fn = native.compile_native(exprs, ["x", "y", "z"], {"x": big, "y": big, "z": big})
    assert fn is not None and fn(pts)["p"].dtype == np.float64


def test_inputs_beyond_the_bounds_are_refused() -> None:
    fn = native.compile_native({"y": X + 1}, ["x"], {"x": 10})
    assert fn is not None
    with pytest.raises(ModelError, match="exceeds the bound"):
        fn({"x": np.array([11])})


# --------------------------------------------------------------------- random expressions

_LEAVES = st.one_of(st.sampled_from([X, Y, Z]), st.integers(-9, 9).map(Const),
                    st.sampled_from([Const(0.5), Const(-2.25), Const(2**63)]))


def _node(kids: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return _nodes_over(kids)  # (hypothesis checks that `extend` reads its argument itself)


def _nodes_over(kids: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    two = st.tuples(kids, kids)
    return st.one_of(
        st.lists(kids, min_size=2, max_size=3).map(lambda a: Add(tuple(a))),
        st.lists(kids, min_size=2, max_size=3).map(lambda a: Mul(tuple(a))),
        st.lists(kids, min_size=2, max_size=3).map(lambda a: Max(tuple(a))),
        st.lists(kids, min_size=2, max_size=3).map(lambda a: Min(tuple(a))),
        two.map(lambda a: Div(*a)), two.map(lambda a: FloorDiv(*a)), two.map(lambda a: CeilDiv(*a)),
        kids.map(Ceil), kids.map(Floor), kids.map(lambda a: Ceil(Log2(a))),
        st.tuples(kids, st.sampled_from([-1, 2, 3])).map(lambda a: Pow(*a)),
        st.tuples(st.one_of(two.map(lambda a: Lt(*a)), two.map(lambda a: Le(*a)), two.map(lambda a: Eq(*a)),
                            kids), kids, kids).map(lambda a: Where(*a)),
        two.map(lambda a: Add((Lt(*a), Const(1)))),
    )


_EXPRS = st.recursive(_LEAVES, _node, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_EXPRS, st.lists(st.tuples(st.integers(-50, 50), st.integers(-50, 50), st.integers(0, 3000)),
                        min_size=1, max_size=20))
def test_random_expressions_equal_numpy(e: Expr, rows: list[tuple[int, int, int]]) -> None:
    pts = {n: np.array([r[k] for r in rows], dtype=np.int64) for k, n in enumerate("xyz")}
    # the bounds numpy's evaluator sees in these data: both plan the same promotions
    bounds = {n: float(max(1, int(np.abs(a).max()))) for n, a in pts.items()}
    _check({"e": e}, pts, bounds)


def test_a_failed_background_compilation_keeps_numpys_values(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def broken(*args: object) -> None:
        raise RuntimeError("LLVM refused")
    monkeypatch.setattr(native, "compile_native", broken)
    ev = native.AdaptiveEvaluator({"y": FloorDiv(X * Y, Const(3))}, ["x", "y"], {"x": 100, "y": 100},
                                  compile_after_s=0.0)
    pts = {"x": np.arange(1, 50), "y": np.arange(1, 50)}
    first = ev(pts)
    ev(pts)
    ev.wait()
    assert ev.native is False and isinstance(ev.native_error, RuntimeError)
    assert _same(ev(pts)["y"], first["y"])
