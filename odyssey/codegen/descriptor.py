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

from odyssey.codegen.context import Ctx
from odyssey.codegen.geometry import block_partitions
from odyssey.codegen.hls_ast import stmt_json
from odyssey.codegen.io_modules import blk_t, cin_port
from odyssey.codegen.pe import op_table
from odyssey.codegen.top import Array, has_cin
from odyssey.expr import Expr, const, to_json

#: 2: module roles (operand, boundary), buffer roles and symbolic instances, ports, passes
SCHEMA_VERSION = 2


def _j(e: Expr) -> Any:
    return to_json(e)


def descriptor(ctx: Ctx, arr: Array, *, command: str) -> dict[str, Any]:
    t = ctx.tiling
    d = t.design
    scop = ctx.scop
    counts: dict[str, int] = {}
    for inst in arr.instances:
        counts[inst.func] = counts.get(inst.func, 0) + 1
    memory: list[dict[str, Any]] = []

    def positions(loops: tuple[str, ...]) -> tuple[int, Expr]:
        """Modules (and buffers) of a chain: one per position of its injection loops."""
        n = 1
        e: Expr = const(1)
        for s in loops:
            n, e = n * ctx.g(s).outer, e * ctx.g(s).outer_sym
        return n, e

    for op in ctx.operands:
        if op.role == "input":
            n, n_sym = positions(op.inj)
            memory.append({
                "name": f"{op.name}_block", "role": "input_block", "operand": op.name,
                "module": f"{op.name}_IO_L{'1' if len(op.inj) == 2 else '2'}_in",
                "array": op.array.name, "elem": op.ctype, "bits": op.bits, "dims": list(op.box),
                "dims_sym": [_j(e) for e in op.box_sym], "double_buffered": True,
                "instances": n, "instances_sym": _j(n_sym), "packing_lanes": op.lanes,
                "simd_read": op.simd, "ctype": blk_t(op),
                "partition": [{"dim": pt.dim, "factor": pt.factor, "factor_sym": _j(pt.factor_sym)}
                              for pt in block_partitions(op, t)],
            })
    acc_sym, acc_n = ctx.acc_size()
    pes_sym: Expr = const(1)
    for g in t.space:
        pes_sym = pes_sym * g.outer_sym
    common = {"array": ctx.output.array.name, "elem": ctx.output.ctype, "bits": ctx.output.bits,
              "dims": [acc_n], "dims_sym": [_j(acc_sym)], "instances": t.num_pes,
              "instances_sym": _j(pes_sym), "packing_lanes": 1, "simd_read": False, "partition": []}
    memory.append({"name": "acc", "role": "accumulator", "operand": ctx.output.name, "module": "PE",
                   "double_buffered": True, **common})
    memory.append({"name": "acc_running", "role": "running_sums", "operand": ctx.output.name, "module": "PE",
                   "double_buffered": False, **common})
    if ctx.needs_cin and ctx.main.op != "=":
        out = ctx.output
        n, n_sym = positions(out.inj)
        memory.append({**common, "name": f"{out.name}_partial_block", "role": "partial_sums",
                       "operand": out.name, "module": f"{out.name}_IO_L2_in", "double_buffered": True,
                       "instances": n, "instances_sym": _j(n_sym)})
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
        "modules": [{"name": f.name, "kind": f.kind, "operand": f.operand, "boundary": f.boundary,
                     "template": list(f.template),
                     "instances": [list(i.template_args) for i in arr.instances if i.func == f.name],
                     "ast": [stmt_json(s) for s in f.body]} for f in arr.functions.values()],
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
        "fifos": [{"name": f.name, "type": f.ctype, "bits": f.bits, "depth": f.depth, "kind": f.kind}
                  for f in arr.fifos.values()],
        "passes": {"loops": list(ctx.pass_loops)},
        "ports": [{"name": name, "operand": operand, "direction": direction, "elem_bits": bits,
                   "lanes_sym": _j(lanes)} for name, operand, direction, bits, lanes in _ports(ctx)],
        "processes": [{"func": i.func, "template_args": list(i.template_args),
                       "channels": [{"name": c, "direction": dr} for c, dr in arr.channels(i)]}
                      for i in arr.instances],
    }


def _ports(ctx: Ctx) -> list[tuple[str, str, str, int, Expr]]:
    """``(port, operand, "read"|"write", element bits, elements per word)`` of every m_axi port."""
    out: list[tuple[str, str, str, int, Expr]] = [(op.name, op.name, "read", op.bits, op.lanes_sym)
                                                  for op in ctx.inputs]
    o = ctx.output
    if has_cin(ctx):
        out.append((cin_port(o), o.name, "read", o.bits, const(1)))
    out.append((o.name, o.name, "write", o.bits, const(1)))
    return out
