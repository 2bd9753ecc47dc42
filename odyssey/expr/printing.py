"""C printing of expressions for generated HLS code."""

from __future__ import annotations

from odyssey.errors import ModelError
from odyssey.expr.core import (
    _CMP_SYMBOLS,
    _FUNC_NAMES,
    Add,
    Ceil,
    CeilDiv,
    Const,
    Div,
    Expr,
    Floor,
    FloorDiv,
    Log2,
    Max,
    Min,
    Mul,
    Pow,
    Sym,
    Where,
    _Cmp,
    _num,
)


def to_c(e: Expr) -> str:
    """A C expression, fully parenthesised.

    Integer division assumes non-negative operands: ``FloorDiv(a, b)`` prints
    ``(a / b)`` and ``CeilDiv(a, b)`` prints ``((a + b - 1) / b)``. ``Div``
    casts to ``double``; ``Ceil``/``Floor``/``Log2`` call ``<math.h>``; ``Max``
    and ``Min`` print ternaries (operands are repeated, they are side-effect free);
    ``Pow`` prints repeated multiplication.
    """
    match e:
        case Const(value=v):
            return _num(v) if v >= 0 else f"({_num(v)})"
        case Sym(name=n):
            return n
        case Add(terms=ts):
            return "(" + " + ".join(to_c(t) for t in ts) + ")"
        case Mul(factors=fs):
            return "(" + " * ".join(to_c(f) for f in fs) + ")"
        case Div(num=a, den=b):
            return f"((double){to_c(a)} / {to_c(b)})"
        case FloorDiv(num=a, den=b):
            return f"({to_c(a)} / {to_c(b)})"
        case CeilDiv(num=a, den=b):
            den = to_c(b)
            return f"(({to_c(a)} + {den} - 1) / {den})"
        case Ceil(arg=x) | Floor(arg=x) | Log2(arg=x):
            return f"{_FUNC_NAMES[type(e)]}((double){to_c(x)})"
        case Max(args=xs) | Min(args=xs):
            cmp = ">" if isinstance(e, Max) else "<"
            out = to_c(xs[0])
            for x in xs[1:]:
                y = to_c(x)
                out = f"({out} {cmp} {y} ? {out} : {y})"
            return out
        case Pow(base=b, exp=k):
            if k == 0:
                return "1"
            prod = "(" + " * ".join([to_c(b)] * abs(k)) + ")"
            return prod if k > 0 else f"(1.0 / {prod})"
        case Where(cond=c, a=a, b=b):
            return f"({to_c(c)} ? {to_c(a)} : {to_c(b)})"
        case _Cmp(lhs=a, rhs=b):
            return f"({to_c(a)} {_CMP_SYMBOLS[type(e)]} {to_c(b)})"
    raise ModelError(f"to_c: unsupported node {type(e).__name__}")


