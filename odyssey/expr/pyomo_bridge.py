"""Translation of expressions to Pyomo (imported lazily, inside :func:`to_pyomo`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from odyssey.errors import ModelError
from odyssey.expr.core import (
    Add,
    Ceil,
    CeilDiv,
    Const,
    Div,
    Eq,
    Expr,
    Floor,
    FloorDiv,
    Le,
    Log2,
    Lt,
    Max,
    Min,
    Mul,
    Pow,
    Sym,
    Where,
)


def to_pyomo(e: Expr, var_map: Mapping[str, Any], *, smooth_eps: float = 1e-6) -> Any:
    """Translate ``e`` into a Pyomo expression over the components in ``var_map``.

    Relaxations for smooth solvers: ``CeilDiv``/``FloorDiv`` become real
    division and ``Ceil``/``Floor`` the identity. ``Max(a, b)`` becomes
    ``0.5*(a + b + sqrt((a - b)**2 + eps))`` and ``Min`` the same with ``-sqrt``,
    folded pairwise; the result over-/under-estimates by at most
    ``sqrt(eps)/2`` per pair (5e-4 for the default ``eps = 1e-6``). ``Where``
    maps to ``Expr_if`` (not smooth; casadi's NL import rejects it), comparisons
    to Pyomo relational expressions, only valid as a ``Where`` condition.
    Pyomo is imported here, not when this module is imported.
    """
    import pyomo.environ as pyo
    from pyomo.core.expr import Expr_if

    memo: dict[Expr, Any] = {}

    def smooth(a: Any, b: Any, sign: int) -> Any:
        return 0.5 * (a + b + sign * pyo.sqrt((a - b) ** 2 + smooth_eps))

    def go(n: Expr) -> Any:
        if n in memo:
            return memo[n]
        match n:
            case Const(value=v):
                out: Any = v
            case Sym(name=name):
                if name not in var_map:
                    raise ModelError(f"to_pyomo: no Pyomo component for symbol {name!r}")
                out = var_map[name]
            case Pow(base=b, exp=k):
                out = go(b) ** k
            case Where(cond=c, a=a, b=b):
                out = Expr_if(IF=go(c), THEN=go(a), ELSE=go(b))
            case _:
                xs = [go(c) for c in n.children()]
                match n:
                    case Add():
                        out = sum(xs[1:], start=xs[0])
                    case Mul():
                        out = math.prod(xs[1:], start=xs[0])
                    case Div() | CeilDiv() | FloorDiv():
                        out = xs[0] / xs[1]
                    case Ceil() | Floor():
                        out = xs[0]
                    case Log2():
                        out = pyo.log(xs[0]) / math.log(2.0)
                    case Max() | Min():
                        out = xs[0]
                        for x in xs[1:]:
                            out = smooth(out, x, 1 if isinstance(n, Max) else -1)
                    case Le():
                        out = xs[0] <= xs[1]
                    case Lt():
                        out = xs[0] < xs[1]
                    case Eq():
                        out = xs[0] == xs[1]
                    case _:
                        raise ModelError(f"to_pyomo: unsupported node {type(n).__name__}")
        memo[n] = out
        return out

    return go(e)
