"""The initiation interval each pipelined loop of printed C++ can reach, computed from the code.

For every loop carrying ``#pragma HLS PIPELINE II=n`` (UG1399, "pragma HLS pipeline"):

* **memory ports**: every array access of one iteration (unrolled loops expanded) is mapped to
  its bank through the ``ARRAY_PARTITION`` pragmas that apply to the array (cyclic: the bank
  of index ``x`` along a partitioned dimension is ``x mod factor``); a bank is a BRAM with two
  ports (UG573, true dual port), so ``II >= ceil(accesses of the busiest bank / 2)``; a bank of
  one element is a register (no limit); an m_axi pointer moves one word per cycle;
* **recurrences**: an array read and written in the same iteration through the reduction
  operator forms a loop-carried dependence. Its distance ``D`` (iterations between two
  accesses of one address) is found by walking the flattened loop nest (perfect nests of
  constant-bound loops are flattened, UG1399 "pragma HLS loop_flatten"). Vitis schedules with
  the distance of a ``DEPENDENCE variable=X type=inter dependent=true distance=d`` pragma (an
  error when ``d > D``: it would trust a wrong distance); without one, the distance is taken
  as 1 (Vitis's conservative assumption when it cannot prove more). ``II >= ceil(L / d)``
  with ``L`` the operator's latency from the platform's operator table.

The bound is the largest of 1 and these; Vitis schedules the declared II when the bound allows
it, else the bound (the computed II). Nothing here reads the generator's data.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

#: ports of one BRAM bank (RAMB18E2/RAMB36E2 true dual port, UG573)
BRAM_PORTS = 2
#: iterations walked to find a recurrence distance; a longer period counts as no recurrence
MAX_WALK = 400_000

_FOR = re.compile(r"^\s*(?:\w+: )?for \(int (\w+) = 0; \1 < (.+); \1\+\+\) \{$")
_IF = re.compile(r"^\s*if \((.*)\) \{$")
_ELSE = re.compile(r"^\s*\} else \{$")
_ACCESS = re.compile(r"\b(\w+)((?:\[[^\[\]]*\])+)")
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


@dataclass
class Node:
    """A statement line, or a block (``for``, ``if`` with ``then``/``orelse``, ``{}`` scope)."""

    kind: str  # "line", "for", "if", "scope"
    text: str = ""
    var: str = ""
    trip: str = ""
    body: list[Node] = field(default_factory=list)
    orelse: list[Node] = field(default_factory=list)


def parse_body(lines: tuple[str, ...] | list[str]) -> list[Node]:
    """The statement tree of a printed function body (one statement or brace per line)."""
    root: list[Node] = []
    stack: list[tuple[Node | None, list[Node]]] = [(None, root)]
    for line in lines:
        s = line.strip()
        cur = stack[-1][1]
        if (m := _FOR.match(line)) is not None:
            node = Node("for", line, m.group(1), m.group(2))
            cur.append(node)
            stack.append((node, node.body))
        elif _ELSE.match(line):
            owner = stack.pop()[0]
            assert owner is not None and owner.kind == "if"
            stack.append((owner, owner.orelse))
        elif (m := _IF.match(line)) is not None:
            node = Node("if", m.group(1))
            cur.append(node)
            stack.append((node, node.body))
        elif s == "{":
            node = Node("scope")
            cur.append(node)
            stack.append((node, node.body))
        elif s == "}":
            stack.pop()
        elif s:
            cur.append(Node("line", s))
    return root


def c_compile(expr: str, env: Mapping[str, int], free: tuple[str, ...] = ()) -> Callable[..., int]:
    """An integer C expression of printed code as a Python function of the names ``free``
    (every other name takes its value in ``env``; ``/`` is integer division)."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(0)
        if name in free:
            return name
        if name not in env:
            raise KeyError(name)
        return f"({env[name]})"

    text = _IDENT.sub(sub, expr).replace("/", "//")
    if not re.fullmatch(r"[0-9+\-*/%() ]*", _IDENT.sub("0", text)):
        raise ValueError(expr)
    fn: Callable[..., int] = eval(f"lambda {', '.join(free)}: {text}", {"__builtins__": {}}, {})  # noqa: S307
    return fn


def c_eval(expr: str, env: Mapping[str, int]) -> int:
    """Value of an integer C expression of printed code (``/`` is integer division)."""
    return int(c_compile(expr, env)())


@dataclass(frozen=True, slots=True)
class Memory:
    """What an array name in a function refers to, for the port count."""

    dims: tuple[int, ...]
    partitions: tuple[tuple[int, int], ...]  # (dim 1-based, cyclic factor)
    kind: str  # "bram" or "axi"
    elem: str = ""


