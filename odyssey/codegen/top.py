"""The top function: module instances, FIFOs and blocks, wired in a dataflow region.

``build_array`` returns the functions (one per module kind), the instances with their
template arguments and streams, and the FIFO list, as plain data; ``kernel_files`` prints
``kernel.h`` and ``kernel.cpp`` from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import product
from math import prod

from odyssey.codegen import io_modules as io
from odyssey.codegen.context import TYPE_TAG, Ctx, of_bits
from odyssey.codegen.geometry import OperandGeom, Partition, block_partitions
from odyssey.codegen.hls_ast import (
    Call,
    Decl,
    For,
    Function,
    Line,
    Param,
    Pragma,
    Stmt,
    Unit,
    print_function,
    print_unit,
)
from odyssey.codegen.io_modules import feed_statements
from odyssey.codegen.pe import acc_t, pe_drain_function, pe_function, variant_of
from odyssey.errors import CodegenError
from odyssey.platforms import assumption


@dataclass(frozen=True, slots=True)
class Fifo:
    name: str
    ctype: str
    bits: int
    depth: int
    kind: str  # "stream" or "blocks"


@dataclass(frozen=True, slots=True)
class Instance:
    func: str
    template_args: tuple[int, ...]
    args: tuple[str, ...]


@dataclass
class Array:
    """The systolic array as data (mutable only while it is built). ``scalars`` are the pass
    indices every module takes after its streams (:attr:`Ctx.pass_loops`)."""

    functions: dict[str, Function] = field(default_factory=dict)
    instances: list[Instance] = field(default_factory=list)
    fifos: dict[str, Fifo] = field(default_factory=dict)
    typedefs: list[str] = field(default_factory=list)
    partitions: dict[str, tuple[Partition, ...]] = field(default_factory=dict)  # blocks -> banks
    scalars: tuple[str, ...] = ()

    def fn(self, f: Function) -> str:
        if f.name not in self.functions:  # every module is its own hardware instance
            extra = tuple(Param("int", s) for s in self.scalars)
            self.functions[f.name] = replace(f, params=f.params + extra,
                                             body=(Pragma("HLS INLINE OFF"), *f.body))
        return f.name

    def fifo(self, name: str, ctype: str, bits: int, depth: int | None = None, kind: str = "stream",
             partition: tuple[Partition, ...] = ()) -> str:
        if depth is None:
            depth = assumption("fifo_depth").value
        if partition:
            self.partitions[name] = partition
        self.fifos.setdefault(name, Fifo(name, ctype, bits, depth, kind))
        return name

    def add(self, func: str, targs: tuple[int, ...], *args: str) -> None:
        self.instances.append(Instance(func, targs, tuple(args) + self.scalars))

    def channels(self, inst: Instance) -> tuple[tuple[str, str], ...]:
        """``(stream, "in" | "out")`` for every stream or stream of blocks ``inst`` reads or
        writes, from its function's parameter directions."""
        params = self.functions[inst.func].params
        return tuple((a, p.direction) for p, a in zip(params, inst.args, strict=True)
                     if p.direction is not None)

    def in_call_order(self) -> None:
        """Reorder the instances so that every channel's producer is called before its
        consumer (Kahn's algorithm, ties kept in building order): Vitis C simulation runs the
        processes of a dataflow region one after another in call order. Raises
        :class:`CodegenError` when the channels form a cycle."""
        producer: dict[str, int] = {}
        for k, inst in enumerate(self.instances):
            for ch, d in self.channels(inst):
                if d == "out":
                    producer[ch] = k
        after: dict[int, set[int]] = {k: set() for k in range(len(self.instances))}
        for k, inst in enumerate(self.instances):
            for ch, d in self.channels(inst):
                if d == "in" and ch in producer and producer[ch] != k:
                    after[k].add(producer[ch])
        done: list[int] = []
        placed: set[int] = set()
        while len(done) < len(self.instances):
            ready = [k for k in range(len(self.instances)) if k not in placed and after[k] <= placed]
            if not ready:
                left = [self.instances[k].func for k in range(len(self.instances)) if k not in placed]
                raise CodegenError(f"the processes {', '.join(sorted(set(left)))} form a cycle of "
                                   "streams; a dataflow region must be acyclic")
            for k in ready:  # every ready process at once keeps the building order within a wave
                done.append(k)
                placed.add(k)
        self.instances = [self.instances[k] for k in done]


def _pos_name(pos: dict[str, int], loops: tuple[str, ...]) -> str:
    return "_".join(str(pos[s]) for s in loops)


