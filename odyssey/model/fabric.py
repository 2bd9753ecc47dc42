"""Every resource of a design, per construct, from the descriptor's modules, buffers and ports.

With ``n_m`` the instances of module function ``m`` (its ``count_sym``), the design uses

* **DSP** ``= sum_m n_m * sum_(op in m) copies * DSP(op, type)`` (``optable.json``): every
  operator the printed module instantiates, the PE's and the drains' alike;
* **LUT** ``= sum_m n_m * (operators + FIFOs written + control) + LUTRAM + ports``;
* **FF** likewise with the flip-flops of each construct (a PE pipeline's registers too);
* **BRAM18K** ``=`` the buffers' banks (:func:`odyssey.model.resources.bram18k`) ``+`` each
  m_axi port's data buffer of ``num_outstanding * max_burst_length`` words;
* **URAM** ``= 0``: no buffer is bound to URAM.

The construct costs (``platforms/fabric.json``, each with its source):

* an operator: its core's LUT and FF;
* a FIFO of ``W`` bits and depth ``D`` (each module's ``outputs``; every FIFO has one
  producer): below ``srl_min_depth`` items, ``D * W`` FF and ``mux_lut_per_bit * W`` LUT for
  the read multiplexer, else ``W * ceil(D / srl_depth_per_lut)`` SRL LUTs; a deep FIFO (a PE's output FIFO of a visit of words)
  in block or distributed RAM by the bank rule; plus its control;
* a process: its state machine and handshake, plus one counter per loop that is not unrolled,
  ``ceil(log2(trip + 1))`` bits each, at ``lut_per_bit`` and ``ff_per_bit``;
* a buffer bank bound to distributed RAM (:func:`odyssey.model.resources.on_bram` is 0):
  ``luts_per_block * ceil(W / block_width) * ceil(D / block_depth)`` LUTs;
* an m_axi bundle: its adapter's logic and buffers; the kernel: one ``s_axilite`` control
  interface.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from odyssey.codegen.descriptor_schema import (
    Descriptor,
    ExprJson,
    ModuleJson,
    OperatorJson,
    StmtJson,
    nested_blocks,
)
from odyssey.expr import (
    Add,
    CeilDiv,
    Const,
    Expr,
    Lt,
    Max,
    Mul,
    Where,
    add,
    ceil_div,
    const,
    eceil,
    elog2,
    emax,
    from_json,
    mul,
    substitute,
    where,
)
from odyssey.model.resources import bank_blocks, bank_shape, mul_dsp, num_pes, on_bram
from odyssey.platforms import default_op_costs
from odyssey.platforms.fabric import FabricCosts, fabric_costs


def _e(obj: ExprJson, subst: Mapping[str, Expr]) -> Expr:
    return substitute(from_json(obj), subst)


@dataclass(frozen=True, slots=True)
class Usage:
    """Expressions of one construct's (or one module's) DSP, LUT, FF and BRAM18K."""

    dsp: Expr = const(0)
    lut: Expr = const(0)
    ff: Expr = const(0)
    bram18k: Expr = const(0)

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.dsp + other.dsp, self.lut + other.lut, self.ff + other.ff, self.bram18k + other.bram18k)

    def times(self, n: Expr) -> Usage:
        return Usage(self.dsp * n, self.lut * n, self.ff * n, self.bram18k * n)


def _sum(items: Iterable[Usage]) -> Usage:
    out = Usage()
    for u in items:
        out = out + u
    return out


def lutram_bank(width: Expr, depth: Expr, costs: FabricCosts) -> Expr:
    """LUTs of one bank of ``depth`` items of ``width`` bits in distributed RAM (at every
    tiling: :meth:`~odyssey.platforms.fabric.LutramCosts.luts`)."""
    lr = costs.lutram
    return lr.luts_per_block * ceil_div(width, lr.block_width) * ceil_div(depth, lr.block_depth)


def fifo_usage(bits: Expr, depth: int, costs: FabricCosts, *, deep: Expr | None = None,
               storage: str = "rule") -> Usage:
    """One stream FIFO of ``bits``-bit items, ``depth`` deep (see the module docstring); a deep
    FIFO (``deep``, its depth at every tiling) is a memory bound by ``storage`` (block RAM or
    distributed RAM by the bank rule, :func:`~odyssey.model.resources.on_bram`) and its control."""
    f = costs.fifo
    if deep is not None:
        on = on_bram(bits, deep, costs.bram, storage)
        return Usage(lut=(1 - on) * lutram_bank(bits, deep, costs) + f.control.lut,
                     ff=bits * f.ff_per_bit + f.control.ff,
                     bram18k=on * bank_blocks(bits, deep, costs.bram))
    if depth < f.srl_min_depth:
        lut = bits * f.mux_lut_per_bit if depth > 1 else const(0)
        ff = bits * depth
    else:
        lut, ff = bits * -(-depth // f.srl_depth_per_lut), const(0)
    return Usage(lut=eceil(lut) + f.control.lut, ff=ff + bits * f.ff_per_bit + f.control.ff)


def _loops(ast: list[StmtJson]) -> Iterable[StmtJson]:
    for s in ast:
        if s["type"] == "for":
            yield s
        for block in nested_blocks(s):
            yield from _loops(block)


def control_usage(m: ModuleJson, subst: Mapping[str, Expr], costs: FabricCosts) -> Usage:
    """A process's state machine and handshake, and a counter per loop that is not unrolled
    (a trip that depends on the module's position is counted at position 0, the longest)."""
    local = dict(subst)
    for tp in m.get("template", []):
        local[tp.split()[-1]] = const(0)
    bits: Expr = const(0)
    for s in _loops(m["ast"]):
        if not s.get("unroll", False):
            bits = bits + eceil(elog2(_e(s["trip"], local) + 1))
    return Usage(lut=costs.process.lut + eceil(bits * costs.loop_lut_per_bit),
                 ff=costs.process.ff + eceil(bits * costs.loop_ff_per_bit))


def operator_usage(m: ModuleJson, subst: Mapping[str, Expr], costs: FabricCosts) -> Usage:
    """The operator cores of one instance of ``m``: DSP from ``optable.json``, LUT and FF from
    ``fabric.json``; ``neg`` is a sign flip, no core; a multiplier bound to LUT fabric
    (``impl`` ``fabric``) has no DSP and ``fabric.json``'s ``mul_fabric`` LUT and FF."""
    table = default_op_costs()
    aliases = dict(table.aliases)
    out = Usage()
    for u in m["operators"]:
        if u["op"] == "neg":
            continue
        kind = "add" if u["op"] == "sub" else u["op"]
        dtype = aliases.get(u["dtype"], u["dtype"])
        n = _e(u["count_sym"], subst)
        if u.get("impl", "auto") == "fused":
            continue  # built in the post-adder of the DSP whose multiply it follows
        if u.get("impl", "auto") == "fabric":
            logic = costs.operator(dtype, f"{kind}_fabric")
            out = out + Usage(const(0), const(logic.lut), const(logic.ff)).times(n)
            continue
        logic = costs.operator(dtype, kind)
        out = out + Usage(const(table.lookup(dtype, kind).dsp), const(logic.lut), const(logic.ff)).times(n)
    return out


def register_usage(m: ModuleJson, subst: Mapping[str, Expr], costs: FabricCosts) -> Usage:
    """The pipeline registers of one instance of ``m`` outside its operator cores
    (``fabric.json``, ``pipeline``): enables, operand words, floating-point results and
    delay lines (:class:`~odyssey.codegen.hardware.RegisterUse`)."""
    pc = costs.pipeline
    out = Usage()
    for r in m.get("registers", []):
        bits, n = _e(r["bits_sym"], subst), _e(r["count_sym"], subst)
        if r["kind"] == "stage":
            out = out + Usage(ff=n * pc.stage_ff)
        elif r["kind"] == "word":
            out = out + Usage(ff=n * bits * pc.word_ff_per_bit)
        elif r["kind"] == "result":
            out = out + Usage(ff=n * bits * pc.result_ff_per_bit)
        else:  # hold: n values delayed (PipelineCosts.delay_per_bit)
            one = pc.delay_per_bit(int(r["cycles"]))
            out = out + Usage(lut=n * bits * one.lut, ff=n * bits * one.ff)
    return out


def module_usage(m: ModuleJson, subst: Mapping[str, Expr], costs: FabricCosts) -> Usage:
    """All instances of module function ``m``: operators, pipeline registers, the FIFOs they
    write, control."""
    one = operator_usage(m, subst, costs) + register_usage(m, subst, costs) + control_usage(m, subst, costs)
    one = one + _sum(fifo_usage(_e(o["bits_sym"], subst), int(o["depth"]), costs,
                                deep=None if o["depth_sym"] is None else _e(o["depth_sym"], subst),
                                storage=o["storage"]) for o in m["outputs"])
    return one.times(_e(m["count_sym"], subst))


def lutram_luts(desc: Descriptor, subst: Mapping[str, Expr], costs: FabricCosts) -> dict[str, Expr]:
    """LUTs of each buffer's banks bound to distributed RAM (the banks
    :func:`odyssey.model.resources.bram18k` leaves out of BRAM), by buffer name."""
    out: dict[str, Expr] = {}
    for b in desc["memory"]:
        banks, depth = bank_shape(b, subst)
        width = _e(b["bits_sym"], subst)
        luts = lutram_bank(width, depth, costs)
        if b["storage"] == "uram":  # UltraRAM: no LUT
            continue
        small = 1 - on_bram(width, depth, costs.bram, b["storage"])
        copies = 2 if b["double_buffered"] else 1
        out[b["name"]] = _e(b["instances_sym"], subst) * banks * small * luts * copies
    return out


def port_usage(desc: Descriptor, subst: Mapping[str, Expr], costs: FabricCosts) -> Usage:
    """Every m_axi bundle's adapter (ports on one bundle share it) at its widest port's ``W``
    bits: ``lut + W * lut_per_bit`` LUT, likewise FF, and a read and a write buffer of
    ``num_outstanding * max_burst_length`` words, each in the fewest RAMB18E2s of their shapes
    (:func:`~odyssey.model.resources.bank_blocks`, as every buffer);
    and the kernel's control interface."""
    m = costs.m_axi
    out = Usage(lut=const(costs.s_axilite.lut), ff=const(costs.s_axilite.ff))
    words = m.num_outstanding * m.max_burst_length
    widths: dict[str, list[Expr]] = {}
    for p in desc["ports"]:
        widths.setdefault(p["bundle"], []).append(_e(p["lanes_sym"], subst) * int(p["elem_bits"]))
    for ws in widths.values():
        w = emax(*ws)
        out = out + Usage(lut=eceil(w * m.lut_per_bit) + m.logic.lut, ff=eceil(w * m.ff_per_bit) + m.logic.ff,
                          bram18k=2 * bank_blocks(w, const(words), costs.bram))
    return out


def fabric_usage(desc: Descriptor, subst: Mapping[str, Expr], *, costs: FabricCosts | None = None,
                 ) -> tuple[Usage, dict[str, Usage], dict[str, Expr]]:
    """The design's DSP, LUT, FF and BRAM18K outside its BRAM buffers (which
    :func:`~odyssey.model.resources.bram18k` prices): in total, per module function
    (``"ports"`` for the m_axi adapters and the control interface) and, for the buffers in
    distributed RAM, their LUTs by buffer."""
    costs = costs or fabric_costs()
    per = {m["name"]: module_usage(m, subst, costs) for m in (*desc["modules"], *desc["absent_modules"])}
    per["ports"] = port_usage(desc, subst, costs)
    lutram = lutram_luts(desc, subst, costs)
    total = _sum(per.values())
    lut = total.lut
    for e in lutram.values():
        lut = lut + e
    return Usage(_dsp_total(desc, subst, costs), lut, total.ff, total.bram18k), per, lutram


def _dsp_total(desc: Descriptor, subst: Mapping[str, Expr], costs: FabricCosts) -> Expr:
    """The DSP total, with the PE variants (and the PE drains' variants) that instantiate the
    same operators counted together as ``#PE`` instances: the variants partition the PE grid
    (tests/codegen/test_hardware.py checks their counts), so where the accumulation always
    exists the total is the monomial ``#PE * SIMD * per-lane cost`` of eq. 5-6 that the exact
    optimum's DSP budget cuts its boxes with."""
    pes = num_pes(desc, subst)
    total: Expr = const(0)
    every = (*desc["modules"], *desc["absent_modules"])
    for kind in dict.fromkeys(m["kind"] for m in every):
        group = [m for m in every if m["kind"] == kind]
        same = all(m["operators"] == group[0]["operators"] for m in group)
        if kind in ("pe", "pe_drain") and same:
            if group[0]["operators"]:
                total = total + operator_usage(group[0], subst, costs).dsp * pes
        else:
            for m in group:
                if m["operators"]:
                    total = total + operator_usage(m, subst, costs).dsp * _e(m["count_sym"], subst)
    return total


def dsp_cut(desc: Descriptor, subst: Mapping[str, Expr], lanes: Expr, per_lane: int) -> Expr | None:
    """A lower bound of the DSP total at every legal tiling that the exact optimum's rewrite
    turns into one monomial of its coordinates, ``c * #PE * SIMD`` (eq. 5-6); None where the
    PEs are not of the form below (the exact optimum then bounds the DSP by intervals only).

    A PE (:func:`odyssey.codegen.pe.pe_operators`) holds ``SIMD`` copies of each lane operator
    but the combining one, of which it holds ``SIMD - 1 + acc``: ``acc``, its accumulation, is
    ``max(0, [1 < t], ...)`` over the trips ``t`` of its reduction loops. So a PE costs
    ``per_lane * SIMD - comb * (1 - acc)`` (``comb``: the combining operator's DSP; the
    shortfall is computed from the PE's operators, term by term so that the lanes cancel, and
    anything not of this form gives None). A PE
    drain that combines (partial sums from DRAM or from the previous PE) holds at least one
    operator costing ``comb`` or more; the PE drain variants partition the grid, and the
    ``n_bare`` that do not combine are the chains' heads. Hence

        ``DSP >= per_lane * #PE * SIMD - comb * n_bare * (1 - acc)``.

    ``acc = 0`` only where every trip is 1, and an inner reduction tile count
    ``ceil(E / T_1) <= 1`` means ``T_1 >= E``: so ``1 - acc <= prod(T_1 / E)`` over those loops
    (0 where ``acc = 1``, at least 1 where ``acc = 0``), and

        ``DSP >= per_lane * #PE * SIMD - comb * n_bare * prod(T_1 / E)``.

    Where the PE always accumulates, or every drain combines, the bound is ``per_lane * #PE *
    SIMD``. On MM ``ik-ij.k`` (partial sums flow along ``k``, whose heads add nothing) it is
    ``5*q_i*q_k*T_k2 - 2*q_i*T_k1/1024``, which the rewrite (``q_k*T_k2 = T_k1``) makes
    ``(5 - 2/1024)*q_i*T_k1``. A bound the rewrite leaves a sum is no budget cut there
    (:func:`odyssey.tune.exact.optimum_budget.model_budgets`)."""
    pe = [m for m in desc["modules"] if m["kind"] == "pe"]
    drains = [m for m in (*desc["modules"], *desc["absent_modules"]) if m["kind"] == "pe_drain"]
    if not pe or any(m["operators"] != pe[0]["operators"] for m in pe):
        return None
    table = default_op_costs()
    aliases = dict(table.aliases)
    share = int(desc["design"].get("lut_mul_percent", 0))
    if share:
        return _lut_mul_cut(desc, subst, lanes, per_lane, share, pe[0], drains)

    def cost(u: OperatorJson) -> int:
        if u.get("impl", "auto") in ("fused", "fabric"):  # a DSP's post-adder, LUT fabric
            return 0
        return table.lookup(aliases.get(u["dtype"], u["dtype"]), "add" if u["op"] == "sub" else u["op"]).dsp

    # the PE's shortfall from per_lane * SIMD, term by term so that the lanes cancel: comb * (1 - acc)
    spent: list[Expr] = []
    for u in pe[0]["operators"]:
        if u["op"] != "neg":
            n = _e(u["count_sym"], subst)
            spent += [mul(-cost(u), t) for t in (n.terms if isinstance(n, Add) else (n,))]
    short = add(mul(per_lane, lanes), *spent)
    full = num_pes(desc, subst) * lanes * per_lane
    if isinstance(short, Const) and short.value <= 0:  # every PE accumulates
        return full
    comb, acc = _shortfall(short)
    lack = None if acc is None else _no_accumulation(acc)
    if lack is None:
        return None
    if not drains:  # PEs that pack their own words (no PE drains): each may lack its accumulation
        return full - comb * num_pes(desc, subst) * lack
    bare = [m for m in drains if not any(cost(u) >= comb for u in m["operators"] if u["op"] != "neg")]
    if not bare:
        return full
    heads = _merged(_e(m["count_sym"], subst) for m in bare)
    return full - comb * heads * lack


def _lut_mul_cut(desc: Descriptor, subst: Mapping[str, Expr], lanes: Expr, per_lane: int, share: int,
                 pe: ModuleJson, drains: list[ModuleJson]) -> Expr | None:
    """The cut of a design whose multiply lanes are ``share`` % LUT fabric (``ID+lutP``):
    ``floor(P * SIMD / 100)`` lanes multiply in LUTs, so at most ``P / 100`` of every lane's
    multiplier DSPs are missing and ``#PE * SIMD * (per-lane cost - P/100 * multiplier cost)``
    stays below the DSP total, where the PE lacks at most its accumulation and every PE drain
    combines."""
    kinds = {(u["op"], u["dtype"]) for u in pe["operators"]}
    combine = [k for k in kinds if k[0] in ("add", "mul")]
    covered = drains and all(any((u["op"], u["dtype"]) in combine for u in m["operators"]) for m in drains)
    if not covered:
        return None
    return num_pes(desc, subst) * lanes * (per_lane - share * mul_dsp(desc) / 100)


def _shortfall(short: Expr) -> tuple[float, Expr | None]:
    """``(c, acc)`` where ``short`` is ``c * (1 - acc)`` (``c > 0``): a constant ``c`` is
    ``acc = 0``, ``c - c*acc`` names ``acc``; ``(0, None)`` otherwise."""
    if isinstance(short, Const):
        return short.value, const(0)
    if isinstance(short, Add) and len(short.terms) == 2:
        c = next((t for t in short.terms if isinstance(t, Const)), None)
        rest = next((t for t in short.terms if not isinstance(t, Const)), None)
        if c is not None and c.value > 0 and isinstance(rest, Mul) and rest.factors[0] == const(-c.value):
            return c.value, mul(*rest.factors[1:])
    return 0, None


def _no_accumulation(acc: Expr) -> Expr | None:
    """A monomial at least ``1 - acc`` at every legal tiling, for ``acc = max(0, [1 < t], ...)``
    (a PE's accumulation, :func:`odyssey.codegen.pe.pe_operators`): ``prod(T / E)`` over the trips
    ``t = ceil(E / T)`` (``acc = 0`` needs each ``<= 1``, so ``T >= E``); 1 without such trips.
    ``1 / E`` is rounded up, so that the bound's subtrahend is never rounded down. None where
    ``acc`` is not of that form."""
    factors: list[Expr] = []
    for a in acc.args if isinstance(acc, Max) else (acc,):
        if a == const(0):
            continue
        if not (isinstance(a, Where) and a.a == const(1) and a.b == const(0)
                and isinstance(a.cond, Lt) and a.cond.lhs == const(1)):
            return None
        t = a.cond.rhs
        if isinstance(t, CeilDiv) and isinstance(t.num, Const) and t.num.value > 0:
            factors.append(t.den * const(math.nextafter(1 / t.num.value, math.inf)))
    return mul(*factors)


def _merged(counts: Iterable[Expr]) -> Expr:
    """The sum of module counts, with the terms ``X*where(c, a, b)`` of one ``X`` and one ``c``
    (constant ``a``, ``b``) merged into ``X*where(c, sum a, sum b)``: the heads of a chain that
    may have one PE, ``q*where(n <= 1, 0, 1) + q*where(n <= 1, 1, 0)``, are ``q``."""
    groups: dict[tuple[Expr, Expr], tuple[float, float]] = {}
    rest: list[Expr] = []
    for e in counts:
        factors = e.factors if isinstance(e, Mul) else (e,)
        sel = [f for f in factors if isinstance(f, Where)]
        w = sel[0] if len(sel) == 1 else None
        if w is not None and isinstance(w.a, Const) and isinstance(w.b, Const):
            others = mul(*[f for f in factors if f is not w])
            a, b = groups.get((others, w.cond), (0, 0))
            groups[(others, w.cond)] = (a + w.a.value, b + w.b.value)
        else:
            rest.append(e)
    return add(*rest, *[x * where(c, a, b) for (x, c), (a, b) in groups.items()])


__all__ = ["Usage", "dsp_cut", "control_usage", "fabric_usage", "fifo_usage", "lutram_luts",
           "module_usage", "operator_usage", "port_usage"]