@dataclass(frozen=True, slots=True)
class LoopII:
    function: str
    loop: str  # the pipelined loop's variable
    declared_ii: int
    bound_ii: int  # the smallest II the ports and recurrences allow
    memory_ii: int
    recurrence_ii: int
    has_recurrence: bool
    reason: str
    dependence_error: str | None = None

    @property
    def computed_ii(self) -> int:
        """The II Vitis schedules: the declared target, unless ports or recurrences forbid it."""
        return max(self.declared_ii, self.bound_ii)

    def as_json(self) -> dict[str, object]:
        return {"module": self.function, "loop": self.loop, "declared_ii": self.declared_ii,
                "computed_ii": self.computed_ii, "bound_ii": self.bound_ii, "memory_ii": self.memory_ii,
                "recurrence_ii": self.recurrence_ii, "reason": self.reason}


def pipelined_loops(tree: list[Node]) -> list[tuple[list[Node], Node]]:
    """Every loop with a ``PIPELINE`` pragma, with its enclosing loops (outer first)."""
    out: list[tuple[list[Node], Node]] = []

    def walk(nodes: list[Node], outer: list[Node]) -> None:
        for n in nodes:
            if n.kind == "for":
                if any(c.kind == "line" and re.match(r"#pragma HLS PIPELINE", c.text, re.I) for c in n.body):
                    out.append((outer, n))
                    continue
                walk(n.body, [*outer, n])
            elif n.kind in ("if", "scope"):
                walk(n.body, outer)
                walk(n.orelse, outer)

    walk(tree, [])
    return out


def flattened(outer: list[Node], loop: Node) -> list[Node]:
    """The perfect nest ending at ``loop`` that HLS flattens into one pipeline: enclosing
    loops whose body is only the next loop (pragmas and timing hooks aside)."""
    nest = [loop]
    for parent in reversed(outer):
        real = [c for c in parent.body if not (c.kind == "line" and (c.text.startswith("#pragma")
                                                                      or c.text.startswith("ODYSSEY_")))]
        if len(real) == 1 and real[0] is nest[0]:
            nest.insert(0, parent)
        else:
            break
    return nest


def _accesses(nodes: list[Node], env: dict[str, int], memories: Mapping[str, Memory]) -> list[dict[tuple[str, tuple[int, ...]], int]]:
    """Alternatives (exclusive branches multiply) of per-bank access counts of one iteration."""
    alts: list[dict[tuple[str, tuple[int, ...]], int]] = [{}]
    for n in nodes:
        if n.kind == "line":
            if n.text.startswith("#pragma"):
                continue
            counts: dict[tuple[str, tuple[int, ...]], int] = {}
            for m in _ACCESS.finditer(n.text):
                name = m.group(1)
                mem = memories.get(name)
                if mem is None:
                    continue
                idx = re.findall(r"\[([^\[\]]*)\]", m.group(2))
                counts[(name, _bank(mem, idx, env))] = counts.get((name, _bank(mem, idx, env)), 0) + 1
            alts = [_add(a, counts) for a in alts]
        elif n.kind == "for":  # an unrolled loop inside the pipeline: every lane at once
            trip = c_eval(n.trip, env)
            for lane in range(trip):
                sub = _accesses(n.body, {**env, n.var: lane}, memories)
                alts = [_add(a, b) for a in alts for b in sub]
        elif n.kind == "if":
            alts = [_add(a, b) for a in alts for b in (_accesses(n.body, env, memories)
                                                         + (_accesses(n.orelse, env, memories) if n.orelse else [{}]))]
        elif n.kind == "scope":
            sub = _accesses(n.body, env, memories)
            alts = [_add(a, b) for a in alts for b in sub]
        if len(alts) > 64:  # keep the busiest alternatives only
            alts = sorted(alts, key=lambda a: -max(a.values(), default=0))[:64]
    return alts