def build_array(ctx: Ctx) -> Array:
    arr = Array(scalars=tuple(f"t_{n}" for n in ctx.pass_loops))
    space = ctx.tiling.design.space_loops
    sizes = {s: ctx.g(s).outer for s in space}
    positions = [dict(zip(space, p, strict=True)) for p in product(*(range(sizes[s]) for s in space))]
    simd = ctx.g(ctx.tiling.design.simd_loop).t2 if ctx.tiling.design.simd_loop else 1
    ii = ctx.pe_ii()

    def pe_fifo(op: OperandGeom, pos: dict[str, int], word: str, bits: int) -> str:
        return arr.fifo(f"fifo_{op.name}_PE_{_pos_name(pos, space)}", word, bits)

    for op in ctx.inputs:
        word, bits = op.word_type, op.lanes * op.bits
        arr.typedefs.append(f"typedef ap_uint<{bits}> {word};")
        vlanes = simd if op.simd else 1
        vword = f"{op.name}_v{vlanes}"
        if f"typedef ap_uint<{vlanes * op.bits}> {vword};" not in arr.typedefs:
            arr.typedefs.append(f"typedef ap_uint<{vlanes * op.bits}> {vword};")
        arr.typedefs.append(f"typedef {op.ctype} {io.blk_t(op)}" + "".join(f"[{e}]" for e in op.box) + ";")
        l3 = arr.fifo(f"fifo_{op.name}_L3", word, bits)
        arr.add(arr.fn(io.l3_in(ctx, op)), (), op.name, l3)
        feed, _ = feed_statements(ctx, op, simd)
        intra = arr.fn(io.chain_buffer_intra(ctx, op, feed, vword, ii))
        inj = op.inj
        inj_pos = [dict(zip(inj, p, strict=True)) for p in product(*(range(sizes[s]) for s in inj))]
        for ipos in inj_pos:
            targs = tuple(ipos[s] for s in inj)
            key = _pos_name(ipos, inj) if inj else "0"
            blocks = arr.fifo(f"blocks_{op.name}_{key}", io.blk_t(op), 0, kind="blocks",
                              partition=block_partitions(op, ctx.tiling))
            pe_pos = {s: ipos.get(s, 0) for s in space}
            arr.add(intra, targs, blocks, pe_fifo(op, pe_pos, vword, vlanes * op.bits))
        _wire_chain(arr, inj, sizes, l3, name=op.name, tags=("L2", "L1"), ctype=word, bits=bits,
                    upper=partial(_upper_in, ctx, op), lower=partial(_lower_in, ctx, op))

    out = ctx.output
    oct_, obits = out.ctype, out.bits
    arr.typedefs.append(f"typedef {oct_} {acc_t(ctx)}[{ctx.acc_size()[1]}];")
    if ctx.needs_cin:
        arr.typedefs.append(f"typedef {oct_} {io.blk_t(out)}[{ctx.acc_size()[1]}];")

    # PEs
    for pos in positions:
        variant = variant_of(ctx, pos)
        fname = arr.fn(pe_function(ctx, variant, simd))
        dname = arr.fn(pe_drain_function(ctx, variant))
        acc_blocks = arr.fifo(f"acc_{_pos_name(pos, space)}", acc_t(ctx), 0, kind="blocks")
        args: list[str] = []
        dargs: list[str] = [acc_blocks]
        for op in ctx.inputs:
            vl = simd if op.simd else 1
            vword = f"{op.name}_v{vl}"
            args.append(pe_fifo(op, pos, vword, vl * op.bits))
            if op.chain is not None and op.name not in variant.no_forward:
                east = dict(pos)
                east[op.chain] += 1
                args.append(pe_fifo(op, east, vword, vl * op.bits))
        args.append(acc_blocks)
        key = _pos_name(pos, space)
        if variant.out_head:
            if ctx.needs_cin and ctx.main.op != "=":
                dargs.append(arr.fifo(f"fifo_{out.name}_cin_{key}", oct_, obits))
        else:
            dargs.append(arr.fifo(f"fifo_{out.name}_PE_{key}", oct_, obits))
        if variant.out_tail:
            dargs.append(arr.fifo(f"fifo_{out.name}_drain_{key}", oct_, obits))
        else:
            after = dict(pos)
            assert out.chain is not None
            after[out.chain] += 1
            dargs.append(arr.fifo(f"fifo_{out.name}_PE_{_pos_name(after, space)}", oct_, obits))
        arr.add(fname, tuple(pos[s] for s in space), *args)
        arr.add(dname, tuple(pos[s] for s in space), *dargs)

    # drain network
    tail = {s: (sizes[s] - 1 if s == out.chain else 0) for s in space}
    inj = out.inj

    def pe_drain(ipos: dict[str, int]) -> str:
        p = dict(tail)
        p.update(ipos)
        return f"fifo_{out.name}_drain_{_pos_name(p, space)}"

    if not inj:
        top = pe_drain({})
    elif len(inj) == 1:
        s = inj[0]
        for p in range(sizes[s]):
            o = arr.fifo(f"fifo_{out.name}_D1_{p}", oct_, obits)
            if p == sizes[s] - 1:
                arr.add(arr.fn(io.drain_chain(ctx, out, 0, boundary=True)), (p,), pe_drain({s: p}), o)
            else:
                i = arr.fifo(f"fifo_{out.name}_D1_{p + 1}", oct_, obits)
                arr.add(arr.fn(io.drain_chain(ctx, out, 0, boundary=False)), (p,), pe_drain({s: p}), i, o)
        top = f"fifo_{out.name}_D1_0"
    else:
        s0, s1 = inj
        for p0 in range(sizes[s0]):
            for p1 in range(sizes[s1]):
                o = arr.fifo(f"fifo_{out.name}_D1_{p0}_{p1}", oct_, obits)
                low = pe_drain({s0: p0, s1: p1})
                if p1 == sizes[s1] - 1:
                    arr.add(arr.fn(io.drain_chain(ctx, out, 1, boundary=True)), (p0, p1), low, o)
                else:
                    i = arr.fifo(f"fifo_{out.name}_D1_{p0}_{p1 + 1}", oct_, obits)
                    arr.add(arr.fn(io.drain_chain(ctx, out, 1, boundary=False)), (p0, p1), low, i, o)
            o2 = arr.fifo(f"fifo_{out.name}_D2_{p0}", oct_, obits)
            low2 = f"fifo_{out.name}_D1_{p0}_0"
            if p0 == sizes[s0] - 1:
                arr.add(arr.fn(io.drain_chain(ctx, out, 0, boundary=True)), (p0,), low2, o2)
            else:
                i2 = arr.fifo(f"fifo_{out.name}_D2_{p0 + 1}", oct_, obits)
                arr.add(arr.fn(io.drain_chain(ctx, out, 0, boundary=False)), (p0,), low2, i2, o2)
        top = f"fifo_{out.name}_D2_0"
    if has_cin(ctx):
        cin_l3 = arr.fifo(f"fifo_{out.name}_cin_L3", oct_, obits)
        arr.add(arr.fn(io.l3_cin(ctx, out)), (), io.cin_port(out), cin_l3)
        _cin_chain(ctx, arr, out, sizes, cin_l3, space, tail)
    arr.add(arr.fn(io.l3_out(ctx, out)), (), out.name, top)
    arr.in_call_order()
    return arr


