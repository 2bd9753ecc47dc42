"""The design descriptor: everything the performance models need, as JSON data.

Sections (``docs/descriptor.md`` documents each field): ``schema_version``, ``kernel``,
``design``, ``tiling``, ``params`` (tuning parameters with bounds and divisibility),
``sizes``, ``loops`` (symbolic extents, tiles and padding per band loop), ``modules`` (the
AST of every module kind and its instances), ``memory`` (every on-chip buffer),
``compute`` (SIMD lanes, operators per lane and types, II), ``topology`` (array shape and
module counts), ``fifos``, ``passes``, ``ports`` and ``processes``. Its type is
:class:`~odyssey.codegen.descriptor_schema.Descriptor`: :func:`descriptor` builds one,
:func:`load_descriptor` reads one back from a file and checks it against that type, and
:func:`descriptor_json_schema` states the type as a JSON Schema for other tools.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar, cast

from odyssey.codegen.array_ir import ArrayIR, Buffer
from odyssey.codegen.context import Ctx
from odyssey.codegen.descriptor_schema import (
    LANE_OPS,
    LEVEL2S,
    OPERAND_ROLES,
    SCHEMA_VERSION,
    BufferJson,
    Descriptor,
    ExprJson,
    RegisterJson,
    StreamOutJson,
)
from odyssey.codegen.hardware import ModuleHardware, StreamOut
from odyssey.codegen.hls_ast import stmt_json
from odyssey.codegen.pe import op_table
from odyssey.codegen.roles import module_kind, role_of
from odyssey.codegen.typed_json import check_json, json_schema, show
from odyssey.errors import DescriptorError
from odyssey.expr import Expr, const, to_json
from odyssey.platforms import Platform, reload_name

_L = TypeVar("_L", bound=str)


def _j(e: Expr) -> ExprJson:
    return to_json(e)


def _one_of(value: str, choices: tuple[_L, ...]) -> _L:
    """``value`` as one of the descriptor's ``choices`` (an invariant of the generator)."""
    for c in choices:
        if c == value:
            return c
    raise AssertionError(f"{value!r} is not one of {', '.join(choices)}")


def descriptor(ctx: Ctx, ir: ArrayIR, *, command: str, platform: Platform) -> Descriptor:
    """The descriptor of the array ``ir`` built from ``ctx`` for ``platform`` (its name, or its
    file, and its kernel clock); ``command`` is the command line that asked for it."""
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
        "platform": reload_name(platform),
        "clock_mhz": float(platform.clock_mhz),
        "kernel": {"file": scop.file, "function": scop.function, "statement": ctx.main.text,
                   "op": ctx.main.op, "initial_value": ctx.c0},
        "design": {"id": d.id, "index": d.index, "dataflow": d.dataflow, "ordering": d.ordering,
                   "space_loops": list(d.space_loops), "order": list(d.order),
                   "reduction_loops": list(d.reduction_loops), "simd_loop": d.simd_loop,
                   "lut_mul_percent": d.lut_mul_percent, "output_accumulation": d.output_accumulation, "model_only": None},
        "sizes": dict(scop.params),
        "tiling": dict(t.values),
        "params": [{"name": p.name, "loop": p.loop, "level": p.level, "lower": p.lower, "upper": p.upper,
                    "divides": p.divides} for p in d.params],
        "loops": [{"name": g.name, "lower": g.lower, "extent": g.extent, "extent_sym": _j(g.extent_sym),
                   "tiles": g.tiles, "tiles_sym": _j(g.tiles_sym), "outer_sym": _j(g.outer_sym),
                   "t1_sym": _j(g.t1_sym), "t2_sym": _j(g.t2_sym), "padded": g.padded, "space": g.space,
                   "reduction": g.reduction,
                   "level2": _one_of(g.level2, LEVEL2S) if g.level2 is not None else None} for g in t.loops],
        "operands": [{"name": op.name, "array": op.array.name, "role": _one_of(op.role, OPERAND_ROLES),
                      "elem": op.ctype, "bits": op.bits, "injection_loops": list(op.inj), "chain_loop": op.chain,
                      "reload_loops": list(d.order[: op.trunc]), "lanes": op.lanes, "simd": op.simd,
                      "lanes_sym": _j(op.lanes_sym), "lanes_macro": op.lanes_macro, "pack_dim": op.pack_dim,
                      "pack_sym": [_j(e) for e in op.pack_sym],
                      "pack_macros": [op.pack_macro(k) for k in range(len(op.pack_sym))],
                      "dram_shape": list(op.dram_shape), "box": list(op.box),
                      "box_sym": [_j(e) for e in op.box_sym]} for op in ctx.operands],
        "modules": [{"name": f.name, "kind": module_kind(f.kind), "role": role_of(f.kind), "operand": f.operand,
                     "boundary": f.boundary, "template": list(f.template),
                     "instances": [list(p.template_args) for p in ir.processes if p.func == f.name],
                     "count_sym": _j(h.count),
                     "operators": [{"op": u.op, "dtype": u.dtype, "count_sym": _j(u.count), "impl": u.impl}
                                   for u in h.operators],
                     "registers": _registers(h),
                     "outputs": [_stream_out(o) for o in h.outputs],
                     "ast": [stmt_json(s) for s in f.body]} for f, h in zip(ir.modules, ir.hardware, strict=True)],
        "absent_modules": [{"name": f.name, "kind": module_kind(f.kind), "role": role_of(f.kind), "operand": f.operand,
                            "boundary": f.boundary, "template": list(f.template), "instances": [],
                            "count_sym": _j(h.count),
                            "operators": [{"op": u.op, "dtype": u.dtype, "count_sym": _j(u.count), "impl": u.impl}
                                          for u in h.operators],
                            "registers": _registers(h),
                            "outputs": [_stream_out(o) for o in h.outputs],
                            "ast": [stmt_json(s) for s in f.body]} for f, h in ir.absent],
        "memory": memory,
        "compute": {"simd_lanes": simd, "ops_per_lane": [_one_of(o, LANE_OPS) for o in op_table(ctx)],
                    "dtype": ctx.output.ctype,
                    "operand_types": {op.name: op.ctype for op in ctx.inputs},
                    "pe_ii": ctx.pe_ii(), "pe_ii_sym": _j(ctx.pe_ii_sym()),
                    "reduction_latency": ctx.fadd_latency,
                    "pe_iterations_per_tile": ctx.pe_iterations()[1],
                    "pe_iterations_per_tile_sym": _j(ctx.pe_iterations()[0])},
        "topology": {"array_dims": [g.outer for g in t.space],
                     "array_dims_sym": [_j(g.outer_sym) for g in t.space],
                     "num_pes": t.num_pes, "module_counts": counts},
        "fifos": [{"name": c.name, "type": c.ctype, "bits": c.bits, "depth": c.depth, "kind": c.kind,
                   "bits_sym": _j(c.bits_sym)}
                  for c in ir.channels],
        "passes": {"loops": list(ir.pass_loops)},
        "ports": [{"name": p.name, "operand": p.operand, "direction": p.direction, "elem_bits": p.elem_bits,
                   "lanes_sym": _j(p.lanes_sym), "channel": p.channel, "memory": p.memory, "bundle": p.bundle,
                   "connectivity": p.connectivity} for p in ir.ports],
        "processes": [{"func": p.func, "template_args": list(p.template_args),
                       "channels": [{"name": c, "direction": dr} for c, dr in p.channels]}
                      for p in ir.processes],
    }


