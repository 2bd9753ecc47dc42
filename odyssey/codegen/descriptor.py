"""The design descriptor: everything the performance models need, as JSON data.

Sections (``docs/descriptor.md`` documents each field): ``schema_version``, ``kernel``,
``design``, ``tiling``, ``params`` (tuning parameters with bounds and divisibility),
``sizes``, ``loops`` (symbolic extents, tiles and padding per band loop), ``modules`` (the
AST of every module kind and its instances), ``memory`` (every on-chip buffer),
``compute`` (SIMD lanes, operators per lane and types, II), ``topology`` (array shape and
module counts) and ``fifos``.
"""

from __future__ import annotations

from typing import Any

from odyssey.codegen.array_ir import ArrayIR, Buffer
from odyssey.codegen.context import Ctx
from odyssey.codegen.hls_ast import stmt_json
from odyssey.codegen.pe import op_table
from odyssey.codegen.roles import role_of
from odyssey.expr import Expr, to_json

#: 2: module operands and boundary flags, buffer roles and symbolic instances, ports, passes;
#: 3: module roles (reader, chain, loader, feeder, pe, drain, writer)
SCHEMA_VERSION = 3


def _j(e: Expr) -> Any:
    return to_json(e)


def descriptor(ctx: Ctx, ir: ArrayIR, *, command: str) -> dict[str, Any]:
    t = ctx.tiling
    d = t.design
    scop = ctx.scop
    counts: dict[str, int] = {}
    for proc in ir.processes:
        counts[proc.func] = counts.get(proc.func, 0) + 1
    memory = [_buffer_json(b) for b in ir.buffers]
    simd = t.loop(d.simd_loop).t2 if d.simd_loop else 1
    return {
        "schema_version": SCHEMA_VERSION,
        "generator": "odyssey",
        "command": command,
        "kernel": {"file": scop.file, "function": scop.function, "statement": ctx.main.text,
                   "op": ctx.main.op, "initial_value": ctx.c0},
        "design": {"id": d.id, "index": d.index, "dataflow": d.dataflow, "ordering": d.ordering,
                   "space_loops": list(d.space_loops), "order": list(d.order),
                   "reduction_loops": list(d.reduction_loops), "simd_loop": d.simd_loop,
                   "output_accumulation": d.output_accumulation, "model_only": None},
        "sizes": dict(scop.params),
        "tiling": dict(t.values),
        "params": [p.as_json() for p in d.params],
        "loops": [{"name": g.name, "lower": g.lower, "extent": g.extent, "extent_sym": _j(g.extent_sym),
                   "tiles": g.tiles, "tiles_sym": _j(g.tiles_sym), "outer_sym": _j(g.outer_sym),
                   "t1_sym": _j(g.t1_sym), "t2_sym": _j(g.t2_sym), "padded": g.padded, "space": g.space,
                   "reduction": g.reduction, "level2": g.level2} for g in t.loops],
        "operands": [{"name": op.name, "array": op.array.name, "role": op.role, "elem": op.ctype,
                      "bits": op.bits, "injection_loops": list(op.inj), "chain_loop": op.chain,
                      "reload_loops": list(d.order[: op.trunc]), "lanes": op.lanes, "simd": op.simd,
                      "lanes_sym": _j(op.lanes_sym), "lanes_macro": op.lanes_macro,
                      "dram_shape": list(op.dram_shape), "box": list(op.box),
                      "box_sym": [_j(e) for e in op.box_sym]} for op in ctx.operands],
        "modules": [{"name": f.name, "kind": f.kind, "role": role_of(f.kind), "operand": f.operand, "boundary": f.boundary,
                     "template": list(f.template),
                     "instances": [list(p.template_args) for p in ir.processes if p.func == f.name],
                     "ast": [stmt_json(s) for s in f.body]} for f in ir.modules],
        "memory": memory,
        "compute": {"simd_lanes": simd, "ops_per_lane": op_table(ctx), "dtype": ctx.output.ctype,
                    "operand_types": {op.name: op.ctype for op in ctx.inputs},
                    "pe_ii": ctx.pe_ii(), "pe_ii_sym": _j(ctx.pe_ii_sym()),
                    "reduction_latency": ctx.fadd_latency,
                    "pe_iterations_per_tile": ctx.pe_iterations()[1],
                    "pe_iterations_per_tile_sym": _j(ctx.pe_iterations()[0])},
        "topology": {"array_dims": [g.outer for g in t.space],
                     "array_dims_sym": [_j(g.outer_sym) for g in t.space],
                     "num_pes": t.num_pes, "module_counts": counts},
        "fifos": [{"name": c.name, "type": c.ctype, "bits": c.bits, "depth": c.depth, "kind": c.kind}
                  for c in ir.channels],
        "passes": {"loops": list(ir.pass_loops)},
        "ports": [{"name": p.name, "operand": p.operand, "direction": p.direction, "elem_bits": p.elem_bits,
                   "lanes_sym": _j(p.lanes_sym)} for p in ir.ports],
        "processes": [{"func": p.func, "template_args": list(p.template_args),
                       "channels": [{"name": c, "direction": dr} for c, dr in p.channels]}
                      for p in ir.processes],
    }


def _buffer_json(b: Buffer) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": b.name, "role": b.role, "operand": b.operand, "module": b.module, "array": b.array,
        "elem": b.elem, "bits": b.bits, "dims": list(b.dims), "dims_sym": [_j(e) for e in b.dims_sym],
        "double_buffered": b.double_buffered, "instances": b.instances, "instances_sym": _j(b.instances_sym),
        "packing_lanes": b.packing_lanes, "simd_read": b.simd_read,
        "partition": [{"dim": pt.dim, "factor": pt.factor, "factor_sym": _j(pt.factor_sym)} for pt in b.partition],
    }
    if b.ctype is not None:
        out["ctype"] = b.ctype
    return out
