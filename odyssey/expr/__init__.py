"""Symbolic expressions for performance models.

Latency and resource models are trees of immutable nodes over *symbols* (tuning
parameters such as ``T_i1`` and problem sizes such as ``I``), never generated
source. The same tree is evaluated at one point (:func:`evaluate`), rewritten by a
memoised bottom-up map (:func:`map_expr`, :func:`substitute`), compiled in
memory to a vectorized numpy evaluator (:func:`compile_vectorized`), printed for
humans (:func:`to_str`) and for HLS C (:func:`to_c`), stored in descriptor files
(:func:`to_json` / :func:`from_json`) and translated to Pyomo (:func:`to_pyomo`).

Semantics (``a``, ``b`` numbers; symbols are integer-valued by contract):

============================  ===================================================
node                          value
============================  ===================================================
``Add(t...)``                 ``t0 + t1 + ...``
``Mul(f...)``                 ``f0 * f1 * ...``
``Div(a, b)``                 real division ``a / b``
``FloorDiv(a, b)``            ``floor(a / b)``; exact on integers (``a // b``)
``CeilDiv(a, b)``             ``ceil(a / b)``; exact on integers (``-(-a // b)``)
``Ceil(x)``, ``Floor(x)``     ``ceil(x)``, ``floor(x)``
``Max(x...)``, ``Min(x...)``  maximum / minimum of the arguments
``Pow(x, k)``                 ``x ** k`` for an integer ``k`` (``>= 2`` when built
                              by :func:`epow`)
``Log2(x)``                   ``log2(x)``, real
``Where(c, a, b)``            ``a`` if ``c != 0`` else ``b``
``Le``, ``Lt``, ``Eq``        ``1`` if ``a <= b`` / ``a < b`` / ``a == b`` else ``0``
============================  ===================================================

Node constructors build exactly what they are given. The operators on
:class:`Expr` and the lowercase constructors (:func:`add`, :func:`ceil_div`,
:func:`emax`, ...) simplify lightly: constant folding, flattening of nested
sums/products/max/min, ``x + 0``, ``x * 1``, ``x * 0``, ``x - x``, collecting
equal terms (``x + x -> 2*x``) and factors (``x * x -> x**2``),
``ceil(a / b) -> ceil_div(a, b)``, and ``ceil_div(x, 1) -> x`` /
``ceil(x) -> x`` when ``x`` is integer-valued. Denominators are assumed
non-zero.

Each model is a tree of frozen, hashable nodes (:mod:`.core`); tree walks live
in :mod:`.evaluate`, C printing in :mod:`.printing`, the JSON codec in
:mod:`.serialize`, numpy compilation in :mod:`.vectorize` and the Pyomo
translation in :mod:`.pyomo_bridge` (Pyomo is imported only when
:func:`to_pyomo` is called).
"""

from __future__ import annotations

from odyssey.expr.core import (
    Add,
    Ceil,
    CeilDiv,
    Const,
    Div,
    Eq,
    Expr,
    ExprLike,
    Floor,
    FloorDiv,
    Le,
    Log2,
    Lt,
    Max,
    Min,
    Mul,
    Number,
    Pow,
    Sym,
    Where,
    add,
    ceil_div,
    const,
    div,
    eceil,
    efloor,
    elog2,
    emax,
    emin,
    epow,
    eq,
    floor_div,
    is_integer_valued,
    le,
    lt,
    mul,
    sym,
    to_str,
    where,
)
from odyssey.expr.evaluate import MapFn, evaluate, free_symbols, map_expr, substitute
from odyssey.expr.printing import to_c
from odyssey.expr.pyomo_bridge import to_pyomo
from odyssey.expr.serialize import from_json, to_json
from odyssey.expr.vectorize import compile_vectorized

__all__ = [
    "Add", "Ceil", "CeilDiv", "Const", "Div", "Eq", "Expr", "ExprLike", "Floor", "FloorDiv",
    "Le", "Log2", "Lt", "MapFn", "Max", "Min", "Mul", "Number", "Pow", "Sym", "Where",
    "add", "ceil_div", "compile_vectorized", "const", "div", "eceil", "efloor", "elog2",
    "emax", "emin", "epow", "eq", "evaluate", "floor_div", "free_symbols", "from_json",
    "is_integer_valued", "le", "lt", "map_expr", "mul", "substitute", "sym", "to_c", "to_json",
    "to_pyomo", "to_str", "where",
]