def has_cin(ctx: Ctx) -> bool:
    """The output's partial sums (or initial values) are read back from DRAM."""
    return ctx.needs_cin and ctx.main.op != "="


def _cin_chain(ctx: Ctx, arr: Array, out: OperandGeom, sizes: dict[str, int], src: str,
               space: tuple[str, ...], tail: dict[str, int]) -> None:
    oct_, obits = out.ctype, out.bits
    inj = out.inj
    head = {s: 0 for s in space}
    intra = arr.fn(io.cin_buffer_intra(ctx, out))
    inj_pos = [dict(zip(inj, p, strict=True)) for p in product(*(range(sizes[s]) for s in inj))]
    for ipos in inj_pos:
        key = _pos_name(ipos, inj) if inj else "0"
        blocks = arr.fifo(f"blocks_{out.name}_{key}", io.blk_t(out), 0, kind="blocks")
        at = dict(head)
        at.update(ipos)
        arr.add(intra, tuple(ipos[s] for s in inj), blocks, f"fifo_{out.name}_cin_{_pos_name(at, space)}")
    _wire_chain(arr, inj, sizes, src, name=out.name, tags=("C2", "C1"), ctype=oct_, bits=obits,
                upper=lambda last: io.cin_upper(ctx, out, boundary=last),
                lower=lambda last: io.cin_buffer_inter(ctx, out, boundary=last))


def _upper_in(ctx: Ctx, op: OperandGeom, last: bool) -> Function:
    return io.chain_upper(ctx, op, boundary=last)


def _lower_in(ctx: Ctx, op: OperandGeom, last: bool) -> Function:
    return io.chain_buffer_inter(ctx, op, boundary=last)


