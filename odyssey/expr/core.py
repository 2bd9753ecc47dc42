"""Expression nodes, simplifying constructors and the human-readable printer.

The node semantics are tabulated in :mod:`odyssey.expr`. Node classes
build exactly what they are given; the operators on :class:`Expr` and the
lowercase constructors (:func:`add`, :func:`ceil_div`, :func:`emax`, ...)
simplify lightly and correctly (denominators are assumed non-zero, symbols
integer-valued).
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from odyssey.errors import ModelError

Number: TypeAlias = int | float
ExprLike: TypeAlias = "Expr | int | float"


# --------------------------------------------------------------------------- nodes


class Expr:
    """Base of every node: immutable, hashable, compared structurally by ``==``.

    Arithmetic operators build simplified trees; ``//`` is floor division.
    Comparisons are methods (``x.le(y)``) because ``==`` stays structural.
    """

    __slots__ = ("_h", "_k")
    __match_args__: ClassVar[tuple[str, ...]] = ()
    op: ClassVar[str] = ""
    _h: int
    _k: tuple[Any, ...]  # the structural key, kept: ``==`` compares it

    def __post_init__(self) -> None:
        k = self._key()
        object.__setattr__(self, "_k", k)
        object.__setattr__(self, "_h", hash((type(self), k)))

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, n) for n in self.__match_args__)

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt through the constructor, which sets the cached hash and key (pickle would
        # otherwise restore the dataclass fields only)
        return (type(self), tuple(getattr(self, n) for n in self.__match_args__))

    def children(self) -> tuple[Expr, ...]:
        """The direct sub-expressions, in order."""
        return ()

    def __hash__(self) -> int:
        return self._h

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Expr):
            return NotImplemented
        return type(self) is type(other) and self._h == other._h and self._k == other._k

    def __str__(self) -> str:
        return to_str(self)

    def __add__(self, o: ExprLike) -> Expr:
        return add(self, o)

    def __radd__(self, o: ExprLike) -> Expr:
        return add(o, self)

    def __sub__(self, o: ExprLike) -> Expr:
        return add(self, mul(-1, o))

    def __rsub__(self, o: ExprLike) -> Expr:
        return add(o, mul(-1, self))

    def __mul__(self, o: ExprLike) -> Expr:
        return mul(self, o)

    def __rmul__(self, o: ExprLike) -> Expr:
        return mul(o, self)

    def __truediv__(self, o: ExprLike) -> Expr:
        return div(self, o)

    def __rtruediv__(self, o: ExprLike) -> Expr:
        return div(o, self)

    def __floordiv__(self, o: ExprLike) -> Expr:
        return floor_div(self, o)

    def __rfloordiv__(self, o: ExprLike) -> Expr:
        return floor_div(o, self)

    def __neg__(self) -> Expr:
        return mul(-1, self)

    def __pos__(self) -> Expr:
        return self

    def __pow__(self, k: int) -> Expr:
        return epow(self, k)

    def le(self, o: ExprLike) -> Expr:
        """``self <= o`` as a 0/1 expression."""
        return le(self, o)

    def lt(self, o: ExprLike) -> Expr:
        """``self < o`` as a 0/1 expression."""
        return lt(self, o)

    def ge(self, o: ExprLike) -> Expr:
        """``self >= o`` as a 0/1 expression."""
        return le(o, self)

    def gt(self, o: ExprLike) -> Expr:
        """``self > o`` as a 0/1 expression."""
        return lt(o, self)

    def eq(self, o: ExprLike) -> Expr:
        """``self == o`` (numerically) as a 0/1 expression."""
        return eq(self, o)


@dataclass(frozen=True, slots=True, eq=False)
class Const(Expr):
    """A numeric constant; ``Const(2)`` and ``Const(2.0)`` are different nodes."""

    value: Number
    op: ClassVar[str] = "const"

    def __post_init__(self) -> None:
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ModelError(f"Const value must be an int or float, got {v!r}")
        if isinstance(v, float) and math.isnan(v):
            raise ModelError("Const value must not be NaN")
        Expr.__post_init__(self)

    def _key(self) -> tuple[Any, ...]:
        return (type(self.value), self.value)


@dataclass(frozen=True, slots=True, eq=False)
class Sym(Expr):
    """A named integer-valued symbol: a tuning parameter or a problem size."""

    name: str
    op: ClassVar[str] = "sym"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ModelError(f"Sym name must be a non-empty string, got {self.name!r}")
        Expr.__post_init__(self)


@dataclass(frozen=True, slots=True, eq=False)
class Add(Expr):
    """Sum of ``terms``."""

    terms: tuple[Expr, ...]
    op: ClassVar[str] = "add"

    def children(self) -> tuple[Expr, ...]:
        return self.terms


@dataclass(frozen=True, slots=True, eq=False)
class Mul(Expr):
    """Product of ``factors``."""

    factors: tuple[Expr, ...]
    op: ClassVar[str] = "mul"

    def children(self) -> tuple[Expr, ...]:
        return self.factors


@dataclass(frozen=True, slots=True, eq=False)
class _Frac(Expr):
    num: Expr
    den: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.num, self.den)


@dataclass(frozen=True, slots=True, eq=False)
class Div(_Frac):
    """Real division ``num / den``."""

    op: ClassVar[str] = "div"


@dataclass(frozen=True, slots=True, eq=False)
class FloorDiv(_Frac):
    """``floor(num / den)``, exact integer division on integers."""

    op: ClassVar[str] = "floor_div"


@dataclass(frozen=True, slots=True, eq=False)
class CeilDiv(_Frac):
    """``ceil(num / den)``, exact on integers: the trip count ``ceil(I/T_i1)``."""

    op: ClassVar[str] = "ceil_div"


@dataclass(frozen=True, slots=True, eq=False)
class _Unary(Expr):
    arg: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.arg,)


@dataclass(frozen=True, slots=True, eq=False)
class Ceil(_Unary):
    """``ceil(arg)``."""

    op: ClassVar[str] = "ceil"


@dataclass(frozen=True, slots=True, eq=False)
class Floor(_Unary):
    """``floor(arg)``."""

    op: ClassVar[str] = "floor"


@dataclass(frozen=True, slots=True, eq=False)
class Log2(_Unary):
    """``log2(arg)``, real."""

    op: ClassVar[str] = "log2"


@dataclass(frozen=True, slots=True, eq=False)
class _NAry(Expr):
    args: tuple[Expr, ...]

    def children(self) -> tuple[Expr, ...]:
        return self.args


@dataclass(frozen=True, slots=True, eq=False)
class Max(_NAry):
    """Maximum of ``args``."""

    op: ClassVar[str] = "max"


@dataclass(frozen=True, slots=True, eq=False)
class Min(_NAry):
    """Minimum of ``args``."""

    op: ClassVar[str] = "min"


@dataclass(frozen=True, slots=True, eq=False)
class Pow(Expr):
    """``base ** exp`` for an integer exponent."""

    base: Expr
    exp: int
    op: ClassVar[str] = "pow"

    def children(self) -> tuple[Expr, ...]:
        return (self.base,)


@dataclass(frozen=True, slots=True, eq=False)
class Where(Expr):
    """``a`` where ``cond`` is non-zero, else ``b``."""

    cond: Expr
    a: Expr
    b: Expr
    op: ClassVar[str] = "where"

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.a, self.b)


@dataclass(frozen=True, slots=True, eq=False)
class _Cmp(Expr):
    lhs: Expr
    rhs: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.lhs, self.rhs)


@dataclass(frozen=True, slots=True, eq=False)
class Le(_Cmp):
    """``1`` if ``lhs <= rhs`` else ``0``."""

    op: ClassVar[str] = "le"


@dataclass(frozen=True, slots=True, eq=False)
class Lt(_Cmp):
    """``1`` if ``lhs < rhs`` else ``0``."""

    op: ClassVar[str] = "lt"


@dataclass(frozen=True, slots=True, eq=False)
class Eq(_Cmp):
    """``1`` if ``lhs == rhs`` else ``0``."""

    op: ClassVar[str] = "eq"


def _key_getter(names: tuple[str, ...]) -> Callable[[Expr], tuple[Any, ...]]:
    """``self -> (self.<name>, ...)``: a node's structural key without a generator per
    node (building the nodes is most of a model's build time)."""
    get = operator.attrgetter(*names)
    if len(names) == 1:
        return lambda self: (get(self),)
    return lambda self: get(self)


def _fast_keys() -> None:
    """Give every node class that keys on its fields (not :class:`Const`) a direct getter."""
    todo: list[type[Expr]] = [Expr]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__match_args__ and "_key" not in vars(cls):
            cls._key = _key_getter(cls.__match_args__)  # type: ignore[method-assign,assignment]


_fast_keys()


# ------------------------------------------------------------ smart constructors


def const(x: Number) -> Const:
    """A constant node (numpy scalars are converted to Python numbers)."""
    e = _as_expr(x)
    if not isinstance(e, Const):
        raise ModelError(f"const() needs a number, got {x!r}")
    return e


def sym(name: str) -> Sym:
    """A symbol node."""
    return Sym(name)


def _as_expr(x: ExprLike) -> Expr:
    if isinstance(x, Expr):
        return x
    t = type(x)
    if t is int or t is float:  # the common case, before the slower ABC checks below
        return Const(x)
    if isinstance(x, bool):
        raise ModelError(f"booleans are not expressions (got {x!r}); use 0 or 1")
    if isinstance(x, numbers.Integral):
        return Const(int(x))
    if isinstance(x, numbers.Real):
        return Const(float(x))
    raise ModelError(f"cannot use {x!r} of type {type(x).__name__} as an expression")


def _flat(kind: type[Expr], xs: Iterable[ExprLike]) -> list[Expr]:
    out: list[Expr] = []
    for x in xs:
        e = _as_expr(x)
        out.extend(e.children() if type(e) is kind else (e,))
    return out


def _split_coef(e: Expr) -> tuple[Number, Expr]:
    """``e == coef * rest`` with a numeric ``coef`` (1 if none)."""
    if isinstance(e, Mul) and isinstance(e.factors[0], Const):
        rest = e.factors[1:]
        return e.factors[0].value, rest[0] if len(rest) == 1 else Mul(rest)
    return 1, e


def _scale(k: Number, e: Expr) -> Expr:
    if k == 1:
        return e
    return Mul((Const(k), *e.factors)) if isinstance(e, Mul) else Mul((Const(k), e))


def add(*xs: ExprLike) -> Expr:
    """Simplified sum: flattened, constants folded, equal terms collected."""
    coefs: dict[Expr, Number] = {}
    c: Number = 0
    for t in _flat(Add, xs):
        if isinstance(t, Const):
            c += t.value
            continue
        k, rest = _split_coef(t)
        coefs[rest] = coefs.get(rest, 0) + k
    terms = [_scale(k, r) for r, k in coefs.items() if k != 0]
    if c != 0 or not terms:
        terms.append(Const(c))
    return terms[0] if len(terms) == 1 else Add(tuple(terms))


def mul(*xs: ExprLike) -> Expr:
    """Simplified product: flattened, constants folded, equal factors to powers."""
    powers: dict[Expr, int] = {}
    c: Number = 1
    for f in _flat(Mul, xs):
        if isinstance(f, Const):
            c *= f.value
            continue
        base, k = (f.base, f.exp) if isinstance(f, Pow) else (f, 1)
        powers[base] = powers.get(base, 0) + k
    if c == 0:
        return Const(c)
    factors = [epow(b, k) for b, k in powers.items()]
    if c != 1 or not factors:
        factors.insert(0, Const(c))
    return factors[0] if len(factors) == 1 else Mul(tuple(factors))


def div(a: ExprLike, b: ExprLike) -> Expr:
    """Simplified real division ``a / b``."""
    a, b = _as_expr(a), _as_expr(b)
    if isinstance(b, Const):
        if b.value == 0:
            raise ModelError(f"division by the constant zero in {to_str(a)}/0")
        if b.value == 1:
            return a
        if isinstance(a, Const):
            return Const(a.value / b.value)
    if isinstance(a, Const) and a.value == 0:
        return Const(0.0)
    return Const(1.0) if a == b else Div(a, b)


def _int_div(kind: type[_Frac], a: ExprLike, b: ExprLike) -> Expr:
    a, b = _as_expr(a), _as_expr(b)
    if isinstance(b, Const):
        if b.value == 0:
            raise ModelError(f"division by the constant zero in {kind.op}({to_str(a)}, 0)")
        if isinstance(a, Const):
            return Const(_SCALAR_OPS[kind](a.value, b.value))
        if b.value == 1 and is_integer_valued(a):
            return a
    if isinstance(a, Const) and a.value == 0:
        return Const(0)
    return kind(a, b)


def floor_div(a: ExprLike, b: ExprLike) -> Expr:
    """Simplified ``floor(a / b)``."""
    return _int_div(FloorDiv, a, b)


def ceil_div(a: ExprLike, b: ExprLike) -> Expr:
    """Simplified ``ceil(a / b)``; ``ceil_div(x, 1) == x`` for integer-valued ``x``."""
    return _int_div(CeilDiv, a, b)


def _round(kind: type[_Unary], frac: type[_Frac], x: ExprLike) -> Expr:
    x = _as_expr(x)
    if isinstance(x, Const) and math.isfinite(x.value):
        return Const(_SCALAR_OPS[kind](x.value))
    if is_integer_valued(x):
        return x
    if isinstance(x, Div):
        return _int_div(frac, x.num, x.den)
    return kind(x)


def eceil(x: ExprLike) -> Expr:
    """Simplified ``ceil(x)``; ``ceil(a/b)`` becomes ``ceil_div(a, b)``."""
    return _round(Ceil, CeilDiv, x)


def efloor(x: ExprLike) -> Expr:
    """Simplified ``floor(x)``; ``floor(a/b)`` becomes ``floor_div(a, b)``."""
    return _round(Floor, FloorDiv, x)


def _extreme(kind: type[_NAry], pick: Callable[..., Number], xs: Sequence[ExprLike]) -> Expr:
    if not xs:
        raise ModelError(f"{kind.op}() needs at least one argument")
    args: dict[Expr, None] = {}
    consts: list[Number] = []
    for x in _flat(kind, xs):
        if isinstance(x, Const):
            consts.append(x.value)
        else:
            args[x] = None
    out = list(args)
    if consts:
        out.append(Const(pick(consts)))
    return out[0] if len(out) == 1 else kind(tuple(out))


def emax(*xs: ExprLike) -> Expr:
    """Simplified maximum (flattened, constants folded, duplicates removed)."""
    return _extreme(Max, max, xs)


def emin(*xs: ExprLike) -> Expr:
    """Simplified minimum (flattened, constants folded, duplicates removed)."""
    return _extreme(Min, min, xs)


def epow(base: ExprLike, k: int) -> Expr:
    """Simplified ``base ** k`` for an integer ``k`` (negative ``k`` gives ``1 / base**-k``)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ModelError(f"exponent must be an integer, got {k!r}")
    k = int(k)
    base = _as_expr(base)
    if k < 0:
        return div(1, epow(base, -k))
    if k == 0:
        return Const(1)
    if k == 1:
        return base
    if isinstance(base, Const):
        return Const(base.value**k)
    if isinstance(base, Pow):
        return epow(base.base, base.exp * k)
    return Pow(base, k)


def elog2(x: ExprLike) -> Expr:
    """Simplified ``log2(x)``."""
    x = _as_expr(x)
    if isinstance(x, Const):
        if x.value <= 0:
            raise ModelError(f"log2 of the non-positive constant {x.value}")
        return Const(math.log2(x.value))
    return Log2(x)


def where(cond: ExprLike, a: ExprLike, b: ExprLike) -> Expr:
    """Simplified ``a if cond != 0 else b``."""
    cond, a, b = _as_expr(cond), _as_expr(a), _as_expr(b)
    if isinstance(cond, Const):
        return a if cond.value != 0 else b
    return a if a == b else Where(cond, a, b)


def _cmp(kind: type[_Cmp], a: ExprLike, b: ExprLike) -> Expr:
    a, b = _as_expr(a), _as_expr(b)
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(_SCALAR_OPS[kind](a.value, b.value))
    if a == b:
        return Const(0 if kind is Lt else 1)
    return kind(a, b)


def le(a: ExprLike, b: ExprLike) -> Expr:
    """``a <= b`` as 0/1."""
    return _cmp(Le, a, b)


def lt(a: ExprLike, b: ExprLike) -> Expr:
    """``a < b`` as 0/1."""
    return _cmp(Lt, a, b)


def eq(a: ExprLike, b: ExprLike) -> Expr:
    """``a == b`` as 0/1."""
    return _cmp(Eq, a, b)


def is_integer_valued(e: Expr) -> bool:
    """Whether ``e`` takes integer values whenever its symbols do (symbols are integers)."""
    match e:
        case Const(value=v):
            return isinstance(v, int)
        case Sym() | FloorDiv() | CeilDiv() | Ceil() | Floor() | _Cmp():
            return True
        case Add() | Mul() | Max() | Min():
            return all(is_integer_valued(c) for c in e.children())
        case Pow(base=b, exp=k):
            return k >= 0 and is_integer_valued(b)
        case Where(a=a, b=b):
            return is_integer_valued(a) and is_integer_valued(b)
    return False


# ------------------------------------------------------- scalar semantics


def _ceil_div_scalar(a: Number, b: Number) -> int:
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return math.ceil(a / b)


def _floor_div_scalar(a: Number, b: Number) -> int:
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    return math.floor(a / b)


_SCALAR_OPS: dict[type[Expr], Callable[..., Number]] = {
    Add: lambda *xs: sum(xs[1:], start=xs[0]),
    Mul: lambda *xs: math.prod(xs),
    Div: lambda a, b: a / b,
    FloorDiv: _floor_div_scalar,
    CeilDiv: _ceil_div_scalar,
    Ceil: math.ceil,
    Floor: math.floor,
    Log2: math.log2,
    Max: max,
    Min: min,
    Where: lambda c, a, b: a if c != 0 else b,
    Le: lambda a, b: int(a <= b),
    Lt: lambda a, b: int(a < b),
    Eq: lambda a, b: int(a == b),
}

# Rebuilding a node of a given type from new children, with simplification.
_REBUILD: dict[type[Expr], Callable[..., Expr]] = {
    Add: add, Mul: mul, Div: div, FloorDiv: floor_div, CeilDiv: ceil_div, Ceil: eceil,
    Floor: efloor, Log2: elog2, Max: emax, Min: emin, Where: where, Le: le, Lt: lt, Eq: eq,
}

# ---------------------------------------------------------------------- printing

_P_CMP, _P_ADD, _P_MUL, _P_POW, _P_ATOM = 1, 2, 3, 4, 5
_FUNC_NAMES: dict[type[Expr], str] = {
    Ceil: "ceil", Floor: "floor", Log2: "log2", Max: "max", Min: "min", Where: "where",
}
_CMP_SYMBOLS: dict[type[Expr], str] = {Le: "<=", Lt: "<", Eq: "=="}


def _num(v: Number) -> str:
    return str(v) if isinstance(v, int) else repr(v)


def _paren(e: Expr, prec: int) -> str:
    s, p = _fmt(e)
    return f"({s})" if p < prec else s


# memoised: the models share sub-expressions, which a plain recursion prints again at
# every use (the rewrite of odyssey/tune/exact orders factors by their printed form)
@functools.lru_cache(maxsize=1 << 14)
def _fmt(e: Expr) -> tuple[str, int]:
    match e:
        case Const(value=v):
            return _num(v), (_P_ATOM if v >= 0 else _P_ADD)
        case Sym(name=n):
            return n, _P_ATOM
        case Add(terms=ts):
            out = _paren(ts[0], _P_ADD)
            for t in ts[1:]:
                k, rest = (t.value, None) if isinstance(t, Const) else _split_coef(t)
                if k >= 0:
                    out += " + " + _paren(t, _P_ADD)
                elif rest is None:
                    out += " - " + _num(-k)
                else:
                    out += " - " + _paren(_scale(-k, rest), _P_MUL)
            return out, _P_ADD
        case Mul(factors=(Const(value=v), *rest)) if v < 0:
            tail = rest[0] if len(rest) == 1 else Mul(tuple(rest))
            head = "-" if v == -1 else f"-{_num(-v)}*"
            return head + _paren(tail, _P_MUL if v == -1 else _P_POW), _P_ADD
        case Mul(factors=fs):
            return "*".join([_paren(fs[0], _P_MUL)] + [_paren(f, _P_POW) for f in fs[1:]]), _P_MUL
        case Div(num=a, den=b):
            return f"{_paren(a, _P_MUL)}/{_paren(b, _P_POW)}", _P_MUL
        case CeilDiv(num=a, den=b) | FloorDiv(num=a, den=b):
            name = "ceil" if isinstance(e, CeilDiv) else "floor"
            return f"{name}({_paren(a, _P_MUL)}/{_paren(b, _P_POW)})", _P_ATOM
        case Pow(base=b, exp=k):
            return f"{_paren(b, _P_ATOM)}**{k}", _P_POW
        case _Cmp(lhs=a, rhs=b):
            return f"{_paren(a, _P_ADD)} {_CMP_SYMBOLS[type(e)]} {_paren(b, _P_ADD)}", _P_CMP
    args = ", ".join(_fmt(c)[0] for c in e.children())
    return f"{_FUNC_NAMES[type(e)]}({args})", _P_ATOM


def to_str(e: Expr) -> str:
    """Human-readable form, e.g. ``ceil(I/T_i1)*T_i1``."""
    return _fmt(e)[0]


