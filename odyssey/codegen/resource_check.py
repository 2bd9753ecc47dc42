"""The resources of a design, counted from its printed C++ and priced with the platform tables.

An independent witness of the resource model (:mod:`odyssey.model.fabric`): it reads only
``kernel.cpp`` and ``kernel.h`` (their functions, the dataflow region's calls and channels,
the pragmas) and the platform's cost tables, never the generator's description. Per module
function, over all its instances (the calls of the region):

* **operators**: every ``+``, ``-`` and ``*`` of an assignment to a floating-point or integer
  variable, times the trips of the unrolled loops around it; a ternary whose condition is
  constant once those loops are unrolled (``(ln == 0) ? p : v + p``, ``(true) ? ...``) keeps
  only the branch taken; a multiply is typed by its widest operand, the rest by the target;
  integer index, slice and call arguments are not arithmetic of the datapath, nor is an
  integer computed from loop counters, position parameters, `int` arguments (a pass's tile
  indices) and sizes alone (an address);
* **pipeline registers** of each PE (:mod:`.pipe_registers`: from a schedule of its printed
  statements, enables, operand words, floating-point results and the delay lines of values
  that wait);
* **control**: one state machine per process and a counter of ``ceil(log2(trip + 1))`` bits per
  loop that is not unrolled (trips at position 0 of the position parameters, as the model);
* **FIFOs**: each ``hls::stream`` of the region with its ``STREAM`` depth, its item width (the
  typedefs) and its ``BIND_STORAGE`` implementation (none: Vitis's default, UG1399
  ``config_storage``: a shift register up to depth 2 and 1,024 bits, else memory), charged to
  the module whose instance writes it;
* **memories**: each array of a module (times its instances) and each ``stream_of_blocks`` of
  the region (two blocks), in the banks of its ``ARRAY_PARTITION`` pragmas, in the storage its
  ``BIND_STORAGE`` names: ``impl=bram``, the fewest RAMB18E2s of the platform's shapes;
  ``impl=lutram``, distributed RAM; ``impl=uram``, URAM288 blocks of 4K x 72. Unbound, a stream of blocks is block RAM (UG1399: "The
  stream of blocks uses 2-port BRAM (type=RAM_2P) by default") and an array goes where the
  platform's fill rule (``fabric.json``, ``bram.min_fill``) puts it;
* **interfaces**: each m_axi bundle at its widest port (with the burst length and outstanding
  transactions its pragmas print, UG1399's 16 and 16 where they print none) and the control
  interface.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from odyssey.codegen.c_text import (
    CAST,
    FP_BITS,
    INT_BITS,
    closing,
    constant,
    operand_type,
    register_arrays,
    ternary,
    unrolled,
)
from odyssey.codegen.ii_check import Node, c_eval, parse_body
from odyssey.codegen.pipe_registers import is_pe, pipe_registers
from odyssey.codegen.static_check import (
    _CALL,
    _STREAM_DECL,
    CFunction,
    parse_functions,
    position_params,
)
from odyssey.errors import OdysseyError
from odyssey.platforms import default_op_costs
from odyssey.platforms.fabric import FabricCosts, fabric_costs

_DTYPE = {32: "int32", 16: "int16", 8: "int8"}
_DECL = re.compile(r"^((?:unsigned |signed )?[A-Za-z_]\w*) (\w+)(?:\[.*\])?(?: = (.*))?;$")
_ASSIGN = re.compile(r"^(\w+)(?:\[.*\])? = (.*);$")
_CALL_ARGS = re.compile(r"\b([A-Za-z_]\w*)\(")
_UINT = re.compile(r"^typedef ap_u?int<(\d+)> (\w+);$", re.M)
_TYPEDEF_ARRAY = re.compile(r"^typedef ([\w ]+?) (\w+)((?:\[\d+\])+);$", re.M)
_DEFINE = re.compile(r"^#define (\w+) (-?\d+)$", re.M)
_PRAGMA_VAR = re.compile(r"^\s*#pragma HLS (\w+) variable=(\w+)(.*)$", re.I)
_MAXI = re.compile(r"#pragma HLS INTERFACE m_axi port=(\w+)(.*)$")


@dataclass
class Usage:
    dsp: float = 0.0
    lut: float = 0.0
    ff: float = 0.0
    bram18k: float = 0.0
    uram: float = 0.0

    def add(self, other: Usage, times: float = 1.0) -> None:
        self.dsp += other.dsp * times
        self.lut += other.lut * times
        self.ff += other.ff * times
        self.bram18k += other.bram18k * times
        self.uram += other.uram * times


@dataclass
class ResourceWitness:
    """Resources counted from the printed code: per module function (all its instances), for
    the interfaces (``"ports"``) and in total; ``operators`` per function: ``(op, dtype) ->
    copies`` in one instance."""

    modules: dict[str, Usage] = field(default_factory=dict)
    instances: dict[str, int] = field(default_factory=dict)
    operators: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)
    memories: Usage = field(default_factory=Usage)

    @property
    def total(self) -> Usage:
        out = Usage()
        for u in self.modules.values():
            out.add(u)
        out.add(self.memories)
        return out

    def as_json(self) -> dict[str, object]:
        t = self.total
        return {"dsp": t.dsp, "lut": t.lut, "ff": t.ff, "bram18k": t.bram18k, "uram": t.uram,
                "modules": {n: {"instances": self.instances.get(n, 1), "dsp": u.dsp, "lut": u.lut, "ff": u.ff,
                                "bram18k": u.bram18k} for n, u in self.modules.items()},
                "memories": {"lut": self.memories.lut, "bram18k": self.memories.bram18k, "uram": self.memories.uram}}


def _strip_calls(expr: str) -> str:
    """``expr`` without the arguments of function calls (bit slices, conversions) and index
    expressions: integer arithmetic that is not the datapath's."""
    out, k = [], 0
    while k < len(expr):
        m = _CALL_ARGS.match(expr, k)
        if m is not None and m.group(1) not in ("float", "double"):
            depth, j = 0, m.end() - 1
            while j < len(expr):
                depth += {"(": 1, ")": -1}.get(expr[j], 0)
                if depth == 0:
                    break
                j += 1
            out.append(m.group(1))
            k = j + 1
            continue
        if expr[k] == "[":
            depth, j = 0, k
            while j < len(expr):
                depth += {"[": 1, "]": -1}.get(expr[j], 0)
                if depth == 0:
                    break
                j += 1
            k = j + 1
            continue
        out.append(expr[k])
        k += 1
    return "".join(out)


