"""Reading expressions of printed C++ (the static checks' witnesses): matching brackets,
top-level ternaries, conditions that are constant once known values are substituted, casts,
the widths of the C scalar types the generator prints, an operator's operand type, unrolled
loops and the arrays held in registers."""

from __future__ import annotations

import re

from odyssey.codegen.ii_check import Node, c_eval

FP_BITS = {"float": 32, "double": 64}
INT_BITS = {"int": 32, "unsigned": 32, "unsigned int": 32, "int32_t": 32, "uint32_t": 32, "short": 16,
            "unsigned short": 16, "int16_t": 16, "uint16_t": 16, "char": 8, "signed char": 8,
            "unsigned char": 8, "int8_t": 8, "uint8_t": 8}

#: a C cast of a scalar type, ``(float)``, ``(signed char)``, ``(int16_t)``
CAST = re.compile(r"\((?:float|double|int|short|char|signed char|unsigned \w+|[\w ]+_t)\)")
_ARRAY = re.compile(r"^(?:unsigned |signed )?[A-Za-z_]\w* (\w+)\[(\w+)\];$")
_CYCLIC = re.compile(r"^\s*#pragma HLS ARRAY_PARTITION variable=(\w+) cyclic factor=(\w+) dim=1$", re.I)


def closing(expr: str, k: int) -> int:
    """Index of the bracket closing the one at ``k`` (parentheses and square brackets), -1
    when it is not closed."""
    depth = 0
    for j in range(k, len(expr)):
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(expr[j], 0)
        if depth == 0:
            return j
    return -1


def ternary(expr: str) -> tuple[str, str, str] | None:
    """``(cond, then, orelse)`` of a top-level ``cond ? a : b``."""
    depth, q = 0, -1
    for k, ch in enumerate(expr):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "?" and depth == 0 and q < 0:
            q = k
        elif ch == ":" and depth == 0 and q >= 0:
            return expr[:q].strip(), expr[q + 1:k].strip(), expr[k + 1:].strip()
    return None


def constant(cond: str, env: dict[str, int]) -> bool | None:
    """The value of condition ``cond`` (``true``, ``false``, ``a == b``) under ``env`` (the
    unrolled loops' values, the defines), None where it is not constant."""
    c = cond.strip()
    while c.startswith("(") and closing(c, 0) == len(c) - 1:
        c = c[1:-1].strip()
    if c in ("true", "false"):
        return c == "true"
    m = re.fullmatch(r"(\w+) == (\w+)", c)
    if m is not None:
        try:
            return c_eval(m.group(1), env) == c_eval(m.group(2), env)
        except (KeyError, ValueError):
            return None
    return None


def operand_type(rhs: str, decls: dict[str, str], default: str) -> str:
    """The type a multiply in ``rhs`` works at: the widest of its lane operands ``v_*``
    (``short * short`` is a 16-bit multiply though C promotes it), ``default`` without any."""
    return max((decls[x] for x in re.findall(r"\b(v_\w+)\b", rhs) if x in decls),
               key=lambda t: FP_BITS.get(t) or INT_BITS.get(t, 0), default=default)


def unrolled(loop: Node) -> bool:
    """Whether ``loop`` carries an ``UNROLL`` pragma."""
    return any(c.kind == "line" and c.text.upper().startswith("#PRAGMA HLS UNROLL") for c in loop.body)


def register_arrays(body: tuple[str, ...] | list[str], env: dict[str, int]) -> set[str]:
    """The one-dimensional arrays of a function body whose cyclic partition leaves one element
    per bank (``T x[N];`` and ``ARRAY_PARTITION variable=x cyclic factor=F dim=1``, ``F >=
    N``): registers, not memories."""
    sizes, factors = {}, {}
    for line in body:
        if (m := _ARRAY.match(line.strip())) is not None:
            sizes[m.group(1)] = c_eval(m.group(2), env)
        elif (m := _CYCLIC.match(line)) is not None:
            factors[m.group(1)] = c_eval(m.group(2), env)
    return {a for a, n in sizes.items() if factors.get(a, 0) >= n}


__all__ = ["CAST", "FP_BITS", "INT_BITS", "closing", "constant", "operand_type", "register_arrays", "ternary",
           "unrolled"]
