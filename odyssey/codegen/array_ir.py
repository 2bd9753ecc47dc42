"""The systolic array of one design and tiling as one frozen, typed description.

Everything downstream reads an :class:`ArrayIR`: the C++ printer (:mod:`.printer`), the
descriptor (:mod:`.descriptor`, which the models and tools read as JSON) and, through the
printed code, the simulations and static checks. Every value the printer needs is a number at
the tiling; every value the models need also comes as its symbolic twin (an
:class:`~odyssey.expr.Expr` of the tuning parameters) computed from the same place, so the two
cannot drift apart.

* :class:`Buffer`: an on-chip buffer with its role (``input_block``, ``accumulator``,
  ``running_sums``, ``partial_sums``), element type, dimensions, instances, banks (cyclic
  partitions) and double buffering;
* :class:`Channel`: a stream or a stream of blocks of the dataflow region, with its depth;
* :class:`Process`: one call of the region, with the channels it reads and writes;
* :class:`DramPort`: an m_axi port of the top function, its word, the size of its image, its
  DRAM channel and bundle, and its pace at its share of the channel
  (:mod:`.channels` states the assignment and sharing rules);
* :class:`HostImage`: the layout of the DRAM image the host testbench builds for an operand;
* the module functions (:class:`~odyssey.codegen.hls_ast.Function`, with kind, operand and
  boundary flag) and the pass loops the top function runs around the region.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from odyssey.codegen import io_modules as io
from odyssey.codegen.channels import (
    PortTraffic,
    accesses_per_pass,
    assign_channels,
    bundle_name,
    port_paces,
)
from odyssey.codegen.context import Ctx
from odyssey.codegen.geometry import OperandGeom, Partition, block_partitions
from odyssey.codegen.hardware import ModuleHardware, StreamOut
from odyssey.codegen.hls_ast import Function, Typedef, stmt_json
from odyssey.codegen.layout import DramLayout, dram_layout
from odyssey.codegen.pe import acc_t
from odyssey.codegen.top import absent_drain_variants, build_array, has_cin
from odyssey.expr import Expr, const, evaluate
from odyssey.platforms import DEFAULT_PLATFORM, Platform, assumption, load_platform
from odyssey.platforms.fabric import fabric_costs

BufferRole = Literal["input_block", "accumulator", "running_sums", "partial_sums"]
Storage = Literal["rule", "bram", "uram"]
#: the buffers of the I/O modules (a ``+uram`` design's UltraRAM)
_IO_BLOCKS: frozenset[BufferRole] = frozenset({"input_block", "partial_sums"})
Direction = Literal["in", "out"]
HostAccess = Literal["read", "write", "read_write"]


@dataclass(frozen=True, slots=True)
class Buffer:
    """An on-chip buffer; ``instances`` copies (one per lowest-level I/O module or PE), each
    split into the banks of ``partition`` and held twice when ``double_buffered``."""

    name: str
    role: BufferRole
    operand: str
    module: str  # the module kind that holds it, for people reading the descriptor
    array: str
    elem: str
    bits: int
    dims: tuple[int, ...]
    dims_sym: tuple[Expr, ...]
    double_buffered: bool
    instances: int
    instances_sym: Expr
    partition: tuple[Partition, ...] = ()
    packing_lanes: int = 1
    simd_read: bool = False
    ctype: str | None = None  # the block's typedef, where it has one
    bits_sym: Expr | None = None  # ``bits`` at every tiling, where it depends on the tiling
    #: where its banks are bound: ``rule`` (``fabric.json``'s fill rule), ``bram`` (however
    #: shallow: the design's ``+bram``), ``uram`` (an I/O block of a ``+uram`` design)
    storage: Storage = "rule"


@dataclass(frozen=True, slots=True)
class Channel:
    """A FIFO (``stream``, ``depth`` items) or a stream of blocks (``blocks``) of the region."""

    name: str
    ctype: str
    bits: int
    depth: int
    kind: Literal["stream", "blocks"]
    partition: tuple[Partition, ...] = ()
    bits_sym: Expr = const(0)  # ``bits`` at every tiling
    #: a deep FIFO's depth at every tiling (None: a shift register of ``depth`` items), stored
    #: in memory as ``storage`` binds it (:func:`channel_impl`; ``bram`` in a ``+bram`` design)
    depth_sym: Expr | None = None
    storage: Storage = "rule"


@dataclass(frozen=True, slots=True)
class Process:
    """One call of the dataflow region, in call order (producers first)."""

    func: str
    template_args: tuple[int, ...]
    args: tuple[str, ...]
    channels: tuple[tuple[str, Direction], ...]


@dataclass(frozen=True, slots=True)
class DramPort:
    """An m_axi port of ``kernel0``: ``words`` words of ``lanes`` elements of ``elem_bits``,
    on DRAM channel ``channel`` of ``memory`` (Vitis connectivity ``connectivity``, e.g.
    ``DDR[1]``) through the m_axi bundle ``bundle`` (one per channel). ``pace`` is the cycles
    per word of its share of the channel at the tiling (:mod:`.channels`), which the timed
    simulation charges."""

    name: str
    operand: str
    direction: Literal["read", "write"]
    ctype: str  # the pointer's element type (a packed word for the inputs)
    elem_bits: int
    lanes: int
    lanes_sym: Expr
    words: int
    channel: int = 0
    memory: str = ""
    bundle: str = "gmem0"
    connectivity: str = ""
    pace: float = 0.0

    @property
    def word_bytes(self) -> int:
        return self.lanes * self.elem_bits // 8


@dataclass(frozen=True, slots=True)
class HostImage:
    """The DRAM image of one operand, as the host builds it from the original array.

    ``layout`` (:class:`~odyssey.codegen.layout.DramLayout`) says where each element sits:
    serialized (tile by tile, in the order the kernel moves the words) or row-major in the
    array zero-padded to ``dram_shape``. A word of type ``word_type`` holds ``lanes``
    elements, lane ``l`` in bits ``[l * bits, (l + 1) * bits)``: inputs pack ``lanes``
    elements per ``ap_uint`` word, the output holds one element per word (``word_type`` is
    ``elem``). ``access`` is what the kernel does with it: the output is ``read_write`` when
    partial sums are read back through its own port."""

    operand: str
    array: str
    shape: tuple[int, ...]  # the original array's extents
    dram_shape: tuple[int, ...]
    elem: str
    bits: int
    lanes: int
    word_type: str
    access: HostAccess
    layout: DramLayout
    words: int  # words of the image

    @property
    def packed(self) -> bool:
        """Elements sit in bit fields of ``ap_uint`` words (the inputs), not one per word."""
        return self.word_type != self.elem

    @property
    def is_float(self) -> bool:
        return self.elem in ("float", "double")


@dataclass(frozen=True, slots=True)
class ArrayIR:
    modules: tuple[Function, ...]
    processes: tuple[Process, ...]
    channels: tuple[Channel, ...]
    buffers: tuple[Buffer, ...]
    ports: tuple[DramPort, ...]
    pass_loops: tuple[str, ...]
    scalars: tuple[str, ...]  # the pass indices every process takes
    typedefs: tuple[Typedef, ...]
    host_images: tuple[HostImage, ...]  # the inputs in operand order, then the output
    kernel_scalars: tuple[tuple[str, str], ...] = ()  # (name, C type): s_axilite scalar arguments
    hardware: tuple[ModuleHardware, ...] = ()  # per module function, in ``modules`` order
    # module variants this tiling does not instantiate (count 0 here), with what they would
    # hold, so the models count them at the tilings where they exist
    absent: tuple[tuple[Function, ModuleHardware], ...] = ()

    def module(self, name: str) -> Function:
        return next(f for f in self.modules if f.name == name)

    def hardware_of(self, name: str) -> ModuleHardware:
        return next(h for h in self.hardware if h.name == name)


def array_ir(ctx: Ctx, platform: Platform | None = None) -> ArrayIR:
    """Build the array of ``ctx`` (its modules, wiring and call order) and describe it; its DRAM
    ports go to the channels of ``platform``'s kernel memory (default: the U250's)."""
    arr = build_array(ctx)
    bram = ctx.tiling.design.storage == "bram"  # a deep FIFO is bound as the design binds its buffers
    channels = tuple(Channel(f.name, f.ctype, f.bits, f.depth, "blocks" if f.kind == "blocks" else "stream",
                             arr.partitions.get(f.name, ()), f.bits_sym, f.depth_sym,
                             "bram" if bram and f.depth_sym is not None else "rule")
                     for f in arr.fifos.values())
    processes = tuple(Process(i.func, i.template_args, i.args, arr.channels(i)) for i in arr.instances)
    modules = tuple(arr.functions.values())
    ports = _on_channels(ctx, _ports(ctx), modules, platform or load_platform(DEFAULT_PLATFORM))
    by_name = {c.name: c for c in channels}
    hardware = []
    for f in modules:
        first = next(p for p in processes if p.func == f.name)
        outs = tuple(StreamOut(by_name[c].bits_sym, by_name[c].depth, by_name[c].depth_sym, by_name[c].storage)
                     for c, d in first.channels if d == "out" and by_name[c].kind == "stream")
        hardware.append(ModuleHardware(f.name, arr.counts[f.name], arr.operators[f.name], outs,
                                       arr.registers.get(f.name, ())))
    word = ctx.output.lanes_sym * ctx.output.bits  # a drain writes one word stream
    absent = tuple((f, ModuleHardware(f.name, count, ops, (StreamOut(word, int(assumption("fifo_depth").value)),)))
                   for f, count, ops in absent_drain_variants(ctx, arr))
    buffers = _buffers(ctx)
    storage = ctx.tiling.design.storage
    if storage != "rule":  # +bram: every buffer; +uram: the I/O modules' blocks
        buffers = tuple(replace(b, storage=storage) if storage == "bram" or b.role in _IO_BLOCKS else b
                        for b in buffers)
    return ArrayIR(modules, processes, channels, buffers, ports,
                   ctx.pass_loops, arr.scalars, tuple(arr.typedefs), _host_images(ctx), ctx.kernel_scalars,
                   tuple(hardware), absent)


def _on_channels(ctx: Ctx, ports: tuple[DramPort, ...], modules: tuple[Function, ...],
                 platform: Platform) -> tuple[DramPort, ...]:
    """``ports`` with their channel, bundle and pace (:mod:`.channels`: the assignment rule on
    the arrays' sizes, the sharing rule on the accesses per pass at the tiling)."""
    mem = platform.kernel_memory
    values = ctx.scop.param_values
    sizes = []
    for op in (*ctx.inputs, ctx.output):
        n = 1
        for d in op.array.shape:
            n *= d.evaluate(values)
        sizes.append((op.name, n))
    chan = assign_channels(sizes, mem.channels)
    counts = accesses_per_pass([(f.template, [stmt_json(s) for s in f.body]) for f in modules], {})
    traffic = [PortTraffic(p.name, chan[p.operand], const(p.word_bytes), counts.get(p.name, const(0)))
               for p in ports]
    paces = port_paces(traffic, mem.bytes_per_cycle(platform.clock_mhz))
    out = []
    for p in ports:
        c = chan[p.operand]
        out.append(replace(p, channel=c, memory=mem.kind, bundle=bundle_name(c), connectivity=mem.connectivity(c),
                           pace=float(evaluate(paces[p.name], ctx.env))))
    return tuple(out)


def _positions(ctx: Ctx, loops: tuple[str, ...]) -> tuple[int, Expr]:
    """Modules (and buffers) of a chain: one per position of its injection loops."""
    n = 1
    e: Expr = const(1)
    for s in loops:
        n, e = n * ctx.g(s).outer, e * ctx.g(s).outer_sym
    return n, e


def _buffers(ctx: Ctx) -> tuple[Buffer, ...]:
    t = ctx.tiling
    out: list[Buffer] = []
    for op in ctx.inputs:
        n, n_sym = _positions(ctx, op.inj)
        out.append(Buffer(
            f"{op.name}_block", "input_block", op.name, f"{op.name}_IO_L{'1' if len(op.inj) == 2 else '2'}_in",
            op.array.name, op.ctype, op.bits, op.box, op.box_sym, True, n, n_sym,
            block_partitions(op, t), op.lanes, op.simd, io.blk_t(op)))
    acc_sym, acc_n = ctx.acc_size()
    pes_sym: Expr = const(1)
    for g in t.space:
        pes_sym = pes_sym * g.outer_sym
    o = ctx.output
    if not ctx.pe_words:  # a PE that packs its own words hands them over through its FIFO
        out.append(Buffer("acc", "accumulator", o.name, "PE", o.array.name, o.ctype, o.bits, (acc_n,), (acc_sym,),
                          True, t.num_pes, pes_sym, ctx.acc_partition(), ctype=acc_t(ctx)))
    out.append(Buffer("acc_running", "running_sums", o.name, "PE", o.array.name, o.ctype, o.bits, (acc_n,),
                      (acc_sym,), False, t.num_pes, pes_sym))
    if has_cin(ctx):  # words of the output's packing, one per drain-path word
        n, n_sym = _positions(ctx, o.inj)
        words_sym = ctx.out_words_sym()
        out.append(Buffer(f"{o.name}_partial_block", "partial_sums", o.name, f"{o.name}_IO_L2_in",
                          o.array.name, o.word_type, o.bits * o.lanes, (int(evaluate(words_sym, ctx.env)),),
                          (words_sym,), True, n, n_sym, packing_lanes=o.lanes, bits_sym=o.lanes_sym * o.bits,
                          ctype=io.blk_t(o)))
    return tuple(out)


def channel_impl(c: Channel) -> str:
    """Where a stream is stored: a shift register (``srl``), or a deep FIFO (``depth_sym``) in
    block or distributed RAM by the bank rule (``fabric.json`` ``bram``) or its binding."""
    if c.depth_sym is None:
        return "srl"
    return fabric_costs().bank_impl(c.bits, c.depth, c.storage)


def buffer_impl(b: Buffer) -> str:
    """Where each bank of ``b`` is bound at the tiling (``bram`` or ``lutram``): the rule of
    ``platforms/fabric.json`` (``bram``) that the resource model prices at every tiling, or
    the binding its design asks for (``Buffer.storage``)."""
    parts = {pt.dim: pt.factor for pt in b.partition}
    depth = 1
    for d, ext in enumerate(b.dims, start=1):
        depth *= -(-ext // parts.get(d, 1))
    return fabric_costs().bank_impl(b.bits, depth, b.storage)


def _words(ctx: Ctx, op: OperandGeom) -> int:
    """Words of ``op``'s DRAM image at the tiling."""
    return int(evaluate(dram_layout(ctx, op).words, ctx.env))


def _ports(ctx: Ctx) -> tuple[DramPort, ...]:
    out = [DramPort(op.name, op.name, "read", op.word_type, op.bits, op.lanes, op.lanes_sym,
                    _words(ctx, op)) for op in ctx.inputs]
    o = ctx.output
    words = _words(ctx, o)
    if has_cin(ctx):  # read back through its own port, bound to the output's buffer by the host
        out.append(DramPort(io.cin_port(o), o.name, "read", o.word_type, o.bits, o.lanes, o.lanes_sym, words))
    out.append(DramPort(o.name, o.name, "write", o.word_type, o.bits, o.lanes, o.lanes_sym, words))
    return tuple(out)


def _host_images(ctx: Ctx) -> tuple[HostImage, ...]:
    """The host's image of every input (packed words, read) and of the output (elements,
    written, and read back when the design reads partial sums)."""
    values = ctx.scop.param_values

    def image(op: OperandGeom, lanes: int, word_type: str, access: HostAccess) -> HostImage:
        shape = tuple(d.evaluate(values) for d in op.array.shape)
        return HostImage(op.name, op.array.name, shape, op.dram_shape, op.ctype, op.bits, lanes, word_type, access,
                         dram_layout(ctx, op), _words(ctx, op))

    o = ctx.output
    return (*(image(op, op.lanes, op.word_type, "read") for op in ctx.inputs),
            image(o, o.lanes, o.word_type, "read_write" if has_cin(ctx) else "write"))


__all__ = ["ArrayIR", "Buffer", "BufferRole", "Channel", "DramPort", "HostAccess", "HostImage", "Process",
           "buffer_impl",
           "array_ir"]