def _ops(expr: str, env: dict[str, int]) -> Counter[str]:
    """Binary ``+ - *`` of ``expr``, keeping only the branch taken where a ternary's condition
    is constant under ``env`` (the unrolled loops' values, the defines)."""
    expr = expr.strip()
    while expr.startswith("(") and closing(expr, 0) == len(expr) - 1:
        expr = expr[1:-1].strip()
    t = ternary(expr)
    if t is not None:
        cond, a, b = t
        value = constant(cond, env)
        if value is None:
            return _ops(a, env) + _ops(b, env)
        return _ops(a if value else b, env)
    text = _strip_calls(expr)
    text = CAST.sub("", text)
    out: Counter[str] = Counter()
    prev = "("
    for ch in text:
        if ch in "+-*" and prev not in "(?:*+-=<>&|,":
            out["mul" if ch == "*" else "add" if ch == "+" else "sub"] += 1
        if not ch.isspace():
            prev = ch
    return out


def _width(ctype: str, types: dict[str, int]) -> int:
    ctype = ctype.strip()
    return types.get(ctype) or FP_BITS.get(ctype) or INT_BITS.get(ctype) or 0


def _function_ops(f: CFunction, env: dict[str, int]) -> dict[tuple[str, str], int]:
    """Operators of one instance of ``f``: ``(op, dtype) -> copies``."""
    decls: dict[str, str] = {}
    for line in f.body:
        if (m := _DECL.match(line.strip())) is not None:
            decls[m.group(2)] = m.group(1)
    out: Counter[tuple[str, str]] = Counter()
    products: set[str] = set()  # integer variables holding a DSP multiply's product
    # variables whose multiply is bound to LUT fabric (`BIND_OP variable=x op=mul impl=fabric`)
    fabric = {m.group(1) for line in f.body
              if (m := re.match(r"^\s*#pragma HLS BIND_OP variable=(\w+) op=mul impl=fabric\b", line, re.I))}
    # index values: loop counters, position parameters and sizes (env), and integers computed
    # from nothing else; their arithmetic addresses the data (HLS strength-reduces it along
    # the loops), it is not the datapath
    index: set[str] = set(env) | {name for ctype, name in f.params if ctype.strip() == "int"}  # pass indices

    def walk(nodes: list[Node], lanes: list[tuple[str, int]]) -> None:
        for n in nodes:
            if n.kind == "for":
                index.add(n.var)
                walk(n.body, [*lanes, (n.var, c_eval(n.trip, env))] if unrolled(n) else lanes)
            elif n.kind in ("if", "scope"):
                walk(n.body, lanes)
                walk(n.orelse, lanes)
            elif n.kind == "line":
                m = _DECL.match(n.text) or _ASSIGN.match(n.text)
                if m is None:
                    continue
                target, rhs = (m.group(2), m.group(3)) if m.re is _DECL else (m.group(1), m.group(2))
                ttype = decls.get(target, "")
                if rhs is None or not (ttype in FP_BITS or ttype in INT_BITS):
                    continue
                if ttype in INT_BITS and set(re.findall(r"\b[A-Za-z_]\w*\b", rhs)) <= index:
                    index.add(target)  # an address, not data
                    continue
                operand = operand_type(rhs, decls, ttype)
                if ttype in INT_BITS and target not in fabric and _is_product(rhs):
                    products.add(target)
                else:
                    products.discard(target)  # reassigned: no longer a product
                # an integer add of a DSP product is built in that DSP's post-adder (UG1399,
                # "DSP Multi-Operation Matching"): one per product the expression adds
                fusable = sum(len(re.findall(rf"\b{re.escape(x)}\b", rhs)) for x in products) \
                    if ttype in INT_BITS and target not in products else 0
                for values in _lane_values(lanes):
                    ops = _ops(rhs, {**env, **values})
                    fused = min(ops.get("add", 0), fusable)
                    if fused:
                        ops["add"] -= fused
                        out[("add_fused", _canon(ttype))] += fused
                    for op, k in ops.items():
                        if not k:
                            continue
                        key = "mul_fabric" if op == "mul" and target in fabric else op
                        out[(key, _canon(operand if op == "mul" else ttype))] += k
    walk(parse_body(f.body), [])
    return dict(out)


