"""I/O modules: L3 readers and writers at DRAM, L2/L1 chains with double-buffered blocks.

Input operand ``X`` with injection loops ``inj`` (one lowest-level module per position):

* ``X_IO_L3_in``: per tile visit, reads the box of every module position ``b`` in order from
  DRAM as packed words and sends them down the chain;
* chain levels (one per injection loop): module ``p`` receives the boxes for positions
  ``p..P-1``, keeps box ``p`` and forwards the rest. The lowest level keeps it in a
  double-buffered block (``X_IO_Ln_in_inter`` writes it, ``X_IO_Ln_in_intra`` streams it to
  its PE once per tile in the PE's iteration order); an upper level (two injection loops)
  passes its row to the lower chain;
* boundary modules (the last of a chain) have no forwarding port.

The output ``C`` drains the mirror way (``C_drain_IO_L1_out`` ... ``C_drain_IO_L3_out``);
when partial sums are read back (or there is no initialiser) the L3 module reads them from
DRAM first and sends them down a ``C_IO_Ln_in`` chain (element words) to the PEs.
"""

from __future__ import annotations

from odyssey.codegen.context import Ctx, of_bits
from odyssey.codegen.geometry import OperandGeom
from odyssey.codegen.hls_ast import (
    Decl,
    DramRead,
    DramWrite,
    For,
    Function,
    If,
    Line,
    Param,
    Scope,
    Stmt,
    StreamRead,
    StreamWrite,
)
from odyssey.codegen.layout import Axis, DramLayout, box_axes, box_var, input_layout, output_layout
from odyssey.expr import Expr, const, emax, eq, lt, sym, where
from odyssey.platforms import assumption


def stream_t(ctype: str) -> str:
    return f"hls::stream<{ctype}>"


def blk_t(op: OperandGeom) -> str:
    return f"{op.name}_blk_t"


def _tmpl(inj: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"int p_{s}" for s in inj)


# --- input operands ------------------------------------------------------------------


def _box_word_loops(op: OperandGeom, body: tuple[Stmt, ...], *, ii: int | None = 1,
                    blocks: tuple[str, Expr] | None = None) -> tuple[Stmt, ...]:
    """Loops over the words of one box, its dimensions outer first (:func:`box_axes`: ``ew``
    over the words of the pack dimension, ``e<d>`` over the others), the innermost pipelined.
    ``blocks = (var, count)`` adds the loop over module positions: outside the box, or
    between the rows and the innermost dimension when the operand moves rows outermost."""
    axes = box_axes(op)
    if not axes:
        return (For("ew", const(1), body, pipeline_ii=ii),)
    loops: tuple[Stmt, ...] = (For(axes[-1].var, axes[-1].trip, body, pipeline_ii=ii),)
    if blocks is not None and op.rows_outer:
        loops = (For(blocks[0], blocks[1], loops),)
    for a in reversed(axes[:-1]):
        loops = (For(a.var, a.trip, loops),)
    if blocks is not None and not op.rows_outer:
        loops = (For(blocks[0], blocks[1], loops),)
    return loops


