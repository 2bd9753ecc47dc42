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
from odyssey.codegen.hardware import OperatorUse, RegisterUse
from odyssey.codegen.hls_ast import (
    Function,
    Param,
    Pragma,
    Typedef,
)
from odyssey.codegen.io_modules import feed_statements
from odyssey.codegen.pe import (
    PEVariant,
    acc_t,
    pe_drain_function,
    pe_function,
    pe_operators,
    pe_registers,
    pe_word_operators,
    pe_word_registers,
    variant_count,
    variant_of,
)
from odyssey.errors import CodegenError
from odyssey.expr import Expr, const, emax, evaluate, mul
from odyssey.platforms import assumption


@dataclass(frozen=True, slots=True)
class Fifo:
    name: str
    ctype: str
    bits: int
    depth: int
    kind: str  # "stream" or "blocks"
    bits_sym: Expr = const(0)  # the item's width at every tiling (0 for blocks)
    #: a deep FIFO's depth at every tiling (None: a shift register of the fixed ``depth``); it is
    #: stored in memory, block RAM or distributed RAM by the bank rule (``fabric.json`` ``bram``)
    depth_sym: Expr | None = None


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
    # per function: its instances at every tiling, and the operators of one instance
    counts: dict[str, Expr] = field(default_factory=dict)
    operators: dict[str, tuple[OperatorUse, ...]] = field(default_factory=dict)
    registers: dict[str, tuple[RegisterUse, ...]] = field(default_factory=dict)

    def fn(self, f: Function, count: Expr, ops: tuple[OperatorUse, ...] = (),
           regs: tuple[RegisterUse, ...] = ()) -> str:
        """Register module function ``f`` with its instance ``count`` at every tiling (the rule
        that places its instances), the operators ``ops`` and pipeline registers ``regs`` of
        one instance."""
        if f.name not in self.functions:  # every module is its own hardware instance
            extra = tuple(Param("int", s) for s in self.scalars)
            self.functions[f.name] = replace(f, params=f.params + extra,
                                             body=(Pragma("HLS INLINE OFF"), *f.body))
            self.counts[f.name] = count
            self.operators[f.name] = ops
            self.registers[f.name] = regs
        return f.name

    def fifo(self, name: str, ctype: str, bits: int, depth: int | None = None, kind: str = "stream",
             partition: tuple[Partition, ...] = (), bits_sym: Expr | None = None,
             depth_sym: Expr | None = None) -> str:
        """Declare a channel; ``depth_sym`` (the depth at every tiling) makes it a deep FIFO,
        stored in memory by the bank rule (:class:`Fifo`), where the others are shift
        registers of the platform's ``fifo_depth``."""
        if depth is None:
            depth = assumption("fifo_depth").value
        if partition:
            self.partitions[name] = partition
        self.fifos.setdefault(name, Fifo(name, ctype, bits, depth, kind,
                                         bits_sym if bits_sym is not None else const(bits), depth_sym))
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
    n_sym = {s: ctx.g(s).outer_sym for s in space}
    positions = [dict(zip(space, p, strict=True)) for p in product(*(range(sizes[s]) for s in space))]
    simd_loop = ctx.tiling.design.simd_loop
    simd = ctx.g(simd_loop).t2 if simd_loop else 1
    simd_sym = ctx.g(simd_loop).t2_sym if simd_loop else const(1)
    one = const(1)

    def pe_fifo(op: OperandGeom, pos: dict[str, int], word: str, bits: int) -> str:
        vl = simd_sym if op.simd else one
        return arr.fifo(f"fifo_{op.name}_PE_{_pos_name(pos, space)}", word, bits, bits_sym=vl * op.bits)

    def row(loops: tuple[str, ...]) -> Expr:
        return mul(*[n_sym[s] for s in loops]) if loops else one

    for op in ctx.inputs:
        word, bits = op.word_type, op.lanes * op.bits
        bits_sym = op.lanes_sym * op.bits
        arr.typedef(Typedef(f"ap_uint<{bits}>", word))
        vlanes = simd if op.simd else 1
        vword = f"{op.name}_v{vlanes}"
        arr.typedef(Typedef(f"ap_uint<{vlanes * op.bits}>", vword))
        arr.typedef(Typedef(op.ctype, io.blk_t(op), op.box))
        l3 = arr.fifo(f"fifo_{op.name}_L3", word, bits, bits_sym=bits_sym)
        arr.add(arr.fn(io.l3_in(ctx, op), one), (), op.name, l3)
        feed, _ = feed_statements(ctx, op, simd)
        inj = op.inj
        intra = arr.fn(io.chain_buffer_intra(ctx, op, feed, vword, ctx.pe_ii()), row(inj))
        inj_pos = [dict(zip(inj, p, strict=True)) for p in product(*(range(sizes[s]) for s in inj))]
        for ipos in inj_pos:
            targs = tuple(ipos[s] for s in inj)
            key = _pos_name(ipos, inj) if inj else "0"
            blocks = arr.fifo(f"blocks_{op.name}_{key}", io.blk_t(op), 0, kind="blocks",
                              partition=block_partitions(op, ctx.tiling))
            pe_pos = {s: ipos.get(s, 0) for s in space}
            arr.add(intra, targs, blocks, pe_fifo(op, pe_pos, vword, vlanes * op.bits))
        _wire_chain(arr, inj, sizes, n_sym, l3, name=op.name, tags=("L2", "L1"), ctype=word, bits=bits,
                    bits_sym=bits_sym, upper=partial(_upper_in, ctx, op), lower=partial(_lower_in, ctx, op))

    out = ctx.output
    oct_, obits = out.word_type, out.bits * out.lanes  # the drain path moves packed words
    obits_sym = out.lanes_sym * out.bits
    if out.packed:
        arr.typedef(Typedef(f"ap_uint<{obits}>", oct_))
    arr.typedef(Typedef(out.ctype, acc_t(ctx), (ctx.acc_size()[1],)))
    if ctx.needs_cin:
        arr.typedef(Typedef(oct_, io.blk_t(out), (int(evaluate(ctx.out_words_sym(), ctx.env)),)))

    def ofifo(name: str) -> str:
        return arr.fifo(name, oct_, obits, bits_sym=obits_sym)

    # PEs
    pe_ops = pe_operators(ctx, simd_sym)
    pe_regs = pe_registers(ctx, simd_sym, pe_ops)
    if ctx.pe_words:  # each PE packs its own words: what its drain would compute is its own
        own_ops = pe_word_operators(ctx, variant_of(ctx, positions[0]))
        pe_ops, pe_regs = pe_ops + own_ops, pe_regs + pe_word_registers(ctx, own_ops)
        # a visit of its words, and at least the shift registers' depth
        words_sym = emax(assumption("fifo_depth").value, ctx.out_words_sym())
        words = int(evaluate(words_sym, ctx.env))
    for pos in positions:
        variant = variant_of(ctx, pos)
        fname = arr.fn(pe_function(ctx, variant, simd), variant_count(ctx, variant), pe_ops, pe_regs)
        args: list[str] = []
        for op in ctx.inputs:
            vl = simd if op.simd else 1
            vword = f"{op.name}_v{vl}"
            args.append(pe_fifo(op, pos, vword, vl * op.bits))
            if op.chain is not None and op.name not in variant.no_forward:
                east = dict(pos)
                east[op.chain] += 1
                args.append(pe_fifo(op, east, vword, vl * op.bits))
        key = _pos_name(pos, space)
        kscalars = tuple(name for name, _ in ctx.kernel_scalars)  # broadcast to every PE
        if ctx.pe_words:
            # its output FIFO holds a visit of its words (AutoSA's drain module buffers them):
            # the PE never waits for the drain chain within a visit
            args.append(arr.fifo(f"fifo_{out.name}_drain_{key}", oct_, obits, depth=words, bits_sym=obits_sym,
                                 depth_sym=words_sym))
            arr.add(fname, tuple(pos[s] for s in space), *args, *kscalars)
            continue
        drain_fn, drain_ops = pe_drain_function(ctx, variant)
        dname = arr.fn(drain_fn, variant_count(ctx, variant, drain=True), drain_ops)
        acc_blocks = arr.fifo(f"acc_{_pos_name(pos, space)}", acc_t(ctx), 0, kind="blocks")
        arr.partitions[acc_blocks] = ctx.acc_partition()
        dargs: list[str] = [acc_blocks]
        args.append(acc_blocks)
        if variant.out_head:
            if ctx.needs_cin and ctx.main.op != "=":
                dargs.append(ofifo(f"fifo_{out.name}_cin_{key}"))
        else:
            dargs.append(ofifo(f"fifo_{out.name}_PE_{key}"))
        if variant.out_tail:
            dargs.append(ofifo(f"fifo_{out.name}_drain_{key}"))
        else:
            after = dict(pos)
            assert out.chain is not None
            after[out.chain] += 1
            dargs.append(ofifo(f"fifo_{out.name}_PE_{_pos_name(after, space)}"))
        arr.add(fname, tuple(pos[s] for s in space), *args, *kscalars)
        arr.add(dname, tuple(pos[s] for s in space), *dargs, *kscalars)

    # drain network
    tail = {s: (sizes[s] - 1 if s == out.chain else 0) for s in space}
    inj = out.inj

    def pe_drain(ipos: dict[str, int]) -> str:
        p = dict(tail)
        p.update(ipos)
        return f"fifo_{out.name}_drain_{_pos_name(p, space)}"

    def level(lvl: int, boundary: bool, n: Expr, rows: Expr = one) -> str:
        return arr.fn(io.drain_chain(ctx, out, lvl, boundary=boundary), rows * (one if boundary else n - 1))

    if not inj:
        top = pe_drain({})
    elif len(inj) == 1:
        s = inj[0]
        for p in range(sizes[s]):
            o = ofifo(f"fifo_{out.name}_D1_{p}")
            if p == sizes[s] - 1:
                arr.add(level(0, True, n_sym[s]), (p,), pe_drain({s: p}), o)
            else:
                i = ofifo(f"fifo_{out.name}_D1_{p + 1}")
                arr.add(level(0, False, n_sym[s]), (p,), pe_drain({s: p}), i, o)
        top = f"fifo_{out.name}_D1_0"
    else:
        s0, s1 = inj
        for p0 in range(sizes[s0]):
            for p1 in range(sizes[s1]):
                o = ofifo(f"fifo_{out.name}_D1_{p0}_{p1}")
                low = pe_drain({s0: p0, s1: p1})
                if p1 == sizes[s1] - 1:
                    arr.add(level(1, True, n_sym[s1], n_sym[s0]), (p0, p1), low, o)
                else:
                    i = ofifo(f"fifo_{out.name}_D1_{p0}_{p1 + 1}")
                    arr.add(level(1, False, n_sym[s1], n_sym[s0]), (p0, p1), low, i, o)
            o2 = ofifo(f"fifo_{out.name}_D2_{p0}")
            low2 = f"fifo_{out.name}_D1_{p0}_0"
            if p0 == sizes[s0] - 1:
                arr.add(level(0, True, n_sym[s0]), (p0,), low2, o2)
            else:
                i2 = ofifo(f"fifo_{out.name}_D2_{p0 + 1}")
                arr.add(level(0, False, n_sym[s0]), (p0,), low2, i2, o2)
        top = f"fifo_{out.name}_D2_0"
    if has_cin(ctx):
        cin_l3 = ofifo(f"fifo_{out.name}_cin_L3")
        arr.add(arr.fn(io.l3_cin(ctx, out), one), (), io.cin_port(out), cin_l3)
        _cin_chain(ctx, arr, out, sizes, n_sym, cin_l3, space)
    arr.add(arr.fn(io.l3_out(ctx, out), one), (), out.name, top)
    arr.in_call_order()
    return arr