def _is_product(expr: str) -> bool:
    """Whether ``expr`` is a product alone: a top-level ``*`` and no other operator."""
    e = CAST.sub("", expr.strip())
    while e.startswith("(") and closing(e, 0) == len(e) - 1:
        e = e[1:-1].strip()
    ops = _ops(e, {})
    return ops.get("mul", 0) >= 1 and not ops.get("add", 0) and not ops.get("sub", 0) and ternary(e) is None


def _lane_values(unrolled: list[tuple[str, int]]) -> list[dict[str, int]]:
    combos: list[dict[str, int]] = [{}]
    for var, trip in unrolled:
        combos = [{**c, var: v} for c in combos for v in range(trip)]
    return combos


def _canon(ctype: str) -> str:
    if ctype in FP_BITS:
        return "fp32" if ctype == "float" else "fp64"
    return _DTYPE.get(INT_BITS.get(ctype, 32), "int32")


def _control(f: CFunction, env: dict[str, int], costs: FabricCosts) -> Usage:
    bits = 0
    for line, nxt in zip(f.body, (*f.body[1:], ""), strict=True):
        m = re.match(r"^\s*(?:\w+: )?for \(int (\w+) = 0; \1 < (.+); \1\+\+\) \{$", line)
        if m is not None and not nxt.strip().upper().startswith("#PRAGMA HLS UNROLL"):
            bits += math.ceil(math.log2(c_eval(m.group(2), env) + 1))
    return Usage(lut=costs.process.lut + math.ceil(bits * costs.loop_lut_per_bit),
                 ff=costs.process.ff + math.ceil(bits * costs.loop_ff_per_bit))


