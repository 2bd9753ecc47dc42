"""Every resource of a design, per construct, from the descriptor's modules, buffers and ports.

With ``n_m`` the instances of module function ``m`` (its ``count_sym``), the design uses

* **DSP** ``= sum_m n_m * sum_(op in m) copies * DSP(op, type)`` (``optable.json``): every
  operator the printed module instantiates, the PE's and the drains' alike;
* **LUT** ``= sum_m n_m * (operators + FIFOs written + control) + LUTRAM + ports``;
* **FF** likewise with the flip-flops of each construct;
* **BRAM18K** ``=`` the buffers' banks (:func:`odyssey.model.resources.bram18k`) ``+`` each
  m_axi port's data buffer of ``num_outstanding * max_burst_length`` words;
* **URAM** ``= 0``: no buffer is bound to URAM.

The construct costs (``platforms/fabric.json``, each with its source):

* an operator: its core's LUT and FF;
* a FIFO of ``W`` bits and depth ``D`` (each module's ``outputs``; every FIFO has one
  producer): below ``srl_min_depth`` items, ``D * W`` FF and ``mux_lut_per_bit * W`` LUT for
  the read multiplexer, else ``W * ceil(D / srl_depth_per_lut)`` SRL LUTs; plus its control;
* a process: its state machine and handshake, plus one counter per loop that is not unrolled,
  ``ceil(log2(trip + 1))`` bits each, at ``lut_per_bit`` and ``ff_per_bit``;
* a buffer bank bound to distributed RAM (:func:`odyssey.model.resources.on_bram` is 0):
  ``luts_per_block * ceil(W / block_width) * ceil(D / block_depth)`` LUTs;
* an m_axi bundle: its adapter's logic and buffers; the kernel: one ``s_axilite`` control
  interface.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from odyssey.codegen.descriptor_schema import (
    Descriptor,
    ExprJson,
    ModuleJson,
    StmtJson,
    nested_blocks,
)
from odyssey.expr import Expr, ceil_div, const, eceil, elog2, emax, from_json, substitute
from odyssey.model.resources import bank_blocks, bank_shape, num_pes, on_bram
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


def fifo_usage(bits: Expr, depth: int, costs: FabricCosts) -> Usage:
    """One stream FIFO of ``bits``-bit items, ``depth`` deep (see the module docstring)."""
    f = costs.fifo
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


def module_usage(m: ModuleJson, subst: Mapping[str, Expr], costs: FabricCosts) -> Usage:
    """All instances of module function ``m``: operators, the FIFOs they write, control."""
    one = operator_usage(m, subst, costs) + control_usage(m, subst, costs)
    one = one + _sum(fifo_usage(_e(o["bits_sym"], subst), int(o["depth"]), costs) for o in m["outputs"])
    return one.times(_e(m["count_sym"], subst))


def lutram_luts(desc: Descriptor, subst: Mapping[str, Expr], costs: FabricCosts) -> dict[str, Expr]:
    """LUTs of each buffer's banks bound to distributed RAM (the banks
    :func:`odyssey.model.resources.bram18k` leaves out of BRAM), by buffer name."""
    lr = costs.lutram
    out: dict[str, Expr] = {}
    for b in desc["memory"]:
        banks, depth = bank_shape(b, subst)
        width = _e(b["bits_sym"], subst)
        luts = lr.luts_per_block * ceil_div(width, lr.block_width) * ceil_div(depth, lr.block_depth)
        small = 1 - on_bram(width, depth, costs.bram)
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
    """A monomial lower bound of the DSP total at every legal tiling, ``#PE * SIMD * per-lane
    cost`` (eq. 5-6), where one holds: the PE may lack only its accumulation's operator (where
    no reduction loop of its pipeline iterates), and then every PE drain combines at least one
    lane with an operator of the same kind and type, which costs as much (partial sums from
    DRAM or from the previous PE). None where that is not so (the exact optimum then bounds the
    DSP by intervals only)."""
    pe = [m for m in desc["modules"] if m["kind"] == "pe"]
    drains = [m for m in (*desc["modules"], *desc["absent_modules"]) if m["kind"] == "pe_drain"]
    if not pe or any(m["operators"] != pe[0]["operators"] for m in pe):
        return None
    share = int(desc["design"].get("lut_mul_percent", 0))
    if share:
        # floor(P * SIMD / 100) lanes multiply in LUTs: at most P / 100 of every lane's
        # multiplier DSPs are missing, so #PE * SIMD * (per-lane cost - P/100 * multiplier
        # cost) stays below the DSP total
        table = default_op_costs()
        ins = [o for o in desc["operands"] if o["role"] == "input"]
        mul_t = max(ins, key=lambda o: o["bits"])["elem"] if ins else desc["compute"]["dtype"]
        mul_dsp = table.lookup(dict(table.aliases).get(mul_t, mul_t), "mul").dsp
        per_lane = per_lane - share * mul_dsp / 100  # type: ignore[assignment]
    kinds = {(u["op"], u["dtype"]) for u in pe[0]["operators"]}
    combine = [k for k in kinds if k[0] in ("add", "mul")]
    covered = drains and all(any((u["op"], u["dtype"]) in combine for u in m["operators"]) for m in drains)
    if not covered:
        return None
    return num_pes(desc, subst) * lanes * per_lane


__all__ = ["Usage", "dsp_cut", "control_usage", "fabric_usage", "fifo_usage", "lutram_luts",
           "module_usage", "operator_usage", "port_usage"]