def absent_drain_variants(ctx: Ctx, arr: Array) -> list[tuple[Function, Expr, tuple[OperatorUse, ...]]]:
    """The PE drain variants of the output chain that this tiling does not instantiate (the
    head that is also the tail exists only with one PE along the chain; a middle one only with
    three), as ``(function, count at every tiling, operators)``: the models count them at the
    tilings where they exist."""
    if ctx.output.chain is None:
        return []
    out = []
    for head in (True, False):
        for tail in (True, False):
            variant = PEVariant(frozenset(), head, tail)
            fn, ops = pe_drain_function(ctx, variant)
            if fn.name not in arr.functions:
                out.append((fn, variant_count(ctx, variant, drain=True), ops))
    return out


def has_cin(ctx: Ctx) -> bool:
    """The output's partial sums (or initial values) are read back from DRAM."""
    return ctx.needs_cin and ctx.main.op != "="


def _cin_chain(ctx: Ctx, arr: Array, out: OperandGeom, sizes: dict[str, int], n_sym: dict[str, Expr],
               src: str, space: tuple[str, ...]) -> None:
    oct_, obits = out.word_type, out.bits * out.lanes
    inj = out.inj
    head = {s: 0 for s in space}
    intra = arr.fn(io.cin_buffer_intra(ctx, out), mul(*[n_sym[s] for s in inj]) if inj else const(1))
    inj_pos = [dict(zip(inj, p, strict=True)) for p in product(*(range(sizes[s]) for s in inj))]
    for ipos in inj_pos:
        key = _pos_name(ipos, inj) if inj else "0"
        blocks = arr.fifo(f"blocks_{out.name}_{key}", io.blk_t(out), 0, kind="blocks")
        at = dict(head)
        at.update(ipos)
        arr.add(intra, tuple(ipos[s] for s in inj), blocks, f"fifo_{out.name}_cin_{_pos_name(at, space)}")
    _wire_chain(arr, inj, sizes, n_sym, src, name=out.name, tags=("C2", "C1"), ctype=oct_, bits=obits,
                bits_sym=out.lanes_sym * out.bits,
                upper=lambda last: io.cin_upper(ctx, out, boundary=last),
                lower=lambda last: io.cin_buffer_inter(ctx, out, boundary=last))


