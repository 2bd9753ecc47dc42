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

from odyssey.codegen import io_modules as io
from odyssey.codegen.context import TYPE_TAG, Ctx, of_bits
from odyssey.codegen.geometry import OperandGeom
from odyssey.codegen.hls_ast import Function, Pragma, Unit, print_function, print_unit
from odyssey.codegen.io_modules import feed_statements
from odyssey.codegen.pe import acc_t, pe_drain_function, pe_function, variant_of


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
    """The systolic array as data (mutable only while it is built)."""

    functions: dict[str, Function] = field(default_factory=dict)
    instances: list[Instance] = field(default_factory=list)
    fifos: dict[str, Fifo] = field(default_factory=dict)
    typedefs: list[str] = field(default_factory=list)
    partitions: dict[str, tuple[int, int]] = field(default_factory=dict)  # blocks -> (dim, factor)

    def fn(self, f: Function) -> str:
        if f.name not in self.functions:  # every module is its own hardware instance
            self.functions[f.name] = replace(f, body=(Pragma("HLS INLINE OFF"), *f.body))
        return f.name

    def fifo(self, name: str, ctype: str, bits: int, depth: int = 2, kind: str = "stream",
             partition: tuple[int, int] | None = None) -> str:
        if partition is not None and partition[1] > 1:
            self.partitions[name] = partition
        self.fifos.setdefault(name, Fifo(name, ctype, bits, depth, kind))
        return name

    def add(self, func: str, targs: tuple[int, ...], *args: str) -> None:
        self.instances.append(Instance(func, targs, tuple(args)))


def _pos_name(pos: dict[str, int], loops: tuple[str, ...]) -> str:
    return "_".join(str(pos[s]) for s in loops)


def build_array(ctx: Ctx) -> Array:
    arr = Array()
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
            # the innermost dimension is written `lanes` and read `SIMD` elements at a time
            factor = max(op.lanes, vlanes)
            blocks = arr.fifo(f"blocks_{op.name}_{key}", io.blk_t(op), 0, kind="blocks",
                              partition=(len(op.box), factor))
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
    l3o = io.l3_out(ctx, out)
    if ctx.needs_cin and ctx.main.op != "=":
        cin_l3 = arr.fifo(f"fifo_{out.name}_cin_L3", oct_, obits)
        arr.add(arr.fn(l3o), (), out.name, top, cin_l3)
        _cin_chain(ctx, arr, out, sizes, cin_l3, space, tail)
    else:
        arr.add(arr.fn(l3o), (), out.name, top)
    return arr


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


def kernel_files(ctx: Ctx, arr: Array, header_comment: str, *, burst_overhead: int = 20) -> tuple[str, str]:
    """``(kernel.h, kernel.cpp)`` texts."""
    defines = [(n, str(v)) for n, v in ctx.scop.params]
    defines += [(n, str(v)) for n, v in ctx.tiling.values]
    defines += [(op.lanes_macro, str(op.lanes)) for op in ctx.inputs]
    defines.append(("ODYSSEY_DRAM_BURST_OVERHEAD", str(burst_overhead)))
    ctypes = {op.ctype for op in ctx.operands}
    ports = [(op.word_type + " *", op.name) for op in ctx.inputs] + [(ctx.output.ctype + " *", ctx.output.name)]
    proto = 'extern "C" void kernel0(' + ", ".join(f"{t}{n}" for t, n in ports) + ");"
    header = Unit(
        header_comment,
        ('"ap_int.h"', '"hls_stream.h"', '"hls_streamofblocks.h"', '"odyssey_bits.h"', '"odyssey_dataflow.h"'),
        (), tuple(defines), tuple(arr.typedefs), extra=(_bit_helpers(ctypes), proto),
    )
    h_text = "#ifndef ODYSSEY_KERNEL_H\n#define ODYSSEY_KERNEL_H\n" + print_unit(header) + "#endif\n"
    body: list[str] = [f"// {line}" for line in header_comment.splitlines()]
    body += ['', '#include "kernel.h"', ""]
    for f in arr.functions.values():
        body += [print_function(f), ""]
    # top function
    top = [proto[:-1] + " {"]
    for _, n in ports:
        top.append(f"#pragma HLS INTERFACE m_axi port={n} offset=slave bundle=gmem_{n}")
    top.append("#pragma HLS INTERFACE s_axilite port=return")
    top.append("#pragma HLS DATAFLOW")
    for ff in arr.fifos.values():
        if ff.kind == "stream":
            top.append(f"  hls::stream<{ff.ctype}, {ff.depth}> {ff.name}(\"{ff.name}\");")
        else:
            top.append(f"  hls::stream_of_blocks<{ff.ctype}> {ff.name};")
            if ff.name in arr.partitions:
                dim, factor = arr.partitions[ff.name]
                top.append(f"#pragma HLS ARRAY_PARTITION variable={ff.name} cyclic factor={factor} dim={dim}")
    top.append("  ODYSSEY_DATAFLOW_BEGIN")
    for inst in arr.instances:
        targs = f"<{', '.join(map(str, inst.template_args))}>" if inst.template_args else ""
        top.append(f"  ODYSSEY_TASK({inst.func}{targs}({', '.join(inst.args)}));")
    top.append("  ODYSSEY_DATAFLOW_END")
    top.append("}")
    body += top
    return h_text, "\n".join(body) + "\n"


__all__ = ["Array", "Fifo", "Instance", "build_array", "kernel_files", "of_bits"]
