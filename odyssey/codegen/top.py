"""Building the array: module instances, FIFOs and blocks, wired in a dataflow region.

``build_array`` returns the functions (one per module kind), the instances with their
template arguments and streams in call order, and the FIFO list, as a mutable builder;
:func:`odyssey.codegen.array_ir.array_ir` freezes it into the description everything else
reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import product
from typing import Literal

from odyssey.codegen import io_modules as io
from odyssey.codegen.context import Ctx
from odyssey.codegen.geometry import OperandGeom, Partition, block_partitions
from odyssey.codegen.hls_ast import (
    Function,
    Param,
    Pragma,
    Typedef,
)
from odyssey.codegen.io_modules import feed_statements
from odyssey.codegen.pe import acc_t, pe_drain_function, pe_function, variant_of
from odyssey.errors import CodegenError
from odyssey.expr import evaluate
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
    typedefs: list[Typedef] = field(default_factory=list)
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

    def typedef(self, t: Typedef) -> None:
        if t not in self.typedefs:
            self.typedefs.append(t)

    def add(self, func: str, targs: tuple[int, ...], *args: str) -> None:
        self.instances.append(Instance(func, targs, tuple(args) + self.scalars))

    def channels(self, inst: Instance) -> tuple[tuple[str, Literal["in", "out"]], ...]:
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
        arr.typedef(Typedef(f"ap_uint<{bits}>", word))
        vlanes = simd if op.simd else 1
        vword = f"{op.name}_v{vlanes}"
        arr.typedef(Typedef(f"ap_uint<{vlanes * op.bits}>", vword))
        arr.typedef(Typedef(op.ctype, io.blk_t(op), op.box))
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
    oct_, obits = out.word_type, out.bits * out.lanes  # the drain path moves packed words
    if out.packed:
        arr.typedef(Typedef(f"ap_uint<{obits}>", oct_))
    arr.typedef(Typedef(out.ctype, acc_t(ctx), (ctx.acc_size()[1],)))
    if ctx.needs_cin:
        arr.typedef(Typedef(oct_, io.blk_t(out), (int(evaluate(ctx.out_words_sym(), ctx.env)),)))

    # PEs
    for pos in positions:
        variant = variant_of(ctx, pos)
        fname = arr.fn(pe_function(ctx, variant, simd))
        dname = arr.fn(pe_drain_function(ctx, variant))
        acc_blocks = arr.fifo(f"acc_{_pos_name(pos, space)}", acc_t(ctx), 0, kind="blocks")
        arr.partitions[acc_blocks] = ctx.acc_partition()
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
        kscalars = tuple(name for name, _ in ctx.kernel_scalars)  # broadcast to every PE
        arr.add(fname, tuple(pos[s] for s in space), *args, *kscalars)
        arr.add(dname, tuple(pos[s] for s in space), *dargs, *kscalars)

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
    oct_, obits = out.word_type, out.bits * out.lanes
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


__all__ = ["Array", "Fifo", "Instance", "build_array", "has_cin"]
