"""What each module instantiates: symbolic instance counts and FIFO widths against the array
built at random tilings (property), and the operators of the printed PE and drain."""

from __future__ import annotations

import numpy as np
import pytest

from odyssey.codegen.generate import _build, generate
from odyssey.codegen.hardware import position_count
from odyssey.errors import CodegenError
from odyssey.expr import const, evaluate
from odyssey.model import build_model
from odyssey.platforms import load_platform
from odyssey.tune.space import SearchSpace
from tests.codegen.conftest import space_of

KERNELS = [("mm.c", {"I": "23", "J": "19", "K": "17"}),
           ("cnn.c", {"I": "5", "O": "7", "H": "6", "W": "5", "P": "3", "Q": "3"}),
           ("mttkrp.c", {}), ("syrk.c", {}), ("fir.c", {}), ("mv.c", {})]


def _pairs(kernel: str, sizes: dict[str, str], per: int, seed: int):  # type: ignore[no-untyped-def]
    ks = space_of(kernel, **sizes)
    rng = np.random.default_rng(seed)
    plat = load_platform("u250")
    for d in ks.designs:
        try:
            space = SearchSpace(build_model(ks, d, platform=plat).params)
        except CodegenError:  # a design the generator does not build (3D, two reducing space loops)
            continue
        for p in space.to_points(space.sample(rng, per)):
            yield ks, d, {k: int(v) for k, v in p.items()}


@pytest.mark.parametrize(("kernel", "sizes"), KERNELS, ids=[k for k, _ in KERNELS])
def test_symbolic_counts_and_fifos_match_the_built_array(kernel: str, sizes: dict[str, str]) -> None:
    """At every sampled tiling of every design: each module function's symbolic count is its
    number of processes, and its count times its outputs is the region's FIFOs, width by width."""
    checked = 0
    for ks, d, tiling in _pairs(kernel, sizes, 3, seed=1):
        built = _build(ks, d, tiling, "u250")
        ir, env = built.ir, built.ctx.env
        for h in ir.hardware:
            n = sum(1 for p in ir.processes if p.func == h.name)
            assert int(evaluate(h.count, env)) == n, (d.id, tiling, h.name)
        streams = sorted(c.bits for c in ir.channels if c.kind == "stream")
        assert all(int(evaluate(c.bits_sym, env)) == c.bits for c in ir.channels if c.kind == "stream")
        from_counts: list[int] = []
        for h in ir.hardware:
            for o in h.outputs:
                from_counts += [int(evaluate(o.bits, env))] * int(evaluate(h.count, env))
        assert sorted(from_counts) == streams, (d.id, tiling)
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_position_count_closed_form_against_enumeration(n: int) -> None:
    tests = {"first": lambda p: p == 0, "last": lambda p: p == n - 1,
             "not_first": lambda p: p != 0, "not_last": lambda p: p != n - 1}
    names = list(tests)
    for mask in range(16):
        conds = [names[k] for k in range(4) if mask >> k & 1]
        want = sum(1 for p in range(n) if all(tests[c](p) for c in conds))
        got = position_count(const(n), conds)  # type: ignore[arg-type]
        assert int(evaluate(got, {})) == want, conds


def _kernel(design: str, tiling: dict[str, int], kernel: str = "mm.c", **sizes: str) -> str:
    ks = space_of(kernel, **sizes)
    return dict(generate(ks, ks.design(design), tiling).files)["kernel.cpp"]


def test_lanes_combine_from_the_first_product_and_drains_add_no_zero() -> None:
    """The printed PE combines its lanes' products in a tree of S - 1 adds (no zero to start
    from) and an output without a chain drains its accumulator as it is: no `0 + x` is left
    for Vitis to keep."""
    cpp = _kernel("ij-ij.k", {"T_i1": 4, "T_j1": 4, "T_k1": 4, "T_i2": 2, "T_j2": 2, "T_k2": 4},
                  I="8", J="8", K="8")
    assert "float v = 0" not in cpp and "float v = ((pl[0] + pl[1]) + (pl[2] + pl[3]));" in cpp
    assert "base" not in cpp
    ks = space_of("mm.c", I="8", J="8", K="8")
    ir = _build(ks, ks.design("ij-ij.k"), {"T_i1": 4, "T_j1": 4, "T_k1": 4, "T_i2": 2, "T_j2": 2, "T_k2": 4},
                "u250").ir
    env = {"T_k2": 4, "T_k1": 4, "K": 8, "T_i1": 4, "T_i2": 2, "T_j1": 4, "T_j2": 2, "I": 8, "J": 8}
    pe = ir.hardware_of("PE")
    ops = {(u.op, u.dtype): int(evaluate(u.count, env)) for u in pe.operators}
    assert ops == {("mul", "float"): 4, ("add", "float"): 4}  # 3 lane adds + 1 accumulation
    # the PEs pack their own words: no PE drain process, and no operator on the way out
    assert not any(h.name.startswith("PE_drain") for h in ir.hardware)
    ir_wd = _build(ks, ks.design("ij-ij.k+wd"), {"T_i1": 4, "T_j1": 4, "T_k1": 4, "T_i2": 2, "T_j2": 2, "T_k2": 4},
                   "u250").ir
    assert ir_wd.hardware_of("PE_drain").operators == ()


def test_a_drain_chain_adds_real_partial_sums_only() -> None:
    """`k` as a space loop: partial sums flow through the PEs' drains; the head starts from the
    accumulator (no add of the initial 0), every other drain adds one partial sum per lane."""
    ks = space_of("mm.c", I="8", J="8", K="8")
    d = next(x for x in ks.designs if x.space_loops == ("k",))
    tiling = {p.name: 2 for p in d.params} | {"T_k1": 8}  # 4 PEs along k
    built = _build(ks, d, tiling, "u250")
    drains = [h for h in built.ir.hardware if h.name.startswith("PE_drain")]
    env = built.ctx.env
    adds = {h.name: sum(int(evaluate(u.count, env)) for u in h.operators) for h in drains}
    heads = [n for n in adds if "head" in n]
    assert heads and all(adds[n] == 0 for n in heads)
    assert any(v > 0 for n, v in adds.items() if "head" not in n)