def _add(a: dict[tuple[str, tuple[int, ...]], int], b: dict[tuple[str, tuple[int, ...]], int]) -> dict[tuple[str, tuple[int, ...]], int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def _bank(mem: Memory, idx: list[str], env: Mapping[str, int]) -> tuple[int, ...]:
    if mem.kind == "axi":
        return ()
    parts = dict(mem.partitions)
    bank = []
    for d, text in enumerate(idx, start=1):
        if d in parts:
            bank.append(c_eval(text, env) % parts[d])
    return tuple(bank)


def _bank_ports(mem: Memory) -> float:
    if mem.kind == "axi":
        return 1
    depth = 1
    parts = dict(mem.partitions)
    for d, ext in enumerate(mem.dims, start=1):
        depth *= math.ceil(ext / parts[d]) if d in parts else ext
    return math.inf if depth <= 1 else BRAM_PORTS


def loop_ii(function: str, outer: list[Node], loop: Node, env: dict[str, int],
            memories: Mapping[str, Memory], dependences: Mapping[str, int],
            latency_of: Mapping[str, int]) -> LoopII:
    """The II ``loop`` can reach (see the module docstring)."""
    pragma = next(c.text for c in loop.body if c.kind == "line" and re.match(r"#pragma HLS PIPELINE", c.text, re.I))
    found = re.search(r"II=(\d+)", pragma)
    declared = int(found.group(1)) if found is not None else 1
    nest = flattened(outer, loop)
    base = dict(env)
    for n in nest:
        base[n.var] = 0
    mem_ii, worst = 1, ""
    for alt in _accesses(loop.body, base, memories):
        for (name, _b), count in alt.items():
            need = math.ceil(count / _bank_ports(memories[name])) if _bank_ports(memories[name]) != math.inf else 1
            if need > mem_ii:
                mem_ii, worst = need, f"{count} accesses of one bank of `{name}` per iteration"
    rec_ii, rec_reason, dep_error = 1, "", None
    recurrent = _recurrent_arrays(loop.body, memories)
    for name in recurrent:
        lat = latency_of.get(memories[name].elem, 1)
        true_d = _distance(nest, env, loop.body, name)
        # without a DEPENDENCE pragma, assume Vitis's conservative distance of 1 whenever an
        # address repeats: its analysis is not documented to resolve distances across
        # flattened loops
        d = dependences.get(name, 1 if true_d is not None else None)
        if name in dependences and true_d is not None and dependences[name] > true_d:
            dep_error = (f"DEPENDENCE on `{name}` claims distance {dependences[name]}, the code's is {true_d}")
        if d is None:
            continue
        need = math.ceil(lat / d)
        if need > rec_ii:
            rec_ii, rec_reason = need, f"`{name}` is re-read {d} iteration(s) after it is written, adder latency {lat}"
    bound = max(1, mem_ii, rec_ii)
    reason = worst if mem_ii >= rec_ii and mem_ii > 1 else (rec_reason if rec_ii > 1 else "")
    return LoopII(function, loop.var, declared, bound, mem_ii, rec_ii, bool(recurrent), reason, dep_error)


def _lines(nodes: list[Node]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        if n.kind == "line":
            out.append(n.text)
        out.extend(_lines(n.body))
        out.extend(_lines(n.orelse))
    return out


def _recurrent_arrays(body: list[Node], memories: Mapping[str, Memory]) -> list[str]:
    """Arrays (not DRAM ports) read and written in one iteration, through an operator; not
    an array declared in the loop's body (a new one each iteration: nothing carries over)."""
    written, read, local = set(), set(), set()
    for text in _lines(body):
        if text.startswith("#pragma"):
            continue
        if (decl := re.match(r"^(?:unsigned |signed )?[A-Za-z_]\w* (\w+)\[[^=]*\];$", text)) is not None:
            local.add(decl.group(1))
            continue
        lhs = re.match(r"^(\w+)\[", text)
        if lhs is not None and "=" in text:
            written.add(lhs.group(1))
            rhs = text.split("=", 1)[1]
        else:
            rhs = text
        for m in _ACCESS.finditer(rhs):
            read.add(m.group(1))
    return sorted(n for n in (written & read) - local if n in memories and memories[n].kind == "bram")


def _distance(nest: list[Node], env: Mapping[str, int], body: list[Node], name: str) -> int | None:
    """Iterations between two accesses of one address of ``name`` in the flattened nest (the
    write's index), or None when no address repeats within :data:`MAX_WALK` iterations."""
    index = None
    for text in _lines(body):
        m = re.match(rf"^{name}((?:\[[^\[\]]*\])+) =", text)
        if m is not None:
            index = re.findall(r"\[([^\[\]]*)\]", m.group(1))
            break
    if index is None:
        return None
    trips = [c_eval(n.trip, env) for n in nest]
    total = math.prod(trips)
    if total <= 1:
        return None
    free = tuple(n.var for n in nest)
    fns = [c_compile(x, env, free) for x in index]
    last: dict[tuple[int, ...], int] = {}
    best: int | None = None
    values = [0] * len(nest)
    limit = min(total, MAX_WALK)
    it = 0
    while it < limit:
        addr = tuple(f(*values) for f in fns)
        if addr in last:
            d = it - last[addr]
            if best is None or d < best:
                best = d
                limit = min(limit, it + 4 * d)  # the pattern repeats: a few periods suffice
        last[addr] = it
        for k in reversed(range(len(nest))):  # odometer: innermost loop fastest
            values[k] += 1
            if values[k] < trips[k]:
                break
            values[k] = 0
        it += 1
    return best
