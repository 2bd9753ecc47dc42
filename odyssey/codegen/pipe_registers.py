"""The registers of a printed PE pipeline, from a schedule of its own statements.

Part of the resource witness of ``odyssey check`` (:mod:`.resource_check`): it reads the
pipelined loop of a PE function of ``kernel.cpp`` and nothing of the generator, schedules its
statements as soon as their operands are ready (the operator latencies of the platform's
``optable.json``; a stream read is ready at cycle 0; constants, arguments, loop counters and
memory reads are read when needed), and counts what ``fabric.json``'s ``pipeline`` prices:

* one enable per stage, ``2 +`` the latest value's cycle (read and write stages);
* each operand word read from a stream (its item's bits), and each word the pipeline
  assembles itself and writes to a stream (a PE that packs its own results: ``Ctx.pe_words``);
* each floating-point operator's result (the operators counted by the witness);
* a delay line for each floating-point operand that waits for the other operand of its
  operator (a lane left over at a level of the lanes' tree waiting for the next level's
  pair, the third factor of ``(B * C) * D`` waiting for ``B * C``).

An array whose cyclic partition leaves one element per bank (the lanes' products, ``pl``) is
registers: its elements are scheduled as values.

Integer adds are rebalanced into trees by the tool (UG1399, expression balancing is on for
integers): an integer value accumulated over the unrolled lanes (``v = v + p``) is ready
``ceil(log2 n) * L_add`` after the latest of its ``n`` leaves, and no integer operand is
counted as waiting. Floating-point adds are not rebalanced: the tree the code prints is the
tree the hardware builds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

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
from odyssey.codegen.ii_check import Node, c_eval, parse_body, pipelined_loops
from odyssey.platforms import default_op_costs
from odyssey.platforms.fabric import FabricCosts

_DECL = re.compile(r"^((?:unsigned |signed )?[A-Za-z_]\w*) (\w+)(?: = (.*))?;$")
_ASSIGN = re.compile(r"^(\w+) = (.*);$")
_READ = re.compile(r"^(\w+) (\w+) = (\w+)\.read\(\);$")
_ARRAY = re.compile(r"^((?:unsigned |signed )?[A-Za-z_]\w*) (\w+)\[\w+\];$")
_ELEM = re.compile(r"^(\w+)\[(.+)\] = (.*);$")
_WRITE = re.compile(r"^(\w+)\.write\((\w+)\);$")


@dataclass
class PipeRegisters:
    """What the schedule of one PE pipeline found: its stages, the bits of the operand words
    it reads, and the delays ``(bits, cycles)`` of the floating-point values that wait."""

    stages: int = 0
    word_bits: int = 0
    waits: list[tuple[int, int]] = field(default_factory=list)

    def price(self, result_bits: int, costs: FabricCosts) -> tuple[int, int]:
        """``(LUT, FF)`` with ``result_bits`` bits of floating-point results."""
        pc = costs.pipeline
        lut, ff = 0, self.stages * pc.stage_ff + self.word_bits * pc.word_ff_per_bit + result_bits * pc.result_ff_per_bit
        for bits, cycles in self.waits:
            d = pc.delay(bits, cycles)
            lut, ff = lut + d.lut, ff + d.ff
        return lut, ff


def is_pe(name: str) -> bool:
    """Whether function ``name`` is a PE's compute function (``PE``, ``PE_Alast``, ...), not a
    PE drain."""
    return name == "PE" or (name.startswith("PE_") and not name.startswith("PE_drain"))


def pipe_registers(body: tuple[str, ...], env: dict[str, int], types: dict[str, int]) -> PipeRegisters:
    """The schedule of the first pipelined loop of a function body (see the module docstring);
    ``env`` the defines and position values, ``types`` the widths of the ``ap_uint`` typedefs."""
    decls: dict[str, str] = {}
    for line in body:
        if (m := _DECL.match(line.strip()) or _ARRAY.match(line.strip())) is not None:
            decls[m.group(2)] = m.group(1)
    registers = register_arrays(body, env)
    loops = pipelined_loops(parse_body(body))
    out = PipeRegisters()
    if not loops:
        return out
    loop = loops[0][1]
    table = default_op_costs()
    aliases = dict(table.aliases)

    def latency(op: str, ctype: str) -> int:
        return table.lookup(aliases.get(ctype, ctype), op).latency

    ready: dict[str, int] = {}
    leaves: dict[str, tuple[int, int]] = {}  # an integer lane sum: (latest leaf, leaves)

    def run(nodes: list[Node], lanes: dict[str, int]) -> None:
        for n in nodes:
            if n.kind == "for":
                if unrolled(n):
                    for v in range(c_eval(n.trip, {**env, **lanes})):
                        run(n.body, {**lanes, n.var: v})
                else:
                    run(n.body, lanes)
            elif n.kind in ("if", "scope"):
                run(n.body, lanes)
                run(n.orelse, lanes)
            elif n.kind == "line":
                step(n.text.strip(), lanes)

    read_words: set[str] = set()
    assembled: set[str] = set()

    def step(text: str, lanes: dict[str, int]) -> None:
        if (m := _READ.match(text)) is not None:
            ready[m.group(2)] = 0
            read_words.add(m.group(2))
            out.word_bits += types.get(m.group(1)) or FP_BITS.get(m.group(1), 0)
            return
        if (w := _WRITE.match(text)) is not None:
            # a word the pipeline assembles and writes (a PE that packs its own results):
            # a register of the word's bits
            word = w.group(2)
            if word not in read_words and word not in assembled and types.get(decls.get(word, "")):
                assembled.add(word)
                out.word_bits += types[decls[word]]
            return
        if (e := _ELEM.match(text)) is not None:
            if e.group(1) not in registers:
                return  # a memory write
            target, rhs = f"{e.group(1)}[{c_eval(e.group(2), {**env, **lanes})}]", e.group(3)
            ttype = decls[e.group(1)]
        else:
            m = _DECL.match(text) or _ASSIGN.match(text)
            if m is None:
                return
            target, rhs = (m.group(2), m.group(3)) if m.re is _DECL else (m.group(1), m.group(2))
            ttype = decls.get(target, "")
        if rhs is None or ttype not in FP_BITS and ttype not in INT_BITS:
            return
        fp = ttype in FP_BITS
        operand = operand_type(rhs, decls, ttype)

        def lat(op: str) -> int:
            return latency(op, operand if op == "mul" else ttype)

        waits: list[tuple[int, int]] = []
        accumulates = not fp and re.search(rf"\b{re.escape(target)}\b", _chosen(rhs, {**env, **lanes})) is not None
        t = _sched(rhs, {**env, **lanes}, ready, decls, lat, waits, skip=target if accumulates else None,
                   registers=registers)
        if accumulates and t is not None:  # an integer lane sum: a balanced tree
            last, count = leaves.get(target, (ready.get(target, t), 1))
            last, count = max(last, t), count + 1
            leaves[target] = (last, count)
            ready[target] = last + math.ceil(math.log2(count)) * lat("add")
            return
        if fp:
            out.waits.extend(waits)
        if t is not None:
            ready[target] = t
            leaves[target] = (t, 1)

    run(loop.body, {})
    out.stages = 2 + max(ready.values(), default=0)
    return out


def _strip(expr: str) -> str:
    e = CAST.sub("", expr).strip()
    while e.startswith("(") and closing(e, 0) == len(e) - 1:
        e = e[1:-1].strip()
    return e


def _top(expr: str, chars: str) -> list[tuple[str, str]]:
    """``expr`` split at its top-level binary operators among ``chars``: ``[(op, operand)]``,
    the first with op ``""``."""
    parts: list[tuple[str, str]] = []
    depth, start, op, prev = 0, 0, "", "("
    for k, ch in enumerate(expr):
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(ch, 0)
        if depth == 0 and ch in chars and prev not in "(?:*+-=<>&|,":
            parts.append((op, expr[start:k].strip()))
            op, start = ch, k + 1
        if not ch.isspace():
            prev = ch
    parts.append((op, expr[start:].strip()))
    return parts


def _chosen(expr: str, env: dict[str, int]) -> str:
    """The text of ``expr`` that the hardware computes: a ternary whose condition is constant
    under ``env`` replaced by the branch taken, both branches of one that is not (joined by
    ``?``: the text is searched for names, not evaluated)."""
    e = _strip(expr)
    t = ternary(e)
    if t is None:
        return e
    value = constant(t[0], env)
    if value is None:
        return f"{_chosen(t[1], env)} ? {_chosen(t[2], env)}"
    return _chosen(t[1] if value else t[2], env)


def _sched(expr: str, env: dict[str, int], ready: dict[str, int], decls: dict[str, str],
           lat: Callable[[str], int], waits: list[tuple[int, int]], skip: str | None = None,
           registers: frozenset[str] | set[str] = frozenset()) -> int | None:
    """The cycle ``expr``'s value is ready (None: a constant, argument, counter or memory read,
    read when needed), appending ``(bits, cycles)`` for each operand that waits for the other
    operand of its operator; ``skip`` is a variable left out (an integer lane sum's own);
    ``registers`` the arrays whose elements are values (:func:`pipe_registers`)."""
    e = _strip(expr)
    t = ternary(e)
    if t is not None:
        value = constant(t[0], env)
        if value is not None:
            return _sched(t[1] if value else t[2], env, ready, decls, lat, waits, skip, registers)
        ts = [x for x in (_sched(b, env, ready, decls, lat, waits, skip, registers) for b in t[1:]) if x is not None]
        return max(ts, default=None)
    for chars in ("+-", "*"):
        parts = _top(e, chars)
        if len(parts) > 1:
            cur = _sched(parts[0][1], env, ready, decls, lat, waits, skip, registers)
            cur_bits = _bits(parts[0][1], decls)
            absorbed = _strip(parts[0][1]) == skip  # the lane sum's own add: its tree's
            for op, operand in parts[1:]:
                if absorbed or _strip(operand) == skip:
                    absorbed = False
                    if _strip(operand) != skip:
                        cur = _sched(operand, env, ready, decls, lat, waits, skip, registers)
                    continue
                nxt = _sched(operand, env, ready, decls, lat, waits, skip, registers)
                if cur is None or nxt is None:
                    cur = nxt if cur is None else cur
                else:
                    if cur < nxt:
                        waits.append((cur_bits, nxt - cur))
                    elif nxt < cur:
                        waits.append((_bits(operand, decls), cur - nxt))
                    cur = max(cur, nxt)
                if cur is not None:
                    cur += lat({"*": "mul", "+": "add", "-": "sub"}[op])
                cur_bits = max(cur_bits, _bits(operand, decls))
            return cur
    if re.fullmatch(r"\w+", e):
        return None if e == skip else ready.get(e)
    if (a := re.fullmatch(r"(\w+)\[(.*)\]", e)) is not None:
        if a.group(1) in registers:
            return ready.get(f"{a.group(1)}[{c_eval(a.group(2), env)}]")
        return None  # a memory read, issued when its value is needed
    names = [n for n in re.findall(r"\b[A-Za-z_]\w*\b", e) if n in ready and n != skip]
    return max((ready[n] for n in names), default=None)  # a call or slice of data values


def _bits(expr: str, decls: dict[str, str]) -> int:
    names = re.findall(r"\b[A-Za-z_]\w*\b", expr)
    widths = [FP_BITS.get(decls.get(n, ""), 0) or INT_BITS.get(decls.get(n, ""), 0) for n in names]
    return max(widths, default=0)


__all__ = ["PipeRegisters", "is_pe", "pipe_registers"]
