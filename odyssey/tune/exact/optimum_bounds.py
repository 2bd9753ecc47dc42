"""Sound interval bounds of model expressions over boxes of tilings, for branch and bound.

A *box* gives every coordinate ``d`` a set of integers
``{x : lo_d <= x <= hi_d, x = lo_d (mod m_d)}`` (an arithmetic progression; ``m_d = 1`` is a
plain range). :class:`IntervalProgram` compiles expressions (:mod:`odyssey.expr`) once into
a tape and evaluates them on a whole batch of boxes with numpy, returning for every box and
expression an interval ``[lo, hi]`` that contains the expression's value at every point of
the box. (With ``integral`` saying which nodes are integers at *legal* points only, as for
the expressions of :meth:`.optimum_rewrite.Coordinates.rewrite`, the guarantee is for the
legal points of the box; with ``caps``, budgets on monomials of the coordinates
(:class:`.optimum_budget.MonomialBudget`), for the points within them.)

Rules, per node (``a``, ``b`` the children's intervals):

* sums, products, ``max``/``min``, ``Pow``, ``Ceil``/``Floor``, ``Log2``: the monotone
  images of the interval ends (products over the four corners); ``ceil(N/T) * T`` in a
  product is one factor, bounded by ``N <= ceil(N/T)*T <= N + T - 1`` and its corners;
  ``P**-s`` in a product, ``P`` the monomial of a cap (``5*q_i*q_j*T_k2 <= DSP``: the
  latency's ``1/(PEs * SIMD)``), is one factor with ``P <= cap`` (and at most a box's own
  limit, when given: :mod:`.optimum_reach`): the latency bound of a box is not taken at a
  PE count over the budget;
* ``a / b``, ``floor(a/b)``, ``ceil(a/b)``: over the corners; an integer-valued denominator
  is non-zero at every model point (the :mod:`odyssey.expr` contract), so ``[0, h]``
  becomes ``[1, h]``; a denominator that may change sign gives ``(-inf, inf)``;
* ``Where(c, a, b)``: ``a`` when ``c`` excludes 0, ``b`` when ``c`` is exactly 0, else the
  hull; comparisons give ``[0, 0]``, ``[1, 1]`` or ``[0, 1]``;
* residues: ``y - k*floor(y/k)`` (``y`` integral, ``k`` a positive integer) is recognised
  as ``y mod k`` and bounded with a *congruence* ``y = r (mod g)`` propagated from the
  boxes' progressions through sums, products and exact quotients (Granger's congruence
  domain, with 2-adic valuations for quotients, ``v2(a/b) >= v2(a) - log2(max |b|)`` when
  ``v2(b)`` is not known): ``y mod k`` is exactly ``r mod k`` when ``k | g``, else within
  ``[r mod g', k - g' + r mod g']`` with ``g' = gcd(g, k)``; ``Eq`` is 0 when the two
  sides' congruences cannot agree. This makes the packing lanes (the largest power of two
  dividing a tile size, or a block size ``T_i2*T_j2``) exact once a box fixes the residues.

Integral nodes are computed exactly in float64 (values stay far below 2**50) and their
ends rounded inward to integers; every other result is rounded outward by at least one unit
in the last place, so the intervals stay sound under floating point.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from odyssey.errors import ModelError
from odyssey.expr import (
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
    is_integer_valued,
)
from odyssey.tune.divisibility import TileBreaks
from odyssey.tune.exact.optimum_budget import MonomialBudget
from odyssey.tune.exact.optimum_interval import (
    _CONG_LIMIT,
    _clean,
    _cong_div,
    _cong_mul,
    _cong_norm,
    _floordiv,
    _mul,
    _nonneg,
    _nonzero_int,
    _padded,
    _pow,
    _product,
    _reciprocal,
    _small,
    _unknown,
    _words,
)
from odyssey.tune.exact.optimum_rewrite import match_mod, tile_count

Array = np.ndarray
#: a parameter bound or constant from which integer arithmetic is no longer taken as exact
_EXACT_MAGNITUDE = float(2**16)
#: boxes per run of the tape (:meth:`IntervalProgram.__call__`)
_CHUNK_BOXES = 8192


@dataclass(frozen=True, slots=True)
class _Instr:
    kind: str
    args: tuple[int, ...] = ()
    integer: bool = False
    value: float = 0.0  # const
    k: int = 0  # pow exponent, mod modulus, sym dimension
    cands: tuple[int, ...] = ()  # words: the lane counts a lanes selection can take


@dataclass(frozen=True, slots=True)
class ChildRange:
    """A ratio coordinate ``q = T_p/T_c`` (dimension ``ratio``, its parent ``T_p`` dimension
    ``parent``): at legal points ``T_p * q**-1`` is the child ``T_c``, an integer in
    ``[lower, upper]``."""

    ratio: int
    parent: int
    lower: int
    upper: int


@dataclass(frozen=True, slots=True)
class ModSite:
    """An equality whose outcome depends on residues ``y mod k``: refining the congruence
    of ``dims`` up to a multiple of ``modulus`` decides it."""

    instr: int
    dims: tuple[int, ...]
    modulus: int


@dataclass(frozen=True, slots=True)
class _Ctx:
    """One evaluation: instruction results so far, the boxes, memoised congruences."""

    vals: list[tuple[Any, Any]]
    flo: Array
    fhi: Array
    lo: Array
    hi: Array
    mod: Array
    cong: dict[int, tuple[Any, Any]]
    nonneg: dict[int, bool]  # memoised: the instruction's lower ends are all at least 0
    limits: Sequence[Array | None]  # per cap, per box: a smaller cap (see __call__)


@dataclass(frozen=True)
class BoxBounds:
    """Bounds of every compiled expression over a batch of ``n`` boxes."""

    lo: Mapping[str, Array]
    hi: Mapping[str, Array]
    undecided: Array  # (n, number of mod sites): the site's comparison is not decided


def _free_dims(instrs: Sequence[_Instr], i: int, memo: dict[int, frozenset[int]]) -> frozenset[int]:
    if i in memo:
        return memo[i]
    ins = instrs[i]
    out = frozenset((ins.k,)) if ins.kind == "sym" else frozenset()
    for a in ins.args:
        out |= _free_dims(instrs, a, memo)
    memo[i] = out
    return out


class IntervalProgram:
    """Expressions compiled for interval evaluation over batches of boxes.

    ``program(lo, hi, mod)`` takes integer arrays of shape ``(n, len(params))`` (members
    ``lo``/``hi`` of each progression and its step ``mod``) and returns :class:`BoxBounds`.
    ``breakpoints[d]`` gives the values of parameter ``d`` at which some ``ceil(N/T_d)`` or
    ``floor(N/T_d)`` changes (the tile-count groups), for splitting boxes along them.
    """

    def __init__(self, exprs: Mapping[str, Expr], params: Sequence[str], *,
                 integral: Callable[[Expr], bool] = is_integer_valued,
                 caps: Sequence[MonomialBudget] = (), children: Sequence[ChildRange] = ()) -> None:
        self.params = tuple(params)
        self._children = tuple(children)
        self._integral = integral
        self._index = {p: i for i, p in enumerate(self.params)}
        self._caps = tuple(c for c in caps if all(k > 0 for _, k in c.powers))
        self._cap_slots: dict[int, int] = {}
        self._child_slots: dict[Expr, int] = {}
        self._instrs: list[_Instr] = []
        self._memo: dict[Expr, int] = {}
        self._break_sources: dict[int, set[tuple[str, int]]] = {}
        self.outputs = {name: self._emit(e) for name, e in exprs.items()}
        self._users_of_mod = self._mod_sites()
        # sums and products of integer nodes, computed exactly (values below 2**52): no
        # rounding outward (products of finite factors never give NaN, see _mul)
        self._exact = frozenset(
            i for i, ins in enumerate(self._instrs)
            if ins.integer and ins.kind in ("add", "mul")
            and all(self._instrs[a].integer for a in ins.args))
        self._tape = [self._compile(i, ins) for i, ins in enumerate(self._instrs)]
        self._release = self._liveness()
        self.breakpoints: dict[int, TileBreaks] = {}

    def _liveness(self) -> tuple[tuple[int, ...], ...]:
        """Per instruction ``k``: the results no instruction after ``k`` reads, released once
        ``k`` has run (a batch of 80,000 boxes holds 1.3 MB per result, and a model has
        1,000-1,400 of them). An instruction that takes congruences (``eq``, ``mod``,
        ``words``: :meth:`_cong` may read the value of any instruction below its arguments)
        keeps every one of those alive; the outputs and the residue sites are never released."""
        instrs = self._instrs
        n = len(instrs)
        last = list(range(n))
        below: dict[int, frozenset[int]] = {}

        def subtree(i: int) -> frozenset[int]:
            out = below.get(i)
            if out is None:
                out = frozenset((i,)).union(*(subtree(a) for a in instrs[i].args))
                below[i] = out
            return out
        for k, ins in enumerate(instrs):
            reads = ins.args
            if ins.kind in ("eq", "mod", "words"):
                reads = tuple(frozenset().union(*(subtree(a) for a in ins.args)))
            for a in reads:
                last[a] = max(last[a], k)
        for i in (*self.outputs.values(), *(site.instr for site in self._users_of_mod)):
            last[i] = n
        release: list[list[int]] = [[] for _ in range(n)]
        for i, k in enumerate(last):
            if k < n:
                release[k].append(i)
        return tuple(tuple(r) for r in release)

    def _compile(self, i: int, ins: _Instr) -> Callable[[_Ctx], tuple[Any, Any]]:
        """Instruction ``i`` as a closure over its static data (kind, arguments, integrality,
        exactness): the hot kinds without :meth:`_step`'s dispatch, the others through it.
        Same results as :meth:`_step`, operation for operation."""
        args = ins.args
        if ins.kind == "sym":
            k = ins.k
            return lambda ctx: (ctx.flo[k], ctx.fhi[k])
        if ins.kind == "const":
            pair = (ins.value, ins.value)
            return lambda ctx: pair
        if ins.kind == "add":
            finish: Callable[[Any, Any], tuple[Any, Any]] = (
                _unknown if i in self._exact else functools.partial(_clean, integer=ins.integer))

            def add_(ctx: _Ctx) -> tuple[Any, Any]:
                vals = ctx.vals
                rl, rh = vals[args[0]]
                for a in args[1:]:
                    al, ah = vals[a]
                    rl, rh = rl + al, rh + ah
                return finish(rl, rh)
            return add_
        if ins.kind == "mul":
            exact, integer = i in self._exact, ins.integer

            def mul_(ctx: _Ctx) -> tuple[Any, Any]:
                rl, rh = _product([ctx.vals[a] for a in args], [self._nonneg(a, ctx) for a in args])
                return (rl, rh) if exact else _clean(rl, rh, integer)
            return mul_
        if ins.kind == "padded":
            n, ceil, t = ins.k, ins.value > 0, args[0]
            return lambda ctx: _padded(ctx.vals[t], n, ceil)
        if ins.kind == "meet":
            a, b = args

            def meet_(ctx: _Ctx) -> tuple[Any, Any]:
                (al, ah), (bl, bh) = ctx.vals[a], ctx.vals[b]
                return np.maximum(al, bl), np.minimum(ah, bh)
            return meet_
        return functools.partial(self._step, i, ins)

    def _nonneg(self, i: int, ctx: _Ctx) -> bool:
        """Whether instruction ``i``'s lower ends are all at least 0 (memoised per call)."""
        out = ctx.nonneg.get(i)
        if out is None:
            out = ctx.nonneg[i] = _nonneg(ctx.vals[i][0])
        return out

    # ----------------------------------------------------------------- compile

    def _push(self, ins: _Instr) -> int:
        self._instrs.append(ins)
        return len(self._instrs) - 1

    def _emit(self, e: Expr) -> int:
        if e in self._memo:
            return self._memo[e]
        integer = self._integral(e)
        if isinstance(e, Sym):
            if e.name not in self._index:
                raise ModelError(f"interval bounds: symbol {e.name!r} is not a tuning parameter "
                                 f"({', '.join(self.params)}); substitute the problem sizes first")
            slot = self._push(_Instr("sym", integer=True, k=self._index[e.name]))
        elif isinstance(e, Const):
            slot = self._push(_Instr("const", integer=integer, value=float(e.value)))
        elif isinstance(e, Add) and (mod := self._match_mod(e)) is not None:
            y, k, rest = mod
            m = self._push(_Instr("mod", (self._emit(y),), integer=True, k=k))
            slot = m if rest == 0 else self._push(
                _Instr("add", (m, self._emit(Const(rest))), integer=integer))
        elif isinstance(e, Pow):
            slot = self._push(_Instr("pow", (self._emit(e.base),), integer=integer, k=e.exp))
        elif isinstance(e, Mul):
            slot = self._push(_Instr("mul", self._mul_args(e), integer=integer))
            groupings = {self._instrs[slot].args}
            for other in (self._mul_args(e, words_first=True), self._mul_args(e, children_first=True)):
                if other not in groupings:  # other groupings, all sound: their meet
                    groupings.add(other)
                    alt = self._push(_Instr("mul", other, integer=integer))
                    slot = self._push(_Instr("meet", (slot, alt), integer=integer))
        else:
            kind = _KINDS.get(type(e))
            if kind is None:
                raise ModelError(f"interval bounds: unsupported node {type(e).__name__}")
            if (tiles := tile_count(e)) is not None:
                self._break_sources.setdefault(self._index.get(tiles[1].name, -1), set()).add(
                    (kind, tiles[0]))
            slot = self._push(_Instr(kind, tuple(self._emit(c) for c in e.children()), integer=integer))
        self._memo[e] = slot
        return slot

    def _mul_args(self, e: Mul, words_first: bool = False, children_first: bool = False) -> tuple[int, ...]:
        """A product's factors, where ``ceil(N/T) * T`` (or ``floor(N/T) * T``) is one
        *padded* factor bounded as a whole (``N <= ceil(N/T)*T <= N + T - 1``): the padded
        extent of a tiled loop, which factor-wise intervals would bound by ``lo * 1``; and
        ``y * lanes(y)**-1`` one *words* factor (see :func:`_words`). When a factor could go
        to either (``ceil(N/T) * T / lanes(T)``), ``words_first`` says which takes it. With
        ``children_first``, every ``T_p * q**-1`` (``q`` the ratio ``T_p/T_c``) is first one
        *child* factor, ``T_c`` within its range: factor-wise, ``T_h1 * (T_h1/T_h2)**-1``
        would be bounded by ``lo(T_h1)/hi(T_h1/T_h2)``, far below 1."""
        powers: dict[Expr, int] = {}
        for f in e.factors:
            base, k = (f.base, f.exp) if isinstance(f, Pow) else (f, 1)
            powers[base] = powers.get(base, 0) + k
        args: list[int] = []
        if children_first:
            for c, ch in enumerate(self._children):
                q, tp = Sym(self.params[ch.ratio]), Sym(self.params[ch.parent])
                k = min(-powers.get(q, 0), powers.get(tp, 0))
                if k >= 1:
                    powers[q] += k
                    powers[tp] -= k
                    child = self._child(c)
                    args.append(child if k == 1 else self._push(_Instr("pow", (child,), integer=True, k=k)))
        if words_first:
            self._words_args(e, powers, args)
        for f in e.factors:
            tiles = tile_count(f)
            if tiles is not None and powers.get(tiles[1], 0) >= 1 and powers.get(f, 0) >= 1:
                n, t = tiles
                powers[t] -= 1
                self._break_sources.setdefault(self._index.get(t.name, -1), set()).add(
                    ("ceildiv" if isinstance(f, CeilDiv) else "floordiv", n))
                sign = 1.0 if isinstance(f, CeilDiv) else -1.0
                args.append(self._push(_Instr("padded", (self._emit(t),), integer=True, k=n, value=sign)))
                powers[f] -= 1
        if not words_first:
            self._words_args(e, powers, args)
        for c, cap in enumerate(self._caps):  # P**-s with P = prod(x**k) <= cap: one factor
            syms = [(Sym(self.params[d]), k) for d, k in cap.powers]
            s = min(-powers.get(x, 0) // k for x, k in syms)
            if s >= 1:
                for x, k in syms:
                    powers[x] += s * k
                args.append(self._push(_Instr("pow", (self._capped(c),), k=-s)))
        for f in e.factors:
            base = f.base if isinstance(f, Pow) else f
            k = powers.pop(base, 0)
            if k:
                args.append(self._emit(base if k == 1 else Pow(base, k)))
        return tuple(args)

    def _words_args(self, e: Mul, powers: dict[Expr, int], args: list[int]) -> None:
        """In place: every ``y * lanes(y)**-1`` of the product (``powers``) as a *words*
        factor."""
        for f in e.factors:
            if not (isinstance(f, Pow) and f.exp == -1 and powers.get(f.base, 0) == -1):
                continue
            lanes = lanes_of(f.base, self._integral)
            if lanes is None:
                continue
            y, cands = lanes
            need = _monomial(y)
            if need is None or not all(powers.get(b, 0) * k >= k * k for b, k in need.items()):
                continue
            for b, k in need.items():
                powers[b] -= k
            powers[f.base] += 1
            args.append(self._push(_Instr("words", (self._emit(y), self._emit(f.base)), integer=True,
                                          cands=cands)))

    def _child(self, c: int) -> int:
        """The instruction of child ``c``'s value ``T_p * q**-1`` (see :class:`ChildRange`)."""
        ch = self._children[c]
        key = Mul((Sym(self.params[ch.parent]), Pow(Sym(self.params[ch.ratio]), -1)))
        if key not in self._child_slots:
            args = (self._emit(Sym(self.params[ch.parent])), self._emit(Sym(self.params[ch.ratio])))
            self._child_slots[key] = self._push(_Instr("child", args, integer=True, k=c))
        return self._child_slots[key]

    def _capped(self, c: int) -> int:
        """The instruction of cap ``c``'s monomial, bounded by the cap."""
        if c not in self._cap_slots:
            cap = self._caps[c]
            slots = tuple(self._emit(Sym(self.params[d])) for d, k in cap.powers for _ in range(k))
            self._cap_slots[c] = self._push(_Instr("capped", slots, integer=True, value=cap.cap / cap.coef, k=c))
        return self._cap_slots[c]

    def _match_mod(self, e: Add) -> tuple[Expr, int, int] | None:
        return match_mod(e, self._integral)

    def _mod_sites(self) -> tuple[ModSite, ...]:
        memo: dict[int, frozenset[int]] = {}
        has_mod: dict[int, tuple[frozenset[int], int]] = {}  # instr -> (dims of mod args, lcm)
        for i, ins in enumerate(self._instrs):
            dims: frozenset[int] = frozenset()
            lcm = 1
            found = False
            if ins.kind == "mod":
                dims, lcm, found = _free_dims(self._instrs, ins.args[0], memo), ins.k, True
            for a in ins.args:
                if a in has_mod:
                    d, k = has_mod[a]
                    dims, lcm, found = dims | d, math.lcm(lcm, k), True
            if found:
                has_mod[i] = (dims, lcm)
        sites = []
        for i, ins in enumerate(self._instrs):
            if ins.kind == "eq" and i in has_mod:
                dims, lcm = has_mod[i]
                sites.append(ModSite(i, tuple(sorted(dims)), lcm))
        return tuple(sites)

    @property
    def mod_sites(self) -> tuple[ModSite, ...]:
        return self._users_of_mod

    def compute_breakpoints(self, lower: Sequence[int], upper: Sequence[int]) -> None:
        """Tile-group boundaries of every parameter, as :class:`TileBreaks` (closed forms,
        never a list as long as the parameter's range: ``lower``/``upper`` bound the boxes
        that ask, so they need not restrict the breakpoints).

        Also where the integer sums and products stop being exact: with a parameter bound or
        a constant of ``_EXACT_MAGNITUDE`` or more, products of a few of them pass 2**52,
        where float64 rounds to nearest; every operation then rounds outward (``_clean``),
        so the bounds stay sound at any size (at the bundled sizes nothing changes)."""
        del lower
        for d, sources in self._break_sources.items():
            if d >= 0:
                self.breakpoints[d] = TileBreaks.of(sources)
        consts = [abs(float(ins.value)) for ins in self._instrs
                  if ins.kind == "const" and np.isfinite(ins.value)]
        if self._exact and max([*map(float, upper), *consts], default=0.0) >= _EXACT_MAGNITUDE:
            self._exact = frozenset()
            self._tape = [self._compile(i, ins) for i, ins in enumerate(self._instrs)]

    # ---------------------------------------------------------------- evaluate

    @property
    def caps(self) -> tuple[MonomialBudget, ...]:
        """The caps whose monomials the bounds take within them (those with positive powers)."""
        return self._caps

    def __call__(self, lo: Array, hi: Array, mod: Array,
                 limits: Sequence[Array | None] | None = None) -> BoxBounds:
        """The bounds over boxes ``lo``, ``hi``, ``mod`` (each ``(n, len(params))``), by the
        compiled tape (:meth:`_compile`). ``limits[c]``, when given, is per box a bound on
        cap ``c``'s monomial (as :attr:`caps`, without the coefficient) at the points of the
        box within the cap (:func:`.optimum_reach.reach`), used where below the cap.

        Batches of more than :data:`_CHUNK_BOXES` boxes run in chunks of that many (each
        box's bounds depend on that box alone): the tape's live results take 16 bytes per
        box each, so memory stays bounded however many trial halves a split bounds."""
        n = lo.shape[0]
        if n <= _CHUNK_BOXES:
            return self._run(lo, hi, mod, compiled=True, limits=limits)
        parts = [self._run(lo[s:s + _CHUNK_BOXES], hi[s:s + _CHUNK_BOXES], mod[s:s + _CHUNK_BOXES], compiled=True,
                           limits=None if limits is None else
                           [None if c is None else c[s:s + _CHUNK_BOXES] for c in limits])
                 for s in range(0, n, _CHUNK_BOXES)]
        return BoxBounds({k: np.concatenate([p.lo[k] for p in parts]) for k in self.outputs},
                         {k: np.concatenate([p.hi[k] for p in parts]) for k in self.outputs},
                         np.concatenate([p.undecided for p in parts]))

    def reference(self, lo: Array, hi: Array, mod: Array,
                  limits: Sequence[Array | None] | None = None) -> BoxBounds:
        """The same bounds by the plain interpreter (:meth:`_step` on every instruction):
        the reference the compiled tape is tested against."""
        return self._run(lo, hi, mod, compiled=False, limits=limits)

    def _run(self, lo: Array, hi: Array, mod: Array, compiled: bool,
             limits: Sequence[Array | None] | None = None) -> BoxBounds:
        n = lo.shape[0]
        # one contiguous row per coordinate: the symbols' intervals are views of these
        flo = np.ascontiguousarray(lo.T, dtype=np.float64)
        fhi = np.ascontiguousarray(hi.T, dtype=np.float64)
        vals: list[tuple[Any, Any]] = []
        ctx = _Ctx(vals, flo, fhi, lo, hi, mod, {}, {}, limits or (None,) * len(self._caps))
        with np.errstate(all="ignore"):
            if compiled:
                vals_: list[Any] = vals
                for fn, done in zip(self._tape, self._release, strict=True):
                    vals_.append(fn(ctx))
                    for i in done:
                        vals_[i] = None
            else:
                for i, ins in enumerate(self._instrs):
                    vals.append(self._step(i, ins, ctx))
            undecided = np.zeros((n, len(self._users_of_mod)), dtype=bool)
            for s, site in enumerate(self._users_of_mod):
                a, b = vals[site.instr]
                undecided[:, s] = np.broadcast_to(a != b, (n,))
        out_lo = {k: np.broadcast_to(vals[i][0], (n,)) for k, i in self.outputs.items()}
        out_hi = {k: np.broadcast_to(vals[i][1], (n,)) for k, i in self.outputs.items()}
        return BoxBounds(out_lo, out_hi, undecided)

    def _step(self, i: int, ins: _Instr, ctx: _Ctx) -> tuple[Any, Any]:
        kind = ins.kind
        vals = ctx.vals
        if kind == "sym":
            return ctx.flo[ins.k], ctx.fhi[ins.k]
        if kind == "const":
            return ins.value, ins.value
        args = [vals[a] for a in ins.args]
        if kind == "add":
            rl, rh = args[0]
            for al, ah in args[1:]:
                rl, rh = rl + al, rh + ah
            return _unknown(rl, rh) if i in self._exact else _clean(rl, rh, ins.integer)
        if kind == "mul":
            rl, rh = _product(args)
            return (rl, rh) if i in self._exact else _clean(rl, rh, ins.integer)
        if kind in ("max", "min"):
            f = np.maximum if kind == "max" else np.minimum
            rl, rh = args[0]
            for al, ah in args[1:]:
                rl, rh = f(rl, al), f(rh, ah)
            return rl, rh
        if kind == "div":
            (al, ah), (bl, bh) = args
            il, ih = _reciprocal(bl, bh, self._instrs[ins.args[1]].integer)
            rl, rh = _mul(al, ah, il, ih)
            return _clean(rl, rh, False)
        if kind in ("floordiv", "ceildiv"):
            return self._intdiv(ins, args)
        if kind in ("ceil", "floor"):
            al, ah = args[0]
            if self._instrs[ins.args[0]].integer:
                return al, ah
            rnd = np.ceil if kind == "ceil" else np.floor
            return rnd(al), rnd(ah)
        if kind == "log2":
            al, ah = args[0]
            rl = np.where(np.asarray(al) > 0, np.log2(np.maximum(al, 1e-300)), -np.inf)
            rh = np.where(np.asarray(ah) > 0, np.log2(np.maximum(ah, 1e-300)), -np.inf)
            return _clean(rl, rh, False)
        if kind == "pow":
            return _pow(args[0], ins.k, ins.integer)
        if kind == "where":
            (cl, ch), (al, ah), (bl, bh) = args
            nonzero = (cl > 0) | (ch < 0)
            zero = (cl == 0) & (ch == 0)
            rl = np.where(nonzero, al, np.where(zero, bl, np.minimum(al, bl)))
            rh = np.where(nonzero, ah, np.where(zero, bh, np.maximum(ah, bh)))
            return _unknown(rl, rh)
        if kind in ("le", "lt"):
            (al, ah), (bl, bh) = args
            if kind == "le":
                sure, never = ah <= bl, al > bh
            else:
                sure, never = ah < bl, al >= bh
            return np.where(sure, 1.0, 0.0), np.where(never, 0.0, 1.0)
        if kind == "eq":
            (al, ah), (bl, bh) = args
            sure = (al == ah) & (bl == bh) & (al == bl)
            never = (ah < bl) | (bh < al)
            ia, ib = ins.args
            if self._instrs[ia].integer and self._instrs[ib].integer:
                ma, ra = self._cong(ia, ctx)
                mb, rb = self._cong(ib, ctx)
                m = np.gcd(ma, mb)
                d = ra - rb
                never = never | np.where(m == 0, d != 0, np.mod(d, np.maximum(m, 1)) != 0)
            return np.where(sure, 1.0, 0.0), np.where(never, 0.0, 1.0)
        if kind == "mod":
            return self._mod(ins, args[0], ctx)
        if kind == "padded":
            return _padded(args[0], ins.k, ins.value > 0)
        if kind == "meet":
            (al, ah), (bl, bh) = args
            return np.maximum(al, bl), np.minimum(ah, bh)
        if kind == "words":
            y = ins.args[0]
            cong = self._cong(y, ctx) if self._instrs[y].integer else (np.int64(1), np.int64(0))
            return _words(args[0], args[1], ins.cands, cong)
        if kind == "child":  # T_p / q, the child T_c of its parent: an integer in its range
            (pl, ph), (ql, qh) = args
            ch = self._children[ins.k]
            rl = np.maximum(np.ceil(pl / np.maximum(qh, 1) * (1 - 1e-12)), max(ch.lower, 1))
            rh = np.minimum(np.floor(ph / np.maximum(ql, 1) * (1 + 1e-12)), ch.upper)
            return rl, np.maximum(rh, rl)
        if kind == "capped":  # a product of coordinates (>= 1), at most the cap where it matters
            rl, rh = args[0]
            for al, ah in args[1:]:
                rl, rh = rl * al, rh * ah
            top: Any = ins.value
            own = ctx.limits[ins.k]
            if own is not None:  # this box's own cap (optimum_reach)
                top = np.minimum(top, own)
            return rl, np.maximum(np.minimum(rh, np.floor(top * (1 + 1e-9))), rl)
        raise AssertionError(kind)

    def _inverse(self, i: int) -> bool:
        return self._instrs[i].kind == "pow" and self._instrs[i].k < 0

    def _has_inverse(self, i: int) -> bool:
        ins = self._instrs[i]
        return ins.kind == "mul" and any(self._inverse(a) for a in ins.args)

    def _intdiv(self, ins: _Instr, args: list[tuple[Any, Any]]) -> tuple[Any, Any]:
        (al, ah), (bl, bh) = args
        a_int = self._instrs[ins.args[0]].integer
        b_int = self._instrs[ins.args[1]].integer
        ceil = ins.kind == "ceildiv"
        if not (a_int and b_int):
            il, ih = _reciprocal(bl, bh, b_int)
            ql, qh = _mul(al, ah, il, ih)
            ql, qh = _clean(ql, qh, False)
            f = np.ceil if ceil else np.floor
            return f(ql), f(qh)
        bl, bh = _nonzero_int(bl, bh)
        if _nonneg(al) and _nonneg(np.asarray(bl) - 1) and _small(ah):
            # a >= 0, b >= 1 (the tile counts): monotone, the two ends' quotients, rounded
            # and floored (or ceiled), exact below 2**52 (see _small)
            f = np.ceil if ceil else np.floor
            return _clean(f(al / bh), f(ah / bl), True)
        straddle = (bl < 0) & (bh > 0)
        if ceil:  # ceil(a/b) = -floor(-a/b)
            al, ah = -ah, -al
        if _small(al) and _small(ah):  # exact as the rounded quotient, floored: 10x faster
            cands = [np.floor(x / y) for x in (al, ah) for y in (bl, bh)]
        else:
            cands = [_floordiv(x, y) for x in (al, ah) for y in (bl, bh)]
        rl = np.minimum(np.minimum(cands[0], cands[1]), np.minimum(cands[2], cands[3]))
        rh = np.maximum(np.maximum(cands[0], cands[1]), np.maximum(cands[2], cands[3]))
        rl = np.where(straddle, -np.inf, rl)
        rh = np.where(straddle, np.inf, rh)
        if ceil:
            rl, rh = -rh, -rl
        return _clean(rl, rh, True)

    def _mod(self, ins: _Instr, y: tuple[Any, Any], ctx: _Ctx) -> tuple[Any, Any]:
        k = ins.k
        yl, yh = y
        m, r = self._cong(ins.args[0], ctx)
        if k & (k - 1) == 0:  # gcd(m, 2**a) is the lowest set bit of m | 2**a (m >= 0)
            g = np.bitwise_or(m, k)
            g = g & -g
            rg = r & (g - 1)  # r mod g, also for r < 0
        else:
            g = np.gcd(m, k)  # m = 0 (an exact value) gives g = k
            rg = np.mod(r, g)
        rl = rg.astype(np.float64)
        rh = (k - g + rg).astype(np.float64)
        finite = np.isfinite(yl) & np.isfinite(yh)
        yl0, yh0 = np.where(finite, yl, 0.0), np.where(finite, yh, 0.0)
        if _small(yl0) and _small(yh0):  # exact (see _small)
            fl, fh = np.floor(yl0 / k), np.floor(yh0 / k)
        else:
            fl, fh = np.floor_divide(yl0, k), np.floor_divide(yh0, k)
        same = finite & (fl == fh)
        rl = np.where(same, np.maximum(rl, yl - k * fl), rl)
        rh = np.where(same, np.minimum(rh, yh - k * fl), rh)
        return rl, rh

    def _cong(self, i: int, ctx: _Ctx) -> tuple[Any, Any]:
        """Congruence ``x = r (mod m)`` of integer-valued instruction ``i`` at every (legal)
        point of each box; ``m = 0`` means the exact value ``r``."""
        memo = ctx.cong
        if i in memo:
            return memo[i]
        ins = self._instrs[i]
        lo, hi, mod = ctx.lo, ctx.hi, ctx.mod
        m: Any
        r: Any
        if ins.kind == "sym":
            d = ins.k
            exact = lo[:, d] == hi[:, d]
            m = np.where(exact, 0, mod[:, d])
            r = np.where(exact, lo[:, d], np.mod(lo[:, d], np.maximum(mod[:, d], 1)))
        elif ins.kind == "const":
            m, r = np.int64(0), np.int64(int(ins.value))
        elif ins.kind == "add":
            m, r = np.int64(0), np.int64(0)
            for a in ins.args:
                m2, r2 = self._cong(a, ctx)
                m, r = _cong_norm(np.gcd(m, m2), r + r2)
        elif ins.kind in ("mul", "pow") and not self._inverse(i):
            # a product over its factors, divided by its inverse factors (x**-k)
            num, den = (np.int64(0), np.int64(1)), (np.int64(0), np.int64(1))
            den_top: Any = 1.0  # |den| is at most this
            for a in ins.args if ins.kind == "mul" else (i,):
                inv = self._inverse(a)
                base = self._instrs[a].args[0] if (inv or ins.kind == "pow") else a
                power = abs(self._instrs[a].k) if (inv or ins.kind == "pow") else 1
                part = self._cong(base, ctx)
                if inv:
                    bl, bh = ctx.vals[base]
                    den_top = den_top * np.maximum(np.abs(bl), np.abs(bh)) ** power
                for _ in range(power):
                    if inv:
                        den = _cong_mul(den, part)
                    else:
                        num = _cong_mul(num, part)
            m, r = _cong_div(num, den, den_top) if self._has_inverse(i) else num
        elif ins.kind == "meet":
            m, r = self._cong(ins.args[0], ctx)
        elif ins.kind == "words":  # y / lanes(y), an exact quotient
            y, lanes = ins.args
            m, r = _cong_div(self._cong(y, ctx), self._cong(lanes, ctx), np.abs(ctx.vals[lanes][1]))
        elif ins.kind == "padded":
            m, r = _cong_mul(self._cong(ins.args[0], ctx), (np.int64(1), np.int64(0)))
        elif ins.kind == "mod":
            m0, r0 = self._cong(ins.args[0], ctx)
            g = np.gcd(m0, ins.k)
            m = np.where(m0 == 0, 0, g)
            r = np.where(m0 == 0, np.mod(r0, ins.k), np.mod(r0, g))
        else:
            vl, vh = ctx.vals[i]
            exact = (vl == vh) & np.isfinite(vl) & (np.abs(vl) < _CONG_LIMIT)
            m = np.where(exact, 0, 1)
            r = np.where(exact, vl, 0.0).astype(np.int64)
        out = _cong_norm(np.asarray(m, dtype=np.int64), np.asarray(r, dtype=np.int64))
        memo[i] = out
        return out


_KINDS: dict[type[Expr], str] = {
    Add: "add", Mul: "mul", Div: "div", FloorDiv: "floordiv", CeilDiv: "ceildiv", Ceil: "ceil",
    Floor: "floor", Log2: "log2", Max: "max", Min: "min", Where: "where", Le: "le", Lt: "lt",
    Eq: "eq",
}


def lanes_of(e: Expr, integral: Callable[[Expr], bool]) -> tuple[Expr, tuple[int, ...]] | None:
    """``(y, (c1, c2, ...))`` when ``e`` is a lanes selection ``where(y mod c1 == 0, c1,
    where(y mod c2 == 0, c2, ... 1))`` with ``c1 > c2 > ... >= 2`` (as
    :func:`odyssey.codegen.geometry.pow2_lanes` builds it for one value): its value is the
    largest ``c`` that divides ``y``, or 1. Else None."""
    y: Expr | None = None
    cands: list[int] = []
    while isinstance(e, Where):
        cond = e.cond
        if not (isinstance(cond, Eq) and isinstance(cond.lhs, Add) and isinstance(cond.rhs, Const)
                and cond.rhs.value == 0):
            return None
        mod = match_mod(cond.lhs, integral)
        if mod is None or mod[2] != 0 or not (isinstance(e.a, Const) and e.a.value == mod[1]):
            return None
        if (y is not None and mod[0] != y) or (cands and mod[1] >= cands[-1]):
            return None
        y = mod[0]
        cands.append(mod[1])
        e = e.b
    if y is None or not (isinstance(e, Const) and e.value == 1):
        return None
    return y, tuple(cands)


def _monomial(y: Expr) -> dict[Expr, int] | None:
    """``y`` as ``{base: exponent}`` (a product of powers without a constant), else None."""
    out: dict[Expr, int] = {}
    for f in y.factors if isinstance(y, Mul) else (y,):
        base, k = (f.base, f.exp) if isinstance(f, Pow) else (f, 1)
        if isinstance(base, Const):
            return None
        out[base] = out.get(base, 0) + k
    return out
