"""Printing an :class:`~odyssey.codegen.array_ir.ArrayIR` as Vitis HLS C++ (``kernel.h``,
``kernel.cpp``): the module functions, the dataflow region with its channels (FIFO depths as
``STREAM`` pragmas, banks as ``ARRAY_PARTITION``), the top function with its ``m_axi`` ports
and, for designs with pass loops, the loop that calls the region once per pass."""

from __future__ import annotations

from odyssey.codegen.array_ir import ArrayIR, buffer_impl, channel_impl
from odyssey.codegen.context import TYPE_TAG, Ctx
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
from odyssey.platforms.fabric import fabric_costs

#: bits of the integer element types
_INT_BITS = {"char": 8, "signed char": 8, "unsigned char": 8, "short": 16, "unsigned short": 16,
             "int": 32, "unsigned int": 32, "long": 64, "unsigned long": 64}


def bit_helpers(ctypes: set[str]) -> tuple[Function, ...]:
    """``bits_of(x)`` (an element as the low bits of a word) and ``<type>_of(bits)`` (back) for
    every element type of the design; floats go through ``odyssey_bits.h``."""

    def helper(returns: str, name: str, ptype: str, pname: str, expr: str) -> Function:
        return Function(name, (Param(ptype, pname),), (Line(f"return {expr}"),), returns=returns,
                        qualifiers="static inline")

    out: list[Function] = []
    for t in sorted(ctypes):
        if t == "float":
            out += [helper("unsigned long long", "bits_of", "float", "x", "odyssey::float_to_bits(x)"),
                    helper("float", "float_of", "unsigned long long", "b", "odyssey::bits_to_float((unsigned int)b)")]
        elif t == "double":
            out += [helper("unsigned long long", "bits_of", "double", "x", "odyssey::double_to_bits(x)"),
                    helper("double", "double_of", "unsigned long long", "b", "odyssey::bits_to_double(b)")]
        else:
            mask = (1 << _INT_BITS[t]) - 1
            out += [helper("unsigned long long", "bits_of", t, "x", f"(unsigned long long)x & {mask}ULL"),
                    helper(t, f"{TYPE_TAG[t]}_of", "unsigned long long", "b", f"({t})b")]
    return tuple(out)


def _region_body(ir: ArrayIR) -> tuple[Stmt, ...]:
    """The dataflow region: its channels (FIFO depths as STREAM pragmas, which every Vitis
    version accepts, each bound to a shift register), then one call per process in
    producer-before-consumer order. Every process is driven by its FIFOs and blocks alone, so
    the region starts them all at once and Vitis adds no start FIFOs (UG1399, "Specifying
    Compiler-Created FIFO Depth": ``disable_start_propagation``), which the resource model
    does not count either."""
    body: list[Stmt] = [Pragma("HLS DATAFLOW disable_start_propagation")]
    blocks = {b.ctype: b for b in ir.buffers if b.ctype is not None}
    for ch in ir.channels:
        if ch.kind == "stream":
            body.append(Decl(f"hls::stream<{ch.ctype}>", ch.name, ctor_args=(f'"{ch.name}"',)))
            body.append(Pragma(f"HLS STREAM variable={ch.name} depth={ch.depth}"))
            # a shift register (a deep FIFO: memory by the bank rule), as the resource model prices it
            body.append(Pragma(f"HLS BIND_STORAGE variable={ch.name} type=fifo impl={channel_impl(ch)}"))
        else:
            body.append(Decl(f"hls::stream_of_blocks<{ch.ctype}>", ch.name))
            for part in (pt for pt in ch.partition if pt.factor > 1):
                body.append(Pragma(f"HLS ARRAY_PARTITION variable={ch.name} cyclic factor={part.factor} "
                                   f"dim={part.dim}"))
            # its banks where the resource model puts them (one writer, one reader: simple dual port)
            body.append(Pragma(f"HLS BIND_STORAGE variable={ch.name} type=ram_s2p "
                               f"impl={buffer_impl(blocks[ch.ctype])}"))
    body.append(Line("ODYSSEY_DATAFLOW_BEGIN"))
    for proc in ir.processes:
        body.append(Call(proc.func, proc.args, tuple(map(str, proc.template_args)), task=True))
    body.append(Line("ODYSSEY_DATAFLOW_END"))
    return tuple(body)


