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
    for key in ("fifo", "lutram", "process", "loop", "m_axi", "s_axilite"):
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