def _chain_level(
    arr: Array, *, name: str, tag: str, prefix: tuple[int, ...], count: int, src: str, ctype: str,
    bits: int, make: Callable[[bool], Function],
    before_out: Callable[[tuple[int, ...]], tuple[str, ...]] = lambda t: (),
    after_out: Callable[[tuple[int, ...]], tuple[str, ...]] = lambda t: (),
) -> None:
    """One chain of ``count`` modules at positions ``prefix + (p,)``: module ``p`` reads
    ``fifo_<name>_<tag>_<pos>`` (the first reads ``src``) and, unless it is the last (the
    boundary variant), forwards into the next module's FIFO."""
    for p in range(count):
        targs = prefix + (p,)
        inp = src if p == 0 else arr.fifo(f"fifo_{name}_{tag}_{_key(targs)}", ctype, bits)
        last = p == count - 1
        nxt = () if last else (arr.fifo(f"fifo_{name}_{tag}_{_key(prefix + (p + 1,))}", ctype, bits),)
        arr.add(arr.fn(make(last)), targs, inp, *before_out(targs), *nxt, *after_out(targs))


def _wire_chain(
    arr: Array, inj: tuple[str, ...], sizes: dict[str, int], src: str, *, name: str,
    tags: tuple[str, str], ctype: str, bits: int, upper: Callable[[bool], Function],
    lower: Callable[[bool], Function],
) -> None:
    """An I/O chain over the injection loops: one lowest-level module per position keeps its
    block (``blocks_<name>_<pos>``); with two injection loops an upper filter chain feeds one
    lower chain per row."""

    def blocks(t: tuple[int, ...]) -> tuple[str, ...]:
        return (f"blocks_{name}_{_key(t) or '0'}",)

    if not inj:
        arr.add(arr.fn(lower(True)), (), src, *blocks(()))
        return
    common = {"name": name, "ctype": ctype, "bits": bits}
    if len(inj) == 1:
        _chain_level(arr, tag=tags[0], prefix=(), count=sizes[inj[0]], src=src, make=lower,
                     after_out=blocks, **common)  # type: ignore[arg-type]
        return
    s0, s1 = inj

    def low(t: tuple[int, ...]) -> tuple[str, ...]:
        return (arr.fifo(f"fifo_{name}_{tags[1]}_{t[0]}_0", ctype, bits),)

    _chain_level(arr, tag=tags[0], prefix=(), count=sizes[s0], src=src, make=upper, before_out=low,
                 **common)  # type: ignore[arg-type]
    for p0 in range(sizes[s0]):
        _chain_level(arr, tag=tags[1], prefix=(p0,), count=sizes[s1], src=f"fifo_{name}_{tags[1]}_{p0}_0",
                     make=lower, after_out=blocks, **common)  # type: ignore[arg-type]


def _key(t: tuple[int, ...]) -> str:
    return "_".join(map(str, t))


def _bit_helpers(ctypes: set[str]) -> str:
    lines = []
    for t in sorted(ctypes):
        tag = TYPE_TAG[t]
        if t == "float":
            lines.append("static inline unsigned long long bits_of(float x) { return odyssey::float_to_bits(x); }")
            lines.append("static inline float float_of(unsigned long long b) { return odyssey::bits_to_float((unsigned int)b); }")
        elif t == "double":
            lines.append("static inline unsigned long long bits_of(double x) { return odyssey::double_to_bits(x); }")
            lines.append("static inline double double_of(unsigned long long b) { return odyssey::bits_to_double(b); }")
        else:
            bits = {"char": 8, "signed char": 8, "unsigned char": 8, "short": 16, "unsigned short": 16,
                    "int": 32, "unsigned int": 32, "long": 64, "unsigned long": 64}[t]
            mask = (1 << bits) - 1
            lines.append(f"static inline unsigned long long bits_of({t} x) {{ return (unsigned long long)x & {mask}ULL; }}")
            lines.append(f"static inline {t} {tag}_of(unsigned long long b) {{ return ({t})b; }}")
    return "\n".join(lines)


