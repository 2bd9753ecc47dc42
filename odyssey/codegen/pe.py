"""The processing element: one function per boundary variant, templated on its position.

Per tile the PE runs one pipelined loop nest (time loops ``x1_*`` in the array-partitioning
order, then the latency-hiding loops ``x2_*``), reading one word per input operand per
iteration (forwarding it along the operand's chain), computing the statement over the SIMD
lanes, and accumulating into ``acc`` (one element per parallel-loop point it owns). The
accumulator is re-read every ``D`` iterations, so the pipeline runs at
``II = max(1, ceil(L / D))`` with ``L`` the latency of the reduction operator: the
``DEPENDENCE`` pragma states exactly that distance. Where no drain reads partial sums
(:attr:`Ctx.pe_words`), the PE packs each finished result into its output word itself, in the
order its pipeline finishes them, and writes the word to its drain module's FIFO
(:func:`_emit_word`). Elsewhere it writes its results into an accumulator block, and when an
accumulation period ends its drain process streams the block: adding the partial sums it
receives (from DRAM through ``fifo_cin``, from the previous PE of an output chain, or the
initialiser's constant) and sending the result on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from odyssey.codegen.context import Ctx, of_bits
from odyssey.codegen.geometry import OperandGeom, index_c
from odyssey.codegen.hardware import (
    OperatorImpl,
    OperatorKind,
    OperatorUse,
    PositionCond,
    RegisterUse,
    position_count,
)
from odyssey.codegen.hls_ast import (
    Decl,
    For,
    Function,
    If,
    Line,
    Param,
    Pragma,
    Scope,
    Stmt,
    StreamRead,
    StreamWrite,
)
from odyssey.codegen.io_modules import stream_t
from odyssey.expr import Expr, ceil_div, const, emax, floor_div, lt, mul, sym, to_c, where
from odyssey.platforms import op_cost
from odyssey.platforms.fabric import fabric_costs
from odyssey.polyhedral.scop import BinOp, Neg, Num, ParamRef, Read, RExpr, ScalarRef, rexpr_ops


@dataclass(frozen=True, slots=True)
class PEVariant:
    """Which ports a PE instance has: the last PE of an input chain does not forward; the
    first PE of an output chain starts the partial sum, the last one drains it."""

    no_forward: frozenset[str]  # input operands not forwarded
    out_head: bool
    out_tail: bool

    def compute_name(self) -> str:
        return "PE" + "".join(f"_{n}last" for n in sorted(self.no_forward))

    def drain_name(self, ctx: Ctx) -> str:
        parts = []
        if ctx.output.chain is not None:
            if self.out_head:
                parts.append(f"{ctx.output.name}head")
            if self.out_tail:
                parts.append(f"{ctx.output.name}tail")
        return "PE_drain" + "".join("_" + p for p in parts)


def variant_of(ctx: Ctx, pos: dict[str, int]) -> PEVariant:
    last = frozenset(
        op.name for op in ctx.inputs if op.chain is not None and pos[op.chain] == ctx.g(op.chain).outer - 1
    )
    out = ctx.output
    head = out.chain is None or pos[out.chain] == 0
    tail = out.chain is None or pos[out.chain] == ctx.g(out.chain).outer - 1
    return PEVariant(last, head, tail)


def _conds(ctx: Ctx, variant: PEVariant, loop: str, *, drain: bool) -> list[PositionCond]:
    """The conditions on a PE's position along space loop ``loop`` that give its compute
    function (the input chains' last PEs) or, with ``drain``, its drain function (the output
    chain's head and tail) the name it has in ``variant``."""
    out: list[PositionCond] = []
    if not drain:
        for op in ctx.inputs:
            if op.chain == loop:
                out.append("last" if op.name in variant.no_forward else "not_last")
    elif ctx.output.chain == loop:
        out.append("first" if variant.out_head else "not_first")
        out.append("last" if variant.out_tail else "not_last")
    return out


def variant_count(ctx: Ctx, variant: PEVariant, *, drain: bool = False) -> Expr:
    """Instances of ``variant``'s compute function (or, with ``drain``, of its drain
    function) at any tiling: the product over the space loops of the positions meeting the
    conditions that pick its name (:func:`~odyssey.codegen.hardware.position_count`)."""
    return mul(*[position_count(ctx.g(s).outer_sym, _conds(ctx, variant, s, drain=drain))
                 for s in ctx.tiling.design.space_loops])


def operand_types(operands: tuple[OperandGeom, ...]) -> tuple[str, str]:
    """(multiply type, other operators' type): a multiply works at its widest input's width
    (``short * short`` is a 16-bit multiply though C promotes it to int); adds at the output's."""
    ins = [o for o in operands if o.role == "input"]
    out_t = next(o.ctype for o in operands if o.role == "output")
    return (max(ins, key=lambda o: o.bits).ctype if ins else out_t), out_t


def _combine_kind(op: str) -> OperatorKind:
    return {"+=": "add", "-=": "sub", "*=": "mul", "=": "add"}[op]  # type: ignore[return-value]


def pe_operators(ctx: Ctx, lanes: Expr) -> tuple[OperatorUse, ...]:
    """The operators of a PE: the statement's per lane (``lanes`` copies each), the lanes'
    combination (``lanes - 1``: lane 0 is a copy) and the accumulation into the running sums
    (one, when some reduction loop of the PE's pipeline iterates more than once; else the
    accumulation is a copy the tool removes)."""
    comb: OperatorKind = "mul" if ctx.main.op == "*=" else "add"
    return _uses(ctx, lanes, comb, ctx.accumulation_sym())


def operator_latency(operands: tuple[OperandGeom, ...]) -> Callable[[str], int]:
    """Cycles of a statement operator (``mul``, ``add``, ``sub``; ``neg`` is a sign flip, 0)
    at the platform table's latency: a multiply at its widest input's type, the rest at the
    output's (:func:`operand_types`)."""
    mul_t, out_t = operand_types(operands)

    def lat(op: str) -> int:
        if op == "neg":
            return 0
        return op_cost(mul_t if op == "mul" else out_t, op)[1]
    return lat


def rhs_schedule(e: RExpr, lat: Callable[[str], int]) -> tuple[int | None, tuple[int, ...]]:
    """``(ready, waits)`` of the value of ``e`` computed as soon as its operands are, its lane's
    array reads at cycle 0: ``ready`` the cycle its value is ready (None for a constant or a
    scalar argument, which any cycle may read), ``waits`` the cycles each operand read or
    partial result waits for the other operand of its operator (``((B * C) * D)``: ``D``
    waits for ``B * C``, the multiply's latency)."""
    if isinstance(e, Read):
        return 0, ()
    if isinstance(e, Num | ParamRef | ScalarRef):
        return None, ()
    if isinstance(e, Neg):
        t, waits = rhs_schedule(e.arg, lat)
        return t, waits
    assert isinstance(e, BinOp)
    tl, wl = rhs_schedule(e.lhs, lat)
    tr, wr = rhs_schedule(e.rhs, lat)
    known = [t for t in (tl, tr) if t is not None]
    if not known:
        return None, (*wl, *wr)
    start = max(known)
    waits = (*wl, *wr, *(start - t for t in (tl, tr) if t is not None and t < start))
    return start + lat({"*": "mul", "+": "add", "-": "sub"}[e.op]), waits


def pe_registers(ctx: Ctx, lanes: Expr, ops: tuple[OperatorUse, ...]) -> tuple[RegisterUse, ...]:
    """The registers of a PE's pipeline outside its operator cores (``fabric.json``,
    ``pipeline``): an enable per stage (:meth:`Ctx.pe_depth_sym`); each operand word read;
    where the datapath is floating point, each operator's result, and the delay lines of the
    values that wait: the statement's operands that wait for a partial result
    (:func:`rhs_schedule`, per lane) and, in the lanes' tree (:func:`lane_tree`), the value
    left over at each level of odd width, which waits one add (:func:`odd_levels`). Integer
    adds are rebalanced by the tool into a tree whose level registers their rows hold."""
    out = [RegisterUse("stage", const(1), ctx.pe_depth_sym())]
    for x in ctx.inputs:
        out.append(RegisterUse("word", lanes * x.bits if x.simd else const(x.bits), const(1)))
    if not ctx.tree_lanes:
        return tuple(out)
    bits = ctx.output.bits
    for u in ops:
        if u.impl == "auto" and u.op != "neg":
            out.append(RegisterUse("result", const(bits), u.count))
    _, waits = rhs_schedule(ctx.main.rhs, operator_latency(ctx.operands))
    for w in sorted(set(waits)):
        out.append(RegisterUse("hold", const(bits), lanes * waits.count(w), cycles=w))
    simd = ctx.tiling.design.simd_loop
    most = 1
    if simd is not None:
        most = next((p.upper for p in ctx.tiling.design.params if p.loop == simd and p.level == "simd"),
                    ctx.g(simd).extent)
    out.append(RegisterUse("hold", const(bits), odd_levels(lanes, most), cycles=ctx.fadd_latency))
    return tuple(out)


def pe_word_registers(ctx: Ctx, own_ops: tuple[OperatorUse, ...]) -> tuple[RegisterUse, ...]:
    """The registers a PE that packs its own words (:attr:`Ctx.pe_words`) adds to its pipeline:
    the output word it assembles (the word's bits where the tiling packs, ``LANES > 1``; else
    the result is written as it is) and, for the operators ``own_ops`` a result passes on its
    way out (:func:`pe_word_operators`, one after the other), the stages of their latencies and,
    where the datapath is floating point, each one's result (as :func:`pe_registers` counts the
    PE's own)."""
    lanes = ctx.output.lanes_sym
    out = [RegisterUse("word", where(lt(1, lanes), lanes * ctx.output.bits, 0), const(1))]
    stages = _serial_latency(ctx, own_ops)
    if stages:
        out.append(RegisterUse("stage", const(1), const(stages)))
    if ctx.tree_lanes:
        out += [RegisterUse("result", const(ctx.output.bits), u.count) for u in own_ops
                if u.impl == "auto" and u.op != "neg"]
    return tuple(out)


def lane_tree(values: list[str], op: str) -> str:
    """C text combining ``values`` in a balanced tree: each level pairs neighbours, and a
    level of odd width carries its last value to the front of the next, where it meets a
    fresh pair's result, having waited one operator (so every odd level delays one value by
    exactly one operator's latency, :func:`odd_levels`)."""
    level = list(values)
    while len(level) > 1:
        pairs = [f"({level[k]} {op} {level[k + 1]})" for k in range(0, len(level) - 1, 2)]
        level = [level[-1], *pairs] if len(level) % 2 else pairs
    return level[0]


def odd_levels(lanes: Expr, most: int) -> Expr:
    """The levels of :func:`lane_tree` over ``lanes`` values whose width is odd (and above 1):
    ``sum_j [c_j > 1] (c_j mod 2)`` with ``c_j = ceil(lanes / 2^j)``, ``j`` below
    ``ceil(log2 most)`` (``most``: the lanes' largest value at any legal tiling)."""
    out: Expr = const(0)
    for j in range(max(1, most - 1).bit_length()):
        c = ceil_div(lanes, 2 ** j)
        out = out + where(lt(1, c), c - 2 * floor_div(c, 2), 0)
    return out


def fabric_lanes(ctx: Ctx, lanes: Expr) -> Expr:
    """The lanes of ``lanes`` whose multiplier is built in LUT fabric: ``floor(P * lanes /
    100)`` for the design's ``lut_mul_percent`` P (0 without one)."""
    share = ctx.tiling.design.lut_mul_percent
    return floor_div(lanes * share, 100) if share else const(0)


def _uses(ctx: Ctx, lanes: Expr, comb: OperatorKind, accumulates: Expr) -> tuple[OperatorUse, ...]:
    mul_t, out_t = operand_types(ctx.operands)
    uses: dict[tuple[OperatorKind, str, OperatorImpl], Expr] = {}

    def add(kind: OperatorKind, count: Expr, impl: OperatorImpl = "auto") -> None:
        t = mul_t if kind == "mul" else out_t
        uses[(kind, t, impl)] = uses.get((kind, t, impl), const(0)) + count

    fabric = fabric_lanes(ctx, lanes)
    for o in rexpr_ops(ctx.main.rhs):
        if o == "mul" and ctx.tiling.design.lut_mul_percent:
            add("mul", lanes - fabric)
            add("mul", fabric, "fabric")
        else:
            add(o, lanes)  # type: ignore[arg-type]
    fused = fused_lane_adds(ctx, lanes, fabric) if comb == "add" else const(0)
    add(comb, lanes - 1 + accumulates - fused)
    if comb == "add" and _mac_fusable(ctx):
        add("add", fused, "fused")
    return tuple(OperatorUse(k, t, c, impl) for (k, t, impl), c in uses.items())


def _mac_fusable(ctx: Ctx) -> bool:
    """Whether the lanes' adds may fuse with the DSP multiply before them: an integer datapath
    whose statement's value is a product (``p = a * b``), so each lane's ``v + p`` is a
    fanout-free multiply-add, which Vitis builds in one DSP48E2 (its post-adder; UG1399, "DSP
    Multi-Operation Matching"; AutoSA's int8 notes: "each MAC is mapped to one DSP")."""
    rhs = ctx.main.rhs
    floats = any(op.array.is_float for op in (*ctx.inputs, ctx.output))
    return not floats and isinstance(rhs, BinOp) and rhs.op == "*"


def fused_lane_adds(ctx: Ctx, lanes: Expr, fabric: Expr) -> Expr:
    """Lane-combination adds built in the DSP of the multiply they follow (:func:`_mac_fusable`):
    the adds of lanes ``1 .. S - F - 1`` (lane 0 is a copy; the ``F`` fabric lanes' products
    come from LUTs, so their adds stay in LUTs); 0 where no add fuses."""
    if not _mac_fusable(ctx):
        return const(0)
    return emax(0, lanes - fabric - 1)


def _identity(op: str) -> str:
    return "1" if op == "*=" else "0"


def is_identity(c0: str | None, op: str) -> bool:
    """Whether the initialiser's constant ``c0`` is the identity of the reduction ``op``
    (``0`` for ``+=``, ``1`` for ``*=``): starting from it computes nothing. ``-=`` keeps its
    start value, since ``0 - r`` is a negation the loop nest asks for."""
    if c0 is None or op not in ("+=", "*="):
        return False
    try:
        value = float(c0.strip().rstrip("fFlLuU") or "nan")
    except ValueError:
        return False
    return value == float(_identity(op))


def rexpr_c(e: RExpr, names: dict[str, str]) -> str:
    """C text of ``e``, array reads named by ``names`` (sizes and scalar arguments by name)."""
    if isinstance(e, Read):
        return names[e.ref_id]
    if isinstance(e, Num):
        return repr(e.value) if isinstance(e.value, float) else str(e.value)
    if isinstance(e, ParamRef | ScalarRef):
        return e.name
    if isinstance(e, Neg):
        return f"(-{rexpr_c(e.arg, names)})"
    assert isinstance(e, BinOp)
    return f"({rexpr_c(e.lhs, names)} {e.op} {rexpr_c(e.rhs, names)})"


_rexpr_c = rexpr_c


def scalar_params(ctx: Ctx) -> tuple[Param, ...]:
    """The kernel's scalar arguments, passed by value to the PEs and their drains."""
    return tuple(Param(ctype, name) for name, ctype in ctx.kernel_scalars)


def _domain_guard(ctx: Ctx) -> str | None:
    """C condition that the current (lane's) point lies in the original domain, or None when
    no loop is padded and the domain is the rectangle."""
    conds: list[str] = []
    gv = {n: ctx.global_value(n) for n in ctx.order}
    for lp in ctx.main.loops:
        g = ctx.g(lp.name)
        rect = lp.lower.is_constant() and lp.upper.names <= set(ctx.scop.param_names)
        if rect and not g.is_padded:
            continue
        conds.append(f"{gv[lp.name]} >= {index_c(lp.lower, gv)}")
        conds.append(f"{gv[lp.name]} < {index_c(lp.upper, gv)}")
    for aff, kind in ctx.main.guards:
        conds.append(f"{index_c(aff, gv)} {'>=' if kind == '>=0' else '=='} 0")
    return " && ".join(conds) if conds else None


def pe_function(ctx: Ctx, variant: PEVariant, simd_lanes: int) -> Function:
    octype = ctx.output.ctype
    op = ctx.main.op
    params: list[Param] = []
    reads: list[Stmt] = []
    lane_vals: list[Stmt] = []
    names: dict[str, str] = {}
    for x in ctx.inputs:
        lanes = simd_lanes if x.simd else 1
        word = f"{x.name}_v{lanes}"
        params.append(Param(stream_t(word), f"fifo_{x.name}_in", by_ref=True, direction="in"))
        reads.append(StreamRead(f"fifo_{x.name}_in", f"{word} w_{x.name}"))
        if x.chain is not None and x.name not in variant.no_forward:
            params.append(Param(stream_t(word), f"fifo_{x.name}_out", by_ref=True, direction="out"))
            reads.append(StreamWrite(f"fifo_{x.name}_out", f"w_{x.name}"))
        b = x.bits
        src = f"w_{x.name}(ln * {b} + {b - 1}, ln * {b})" if lanes > 1 else f"w_{x.name}"
        lane_vals.append(Decl(x.ctype, f"v_{x.name}", init=f"{of_bits(x.ctype)}({src})"))
        names[x.ref.ref_id] = f"v_{x.name}"
    rhs = _rexpr_c(ctx.main.rhs, names)
    comb = "*" if op == "*=" else "+"
    guard = _domain_guard(ctx)
    # the lanes combine from the first lane's value: lane 0 is a copy (the unrolled loop's
    # constant `ln == 0` selects it), every other lane one operator, so S lanes cost S - 1
    # combining operators and no `0 + x` (which Vitis keeps: signed zeros are not ignored)
    combined = f"({octype})(v {comb} p)"
    if guard is None:
        update: Stmt = Line(f"v = (ln == 0) ? p : {combined}")
    else:
        update = Line(f"v = (ln == 0) ? (({guard}) ? p : ({octype})({_identity(op)})) "
                      f": (({guard}) ? {combined} : v)")
    lane_loops: tuple[Stmt, ...]
    if ctx.tree_lanes:  # floating point: the products into registers, combined in a balanced tree
        lane_loops = _lane_tree(ctx, simd_lanes, lane_vals, rhs, guard)
    else:
        lane_loops = (Decl(octype, "v"), *_lane_loops(ctx, simd_lanes, lane_vals, rhs, update, combined, guard))
    acc_vals = {n: ctx.local(n, "0") for n in ctx.parallel}
    first_parts = [f"t_{n} == 0" for n in ctx.inner_reduction if ctx.g(n).tiles > 1]
    first_parts += [f"x1_{n} == 0" for n in ctx.reduction if not ctx.g(n).space and ctx.g(n).outer > 1]
    first = " && ".join(first_parts) if first_parts else "true"
    last_parts = [f"t_{n} == {to_c(ctx.g(n).tiles_sym)} - 1" for n in ctx.inner_reduction if ctx.g(n).tiles > 1]
    last_parts += [f"x1_{n} == {to_c(ctx.g(n).outer_sym)} - 1" for n in ctx.reduction
                   if not ctx.g(n).space and ctx.g(n).outer > 1]
    ii = ctx.pe_ii()
    idx = ctx.acc_index(acc_vals)
    # the running sums live in a plain array (`sums`, what the DEPENDENCE pragma describes);
    # the last reduction step also writes the result into the accumulator block for the drain
    done: tuple[Stmt, ...] = (Line(f"acc[{idx}] = s"),)
    if ctx.pe_words:  # the result, packed into the PE's output word (_emit_word)
        done, port = _emit_word(ctx, variant, idx)
        params.append(port)
    if last_parts:
        done = (If(" && ".join(last_parts), done),)
    body: list[Stmt] = [*reads, *lane_loops,
                        Decl(octype, "s", init=f"({first}) ? v : ({octype})(sums[{idx}] {comb} v)"),
                        Line(f"sums[{idx}] = s"), *done]
    loops = ctx.pe_loops()
    compute: tuple[Stmt, ...] = tuple(body)
    d_dist = ctx.recurrence_distance()
    # the pipeline's depth: the PE's own, and the operators a result passes on its way out of
    # a PE that packs its own words (a start value, a scaling: pe_word_operators)
    out_stages = word_stages(ctx, variant)
    for k, (var, _, trip, _) in enumerate(reversed(loops)):
        extra: tuple[Pragma, ...] = ()
        if k == 0 and d_dist is not None:
            extra = (Pragma(f"HLS DEPENDENCE variable=sums type=inter dependent=true distance={d_dist}"),)
        compute = (For(var, trip, compute, pipeline_ii=ii if k == 0 else None, extra_pragmas=extra,
                       pipeline_depth=ctx.pe_depth() + out_stages, depth_sym=ctx.pe_depth_sym() + out_stages,
                       ii_sym=ctx.pe_ii_sym() if k == 0 else None),)
    if not loops:
        compute = tuple(body)

    inner = ctx.tile_loops(ctx.inner_reduction, compute)
    head: tuple[Stmt, ...] = ()
    if ctx.pe_words:  # the results leave as words through the PE's output FIFO: no block
        body_v: tuple[Stmt, ...] = inner
        if ctx.output.packed:
            head = (Decl(ctx.output.word_type, "ow"), Decl("int", "wn", init="0"))
    else:
        # the accumulator is a block held for one accumulation period (the inner reduction
        # tile loops); the drain process streams the previous period's block while this one
        # computes
        params.append(Param(f"hls::stream_of_blocks<{acc_t(ctx)}>", "acc_blocks", by_ref=True, direction="out"))
        body_v = (Scope((Line(f"hls::write_lock<{acc_t(ctx)}> acc(acc_blocks)"), *inner)),)
    params.extend(scalar_params(ctx))
    # the running sums' storage, bound as the resource model prices it (fabric.json `bram`:
    # block RAM where it fills enough of it, else distributed RAM); one read and one write
    # port per iteration: simple dual port
    impl = fabric_costs().bank_impl(ctx.output.bits, ctx.acc_size()[1],
                                    "bram" if ctx.tiling.design.storage == "bram" else "rule")
    full = (Decl(octype, "sums", dims=(ctx.acc_size()[0],)),
            Pragma(f"HLS BIND_STORAGE variable=sums type=ram_s2p impl={impl}"), *head,
            *ctx.tile_loops(ctx.order[: ctx.out_trunc], body_v))
    template = tuple(f"int p_{s}" for s in ctx.tiling.design.space_loops)
    name = variant.compute_name()
    return Function(name, tuple(params), full, template=template, kind="pe",
                    comment=f"{name}: processing element (II={ii}).")


def pe_word_operators(ctx: Ctx, variant: PEVariant) -> tuple[OperatorUse, ...]:
    """The operators a PE that packs its own words (:attr:`Ctx.pe_words`) applies to each
    result on its way out (:func:`_emit_word`): one copy each, since its results leave one per
    iteration (a drain process that moves a word per cycle has one per lane)."""
    return _drain_lane(ctx, variant, "s", "s", "0", const(1)).ops


def _serial_latency(ctx: Ctx, ops: tuple[OperatorUse, ...]) -> int:
    """Cycles of ``ops`` applied one after the other (:func:`operator_latency`)."""
    lat = operator_latency(ctx.operands)
    return sum(lat(u.op) for u in ops)


def word_stages(ctx: Ctx, variant: PEVariant) -> int:
    """Cycles the operators of :func:`pe_word_operators` add to the PE's pipeline, one after
    the other (0 where the PE does not pack its own words, or applies none)."""
    return _serial_latency(ctx, pe_word_operators(ctx, variant)) if ctx.pe_words else 0


def _emit_word(ctx: Ctx, variant: PEVariant, idx: str) -> tuple[tuple[Stmt, ...], Param]:
    """A finished result ``s`` (accumulator element ``idx``) on its way out of a PE that packs
    its own words (:attr:`Ctx.pe_words`): what a drain would do to it (a start value that is
    not the reduction's identity, a scaling: :func:`_drain_lane`), then shifted into the word
    ``ow``, which leaves through ``fifo_<out>_drain`` when its ``LANES`` elements are in (one
    element per word where the tiling does not pack), and the port."""
    out = ctx.output
    lane = _drain_lane(ctx, variant, "s", "s", idx, const(1))
    assert lane.bw_init is None, "a PE that packs its own words reads no partial sums"
    port = next(p for p in lane.params if p.direction == "out")
    # the result is written in the pipeline's last stage, depth - 1 cycles after its
    # iteration issues: the timed simulation stamps the word then (no effect elsewhere)
    lag = ctx.pe_depth() + _serial_latency(ctx, lane.ops) - 1
    write = (Line(f"ODYSSEY_WRITE_LAG({lag})"), StreamWrite(port.name, "ow" if out.packed else "r"),
             Line("ODYSSEY_WRITE_LAG(0)"))
    if not out.packed:
        return (*lane.body, *write), port
    b, lanes_m = out.bits, out.lanes_macro
    return (*lane.body, Line(f"ow = ow >> {b}"),
            Line(f"ow({lanes_m} * {b} - 1, ({lanes_m} - 1) * {b}) = bits_of(r)"),
            If(f"wn == {lanes_m} - 1", (*write, Line("wn = 0")), (Line("wn++"),),
               freq=const(1) / sym(lanes_m))), port


def _lane_tree(ctx: Ctx, simd_lanes: int, lane_vals: list[Stmt], rhs: str, guard: str | None) -> tuple[Stmt, ...]:
    """Floating-point lanes: each lane's value into ``pl[ln]`` (one register per lane: a
    cyclic partition of factor ``S``; a lane outside the domain holds the reduction's
    identity), then ``v`` the balanced tree of :func:`lane_tree`: ``ceil(log2 S)`` adds deep,
    where the running sum the C text would describe is a chain of ``S - 1`` that Vitis does
    not reassociate (UG1399, expression balancing). The sum's order differs from the loop
    nest's as the tiles' does; C simulation compares within a tolerance."""
    octype = ctx.output.ctype
    comb = "*" if ctx.main.op == "*=" else "+"
    store: Stmt = Line("pl[ln] = p") if guard is None else \
        Line(f"pl[ln] = ({guard}) ? p : ({octype})({_identity(ctx.main.op)})")
    return (Decl(octype, "pl", dims=(simd_lanes,)),
            Pragma(f"HLS ARRAY_PARTITION variable=pl cyclic factor={simd_lanes} dim=1"),
            For("ln", const(simd_lanes), (*lane_vals, Decl(octype, "p", init=f"({rhs})"), store), unroll=True),
            Decl(octype, "v", init=lane_tree([f"pl[{k}]" for k in range(simd_lanes)], comb)))


def _lane_loops(ctx: Ctx, simd_lanes: int, lane_vals: list[Stmt], rhs: str, update: Stmt, combined: str,
                guard: str | None) -> tuple[Stmt, ...]:
    """The unrolled lanes: ``S - F`` lanes with the tool's multiplier, then ``F`` lanes
    (:func:`fabric_lanes`) whose product (``q``: a variable of its own, which the binding
    names) is bound to LUT fabric (UG1399, BIND_OP ``op=mul impl=fabric``), lane ``ln = S - F
    + lf``; those combine unconditionally (lane 0 is in the first loop) unless every lane is in
    fabric."""
    octype = ctx.output.ctype
    share = ctx.tiling.design.lut_mul_percent
    fab = simd_lanes * share // 100
    dsp = simd_lanes - fab
    out: list[Stmt] = []
    if dsp:
        out.append(For("ln", const(dsp), (*lane_vals, Decl(octype, "p", init=f"({rhs})"), update), unroll=True))
    if not fab:
        return tuple(out)
    body = (*lane_vals, Decl(octype, "q", init=f"({rhs})"), Pragma("HLS BIND_OP variable=q op=mul impl=fabric"),
            Decl(octype, "p", init="q"))
    if not dsp:
        out.append(For("ln", const(fab), (*body, update), unroll=True))
    else:
        plain: Stmt = Line(f"v = {combined}") if guard is None else Line(f"v = ({guard}) ? {combined} : v")
        out.append(For("lf", const(fab), (Decl("int", "ln", init=f"{dsp} + lf"), *body, plain), unroll=True))
    return tuple(out)


def acc_t(ctx: Ctx) -> str:
    return f"{ctx.output.name}_acc_t"


@dataclass(frozen=True, slots=True)
class _DrainLane:
    """What a drain does to one element: its ports (``params``), how it reads a word of
    partial sums (``bw_init``, None without one), the statements that turn ``acc``'s element
    into the value sent on (``body``, into ``r``), its output stream and operators."""

    params: tuple[Param, ...]
    bw_init: str | None
    body: tuple[Stmt, ...]
    target: str
    ops: tuple[OperatorUse, ...]


def _drain_lane(ctx: Ctx, variant: PEVariant, lane: str, elem: str, flat: str, copies: Expr) -> _DrainLane:
    """One element of a drain: ``lane`` is the C value of its partial sum in the word ``bw``,
    ``elem`` of its accumulator element, ``flat`` of that element's index in the block;
    ``copies`` the operators' copies (the lanes handled per cycle)."""
    out = ctx.output
    octype, word = out.ctype, out.word_type
    op = ctx.main.op
    ops: list[OperatorUse] = []
    params: list[Param] = [Param(f"hls::stream_of_blocks<{acc_t(ctx)}>", "acc_blocks", by_ref=True, direction="in")]
    bw_init: str | None = None
    base: str | None
    if variant.out_head and op == "=":
        base = None
    elif variant.out_head:
        if ctx.needs_cin:
            params.append(Param(stream_t(word), f"fifo_{out.name}_cin", by_ref=True, direction="in"))
            cond, _ = ctx.cin_cond()
            if cond != "true":
                bw_init = f"({cond}) ? fifo_{out.name}_cin.read() : {word}(0)"
                base = f"({cond}) ? {lane} : ({octype})({ctx.c0})"
            else:
                bw_init = f"fifo_{out.name}_cin.read()"
                old = base = lane
                start: str | None = None  # the start value, when it is not the value in DRAM
                if ctx.c0 is not None:
                    start = f"({octype})({ctx.c0})"
                elif ctx.pre_scale is not None:  # the start value is scaled, the partial sums are not
                    start = f"({octype})(({ctx.pre_scale}) * {old})"
                if ctx.c0 is None and ctx.pre_scale is not None:
                    ops.append(OperatorUse("mul", octype, copies))
                if start is not None:
                    first = ctx.first_visit()
                    base = start if first == "true" else f"({first}) ? {start} : {old}"
                if ctx.image is not None:  # elements the computation does not write keep their value
                    base = f"in_image ? {base} : {old}"
        elif is_identity(ctx.c0, op):
            base = None  # `0 + r` (or `1 * r`): the accumulator already is the result
        else:
            base = f"({octype})({ctx.c0})"
    else:
        params.append(Param(stream_t(word), f"fifo_{out.name}_in", by_ref=True, direction="in"))
        bw_init = f"fifo_{out.name}_in.read()"
        base = lane
    body: list[Stmt] = [Decl(octype, "r", init=elem)]
    if base is not None and op != "=":  # `=` has no reduction: the PE's value is the result
        sign = {"+=": "+", "-=": "-", "*=": "*"}[op]
        body += [Decl(octype, "base", init=base), Line(f"r = base {sign} r")]
        ops.append(OperatorUse(_combine_kind(op), octype, copies))
    if variant.out_tail and ctx.post_scale is not None:  # the result is scaled once, when final
        last = ctx.last_visit()
        if ctx.image is not None:
            last = "in_image" if last == "true" else f"({last}) && in_image"
        scale = Line(f"r = ({octype})(({ctx.post_scale}) * r)")
        ops.append(OperatorUse("mul", octype, copies))
        body.append(scale if last == "true" else If(last, (scale,)))
    if ctx.image is not None and (variant.out_head or variant.out_tail):
        body[1:1] = _image_test(ctx, flat)
    target = f"fifo_{out.name}_drain" if variant.out_tail else f"fifo_{out.name}_out"
    params.append(Param(stream_t(word), target, by_ref=True, direction="out"))
    params.extend(scalar_params(ctx))
    return _DrainLane(tuple(params), bw_init, tuple(body), target, tuple(ops))


def _drain_function(ctx: Ctx, variant: PEVariant, drain: For, setup: tuple[Stmt, ...], lane: _DrainLane,
                    what: str) -> tuple[Function, tuple[OperatorUse, ...]]:
    out = ctx.output
    body = ctx.tile_loops(ctx.order[: ctx.out_trunc],
                          (Scope((Line(f"hls::read_lock<{acc_t(ctx)}> acc(acc_blocks)"), *setup, drain)),))
    template = tuple(f"int p_{s}" for s in ctx.tiling.design.space_loops)
    name = variant.drain_name(ctx)
    return Function(name, lane.params, body, template=template, kind="pe_drain", operand=out.name,
                    comment=f"{name}: drains the accumulator of its PE, {what} ({out.lanes}-element words)."), lane.ops


def pe_drain_function(ctx: Ctx, variant: PEVariant) -> tuple[Function, tuple[OperatorUse, ...]]:
    """Streams a finished accumulator block out in words of ``LANES`` elements (the output's
    packing), with the operators it instantiates (one for each real combination: a partial
    sum, a start value that is not the reduction's identity, a scaling). Where no drain of
    the design reads partial sums and the output is row-major (:attr:`Ctx.serial_drain`; with
    a serialized output the PEs pack their own words, :attr:`Ctx.pe_words`), one element per
    cycle from one memory bank, with one operator per combination (row-major words are one
    element). Else a word per cycle, so that the partial-sum path streams: the lanes of a word
    are unrolled, each with its operators, and the block is split into banks that serve them."""
    out = ctx.output
    b, word = out.bits, out.word_type
    packed = out.packed
    acc, _ = ctx.acc_size()
    if ctx.serial_drain:
        # no partial sums come in (``serial_drain``): the element is the accumulator's alone
        lane = _drain_lane(ctx, variant, "bw", "acc[e]", "e", const(1))
        assert lane.bw_init is None, "a serial drain reads no partial sums"
        # only a row-major output has one (:attr:`Ctx.pe_words`), whose words are one element
        assert not packed, "a serial PE drain moves unpacked elements"
        drain = For("e", acc, (*lane.body, StreamWrite(lane.target, "r")), pipeline_ii=1,
                    pipeline_depth=ctx.drain_depth())
        return _drain_function(ctx, variant, drain, (), lane, "one element per cycle")
    # the lanes of a word at every tiling (1 where a tiling does not pack the output: the
    # symbolic lanes say so), not at this one: the models read these counts at every tiling
    if packed:
        lane = _drain_lane(ctx, variant, f"{of_bits(out.ctype)}(bw(ln * {b} + {b - 1}, ln * {b}))",
                           f"acc[e * LANES_{out.name} + ln]", f"e * LANES_{out.name} + ln", out.lanes_sym)
    else:
        lane = _drain_lane(ctx, variant, "bw", "acc[e]", "e", out.lanes_sym)
    head = () if lane.bw_init is None else (Decl(word, "bw", init=lane.bw_init),)
    if packed:
        words: list[Stmt] = [*head, Decl(word, "ow"),
                             For("ln", sym(out.lanes_macro),
                                 (*lane.body, Line(f"ow(ln * {b} + {b - 1}, ln * {b}) = bits_of(r)")), unroll=True),
                             StreamWrite(lane.target, "ow")]
    else:
        words = [*head, *lane.body, StreamWrite(lane.target, "r")]
    drain = For("e", ctx.out_words_sym(), tuple(words), pipeline_ii=1, pipeline_depth=ctx.drain_depth())
    return _drain_function(ctx, variant, drain, (), lane, "a word per cycle")


def _image_test(ctx: Ctx, flat: str) -> list[Stmt]:
    """``in_image``: whether the accumulator element ``flat`` (of this PE, this tile) is one
    the computation writes (:attr:`Ctx.image`), from its parallel loops' original values."""
    assert ctx.image is not None
    rest = f"({flat})"
    values: dict[str, str] = {}
    decls: list[Stmt] = []
    for name, _, _ in reversed(ctx.acc_dims()):
        g = ctx.g(name)
        size = f"T_{name}{'2' if g.space else '1'}"
        local = f"{rest} % {size}"
        rest = f"({rest} / {size})"
        base = f"{g.lower} + t_{name} * T_{name}1" if g.lower else f"t_{name} * T_{name}1"
        if g.space:
            base += f" + p_{name} * T_{name}2"
        decls.append(Decl("int", f"g_{name}", init=f"{base} + {local}"))
        values[name] = f"g_{name}"
    conds = [f"{index_c(a, values)} {'>=' if kind == '>=0' else '=='} 0" for a, kind in ctx.image
             if a.names & set(values)]
    return [*reversed(decls), Decl("bool", "in_image", init=" && ".join(conds) or "true")]


def op_table(ctx: Ctx) -> list[str]:
    """Arithmetic operators per lane, for the descriptor's compute section."""
    from odyssey.polyhedral.scop import rexpr_ops

    ops = rexpr_ops(ctx.main.rhs)
    ops.append("mul" if ctx.main.op == "*=" else "add")
    return ops

