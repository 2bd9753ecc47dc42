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
        assert f"port={p.name} offset=slave bundle=gmem_{p.name} depth={p.words}" in cpp
    for c in ir.channels:
        if c.kind == "stream":
            assert f"#pragma HLS STREAM variable={c.name} depth={c.depth}" in cpp
    assert [b["name"] for b in desc["memory"]] == [b.name for b in ir.buffers]
    assert [p["func"] for p in desc["processes"]] == [p.func for p in ir.processes]
    assert ir.pass_loops == () and desc["passes"]["loops"] == []
    assert array_ir(ctx) == ir  # built afresh from the same context: the same frozen value