def _fifo(bits: int, depth: int, impl: str | None, costs: FabricCosts) -> Usage:
    f = costs.fifo
    if impl is None:  # Vitis's default (UG1399 config_storage): auto SRL up to depth 2 and 1,024 bits
        impl = "srl" if depth <= 2 and depth * bits <= 1024 else "memory"
    reg = bits * f.ff_per_bit  # the writer's register of the item
    if impl == "srl":
        if depth < f.srl_min_depth:
            return Usage(lut=math.ceil(bits * f.mux_lut_per_bit) + f.control.lut,
                         ff=bits * depth + reg + f.control.ff)
        return Usage(lut=bits * -(-depth // f.srl_depth_per_lut) + f.control.lut, ff=reg + f.control.ff)
    out = Usage(lut=f.control.lut, ff=reg + f.control.ff)
    out.add(_store(bits, depth, None if impl == "memory" else impl, costs))  # memory: the tool's choice by size
    return out


def _memory(width: int, dims: tuple[int, ...], parts: dict[int, int], copies: int, costs: FabricCosts, *,
            impl: str | None = None) -> Usage:
    """``copies`` of an array in the banks of ``parts``: bound to ``impl`` (``bram``,
    ``lutram``), or by its size where it is not bound."""
    banks, depth = 1, 1
    for d, ext in enumerate(dims, start=1):
        factor = parts.get(d, 1)
        banks *= factor
        depth *= -(-ext // factor)
    out = Usage()
    out.add(_store(width, depth, impl, costs), banks * copies)
    return out


def _store(width: int, depth: int, impl: str | None, costs: FabricCosts) -> Usage:
    """One bank of ``depth`` items of ``width`` bits bound to ``impl`` (``bram``, ``lutram``,
    ``uram``), or by its size where it is not bound."""
    if impl == "bram":
        return Usage(bram18k=costs.bram.blocks(width, depth))
    if impl == "uram":
        return Usage(uram=costs.uram.blocks(width, depth))
    if impl == "lutram":
        return Usage(lut=costs.lutram.luts(width, depth))
    return _store(width, depth, costs.bank_impl(width, depth), costs)


def witness(design_dir: Path, *, costs: FabricCosts | None = None) -> ResourceWitness:
    """Count and price the resources of the design printed in ``design_dir``."""
    costs = costs or fabric_costs()
    d = Path(design_dir)
    try:
        src, header = (d / "kernel.cpp").read_text(), (d / "kernel.h").read_text()
    except OSError as exc:
        raise OdysseyError(f"{d}: cannot read kernel.cpp/kernel.h ({exc.strerror}); give a design directory "
                           "written by `odyssey generate`") from None
    text = header + "\n" + src
    env = {m.group(1): int(m.group(2)) for m in _DEFINE.finditer(text)}
    types = {m.group(2): int(m.group(1)) for m in _UINT.finditer(text)}
    arrays = {m.group(2): (m.group(1), tuple(int(x) for x in re.findall(r"\d+", m.group(3))))
              for m in _TYPEDEF_ARRAY.finditer(text)}
    funcs = parse_functions(src)
    region = [f for f in funcs.values() if any("HLS DATAFLOW" in ln.upper() for ln in f.body)]
    out = ResourceWitness()
    table = default_op_costs()
    if not region:
        return out
    body = region[0].body
    streams = {m.group(2): m.group(1) for ln in body if (m := _STREAM_DECL.match(ln)) is not None}
    blocks = {m.group(2): m.group(1) for ln in body
              if (m := re.match(r"^\s*hls::stream_of_blocks<(.+)> (\w+);", ln)) is not None}
    depth: dict[str, int] = {}
    registers: dict[str, Usage] = {}
    impl: dict[str, str] = {}
    parts: dict[str, dict[int, int]] = {}
    for ln in body:
        if (m := _PRAGMA_VAR.match(ln)) is None:
            continue
        kind, var, rest = m.group(1).upper(), m.group(2), m.group(3)
        if kind == "STREAM" and (dm := re.search(r"depth=(\d+)", rest)):
            depth[var] = int(dm.group(1))
        elif kind == "BIND_STORAGE" and (im := re.search(r"impl=(\w+)", rest)):
            impl[var] = im.group(1).lower()
        elif kind == "ARRAY_PARTITION" and (pm := re.search(r"factor=(\d+) dim=(\d+)", rest)):
            parts.setdefault(var, {})[int(pm.group(2))] = int(pm.group(1))
    for var, ctype in blocks.items():  # a stream of blocks holds two blocks; BRAM unless bound
        elem, dims = arrays[ctype]
        out.memories.add(_memory(_width(elem, types), dims, parts.get(var, {}), 2, costs,
                                 impl=impl.get(var, "bram")))
    for ln in body:
        m = _CALL.match(ln)
        if m is None or m.group(1) not in funcs:
            continue
        f = funcs[m.group(1)]
        name = f.name
        fenv = {**env, **{p: 0 for p in position_params(f)}}
        if name not in out.modules:
            out.modules[name] = Usage()
            out.operators[name] = _function_ops(f, fenv)
            if is_pe(name):  # its pipeline's registers, from a schedule of its statements
                fp_bits = sum(k * {"fp32": 32, "fp64": 64}.get(dtype, 0)
                              for (op, dtype), k in out.operators[name].items() if op in ("add", "sub", "mul"))
                lut, ff = pipe_registers(f.body, fenv, types).price(fp_bits, costs)
                registers[name] = Usage(lut=lut, ff=ff)
        out.instances[name] = out.instances.get(name, 0) + 1
        u = out.modules[name]
        for (op, dtype), k in out.operators[name].items():
            if op == "neg":
                continue
            if op == "add_fused":
                continue  # in the post-adder of the DSP whose product it adds
            kind = "add" if op == "sub" else op
            logic = costs.operator(dtype, kind)
            dsp = 0 if kind.endswith("_fabric") else table.lookup(dtype, kind).dsp
            u.add(Usage(dsp=dsp, lut=logic.lut, ff=logic.ff), k)
        u.add(_control(f, fenv, costs))
        u.add(registers.get(name, Usage()))
        args = [a.strip() for a in m.group(3).split(",")] if m.group(3).strip() else []
        for (_, pname), arg in zip(f.params, args, strict=False):
            if arg in streams and any(f"{pname}.write(" in line for line in f.body):
                u.add(_fifo(_width(streams[arg], types), depth.get(arg, 2), impl.get(arg), costs))
        bound = {m.group(2): (m.group(3) or "") for ln in f.body if (m := _PRAGMA_VAR.match(ln)) is not None
                 and m.group(1).upper() == "BIND_STORAGE"}
        in_registers = register_arrays(f.body, fenv)
        for line in f.body:  # the module's own arrays, in the storage their binding names
            if (am := re.match(r"^\s*([\w ]+?) (\w+)\[(.+)\];$", line.strip())) is not None:
                dims = tuple(c_eval(x, fenv) for x in re.findall(r"\[([^\]]+)\]", "[" + am.group(3) + "]"))
                if am.group(2) in in_registers:
                    continue  # one element per bank: registers (a PE's lanes, counted as results)
                im = re.search(r"impl=(\w+)", bound.get(am.group(2), ""))
                out.memories.add(_memory(_width(am.group(1), types), dims, {}, 1, costs,
                                         impl=im.group(1).lower() if im else None))
    out.modules["ports"] = _interfaces(funcs, src, types, costs)
    return out


def _interfaces(funcs: dict[str, CFunction], src: str, types: dict[str, int], costs: FabricCosts) -> Usage:
    out = Usage(lut=costs.s_axilite.lut, ff=costs.s_axilite.ff)
    top = funcs.get("kernel0")
    if top is None:
        return out
    ptypes = {n: t.replace("*", "").strip() for t, n in top.params}
    bundles: dict[str, list[tuple[int, int, int]]] = {}
    for ln in top.body:
        if (m := _MAXI.search(ln)) is None:
            continue
        rest = m.group(2)
        bundle = re.search(r"bundle=(\w+)", rest)
        burst = re.search(r"max_read_burst_length=(\d+)", rest)
        outstanding = re.search(r"num_read_outstanding=(\d+)", rest)
        bundles.setdefault(bundle.group(1) if bundle else "gmem", []).append(
            (_width(ptypes.get(m.group(1), ""), types), int(burst.group(1)) if burst else 16,
             int(outstanding.group(1)) if outstanding else 16))
    m_axi = costs.m_axi
    for ports in bundles.values():
        w = max(p[0] for p in ports)
        words = max(p[1] * p[2] for p in ports)
        out.add(Usage(lut=math.ceil(w * m_axi.lut_per_bit) + m_axi.logic.lut,
                      ff=math.ceil(w * m_axi.ff_per_bit) + m_axi.logic.ff,
                      bram18k=2 * costs.bram.blocks(w, words)))
    return out


__all__ = ["ResourceWitness", "Usage", "witness"]
