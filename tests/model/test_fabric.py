"""The per-construct resource model: closed forms of its constructs, the platform's kernel
region and clock, and every resource checked by the budget."""

from __future__ import annotations

import dataclasses

import pytest

from odyssey.errors import PlatformError
from odyssey.expr import const, evaluate
from odyssey.frontend import load_scop
from odyssey.frontend.bundled import bundled_kernel
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.model.fabric import fifo_usage
from odyssey.platforms import at_clock, available, load_platform
from odyssey.platforms.fabric import fabric_costs, parse_fabric

COSTS = fabric_costs()


def test_fifo_closed_form() -> None:
    """A 512-bit FIFO, 2 deep: one SRLC32E per bit (UG974) and the FIFO's control; 64 deep: two."""
    f = COSTS.fifo
    two = fifo_usage(const(512), 2, COSTS)
    assert evaluate(two.lut, {}) == 512 + f.control.lut
    assert evaluate(two.ff, {}) == 512 * f.ff_per_bit + f.control.ff  # the writer's word register
    deep = fifo_usage(const(512), 64, COSTS)
    assert evaluate(deep.lut, {}) == 1024 + f.control.lut


def test_every_cost_has_a_source() -> None:
    import json
    from importlib import resources

    data = json.loads((resources.files("odyssey.platforms") / "fabric.json").read_text())
    for t, ops in data["operators"].items():
        for op, c in ops.items():
            assert len(c["source"]) > 20, (t, op)
    for key in ("fifo", "lutram", "bram", "process", "loop", "m_axi", "s_axilite"):
        assert len(data[key]["source"]) > 20, key


def test_a_malformed_cost_table_names_the_key() -> None:
    with pytest.raises(PlatformError, match="fifo"):
        parse_fabric({"about": "x", "operators": {"fp32": {"add": {"lut": 1, "ff": 1, "source": "s"}}},
                      "lutram": {}, "process": {}, "loop": {}, "m_axi": {}, "s_axilite": {}}, "t.json")


def test_the_u250_budget_is_its_kernel_region() -> None:
    plat = load_platform("u250")
    assert plat.kernel_resources.lut == 1_526_400 and plat.kernel_resources.bram18k == 4_672
    assert available(plat, "lut") == pytest.approx(0.7 * 1_526_400)
    assert available(plat, "dsp") == pytest.approx(0.7 * 12_273)
    assert plat.resources.lut == 1_728_000  # the device, for the "of device" shares
    u280 = load_platform("u280")
    assert u280.kernel_resources == u280.resources  # no region given: the whole device


def test_clock_moves_throughput_not_cycles_of_compute() -> None:
    ks = analyse(load_scop(bundled_kernel("mm"), {"I": "256", "J": "256", "K": "256"}))
    d = ks.design("ij-ij.k")
    tiling = {"T_i1": 64, "T_j1": 64, "T_k1": 64, "T_i2": 4, "T_j2": 8, "T_k2": 8}
    plat = load_platform("u250")
    fast = build_model(ks, d, platform=plat).evaluate_one(tiling)
    slow = build_model(ks, d, platform=at_clock(plat, 150)).evaluate_one(tiling)
    assert slow["throughput_gops"] == pytest.approx(fast["throughput_gops"] * slow["latency_cycles"]
                                                    / fast["latency_cycles"] / 2)
    assert slow["lut"] == fast["lut"] and slow["dsp"] == fast["dsp"]
    with pytest.raises(PlatformError):
        at_clock(plat, 0)


def test_every_resource_is_budgeted() -> None:
    """A tiling over the LUT budget only is infeasible, and the reason names LUT and both figures."""
    ks = analyse(load_scop(bundled_kernel("mm"), {"I": "1024", "J": "1024", "K": "1024"}))
    d = ks.design("ij-ij.k")
    plat = load_platform("u250")
    tiling = {"T_i1": 172, "T_j1": 512, "T_k1": 25, "T_i2": 4, "T_j2": 64, "T_k2": 5}
    roomy = dataclasses.replace(plat, usable_fraction=dataclasses.replace(plat.usable_fraction, dsp=1.0))
    r = build_model(ks, d, platform=roomy).evaluate_one(tiling)
    assert r["dsp"] <= available(roomy, "dsp") and r["lut"] > available(roomy, "lut")
    assert not r["feasible"] and str(r["reason"]).startswith("lut ") and " > " in str(r["reason"])


def test_bram_blocks_closed_form() -> None:
    """RAMB18E2 shapes (UG573): 320 x 32 bits fits one 512 x 36; 8 x 512 bits takes 15 of them
    side by side; 2,000 x 9 bits one 2K x 9; 1,000 x 40 bits three 1K x 18 side by side (512 x
    36, two wide and two deep, would take four)."""
    b = COSTS.bram
    assert b.blocks(32, 320) == 1
    assert b.blocks(512, 8) == 15
    assert b.blocks(9, 2000) == 1
    assert b.blocks(40, 1000) == 3


@pytest.mark.parametrize(("width", "depth", "impl"), [
    (32, 320, "bram"),    # 10,240 bits of one RAMB18E2's 18,432: 0.56
    (32, 100, "lutram"),  # 0.17 < 0.2
    (512, 8, "lutram"),   # 4,096 bits over 15 RAMB18E2s: 0.015
    (16, 1024, "bram"),   # a full 1K x 18
])
def test_the_storage_rule(width: int, depth: int, impl: str) -> None:
    assert COSTS.bank_impl(width, depth) == impl


def test_the_symbolic_storage_rule_is_the_printed_one() -> None:
    """The model's rule at every tiling (model.resources.on_bram, bank_blocks) equals the
    printer's (FabricCosts.bank_impl, BramCosts.blocks) at every width and depth tried."""
    from odyssey.expr import sym
    from odyssey.model.resources import bank_blocks, on_bram

    b = COSTS.bram
    d = sym("D")
    for width in (1, 8, 9, 16, 18, 32, 40, 64, 256, 512):
        blocks_c, bram_c = bank_blocks(const(width), d, b), on_bram(const(width), d, b)
        blocks_s, bram_s = bank_blocks(sym("W"), d, b), on_bram(sym("W"), d, b)
        for depth in (1, 7, 64, 100, 103, 320, 511, 512, 513, 1024, 2049, 5000):
            env = {"D": depth, "W": width}
            want = b.blocks(width, depth)
            assert evaluate(blocks_c, env) == want and evaluate(blocks_s, env) == want
            on = 1 if COSTS.bank_impl(width, depth) == "bram" else 0
            assert evaluate(bram_c, env) == on and evaluate(bram_s, env) == on, (width, depth)


def test_the_bram_shapes_are_every_platforms_ramb18() -> None:
    """fabric.json's RAMB18E2 shapes are the memory blocks every bundled platform states."""
    for name in ("u200", "u250", "u280", "vu9p"):
        import json
        from importlib import resources

        data = json.loads((resources.files("odyssey.platforms") / f"{name}.json").read_text())
        blocks = data["memory_blocks"]["bram18k"]
        assert sorted((s["width"], s["depth"]) for s in blocks["shapes"]) == sorted(COSTS.bram.shapes), name
        assert blocks["bits"] == COSTS.bram.bits, name
