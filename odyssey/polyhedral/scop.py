"""The polyhedral model of one ``#pragma scop`` region: an immutable IR.

A :class:`Scop` holds arrays (shape, element type), statements (iteration
domain, accesses tagged per reference, the right-hand side as a small
expression tree) and the original schedule. isl objects are derived on demand
from the affine data, built by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import islpy as isl

from odyssey.polyhedral.affine import Affine, box_set, make_vars, to_isl_aff

ElemType = Literal[
    "float", "double", "int", "unsigned int", "short", "unsigned short",
    "char", "unsigned char", "signed char", "long", "unsigned long",
]

#: bits per element type (C on the x86-64/HLS targets odyssey supports)
ELEM_BITS: dict[str, int] = {
    "float": 32, "double": 64, "int": 32, "unsigned int": 32, "short": 16,
    "unsigned short": 16, "char": 8, "unsigned char": 8, "signed char": 8,
    "long": 64, "unsigned long": 64,
}


@dataclass(frozen=True, slots=True)
class SourceLoc:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Array:
    name: str
    elem: str
    shape: tuple[Affine, ...]  # extent of each dimension, affine in size parameters

    @property
    def bits(self) -> int:
        return ELEM_BITS[self.elem]

    @property
    def is_float(self) -> bool:
        return self.elem in ("float", "double")


@dataclass(frozen=True, slots=True)
class Reference:
    """One textual array reference of a statement; ``ref_id`` tags it (e.g. ``S1_A_0``)."""

    ref_id: str
    array: str
    kind: Literal["read", "write"]
    subscripts: tuple[Affine, ...]


# --- right-hand-side expression tree -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Read:
    ref_id: str


@dataclass(frozen=True, slots=True)
class Num:
    value: float | int


@dataclass(frozen=True, slots=True)
class ParamRef:
    name: str


@dataclass(frozen=True, slots=True)
class ScalarRef:
    """A scalar argument of the kernel function (``float alpha``): one value for the whole
    run, broadcast to the PEs."""

    name: str


@dataclass(frozen=True, slots=True)
class BinOp:
    op: Literal["+", "-", "*", "/"]
    lhs: RExpr
    rhs: RExpr


@dataclass(frozen=True, slots=True)
class Neg:
    arg: RExpr


RExpr = Read | Num | ParamRef | ScalarRef | BinOp | Neg


def rexpr_reads(e: RExpr) -> list[str]:
    """Reference ids read by ``e``, left to right."""
    if isinstance(e, Read):
        return [e.ref_id]
    if isinstance(e, BinOp):
        return rexpr_reads(e.lhs) + rexpr_reads(e.rhs)
    if isinstance(e, Neg):
        return rexpr_reads(e.arg)
    return []


def rexpr_ops(e: RExpr) -> list[str]:
    """Arithmetic operators of ``e`` (``mul``, ``add``, ``sub``, ``div``, ``neg``)."""
    if isinstance(e, BinOp):
        name = {"+": "add", "-": "sub", "*": "mul", "/": "div"}[e.op]
        return rexpr_ops(e.lhs) + rexpr_ops(e.rhs) + [name]
    if isinstance(e, Neg):
        return rexpr_ops(e.arg) + ["neg"]
    return []


def rexpr_scalars(e: RExpr) -> list[str]:
    """Scalar arguments read by ``e``, left to right."""
    if isinstance(e, ScalarRef):
        return [e.name]
    if isinstance(e, BinOp):
        return rexpr_scalars(e.lhs) + rexpr_scalars(e.rhs)
    if isinstance(e, Neg):
        return rexpr_scalars(e.arg)
    return []


@dataclass(frozen=True, slots=True)
class Scalar:
    """A scalar parameter of the kernel function and its element type."""

    name: str
    elem: str

    @property
    def is_float(self) -> bool:
        return self.elem in ("float", "double")


@dataclass(frozen=True, slots=True)
class Loop:
    """A loop of the original nest: ``for (name = lower; name < upper; name++)``."""

    name: str
    lower: Affine
    upper: Affine  # exclusive
    loc: SourceLoc


@dataclass(frozen=True, slots=True)
class Statement:
    name: str
    loops: tuple[Loop, ...]  # enclosing loops, outer to inner
    guards: tuple[tuple[Affine, str], ...]  # extra affine constraints (">=0" / "==0")
    op: Literal["=", "+=", "-=", "*="]
    target: str  # ref_id of the written reference
    rhs: RExpr
    refs: tuple[Reference, ...]
    position: tuple[int, ...]  # 2d+1 schedule constants (textual positions per depth)
    loc: SourceLoc
    text: str

    @property
    def iterators(self) -> tuple[str, ...]:
        return tuple(lp.name for lp in self.loops)

    def ref(self, ref_id: str) -> Reference:
        for r in self.refs:
            if r.ref_id == ref_id:
                return r
        raise KeyError(ref_id)

    @property
    def write(self) -> Reference:
        return self.ref(self.target)

    @property
    def reads(self) -> tuple[Reference, ...]:
        return tuple(r for r in self.refs if r.kind == "read")


@dataclass(frozen=True, slots=True)
class Scop:
    """A scop region: parameters with their values, arrays and statements."""

    file: str
    loc: SourceLoc
    params: tuple[tuple[str, int], ...]  # size parameters and their values
    arrays: tuple[Array, ...]
    statements: tuple[Statement, ...]
    function: str = ""
    scalars: tuple[Scalar, ...] = ()  # scalar arguments the statements read
    _cache: dict[str, object] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.params)

    @property
    def param_values(self) -> dict[str, int]:
        return dict(self.params)

    def array(self, name: str) -> Array:
        for a in self.arrays:
            if a.name == name:
                return a
        raise KeyError(name)

    def scalar(self, name: str) -> Scalar:
        for a in self.scalars:
            if a.name == name:
                return a
        raise KeyError(name)

    def statement(self, name: str) -> Statement:
        for s in self.statements:
            if s.name == name:
                return s
        raise KeyError(name)

    # --- isl views -----------------------------------------------------------------

    def domain(self, stmt: Statement, *, fixed_params: bool = True) -> isl.Set:
        """Iteration domain ``[params] -> { S[iterators] : bounds and guards }``.

        With ``fixed_params`` the parameters are fixed to their values.
        """
        cons: list[tuple[Affine, str]] = []
        for lp in stmt.loops:
            it = Affine.var(lp.name)
            cons.append((it - lp.lower, ">=0"))
            cons.append((lp.upper - it - Affine.constant(1), ">=0"))
        cons.extend(stmt.guards)
        dom = box_set(stmt.iterators, self.param_names, cons).set_tuple_name(stmt.name)
        if fixed_params:
            dom = self._fix_params(dom)
        return dom

    def _fix_params(self, s: isl.Set) -> isl.Set:
        for name, value in self.params:
            idx = s.find_dim_by_name(isl.dim_type.param, name)
            s = s.fix_val(isl.dim_type.param, idx, isl.Val.int_from_si(s.get_ctx(), value))
        return s

    def access(self, stmt: Statement, ref: Reference) -> isl.Map:
        """Tagged access relation ``{ S[it] -> A[subscripts] }`` restricted to the domain."""
        dom = self.domain(stmt)
        arr = self.array(ref.array)
        outs = [f"_a{d}" for d in range(len(arr.shape))]
        v = make_vars(list(stmt.iterators) + outs, self.param_names)
        rel = v[0].eq_set(v[0])
        for d, sub in enumerate(ref.subscripts):
            rel = rel & v[outs[d]].eq_set(to_isl_aff(sub, v))
        m = _set_to_map(self._fix_params(rel), len(stmt.iterators))
        m = m.set_tuple_name(isl.dim_type.in_, stmt.name).set_tuple_name(isl.dim_type.out, ref.array)
        return m.intersect_domain(dom)

    def schedule(self, stmt: Statement) -> isl.Map:
        """Original 2d+1 schedule: ``S[it] -> [p0, it0, p1, it1, ..., pd]``."""
        depth = len(stmt.loops)
        outs = [f"_t{k}" for k in range(2 * depth + 1)]
        v = make_vars(list(stmt.iterators) + outs, self.param_names)
        rel = v[0].eq_set(v[0])
        for k in range(depth + 1):
            rel = rel & v[outs[2 * k]].eq_set(v[0] + stmt.position[k])
            if k < depth:
                rel = rel & v[outs[2 * k + 1]].eq_set(v[stmt.iterators[k]])
        m = _set_to_map(self._fix_params(rel), depth).set_tuple_name(isl.dim_type.in_, stmt.name)
        return m.intersect_domain(self.domain(stmt))


def _set_to_map(s: isl.Set, n_in: int) -> isl.Map:
    """Split a set ``{[a..., b...]}`` into the map ``{[a...] -> [b...]}`` (first ``n_in`` dims in)."""
    n_out = s.dim(isl.dim_type.set) - n_in
    m = isl.Map.from_range(s)  # { [] -> [a, b] }
    m = m.move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, n_in)
    assert m.dim(isl.dim_type.out) == n_out
    return m