def _upper_in(ctx: Ctx, op: OperandGeom, last: bool) -> Function:
    return io.chain_upper(ctx, op, boundary=last)


def _lower_in(ctx: Ctx, op: OperandGeom, last: bool) -> Function:
    return io.chain_buffer_inter(ctx, op, boundary=last)


def _chain_level(
    arr: Array, *, name: str, tag: str, prefix: tuple[int, ...], count: int, n_sym: Expr, rows: Expr,
    src: str, ctype: str, bits: int, bits_sym: Expr, make: Callable[[bool], Function],
    before_out: Callable[[tuple[int, ...]], tuple[str, ...]] = lambda t: (),
    after_out: Callable[[tuple[int, ...]], tuple[str, ...]] = lambda t: (),
) -> None:
    """One chain of ``count`` modules (``n_sym`` at every tiling, in each of ``rows`` such
    chains) at positions ``prefix + (p,)``: module ``p`` reads ``fifo_<name>_<tag>_<pos>``
    (the first reads ``src``) and, unless it is the last (the boundary variant), forwards into
    the next module's FIFO."""
    for p in range(count):
        targs = prefix + (p,)
        inp = src if p == 0 else arr.fifo(f"fifo_{name}_{tag}_{_key(targs)}", ctype, bits, bits_sym=bits_sym)
        last = p == count - 1
        nxt = () if last else (arr.fifo(f"fifo_{name}_{tag}_{_key(prefix + (p + 1,))}", ctype, bits,
                                        bits_sym=bits_sym),)
        fn = arr.fn(make(last), rows * (const(1) if last else n_sym - 1))
        arr.add(fn, targs, inp, *before_out(targs), *nxt, *after_out(targs))


