"""Tree walks over expressions: symbols, rebuilding, substitution and point evaluation."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import TypeAlias

from odyssey.errors import ModelError
from odyssey.expr.core import (
    _REBUILD,
    _SCALAR_OPS,
    Const,
    Expr,
    ExprLike,
    Number,
    Pow,
    Sym,
    Where,
    _as_expr,
    epow,
    to_str,
)


def free_symbols(e: Expr) -> frozenset[str]:
    """Names of the symbols in ``e``."""
    seen: set[Expr] = set()
    names: set[str] = set()
    stack = [e]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if isinstance(n, Sym):
            names.add(n.name)
        stack.extend(n.children())
    return frozenset(names)


#: ``fn(node, rec)`` of :func:`map_expr`: the node's replacement, or None for the default.
MapFn: TypeAlias = Callable[[Expr, Callable[[Expr], Expr]], "Expr | None"]


def map_expr(e: Expr, fn: MapFn, *, memo: dict[Expr, Expr] | None = None) -> Expr:
    """``e`` rebuilt bottom-up through ``fn``, each distinct subtree mapped once.

    For every node ``n`` reached, ``fn(n, rec)`` returns the node's replacement or
    None. ``rec`` maps a sub-expression the same way (memoised), so ``fn`` chooses
    which children it maps: ``lambda n, rec: emax(rec(n.a), rec(n.b)) if
    isinstance(n, Where) else None`` never visits a condition. On None a leaf
    (``Sym``, ``Const``) is kept and any other node is rebuilt from its mapped
    children with the simplifying constructor of its type (``add``, ``mul``,
    ``ceil_div``, ``epow``, ``where``, ``le``, ...). Passing one ``memo``
    (node -> result) to several calls with the same ``fn`` maps the subtrees that
    expressions share only once.
    """
    return _Mapper(fn, {} if memo is None else memo)(e)


class _Mapper:
    """The recursion of :func:`map_expr`: a callable object rather than a nested function
    that calls itself. Such a function holds itself through its closure cell, a reference
    cycle: its memo and every node it mapped then waited for the cyclic garbage collector
    (about 23,000 objects per model build, most of the collector's work in a tuning run)
    instead of being freed when the call returns."""

    __slots__ = ("fn", "seen")

    def __init__(self, fn: MapFn, seen: dict[Expr, Expr]) -> None:
        self.fn = fn
        self.seen = seen

    def __call__(self, n: Expr) -> Expr:
        out = self.seen.get(n)
        if out is None:
            out = self.fn(n, self)
            if out is None:
                if isinstance(n, Pow):
                    out = epow(self(n.base), n.exp)
                elif isinstance(n, Sym | Const):
                    out = n
                else:
                    out = _REBUILD[type(n)](*(self(c) for c in n.children()))
            self.seen[n] = out
        return out


def substitute(e: Expr, mapping: Mapping[str, ExprLike]) -> Expr:
    """Replace symbols by expressions or numbers, re-simplifying the result.

    ``substitute(ceil_div(I, T), {"I": 1024, "T": 128}) == Const(8)``.
    """
    repl = {k: _as_expr(v) for k, v in mapping.items()}
    return map_expr(e, lambda n, _: repl.get(n.name, n) if isinstance(n, Sym) else None)


def _scalar(e: Expr, env: Mapping[str, Number], memo: dict[Expr, Number]) -> Number:
    if e in memo:
        return memo[e]
    if isinstance(e, Const):
        v: Number = e.value
    elif isinstance(e, Sym):
        if e.name not in env:
            raise ModelError(f"no value for symbol {e.name!r}; pass it in the environment")
        x = env[e.name]
        v = x if type(x) is int else int(x) if isinstance(x, numbers.Integral) else float(x)
    elif isinstance(e, Where):  # lazy: the branch not taken may be undefined
        v = _scalar(e.a if _scalar(e.cond, env, memo) != 0 else e.b, env, memo)
    else:
        args = [_scalar(c, env, memo) for c in e.children()]
        try:
            v = args[0] ** e.exp if isinstance(e, Pow) else _SCALAR_OPS[type(e)](*args)
        except ZeroDivisionError as exc:
            raise ModelError(f"division by zero evaluating {to_str(e)}") from exc
        except (ValueError, OverflowError) as exc:
            raise ModelError(f"cannot evaluate {to_str(e)}: {exc}") from exc
    memo[e] = v
    return v


def evaluate(e: Expr, env: Mapping[str, Number]) -> float:
    """Value of ``e`` with symbols bound by ``env``; integer parts are computed exactly."""
    return float(_scalar(e, env, {}))


