"""The array IR: one typed description that the printer and the descriptor both read."""

from __future__ import annotations

import json

from odyssey.codegen.array_ir import array_ir
from odyssey.codegen.context import Ctx
from odyssey.codegen.generate import _build, generate
from tests.codegen.conftest import space_of

MM = {"T_i1": 6, "T_j1": 5, "T_k1": 7, "T_i2": 3, "T_j2": 5, "T_k2": 7}


def _ir(design: str):  # type: ignore[no-untyped-def]
    ks = space_of("mm.c", I="37", J="41", K="43")
    built = _build(ks, ks.design(design), MM, "u250")
    assert isinstance(built.ctx, Ctx)
    return ks, built.ctx, built.ir


def test_partial_sum_design_has_passes_a_read_port_and_its_buffers() -> None:
    ks, ctx, ir = _ir("ij-jk.i")
    assert ir.pass_loops == ("j", "k") and ir.scalars == ("t_j", "t_k")
    assert [(p.name, p.direction) for p in ir.ports] == [("A", "read"), ("B", "read"), ("C_in", "read"),
                                                        ("C", "write")]
    assert {b.role for b in ir.buffers} == {"input_block", "accumulator", "running_sums", "partial_sums"}
    # words of the DRAM images: inputs in packed words, the output in elements (padded shapes)
    a = next(p for p in ir.ports if p.name == "A")
    assert a.words * a.lanes == ctx.inputs[0].dram_shape[0] * ctx.inputs[0].dram_shape[1]
    # every process's channels exist, and producers come first
    names = {c.name for c in ir.channels}
    written: set[str] = set()
    for proc in ir.processes:
        assert {c for c, _ in proc.channels} <= names
        assert all(c in written for c, d in proc.channels if d == "in")
        written |= {c for c, d in proc.channels if d == "out"}


def test_the_printer_and_the_descriptor_read_the_same_description() -> None:
    ks, ctx, ir = _ir("ij-ij.k")
    gen = generate(ks, ks.design("ij-ij.k"), MM)
    cpp = dict(gen.files)["kernel.cpp"]
    desc = json.loads(dict(gen.files)["descriptor.json"])
    for p in ir.ports:
        assert f"port={p.name} offset=slave bundle={p.bundle} depth={p.words}" in cpp
    for c in ir.channels:
        if c.kind == "stream":
            assert f"#pragma HLS STREAM variable={c.name} depth={c.depth}" in cpp
    assert [b["name"] for b in desc["memory"]] == [b.name for b in ir.buffers]
    assert [(p["name"], p["channel"], p["bundle"], p["connectivity"]) for p in desc["ports"]] == \
        [(p.name, p.channel, p.bundle, p.connectivity) for p in ir.ports]
    cfg = dict(gen.files)["connectivity.cfg"]
    assert all(f"sp=kernel0_1.{p.name}:{p.connectivity}" in cfg for p in ir.ports)
    assert [p["func"] for p in desc["processes"]] == [p.func for p in ir.processes]
    assert ir.pass_loops == () and desc["passes"]["loops"] == []
    assert array_ir(ctx) == ir  # built afresh from the same context: the same frozen value


def test_channel_assignment_rule() -> None:
    """Operands ranked by their array's elements (largest first, stable), dealt round-robin over
    the channels; the output's read-back port shares the output's channel (one buffer)."""
    from odyssey.codegen.channels import assign_channels

    assert assign_channels([("A", 10), ("B", 30), ("C", 20)], 4) == {"B": 0, "C": 1, "A": 2}
    assert assign_channels([("A", 5), ("B", 5), ("C", 5)], 2) == {"A": 0, "B": 1, "C": 0}
    assert assign_channels([("A", 1), ("B", 2)], 1) == {"A": 0, "B": 0}
    # MM 37x43 . 43x41: C (37*41 = 1517) and B (43*41 = 1763) and A (37*43 = 1591)
    _, _, ir = _ir("ij-jk.i")
    chan = {p.name: (p.channel, p.bundle, p.connectivity, p.memory) for p in ir.ports}
    assert chan == {"B": (0, "gmem0", "DDR[0]", "DDR4-2400"), "A": (1, "gmem1", "DDR[1]", "DDR4-2400"),
                    "C": (2, "gmem2", "DDR[2]", "DDR4-2400"), "C_in": (2, "gmem2", "DDR[2]", "DDR4-2400")}


def test_u280_ports_use_one_hbm_pseudo_channel_each() -> None:
    ks = space_of("mm.c", I="37", J="41", K="43")
    ir = _build(ks, ks.design("ij-ij.k"), MM, "u280").ir
    assert [(p.name, p.connectivity, p.bundle) for p in ir.ports] == [
        ("A", "HBM[1]", "gmem1"), ("B", "HBM[0]", "gmem0"), ("C", "HBM[2]", "gmem2")]
    # alone on its pseudo-channel, a port is paced at its word's bytes over 14.375e9 / 300e6
    for p in ir.ports:
        assert p.pace == p.word_bytes / (14375 / 300)