def _wire_chain(
    arr: Array, inj: tuple[str, ...], sizes: dict[str, int], n_sym: dict[str, Expr], src: str, *, name: str,
    tags: tuple[str, str], ctype: str, bits: int, bits_sym: Expr, upper: Callable[[bool], Function],
    lower: Callable[[bool], Function],
) -> None:
    """An I/O chain over the injection loops: one lowest-level module per position keeps its
    block (``blocks_<name>_<pos>``); with two injection loops an upper filter chain feeds one
    lower chain per row."""

    def blocks(t: tuple[int, ...]) -> tuple[str, ...]:
        return (f"blocks_{name}_{_key(t) or '0'}",)

    if not inj:
        arr.add(arr.fn(lower(True), const(1)), (), src, *blocks(()))
        return
    common = {"name": name, "ctype": ctype, "bits": bits, "bits_sym": bits_sym}
    if len(inj) == 1:
        _chain_level(arr, tag=tags[0], prefix=(), count=sizes[inj[0]], n_sym=n_sym[inj[0]], rows=const(1),
                     src=src, make=lower, after_out=blocks, **common)  # type: ignore[arg-type]
        return
    s0, s1 = inj

    def low(t: tuple[int, ...]) -> tuple[str, ...]:
        return (arr.fifo(f"fifo_{name}_{tags[1]}_{t[0]}_0", ctype, bits, bits_sym=bits_sym),)

    _chain_level(arr, tag=tags[0], prefix=(), count=sizes[s0], n_sym=n_sym[s0], rows=const(1), src=src,
                 make=upper, before_out=low, **common)  # type: ignore[arg-type]
    for p0 in range(sizes[s0]):
        _chain_level(arr, tag=tags[1], prefix=(p0,), count=sizes[s1], n_sym=n_sym[s1], rows=n_sym[s0],
                     src=f"fifo_{name}_{tags[1]}_{p0}_0", make=lower, after_out=blocks,
                     **common)  # type: ignore[arg-type]


def _key(t: tuple[int, ...]) -> str:
    return "_".join(map(str, t))


__all__ = ["Array", "Fifo", "Instance", "absent_drain_variants", "build_array", "has_cin"]