def _stream_out(o: StreamOut) -> StreamOutJson:
    """A FIFO a module writes (a deep one, ``depth_sym``, with its binding)."""
    return {"bits_sym": _j(o.bits), "depth": o.depth,
            "depth_sym": None if o.depth_sym is None else _j(o.depth_sym), "storage": o.storage}


def _registers(h: ModuleHardware) -> list[RegisterJson]:
    return [{"kind": r.kind, "bits_sym": _j(r.bits), "count_sym": _j(r.count), "cycles": r.cycles}
            for r in h.registers]


def _buffer_json(b: Buffer) -> BufferJson:
    out: BufferJson = {
        "name": b.name, "role": b.role, "operand": b.operand, "module": b.module, "array": b.array,
        "elem": b.elem, "bits": b.bits, "bits_sym": _j(b.bits_sym if b.bits_sym is not None else const(b.bits)),
        "dims": list(b.dims), "dims_sym": [_j(e) for e in b.dims_sym],
        "double_buffered": b.double_buffered, "instances": b.instances, "instances_sym": _j(b.instances_sym),
        "packing_lanes": b.packing_lanes, "simd_read": b.simd_read,
        "storage": b.storage,
        "partition": [{"dim": pt.dim, "factor": pt.factor, "factor_sym": _j(pt.factor_sym)} for pt in b.partition],
    }
    if b.ctype is not None:
        out["ctype"] = b.ctype
    return out


# --- reading it back --------------------------------------------------------------------------


def validate_descriptor(data: Any, *, source: str) -> Descriptor:
    """``data`` (parsed JSON) as a :class:`Descriptor`; :class:`~odyssey.errors.DescriptorError`
    naming ``source``, the key path, what is expected and what was found at its first problem
    (``hls_out/x/descriptor.json: modules[3].kind: expected one of io_l3_in, ...; got 'foo'``)."""
    if isinstance(data, dict) and "schema_version" in data and data["schema_version"] != SCHEMA_VERSION:
        raise DescriptorError(f"{source}: schema_version: {show(data['schema_version'])} is not {SCHEMA_VERSION}, "
                              "the version this odyssey reads; regenerate the design with `odyssey generate`")
    check_json(data, Descriptor, source=source, error=DescriptorError)
    desc = cast(Descriptor, data)
    _check_tiling(desc, source)
    return desc


def _check_tiling(desc: Descriptor, source: str) -> None:
    """Every tuning parameter's value within its range and dividing its parent (the checks
    ``odyssey generate`` made; a hand-edited descriptor may break them)."""
    t = desc["tiling"]
    for p in desc["params"]:
        name = p["name"]
        v = t.get(name)
        if not isinstance(v, int) or isinstance(v, bool) or not p["lower"] <= v <= p["upper"]:
            raise DescriptorError(f"{source}: tiling.{name}: {show(v)} is outside its range "
                                  f"[{p['lower']}, {p['upper']}]; regenerate the design with `odyssey generate`")
        parent = p["divides"]
        if parent is not None and t.get(parent, 0) % v:
            raise DescriptorError(f"{source}: tiling.{name}: {v} does not divide {parent} = {t.get(parent)}; "
                                  "regenerate the design with `odyssey generate`")


def load_descriptor(path: Path | str) -> Descriptor:
    """Read and validate a ``descriptor.json`` (see :func:`validate_descriptor`)."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise DescriptorError(f"{path}: cannot read the descriptor ({exc.strerror}); generate the design with "
                              "`odyssey generate`") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DescriptorError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg})") from None
    return validate_descriptor(data, source=str(path))


def descriptor_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``descriptor.json``, generated from :class:`Descriptor`
    and the classes it holds (``docs/descriptor.md`` says how to print it)."""
    return json_schema(Descriptor, title=f"odyssey descriptor.json, schema version {SCHEMA_VERSION}")


__all__ = ["SCHEMA_VERSION", "descriptor", "descriptor_json_schema", "load_descriptor", "validate_descriptor"]