def _block_positions(ctx: Ctx, inj: tuple[str, ...], body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    for s in reversed(inj):
        body = (For(f"b_{s}", ctx.g(s).outer_sym, body),)
    return body


def _words_per_row(op: OperandGeom) -> Expr:
    """Consecutive DRAM words of one box row of a row-major image (words along the innermost
    dimension): one burst."""
    return op.words_sym(len(op.box_sym) - 1)


def _out_run(ctx: Ctx, op: OperandGeom) -> Expr:
    """Consecutive DRAM elements of a drained block: the innermost accumulator axis when it
    is the array's innermost dimension with stride 1, else single elements."""
    dims = ctx.acc_dims()
    if dims and op.ref.subscripts and op.ref.subscripts[-1].coeff(dims[-1][0]) == 1:
        return dims[-1][1]
    return const(1)


def _l3_run(ctx: Ctx, op: OperandGeom) -> Expr:
    """Burst length of the L3 reader: one box row, or a row across all modules when rows
    go outermost and the modules' boxes abut (no halo)."""
    wpr = _words_per_row(op)
    if not op.rows_outer:
        return wpr
    s = op.inj[0]
    g = ctx.g(s)
    stride = g.t2_sym * op.ref.subscripts[-1].coeff(s)
    return where(eq(op.box_sym[-1], stride), wpr * g.outer_sym, wpr)


def _nest(axes: tuple[Axis, ...], body: tuple[Stmt, ...], *, ii: int | None = 1) -> tuple[Stmt, ...]:
    """``body`` inside one loop per axis (the first outermost), the innermost pipelined."""
    for k, a in enumerate(reversed(axes)):
        body = (For(a.var, a.trip, body, pipeline_ii=ii if k == 0 else None),)
    return body


def _run(layout: DramLayout, row_run: Expr) -> Expr:
    """Consecutive DRAM words of one burst: a whole visit in a serialized image, else
    ``row_run`` (a row of the padded array)."""
    return layout.visit_words if layout.kind == "serialized" else row_run


def l3_in(ctx: Ctx, op: OperandGeom) -> Function:
    word = op.word_type
    layout = input_layout(ctx, op)
    read = (DramRead(op.name, layout.word_index(), f"{word} w", run=_run(layout, _l3_run(ctx, op))),
            StreamWrite("fifo_out", "w"))
    body = ctx.tile_loops(ctx.order[: op.trunc], _nest(layout.visit, read))
    what = "one burst per visit" if layout.kind == "serialized" else "row-major image"
    return Function(
        f"{op.name}_IO_L3_in",
        (Param(f"{word} *", op.name), Param(stream_t(word), "fifo_out", by_ref=True, direction="out")),
        body, kind="io_l3_in", operand=op.name,
        comment=f"{op.name}_IO_L3_in: reads the {op.name} tile from DRAM ({op.lanes}-element words, {what}).",
    )


def _chain_level_names(op: OperandGeom, prefix: str) -> list[str]:
    n = max(1, len(op.inj))
    levels = ["L2"] if n == 1 else ["L2", "L1"]
    return [f"{prefix}_IO_{lv}_in" for lv in levels]


def chain_upper(ctx: Ctx, op: OperandGeom, *, boundary: bool) -> Function:
    """Upper level of a two-level chain: keeps its row of blocks for its lower chain."""
    s0, s1 = op.inj
    word = op.word_type
    move = (StreamRead("fifo_in", f"{word} w"),
            If("c == 0", (StreamWrite("fifo_low", "w"),), () if boundary else (StreamWrite("fifo_out", "w"),)))
    rows = ctx.g(s0).outer_sym - sym(f"p_{s0}") if not boundary else const(1)
    body = (For("c", rows, (For(f"b_{s1}", ctx.g(s1).outer_sym, _box_word_loops(op, move)),)),)
    params = [Param(stream_t(word), "fifo_in", by_ref=True, direction="in"), Param(stream_t(word), "fifo_low", by_ref=True, direction="out")]
    if not boundary:
        params.append(Param(stream_t(word), "fifo_out", by_ref=True, direction="out"))
    name = _chain_level_names(op, op.name)[0] + ("_boundary" if boundary else "")
    return Function(name, tuple(params), ctx.tile_loops(ctx.order[: op.trunc], body),
                    template=(f"int p_{s0}",), kind="io_l2_in",
                    comment=f"{name}: filter of the {op.name} chain along {s0}.", operand=op.name, boundary=boundary)


def _unpack(op: OperandGeom) -> tuple[Stmt, ...]:
    """Store word ``w`` into the block: lane ``k`` at coordinate ``ew * LANES + k`` of the
    pack dimension (distinct banks: the block is split cyclically along it)."""
    def idx(lane: str | None) -> str:
        return "".join(f"[ew * {op.lanes_macro} + {lane}]" if d == op.pack_dim and lane else f"[{box_var(op, d)}]"
                       for d in range(len(op.box)))
    if op.lanes == 1:
        return (Line(f"blk{idx(None)} = {of_bits(op.ctype)}(w)"),)
    b = op.bits
    return (For("k", sym(op.lanes_macro), (
        Line(f"blk{idx('k')} = {of_bits(op.ctype)}(w(k * {b} + {b - 1}, k * {b}))"),
    ), unroll=True),)


def chain_buffer_inter(ctx: Ctx, op: OperandGeom, *, boundary: bool) -> Function:
    """Lowest level: keeps its box in a double-buffered block, forwards the others."""
    lvl = len(op.inj) - 1 if op.inj else 0
    word = op.word_type
    keep = _unpack(op)
    s = op.inj[-1] if op.inj else None
    if s is None or boundary:
        body = _box_word_loops(op, (StreamRead("fifo_in", f"{word} w"), *keep))
    else:
        move = (StreamRead("fifo_in", f"{word} w"),
                If("c == 0", keep, (StreamWrite("fifo_out", "w"),)))
        body = _box_word_loops(op, move, blocks=("c", ctx.g(s).outer_sym - sym(f"p_{s}")))
    body = ctx.tile_loops(ctx.order[: op.trunc], (Scope((Line(f"hls::write_lock<{blk_t(op)}> blk(blocks)"), *body)),))
    params = [Param(stream_t(word), "fifo_in", by_ref=True, direction="in")]
    if s is not None and not boundary:
        params.append(Param(stream_t(word), "fifo_out", by_ref=True, direction="out"))
    params.append(Param(f"hls::stream_of_blocks<{blk_t(op)}>", "blocks", by_ref=True, direction="out"))
    name = _chain_level_names(op, op.name)[lvl] + "_inter" + ("_boundary" if boundary else "")
    return Function(name, tuple(params), body, template=_tmpl(op.inj), kind="io_buf_inter",
                    comment=f"{name}: writes the {op.name} box of its PE into a ping-pong block.", operand=op.name, boundary=boundary)


def chain_buffer_intra(ctx: Ctx, op: OperandGeom, feed: tuple[Stmt, ...], word: str, ii: int) -> Function:
    """Lowest level: streams its block to the PE once per tile, in the PE's order."""
    lvl = len(op.inj) - 1 if op.inj else 0
    inner = ctx.tile_loops(ctx.order[op.trunc :], _pe_loop_nest(ctx, feed, ii))
    body = ctx.tile_loops(ctx.order[: op.trunc], (Scope((Line(f"hls::read_lock<{blk_t(op)}> blk(blocks)"), *inner)),))
    name = _chain_level_names(op, op.name)[lvl] + "_intra"
    return Function(name, (Param(f"hls::stream_of_blocks<{blk_t(op)}>", "blocks", by_ref=True, direction="in"),
                           Param(stream_t(word), "fifo_pe", by_ref=True, direction="out")),
                    body, template=_tmpl(op.inj), kind="io_buf_intra",
                    comment=f"{name}: feeds {op.name} to its PE, one word per PE iteration.", operand=op.name)


def _pe_loop_nest(ctx: Ctx, body: tuple[Stmt, ...], ii: int) -> tuple[Stmt, ...]:
    loops = ctx.pe_loops()
    if not loops:
        return body
    out: tuple[Stmt, ...] = body
    for k, (var, _, trip, _) in enumerate(reversed(loops)):
        out = (For(var, trip, out, pipeline_ii=ii if k == 0 else None,
                   ii_sym=ctx.pe_ii_sym() if k == 0 else None),)
    return out


def feed_statements(ctx: Ctx, op: OperandGeom, simd_lanes: int) -> tuple[tuple[Stmt, ...], str]:
    """Gather the PE's word for one iteration from the block: SIMD lanes when the operand
    depends on the SIMD loop, else one element."""
    lanes = simd_lanes if op.simd else 1
    word = f"{op.name}_v{lanes}"
    b = op.bits

    def elem(lane: str) -> str:
        idx = []
        for sub in op.ref.subscripts:  # box-relative: the loops' local offsets only
            terms = [f"{c} * ({ctx.local(n, lane)})" if c != 1 else f"({ctx.local(n, lane)})"
                     for n, c in sub.coeffs if n in ctx.order and not (ctx.g(n).space and n not in op.inj)]
            idx.append(f"[{' + '.join(terms) if terms else '0'}]")
        return f"blk{''.join(idx)}"

    if lanes == 1:
        return (Decl(word, "w", init=f"{word}(bits_of({elem('0')}))"), StreamWrite("fifo_pe", "w")), word
    stmts: tuple[Stmt, ...] = (
        Decl(word, "w"),
        For("ln", const(lanes), (Line(f"w(ln * {b} + {b - 1}, ln * {b}) = bits_of({elem('ln')})"),), unroll=True),
        StreamWrite("fifo_pe", "w"),
    )
    return stmts, word


# --- output operand ---------------------------------------------------------------------


def _acc_loops(ctx: Ctx, body: tuple[Stmt, ...], ii: int | None = 1) -> tuple[Stmt, ...]:
    dims = ctx.acc_dims()
    if not dims:
        return body
    out = body
    for k, (name, size, _) in enumerate(reversed(dims)):
        out = (For(f"a_{name}", size, out, pipeline_ii=ii if k == 0 else None),)
    return out


def _out_visit(ctx: Ctx, op: OperandGeom, layout: DramLayout, body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    """``body`` once per word of an output visit: the layout's visit loops when serialized
    (module positions, then the words of a block), else positions and accumulator axes."""
    if layout.kind == "serialized":
        return _nest(layout.visit, body)
    return _block_positions(ctx, op.inj, _acc_loops(ctx, body))


def l3_out(ctx: Ctx, op: OperandGeom) -> Function:
    """Writes every PE's results of a visit to DRAM."""
    word = op.word_type
    layout = output_layout(ctx, op)
    body = _out_visit(ctx, op, layout, (
        StreamRead("fifo_in", f"{word} v"),
        DramWrite(op.name, layout.word_index(), "v", run=_run(layout, _out_run(ctx, op)))))
    params = (Param(f"{word} *", op.name),
              Param(stream_t(word), "fifo_in", by_ref=True, direction="in"))
    name = f"{op.name}_drain_IO_L3_out"
    return Function(name, params, ctx.tile_loops(ctx.order[: ctx.out_trunc], body),
                    kind="io_l3_out", comment=f"{name}: writes {op.name} tiles to DRAM.", operand=op.name)


def cin_port(op: OperandGeom) -> str:
    """The m_axi port through which partial sums are read back (the host binds it to the same
    buffer as the output port: within one call of the dataflow region every output tile is
    read once before it is written once, and tiles are disjoint)."""
    return f"{op.name}_in"


def l3_cin(ctx: Ctx, op: OperandGeom) -> Function:
    """Reads the partial sums (or the initial values) of the output tiles of a visit from DRAM,
    for the visits that need them, and sends them down the partial-sum chain."""
    word = op.word_type
    layout = output_layout(ctx, op)
    port = cin_port(op)
    read = _out_visit(ctx, op, layout, (
        DramRead(port, layout.word_index(), f"{word} v", run=_run(layout, _out_run(ctx, op))),
        StreamWrite("fifo_cin", "v")))
    cond, freq = ctx.cin_cond()
    body = (If(cond, read, freq=freq),) if cond != "true" else read
    params = (Param(f"{word} *", port),
              Param(stream_t(word), "fifo_cin", by_ref=True, direction="out"))
    name = f"{op.name}_IO_L3_in"
    return Function(name, params, ctx.tile_loops(ctx.order[: ctx.out_trunc], body),
                    kind="io_l3_cin", comment=f"{name}: reads the partial sums of {op.name} back from DRAM.", operand=op.name)


def _chain_timing(ctx: Ctx, op: OperandGeom, level: int) -> tuple[Expr, Expr, Expr]:
    """The model's view of the drain chain along ``op.inj[level]`` per output visit:
    ``(bubble, rate, head)``. A module reads its own words first, then forwards the words of
    the modules after it; between its two pipelined loops its output pauses ``depth - 1``
    cycles. When a module's own words of a visit fit in its output FIFO (``fifo_depth``) it
    parks them there while the module before it is busy, and the pause is hidden; when they do
    not, the pause reaches the chain's head: ``bubble`` cycles per module. ``rate``: cycles per
    word at which this level reads the level below, 1 when that level's head parks its words
    of a visit in the FIFO between them, else that head's cycles per visit over its words
    (the lower chains of the rows cannot run ahead of this level, which reads them one after
    the other, so each streams from cold). ``head``: cycles per visit of this level's head."""
    fifo = assumption("fifo_depth").value
    depth = assumption("io_pipeline_depth").value
    acc = ctx.out_words_sym()
    own_blocks: Expr = const(1)
    for lower in op.inj[level + 1 :]:
        own_blocks = own_blocks * ctx.g(lower).outer_sym
    own = own_blocks * acc
    if level == len(op.inj) - 1:
        # the level below is the PEs' (or PE drains') FIFOs: a word per cycle (a serial PE
        # drain packs nothing: only a row-major output, of one element per word, has one)
        rate: Expr = const(1)
    else:
        _, _, low_head = _chain_timing(ctx, op, level + 1)
        low_words = own  # a lower chain's head moves a whole row of this level's own words
        rate = where(lt(fifo, low_words), emax(1, low_head / low_words), 1)
    bubble = where(lt(fifo, own), depth - 1, 0)
    n = ctx.g(op.inj[level]).outer_sym
    rest = (n - 1) * own
    head = (own - 1) * rate + depth + where(lt(1, n), (rest - 1) * rate + depth + emax(0, n - 2) * bubble, 0)
    return bubble, rate, head


def drain_chain(ctx: Ctx, op: OperandGeom, level: int, *, boundary: bool) -> Function:
    """Drain module along ``op.inj[level]``: its own PE's (or lower chain's) results first,
    then everything the modules after it send."""
    s = op.inj[level]
    ctype = op.word_type
    own_blocks: Expr = const(1)
    for lower in op.inj[level + 1 :]:
        own_blocks = own_blocks * ctx.g(lower).outer_sym
    acc_sym = ctx.out_words_sym()
    bubble, rate, _ = _chain_timing(ctx, op, level)
    # the model's pace of reading the level below (at the lowest level 1, or a serial PE
    # drain's word every LANES cycles: _chain_timing; the printed II is 1)
    paced = None if rate == const(1) else rate
    own = (For("e", own_blocks * acc_sym, (StreamRead("fifo_low", f"{ctype} v"), StreamWrite("fifo_out", "v")),
               pipeline_ii=1, ii_sym=paced),)
    body: tuple[Stmt, ...] = own
    params = [Param(stream_t(ctype), "fifo_low", by_ref=True, direction="in")]
    if not boundary:
        rest = (ctx.g(s).outer_sym - sym(f"p_{s}") - 1) * own_blocks * acc_sym
        # the forwarding loop's words come through every module after this one, one hop
        # each. While the chain streams, those modules run ahead by their FIFOs and the hops
        # are hidden (every visit costs the loop's own depth); the last visit of a region
        # waits for its last word to cross them once (the model's view of the hops the timed
        # simulation simulates; the printed depth is the loop's own)
        d = assumption("chain_hop_cycles").value
        hops = (ctx.g(s).outer_sym - sym(f"p_{s}")) * d
        # the words of the modules after this one come at the pace of the level below, with a
        # pause per module whose own words do not fit in its FIFO (_chain_timing)
        pauses = emax(0, ctx.g(s).outer_sym - sym(f"p_{s}") - 2) * bubble
        body = (*own, For("e2", rest, (StreamRead("fifo_in", f"{ctype} v"), StreamWrite("fifo_out", "v")),
                          pipeline_ii=1, ii_sym=paced, depth_sym=assumption("io_pipeline_depth").value + pauses,
                          fill_sym=hops))
        params.append(Param(stream_t(ctype), "fifo_in", by_ref=True, direction="in"))
    params.append(Param(stream_t(ctype), "fifo_out", by_ref=True, direction="out"))
    lv = "L1" if level == len(op.inj) - 1 else "L2"
    name = f"{op.name}_drain_IO_{lv}_out" + ("_boundary" if boundary else "")
    return Function(name, tuple(params), ctx.tile_loops(ctx.order[: ctx.out_trunc], body),
                    template=tuple(f"int p_{x}" for x in op.inj[: level + 1]), kind="io_drain",
                    comment=f"{name}: collects {op.name} along {s}.", operand=op.name, boundary=boundary)


def cin_buffer_inter(ctx: Ctx, op: OperandGeom, *, boundary: bool) -> Function:
    """Partial sums of the output: lowest chain level, one block of words per PE."""
    ctype = op.word_type
    cond, freq = ctx.cin_cond()
    acc_sym = ctx.out_words_sym()
    keep = (Line("blk[e] = v"),)
    s = op.inj[-1] if op.inj else None
    if s is None or boundary:
        move: tuple[Stmt, ...] = (For("e", acc_sym, (StreamRead("fifo_in", f"{ctype} v"), *keep), pipeline_ii=1),)
    else:
        move = (For("c", ctx.g(s).outer_sym - sym(f"p_{s}"), (
            For("e", acc_sym, (StreamRead("fifo_in", f"{ctype} v"),
                               If("c == 0", keep, (StreamWrite("fifo_out", "v"),))), pipeline_ii=1),)),)
    lock = (Scope((Line(f"hls::write_lock<{blk_t(op)}> blk(blocks)"), *move)),)
    body = (If(cond, lock, freq=freq),) if cond != "true" else lock
    params = [Param(stream_t(ctype), "fifo_in", by_ref=True, direction="in")]
    if s is not None and not boundary:
        params.append(Param(stream_t(ctype), "fifo_out", by_ref=True, direction="out"))
    params.append(Param(f"hls::stream_of_blocks<{blk_t(op)}>", "blocks", by_ref=True, direction="out"))
    lvl = "L1" if len(op.inj) == 2 else "L2"
    name = f"{op.name}_IO_{lvl}_in_inter" + ("_boundary" if boundary else "")
    return Function(name, tuple(params), ctx.tile_loops(ctx.order[: ctx.out_trunc], body),
                    template=_tmpl(op.inj), kind="io_buf_inter",
                    comment=f"{name}: buffers the partial sums of {op.name} for its PE.", operand=op.name, boundary=boundary)


def cin_upper(ctx: Ctx, op: OperandGeom, *, boundary: bool) -> Function:
    s0, s1 = op.inj
    ctype = op.word_type
    cond, freq = ctx.cin_cond()
    acc_sym = ctx.out_words_sym()
    move = (StreamRead("fifo_in", f"{ctype} v"),
            If("c == 0", (StreamWrite("fifo_low", "v"),), () if boundary else (StreamWrite("fifo_out", "v"),)))
    rows = ctx.g(s0).outer_sym - sym(f"p_{s0}") if not boundary else const(1)
    loops = (For("c", rows, (For("e", ctx.g(s1).outer_sym * acc_sym, move, pipeline_ii=1),)),)
    body = (If(cond, loops, freq=freq),) if cond != "true" else loops
    params = [Param(stream_t(ctype), "fifo_in", by_ref=True, direction="in"), Param(stream_t(ctype), "fifo_low", by_ref=True, direction="out")]
    if not boundary:
        params.append(Param(stream_t(ctype), "fifo_out", by_ref=True, direction="out"))
    name = f"{op.name}_IO_L2_in" + ("_boundary" if boundary else "")
    return Function(name, tuple(params), ctx.tile_loops(ctx.order[: ctx.out_trunc], body),
                    template=(f"int p_{s0}",), kind="io_l2_in",
                    comment=f"{name}: filter of the partial sums of {op.name} along {s0}.", operand=op.name, boundary=boundary)


def cin_buffer_intra(ctx: Ctx, op: OperandGeom) -> Function:
    ctype = op.word_type
    cond, freq = ctx.cin_cond()
    acc_sym = ctx.out_words_sym()
    feed = (Scope((Line(f"hls::read_lock<{blk_t(op)}> blk(blocks)"),
                   For("e", acc_sym, (StreamWrite("fifo_pe", "blk[e]"),), pipeline_ii=1))),)
    body = (If(cond, feed, freq=freq),) if cond != "true" else feed
    lvl = "L1" if len(op.inj) == 2 else "L2"
    name = f"{op.name}_IO_{lvl}_in_intra"
    return Function(name, (Param(f"hls::stream_of_blocks<{blk_t(op)}>", "blocks", by_ref=True, direction="in"),
                           Param(stream_t(ctype), "fifo_pe", by_ref=True, direction="out")),
                    ctx.tile_loops(ctx.order[: ctx.out_trunc], body), template=_tmpl(op.inj),
                    kind="io_buf_intra", comment=f"{name}: partial sums of {op.name} to its PE.", operand=op.name)


__all__ = [
    "blk_t", "chain_buffer_inter", "chain_buffer_intra", "chain_upper", "cin_buffer_inter",
    "cin_buffer_intra", "cin_port", "cin_upper", "drain_chain", "feed_statements", "l3_cin", "l3_in",
    "l3_out", "stream_t",
]