def _ports(ctx: Ctx) -> list[tuple[str, str, int]]:
    """``(C type, name, words)`` of every m_axi port of the top function, ``words`` the size of
    the DRAM image it points at (the INTERFACE ``depth`` co-simulation needs)."""
    out: list[tuple[str, str, int]] = []
    for op in ctx.inputs:
        out.append((op.word_type + " *", op.name, prod(op.dram_shape) // op.lanes))
    o = ctx.output
    if has_cin(ctx):
        out.append((o.ctype + " *", io.cin_port(o), prod(o.dram_shape)))
    out.append((o.ctype + " *", o.name, prod(o.dram_shape)))
    return out


def _region_body(arr: Array) -> tuple[Stmt, ...]:
    """The dataflow region: its channels (FIFO depths as STREAM pragmas, which every Vitis
    version accepts), then one call per process in producer-before-consumer order."""
    body: list[Stmt] = [Pragma("HLS DATAFLOW")]
    for ff in arr.fifos.values():
        if ff.kind == "stream":
            body.append(Decl(f"hls::stream<{ff.ctype}>", ff.name, ctor_args=(f'"{ff.name}"',)))
            body.append(Pragma(f"HLS STREAM variable={ff.name} depth={ff.depth}"))
        else:
            body.append(Decl(f"hls::stream_of_blocks<{ff.ctype}>", ff.name))
            for part in (pt for pt in arr.partitions.get(ff.name, ()) if pt.factor > 1):
                body.append(Pragma(f"HLS ARRAY_PARTITION variable={ff.name} cyclic factor={part.factor} "
                                   f"dim={part.dim}"))
    body.append(Line("ODYSSEY_DATAFLOW_BEGIN"))
    for inst in arr.instances:
        body.append(Call(inst.func, inst.args, tuple(map(str, inst.template_args)), task=True))
    body.append(Line("ODYSSEY_DATAFLOW_END"))
    return tuple(body)


def top_functions(ctx: Ctx, arr: Array) -> tuple[Function, ...]:
    """The top function ``kernel0`` (m_axi ports with their depths, AXI-lite control) and, when
    the design has pass loops, the dataflow region ``kernel0_pass`` it calls once per pass."""
    ports = _ports(ctx)
    params = tuple(Param(t, n) for t, n, _ in ports)
    iface: list[Stmt] = [Pragma(f"HLS INTERFACE m_axi port={n} offset=slave bundle=gmem_{n} depth={w}")
                         for _, n, w in ports]
    iface.append(Pragma("HLS INTERFACE s_axilite port=return"))
    if not arr.scalars:
        return (Function("kernel0", params, (*iface, *_region_body(arr)), extern_c=True,
                         comment="kernel0: the systolic array, one dataflow region."),)
    region = Function("kernel0_pass", params + tuple(Param("int", sc) for sc in arr.scalars),
                      _region_body(arr), comment="kernel0_pass: one pass of the array (a dataflow region).")
    call: Stmt = Call("kernel0_pass", tuple(n for _, n, _ in ports) + arr.scalars)
    for loop in reversed(ctx.pass_loops):
        call = For(f"t_{loop}", ctx.g(loop).tiles_sym, (call,))
    top = Function("kernel0", params, (*iface, call), extern_c=True,
                   comment=f"kernel0: one pass per iteration of the tile loops {', '.join(ctx.pass_loops)}; "
                           "partial sums go through DRAM between passes.")
    return region, top


def kernel_files(ctx: Ctx, arr: Array, header_comment: str, *, burst_overhead: int = 20,
                 region_restart: int = 0) -> tuple[str, str]:
    """``(kernel.h, kernel.cpp)`` texts."""
    defines = [(n, str(v)) for n, v in ctx.scop.params]
    defines += [(n, str(v)) for n, v in ctx.tiling.values]
    defines += [(op.lanes_macro, str(op.lanes)) for op in ctx.inputs]
    defines.append(("ODYSSEY_DRAM_BURST_OVERHEAD", str(burst_overhead)))
    defines.append(("ODYSSEY_REGION_RESTART", str(region_restart)))
    ctypes = {op.ctype for op in ctx.operands}
    tops = top_functions(ctx, arr)
    proto = print_function(tops[-1], prototype=True)
    header = Unit(
        header_comment,
        ('"ap_int.h"', '"hls_stream.h"', '"hls_streamofblocks.h"', '"odyssey_bits.h"', '"odyssey_dataflow.h"'),
        (), tuple(defines), tuple(arr.typedefs), extra=(_bit_helpers(ctypes), proto),
    )
    h_text = "#ifndef ODYSSEY_KERNEL_H\n#define ODYSSEY_KERNEL_H\n" + print_unit(header) + "#endif\n"
    body: list[str] = [f"// {line}" for line in header_comment.splitlines()]
    body += ['', '#include "kernel.h"', ""]
    for f in (*arr.functions.values(), *tops):
        body += [print_function(f), ""]
    return h_text, "\n".join(body)


__all__ = ["Array", "Fifo", "Instance", "build_array", "has_cin", "kernel_files", "of_bits", "top_functions"]