def top_functions(ctx: Ctx, ir: ArrayIR) -> tuple[Function, ...]:
    """The top function ``kernel0`` (m_axi ports with their depths, AXI-lite control) and, when
    the design has pass loops, the dataflow region ``kernel0_pass`` it calls once per pass."""
    params = tuple(Param(p.ctype + " *", p.name) for p in ir.ports)
    params += tuple(Param(ctype, name) for name, ctype in ir.kernel_scalars)
    # one bundle (AXI master) per DRAM channel: the ports of the arrays on a channel share it
    # the adapters' burst length and outstanding transactions, printed as the resource model
    # prices them (their buffers: platforms/fabric.json, m_axi)
    m = fabric_costs().m_axi
    axi = (f"max_read_burst_length={m.max_burst_length} num_read_outstanding={m.num_outstanding} "
           f"max_write_burst_length={m.max_burst_length} num_write_outstanding={m.num_outstanding}")
    iface: list[Stmt] = [Pragma(f"HLS INTERFACE m_axi port={p.name} offset=slave bundle={p.bundle} "
                                f"depth={p.words} {axi}") for p in ir.ports]
    iface += [Pragma(f"HLS INTERFACE s_axilite port={name}") for name, _ in ir.kernel_scalars]
    iface.append(Pragma("HLS INTERFACE s_axilite port=return"))
    if not ir.scalars:
        return (Function("kernel0", params, (*iface, *_region_body(ir)), extern_c=True,
                         comment="kernel0: the systolic array, one dataflow region."),)
    region = Function("kernel0_pass", params + tuple(Param("int", sc) for sc in ir.scalars),
                      _region_body(ir), comment="kernel0_pass: one pass of the array (a dataflow region).")
    call: Stmt = Call("kernel0_pass", tuple(p.name for p in ir.ports)
                      + tuple(name for name, _ in ir.kernel_scalars) + ir.scalars)
    for loop in reversed(ir.pass_loops):
        call = For(f"t_{loop}", ctx.g(loop).tiles_sym, (call,))
    top = Function("kernel0", params, (*iface, call), extern_c=True,
                   comment=f"kernel0: one pass per iteration of the tile loops {', '.join(ir.pass_loops)}; "
                           "partial sums go through DRAM between passes.")
    return region, top


def kernel_files(ctx: Ctx, ir: ArrayIR, header_comment: str, *, burst_overhead: int = 20,
                 region_restart: int = 0) -> tuple[str, str]:
    """``(kernel.h, kernel.cpp)`` texts."""
    defines = [(n, str(v)) for n, v in ctx.scop.params]
    defines += [(n, str(v)) for n, v in ctx.tiling.values]
    defines += [(op.lanes_macro, str(op.lanes)) for op in ctx.operands]
    defines += [(m, str(v)) for op in ctx.operands for m, v in op.pack_values().items()]
    # the timed simulation's assumptions, before the headers that read them
    configure = (("ODYSSEY_DRAM_BURST_OVERHEAD", str(burst_overhead)),
                 ("ODYSSEY_REGION_RESTART", str(region_restart)),
                 # each port's index and pace (cycles per word at its share of its DRAM channel)
                 *((f"ODYSSEY_DRAM_PORT_{p.name}", str(i)) for i, p in enumerate(ir.ports)),
                 *((f"ODYSSEY_DRAM_PACE_{p.name}", repr(p.pace)) for p in ir.ports))
    ctypes = {op.ctype for op in ctx.operands}
    tops = top_functions(ctx, ir)
    proto = print_function(tops[-1], prototype=True)
    header = Unit(
        header_comment,
        ('"ap_int.h"', '"hls_stream.h"', '"hls_streamofblocks.h"', '"odyssey_bits.h"', '"odyssey_dataflow.h"'),
        bit_helpers(ctypes), tuple(defines), ir.typedefs, extra=(proto,), configure=configure,
    )
    h_text = "#ifndef ODYSSEY_KERNEL_H\n#define ODYSSEY_KERNEL_H\n" + print_unit(header) + "#endif\n"
    body: list[str] = [f"// {line}" for line in header_comment.splitlines()]
    body += ['', '#include "kernel.h"', ""]
    for f in (*ir.modules, *tops):
        body += [print_function(f), ""]
    return h_text, "\n".join(body)


__all__ = ["kernel_files", "top_functions"]
