"""Resource and off-chip traffic models from the descriptor's memory, compute and topology.

DSP (the paper's eq. 5-6): ``#PE * SIMD * sum(DSP(op) for op in ops per lane)`` with the
per-operator, per-type costs of ``odyssey/platforms/optable.json`` (fp32 multiply 3 + add 2,
so an fp32 MAC lane is 5 DSP; int16 multiply 1, add 0).

BRAM18K (eq. 4): for each buffer, ``instances * (2 if double-buffered) * banks * B(bits,
depth)``, ``B`` the fewest RAMB18E2s of one bank over their width x depth shapes
(``platforms/fabric.json``, ``bram``). An input block is split into the banks its descriptor's
``partition`` gives (cyclic, per dimension: the writer's packing lanes on the innermost
dimension, ``c * S`` SIMD lanes on every dimension the SIMD loop indexes with coefficient
``c``), ``banks`` the product of the factors and ``depth = prod_d ceil(extent_d / factor_d)``;
other buffers are one bank. A bank that would fill less than ``bram.min_fill`` of its
RAMB18E2s is bound to distributed RAM instead (0 BRAM; :func:`on_bram`), as the printed
``BIND_STORAGE`` pragmas say. URAM is not used by the generated designs (0).

Off-chip traffic (the paper's eq. 1-2 in general form), bytes: counted from the DRAM accesses
of the modules' ASTs (each executed over the loops around it, weighted by the frequency of its
branches, times the passes) and their ports' word widths: every input read once per visit of
its reload loops for every lowest-level I/O module (halos included), the output written once
per visit of its tile and read back on the visits that carry partial sums.
"""

from __future__ import annotations

from collections.abc import Mapping

from odyssey.codegen.channels import dram_counts
from odyssey.codegen.descriptor_schema import BufferJson, Descriptor, ExprJson
from odyssey.expr import (
    Const,
    Expr,
    ceil_div,
    const,
    emin,
    floor_div,
    from_json,
    lt,
    mul,
    substitute,
    where,
)
from odyssey.platforms import op_cost
from odyssey.platforms.fabric import BramCosts, fabric_costs


def _e(obj: ExprJson, subst: Mapping[str, Expr]) -> Expr:
    return substitute(from_json(obj), subst)


def loop_table(desc: Descriptor, subst: Mapping[str, Expr]) -> dict[str, dict[str, Expr]]:
    return {lp["name"]: {"tiles": _e(lp["tiles_sym"], subst), "outer": _e(lp["outer_sym"], subst),
                         "t1": _e(lp["t1_sym"], subst), "t2": _e(lp["t2_sym"], subst)}
            for lp in desc["loops"]}


def num_pes(desc: Descriptor, subst: Mapping[str, Expr]) -> Expr:
    return mul(*[_e(x, subst) for x in desc["topology"]["array_dims_sym"]]) if desc["topology"]["array_dims_sym"] else const(1)


def simd_lanes(desc: Descriptor, subst: Mapping[str, Expr]) -> Expr:
    simd = desc["design"]["simd_loop"]
    if simd is None:
        return const(1)
    lp = next(x for x in desc["loops"] if x["name"] == simd)
    return _e(lp["t2_sym"], subst)


def dsp(desc: Descriptor, subst: Mapping[str, Expr]) -> Expr:
    """DSP blocks of the PEs' lanes: ``#PE * SIMD * per-lane cost`` (eq. 5-6), less the
    multipliers of the lanes built in LUT fabric (``lut_mul_percent``); the design's total,
    every operator counted, is :func:`odyssey.model.fabric.fabric_usage`'s."""
    lanes = simd_lanes(desc, subst)
    total = lanes * dsp_per_lane(desc)
    share = int(desc["design"].get("lut_mul_percent", 0))
    if share:
        total = total - floor_div(lanes * share, 100) * mul_dsp(desc)
    return num_pes(desc, subst) * total


def mul_dsp(desc: Descriptor) -> int:
    """DSP blocks of one lane's multiplier core (at the operands' width, :func:`_mul_type`)."""
    return op_cost(_mul_type(desc), "mul")[0]


def _mul_type(desc: Descriptor) -> str:
    """A multiply works at its operands' width (``short * short`` is a 16-bit multiply even
    though C promotes the product to int)."""
    ins = [o for o in desc["operands"] if o["role"] == "input"]
    return max(ins, key=lambda o: o["bits"])["elem"] if ins else desc["compute"]["dtype"]


def dsp_per_lane(desc: Descriptor) -> int:
    """DSP blocks of one SIMD lane's operators (``ops_per_lane``): fp32 MAC 5."""
    out_type = desc["compute"]["dtype"]
    mul_type = _mul_type(desc)  # adds work at the accumulator's type
    per_lane = 0
    for op in desc["compute"]["ops_per_lane"]:
        if op == "neg":
            continue
        kind = "add" if op == "sub" else op
        per_lane += op_cost(mul_type if kind == "mul" else out_type, kind)[0]
    return per_lane


def bram18k(desc: Descriptor, subst: Mapping[str, Expr], *, smooth: bool = False) -> tuple[Expr, dict[str, Expr]]:
    """Total BRAM18K and the share of each buffer of the descriptor's ``memory``: its symbolic
    ``instances_sym``, banks from its ``partition`` (none: one bank). ``smooth`` drops the
    LUTRAM threshold (an upper bound without ``Where``, for the mathematical-programming seed)."""
    total: Expr = const(0)
    parts_out: dict[str, Expr] = {}
    for m in desc["memory"]:
        banks, per_bank = bank_shape(m, subst)
        if m["storage"] == "uram":  # in UltraRAM: no block RAM (:func:`uram_blocks`)
            parts_out[m["name"]] = const(0)
            continue
        cost = _bank_cost(per_bank, _e(m["bits_sym"], subst), banks, _e(m["instances_sym"], subst),
                          m["double_buffered"], smooth, m["storage"] == "bram")
        parts_out[m["name"]] = cost
        total = total + cost
    return total, parts_out


