"""JSON round trip of expressions (descriptor files store models this way)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeAlias

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

JSONValue: TypeAlias = "dict[str, Any] | list[Any] | int | float | str"
_KINDS: tuple[type[Expr], ...] = (
    Add, Mul, Div, FloorDiv, CeilDiv, Ceil, Floor, Log2, Max, Min, Pow, Where, Le, Lt, Eq
)
_BY_OP: dict[str, Callable[..., Expr]] = {k.op: k for k in _KINDS}
# Fixed arity per op; the others (add, mul, max, min) take one or more arguments.
_ARITY: dict[str, int] = {
    "div": 2, "floor_div": 2, "ceil_div": 2, "ceil": 1, "floor": 1, "log2": 1, "where": 3,
    "le": 2, "lt": 2, "eq": 2,
}


def to_json(e: Expr) -> JSONValue:
    """JSON-ready form: a number, a symbol name, ``["op", arg, ...]`` for other
    nodes (``["pow", base, k]``), and ``{"const": "inf"}`` for non-finite constants."""
    if isinstance(e, Const):
        return e.value if math.isfinite(e.value) else {"const": str(e.value)}
    if isinstance(e, Sym):
        return e.name
    if isinstance(e, Pow):
        return ["pow", to_json(e.base), e.exp]
    return [e.op, *(to_json(c) for c in e.children())]


def from_json(obj: Any) -> Expr:
    """Inverse of :func:`to_json`; builds the nodes exactly as stored.

    Raises ModelError naming the JSON path of the first malformed element.
    """
    try:
        return _read(obj, {})
    except (_Malformed, TypeError, ModelError):
        pass
    return _checked(obj)  # raises the error, with the element's JSON path


class _Malformed(Exception):
    """A malformed element met by :func:`_read` (its message comes from :func:`_checked`)."""


def _read(obj: Any, leaves: dict[tuple[type, Any], Expr]) -> Expr:
    """:func:`from_json` without the paths a message needs (a model's descriptor holds about
    10,000 nodes per design); a symbol or constant met again is the node built before
    (``leaves``, keyed by type: ``2`` and ``2.0`` are different constants)."""
    t = type(obj)
    if t is str or t is int or t is float:
        leaf = leaves.get((t, obj))
        if leaf is None:
            leaf = leaves[t, obj] = Sym(obj) if t is str else Const(obj)
        return leaf
    if t is dict:
        return _checked(obj)  # a non-finite constant
    if t is not list or not obj:
        raise _Malformed
    op = obj[0]
    if op == "pow":
        if len(obj) != 3 or type(obj[2]) is not int:
            raise _Malformed
        return Pow(_read(obj[1], leaves), obj[2])
    kind = _BY_OP.get(op) if type(op) is str else None
    want = _ARITY.get(op) if type(op) is str else None
    if kind is None or len(obj) < 2 or (want is not None and len(obj) != want + 1):
        raise _Malformed
    args = tuple([_read(a, leaves) for a in obj[1:]])
    return kind(args) if want is None else kind(*args)


def _checked(obj: Any, _path: str = "$") -> Expr:
    """:func:`from_json` one element at a time, naming the path of the first malformed one."""
    if isinstance(obj, bool):
        raise ModelError(f"expression {_path}: booleans are not expressions, got {obj!r}")
    if isinstance(obj, int | float):
        return Const(obj)
    if isinstance(obj, str):
        return Sym(obj)
    if isinstance(obj, dict):
        if set(obj) == {"const"} and obj["const"] in ("inf", "-inf"):
            return Const(float(obj["const"]))
        raise ModelError(f'expression {_path}: expected {{"const": "inf"|"-inf"}}, got {obj!r}')
    if not isinstance(obj, list) or not obj or obj[0] not in _BY_OP:
        raise ModelError(
            f"expression {_path}: expected a number, a symbol name or [op, args...] with op in "
            f"{sorted(_BY_OP)}, got {obj!r}"
        )
    op, raw = obj[0], obj[1:]
    if op == "pow":
        if len(raw) != 2 or isinstance(raw[1], bool) or not isinstance(raw[1], int):
            raise ModelError(f"expression {_path}: expected ['pow', base, integer], got {obj!r}")
        return Pow(_checked(raw[0], f"{_path}[1]"), raw[1])
    want = _ARITY.get(op)
    if (want is not None and len(raw) != want) or not raw:
        raise ModelError(
            f"expression {_path}: {op!r} takes {want or 'at least 1'} argument(s), got {len(raw)}"
        )
    args = tuple(_checked(a, f"{_path}[{i + 1}]") for i, a in enumerate(raw))
    return _BY_OP[op](args) if want is None else _BY_OP[op](*args)