def uram_blocks(desc: Descriptor, subst: Mapping[str, Expr]) -> tuple[Expr, dict[str, Expr]]:
    """Total URAM288 blocks and the share of each buffer bound to UltraRAM (``storage``
    ``uram``): ``instances * (2 if double-buffered) * banks * ceil(bits / 72) * ceil(depth /
    4096)`` (``fabric.json`` ``uram``: one shape)."""
    u = fabric_costs().uram
    total: Expr = const(0)
    parts_out: dict[str, Expr] = {}
    for m in desc["memory"]:
        if m["storage"] != "uram":
            continue
        banks, depth = bank_shape(m, subst)
        per_bank = ceil_div(_e(m["bits_sym"], subst), const(u.width)) * ceil_div(depth, const(u.depth))
        cost = _e(m["instances_sym"], subst) * banks * per_bank * (2 if m["double_buffered"] else 1)
        parts_out[m["name"]] = cost
        total = total + cost
    return total, parts_out


def bank_shape(m: BufferJson, subst: Mapping[str, Expr]) -> tuple[Expr, Expr]:
    """``(banks, elements per bank)`` of buffer ``m`` in the cyclic banks of its
    ``partition`` (none: one bank)."""
    banks: Expr = const(1)
    per_bank: Expr = const(1)
    parts = {int(pt["dim"]): _e(pt["factor_sym"], subst) for pt in m.get("partition", [])}
    for d, ext in enumerate(m["dims_sym"], start=1):
        ext_e = _e(ext, subst)
        if d in parts:
            banks = banks * parts[d]
            per_bank = per_bank * ceil_div(ext_e, parts[d])
        else:
            per_bank = per_bank * ext_e
    return banks, per_bank


def bank_blocks(width: Expr, depth: Expr, bram: BramCosts) -> Expr:
    """RAMB18E2s of one bank of ``depth`` items of ``width`` bits: the fewest over the shapes
    (:meth:`~odyssey.platforms.fabric.BramCosts.blocks` at every tiling); at a constant width
    only the deepest shape of each column count can be the fewest."""
    shapes = bram.shapes
    if isinstance(width, Const):
        w = int(width.value)
        deepest: dict[int, int] = {}
        for sw, sd in shapes:
            cols = -(-w // sw)
            deepest[cols] = max(deepest.get(cols, 0), sd)
        return emin(*[const(cols) * ceil_div(depth, sd) for cols, sd in sorted(deepest.items())])
    return emin(*[ceil_div(width, sw) * ceil_div(depth, sd) for sw, sd in shapes])


def on_bram(width: Expr, depth: Expr, bram: BramCosts, storage: str = "rule") -> Expr:
    """1 where a bank of ``depth`` items of ``width`` bits is bound to block RAM (it fills at
    least ``min_fill`` of the RAMB18E2s it takes, or its buffer's ``storage`` is ``bram``), 0
    where to distributed RAM or UltraRAM: the rule of
    :meth:`~odyssey.platforms.fabric.FabricCosts.bank_impl` at every tiling."""
    if storage in ("bram", "uram"):
        return const(1 if storage == "bram" else 0)
    return where(lt(width * depth, const(bram.min_fill * bram.bits) * bank_blocks(width, depth, bram)), 0, 1)


def _bank_cost(depth: Expr, bits: Expr, banks: Expr, inst: Expr, double: bool, smooth: bool,
               all_bram: bool) -> Expr:
    """BRAM18K of ``inst`` buffers of ``banks`` banks of ``depth`` elements of ``bits`` bits.
    ``smooth``: the 512 x 36 shape and no distributed-RAM rule (an upper bound without
    ``Where``, for the mathematical-programming seed)."""
    bram = fabric_costs().bram
    if smooth:
        per_bank = ceil_div(bits, 36) * ceil_div(depth, 512)
    else:
        per_bank = bank_blocks(bits, depth, bram) * on_bram(bits, depth, bram, "bram" if all_bram else "rule")
    return inst * banks * per_bank * (2 if double else 1)


def offchip_bytes(desc: Descriptor, subst: Mapping[str, Expr], *,
                  burst_overhead: int = 0) -> tuple[Expr, dict[str, Expr]]:
    """Off-chip bytes moved per array: every DRAM access of every module's AST, counted over
    the loops around it (weighted by the frequency of the branches it sits in) and the passes,
    times its port's word (``lanes * element bits / 8``)."""
    del burst_overhead  # traffic does not depend on it; kept for a uniform call
    loops = loop_table(desc, subst)
    passes: Expr = const(1)
    for n in desc["passes"]["loops"]:
        passes = passes * loops[n]["tiles"]
    ports = {p["name"]: p for p in desc["ports"]}
    arrays = {o["name"]: o["array"] for o in desc["operands"]}
    per: dict[str, Expr] = {}
    for m in desc["modules"]:
        local = dict(subst)
        for tp in m.get("template", []):
            local[tp.split()[-1]] = const(0)
        for port, count in dram_counts(m["ast"], local, const(1)):
            p = ports[port]
            nbytes = count * _e(p["lanes_sym"], subst) * (int(p["elem_bits"]) // 8) * passes
            array = arrays[p["operand"]]
            per[array] = per.get(array, const(0)) + nbytes
    total: Expr = const(0)
    for v in per.values():
        total = total + v
    return total, per
