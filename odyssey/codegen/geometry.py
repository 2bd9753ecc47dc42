"""Operand geometry: which PEs an operand reaches, the on-chip boxes, packing and padding.

For an operand ``r`` with subscripts ``a_d . x + c_d`` (non-negative coefficients):

* the *injection* loops are the space loops except the one ``r`` flows (or, for the
  output, reduces) along; one lowest-level I/O module serves each injection position;
* the *box* of one module is the part of ``r`` its PEs touch in one tile:
  ``ext_d = 1 + sum_l a_{d,l} * (R_l - 1)`` with ``R_l = T_l2`` for injection loops and
  ``T_l1`` for time loops (``R = 1`` for loops ``r`` does not depend on);
* words on the I/O chain pack ``lanes`` consecutive elements of the innermost dimension:
  the largest power of two (at most 512 bits) dividing that dimension's extent and every
  stride of its base address;
* DRAM holds ``r`` zero-padded to the tiled iteration space (and the innermost dimension to
  a multiple of ``lanes``); the host copies the data in and out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import gcd
from typing import Literal

from odyssey.codegen.tiling import Tiling
from odyssey.errors import CodegenError
from odyssey.expr import Expr, add, const, emax, emin, eq, evaluate, floor_div, where
from odyssey.polyhedral.affine import Affine
from odyssey.polyhedral.scop import Array, Reference, Scop

MAX_PORT_BITS = 512

#: DRAM image layouts (see :mod:`odyssey.codegen.layout`)
Layout = Literal["serialized", "row_major"]
LAYOUTS: tuple[Layout, ...] = ("serialized", "row_major")


@dataclass(frozen=True, slots=True)
class OperandGeom:
    name: str  # identifier used in generated names (array name, or array+index)
    array: Array
    ref: Reference
    role: Literal["input", "output", "cin"]
    inj: tuple[str, ...]  # injection space loops, outer to inner
    chain: str | None  # space loop the data flows (or reduces) along
    trunc: int  # tile loops order[:trunc] are the ones the operand is (re)loaded under
    box: tuple[int, ...]  # module box extents per array dimension
    box_sym: tuple[Expr, ...]
    lanes: int  # elements per I/O chain word
    lanes_sym: Expr  # the same, as an expression of the tiling (for the models)
    simd: bool  # the PE reads a vector of SIMD lanes per iteration
    dram_shape: tuple[int, ...]  # padded DRAM shape (the row-major layout)
    layout: Layout = "serialized"  # the DRAM image (odyssey.codegen.layout)

    @property
    def ctype(self) -> str:
        return self.array.elem

    @property
    def bits(self) -> int:
        return self.array.bits

    @property
    def box_elems(self) -> int:
        n = 1
        for e in self.box:
            n *= e
        return n

    @property
    def words_per_box(self) -> int:
        return self.box_elems // self.lanes

    @property
    def rows_outer(self) -> bool:
        """The L3 reader and the chain transfer box *rows* outermost and module positions
        inside: when the injection loop indexes the innermost array dimension, the boxes of
        consecutive modules are adjacent in DRAM, so a row of all of them is one burst."""
        return (len(self.inj) == 1 and self.role == "input"
                and self.ref.subscripts[-1].coeff(self.inj[0]) != 0)

    @property
    def lanes_macro(self) -> str:
        return f"LANES_{self.name}"

    @property
    def word_type(self) -> str:
        """The type of a word on the operand's I/O path: ``lanes`` packed elements (an output
        that is not packed moves plain elements)."""
        if self.role != "input" and self.lanes == 1:
            return self.ctype
        return f"{self.name}_t{self.lanes}"

    @property
    def packed(self) -> bool:
        """Words are ``ap_uint`` bit vectors of ``lanes`` elements (every input; the output
        when it moves more than one element per word)."""
        return self.word_type != self.ctype

    def dep(self, loop: str) -> bool:
        return any(s.coeff(loop) != 0 for s in self.ref.subscripts)


def operand_names(refs: list[Reference]) -> dict[str, str]:
    """Identifier per reference: the array name, numbered when an array has several refs."""
    count: dict[str, int] = {}
    for r in refs:
        count[r.array] = count.get(r.array, 0) + 1
    seen: dict[str, int] = {}
    out = {}
    for r in refs:
        if count[r.array] == 1:
            out[r.ref_id] = r.array
        else:
            out[r.ref_id] = f"{r.array}{seen.get(r.array, 0)}"
            seen[r.array] = seen.get(r.array, 0) + 1
    return out


def build_operands(scop: Scop, tiling: Tiling,
                   layouts: Mapping[str, Layout] | None = None) -> list[OperandGeom]:
    """The operands of the design's statement; ``layouts`` maps array names to their DRAM
    layout (``serialized`` for arrays it does not name)."""
    layouts = layouts or {}
    design = tiling.design
    main = scop.statement(next(s.name for s in scop.statements if s.write.ref_id == design.operands[0].ref_id))
    refs = [main.write] + list(main.reads)
    names = operand_names(refs)
    order = design.order
    out: list[OperandGeom] = []
    for op in design.operands:
        ref = main.ref(op.ref_id)
        arr = scop.array(ref.array)
        for s in ref.subscripts:
            for name, c in s.coeffs:
                if name in design.order and c < 0:
                    raise CodegenError(
                        f"{main.loc}: subscript `{s}` of `{ref.array}` has a negative coefficient "
                        f"on loop `{name}`; the generator supports non-negative coefficients only"
                    )
        inj = tuple(s for s in design.space_loops if s != op.chain_loop)
        dep_pos = [k for k, lp in enumerate(order) if any(s.coeff(lp) for s in ref.subscripts)]
        trunc = (max(dep_pos) + 1) if dep_pos else 0
        box, box_sym = _box(ref, tiling, inj, {**scop.param_values, **tiling.as_dict})
        role: Literal["input", "output"] = "input" if op.role == "input" else "output"
        simd = design.simd_loop is not None and any(s.coeff(design.simd_loop) for s in ref.subscripts)
        layout = layouts.get(ref.array, "serialized")
        if role == "input":
            lanes_sym = _lanes_sym(ref, tiling, inj, box_sym[-1] if box_sym else const(1), arr.bits,
                                   aligned=layout == "row_major")
        elif layout == "serialized":  # the drain moves words of the flattened accumulator block
            acc: Expr = const(1)
            for name in design.parallel_loops:
                acc = acc * tiling.loop(name).pe_range_sym
            lanes_sym = pow2_lanes([acc], arr.bits)
        else:
            lanes_sym = const(1)
        lanes = int(evaluate(lanes_sym, tiling.as_dict))
        out.append(OperandGeom(
            name=names[op.ref_id], array=arr, ref=ref, role=role, inj=inj, chain=op.chain_loop,
            trunc=trunc, box=box, box_sym=box_sym, lanes=lanes, lanes_sym=lanes_sym, simd=simd and role == "input",
            dram_shape=_dram_shape(ref, arr, tiling, scop, lanes), layout=layout,
        ))
    return out


def _pe_range_sym(tiling: Tiling, loop: str, inj: tuple[str, ...]) -> Expr:
    """Values of ``loop`` one lowest-level module's PEs see in a tile: ``T_l2`` along an
    injection loop, 1 along the chain loop (the operand does not depend on it), ``T_l1`` for a
    time loop."""
    g = tiling.loop(loop)
    if g.space:
        return g.t2_sym if loop in inj else const(1)
    return g.t1_sym


def _box(ref: Reference, tiling: Tiling, inj: tuple[str, ...],
         env: dict[str, int]) -> tuple[tuple[int, ...], tuple[Expr, ...]]:
    """The box's extents, symbolic and at the tiling (the symbolic ones evaluated in ``env``,
    the sizes and the tiling)."""
    ext_sym: list[Expr] = []
    for s in ref.subscripts:
        terms: list[Expr] = [const(1)]
        for loop, c in s.coeffs:
            if loop in tiling.design.order:
                terms.append((_pe_range_sym(tiling, loop, inj) - 1) * c)
        ext_sym.append(add(*terms))
    return tuple(int(evaluate(e, env)) for e in ext_sym), tuple(ext_sym)


def _lanes_sym(ref: Reference, tiling: Tiling, inj: tuple[str, ...], inner_ext: Expr, bits: int,
               *, aligned: bool) -> Expr:
    """Elements per I/O word, as an expression of the tiling (the generated code uses its
    value at the tiling): the largest power of two ``L <= 512/bits`` dividing the innermost
    box extent and, when the words must be ``aligned`` to the array's rows (the row-major
    layout), every stride of the innermost base address (offsets in size parameters are not
    constrained). A serialized image stores each box row contiguously: no alignment."""
    if not ref.subscripts:
        return const(1)
    inner = ref.subscripts[-1]
    values: list[Expr] = [inner_ext]
    fixed = abs(inner.const) if aligned else 0
    for loop, c in inner.coeffs if aligned else ():
        if loop not in tiling.design.order:
            continue
        lg = tiling.loop(loop)
        values.append(lg.t1_sym * c)
        fixed = gcd(fixed, c * lg.lower)
        if loop in inj:
            values.append(lg.t2_sym * c)
    return pow2_lanes(values, bits, fixed=fixed)


def pow2_lanes(values: list[Expr], bits: int, *, fixed: int = 0) -> Expr:
    """The largest power of two ``L`` with ``L * bits <= 512`` dividing every expression of
    ``values`` (and the integer ``fixed``), as an expression of the tiling."""
    result: Expr = const(1)
    lanes = 2
    cands = []
    while lanes * bits <= MAX_PORT_BITS:
        cands.append(lanes)
        lanes *= 2
    for cand in cands:  # ascending: the last true condition wins
        if fixed % cand != 0:
            continue
        cond: Expr = const(1)
        for v in values:
            cond = cond * eq(v - floor_div(v, cand) * cand, 0)
        result = where(cond, cand, result)
    return result


def _dram_shape(ref: Reference, arr: Array, tiling: Tiling, scop: Scop, lanes: int) -> tuple[int, ...]:
    values = scop.param_values
    shape = []
    for d, s in enumerate(ref.subscripts):
        top = s.const
        for loop, c in s.coeffs:
            if loop in tiling.design.order:
                g = tiling.loop(loop)
                top += c * (g.lower + g.padded - 1)
            else:
                top += c * values[loop]
        orig = arr.shape[d].evaluate(values)
        size = max(orig, top + 1)
        if d == len(ref.subscripts) - 1:
            size = -(-size // lanes) * lanes
        shape.append(size)
    return tuple(shape)


@dataclass(frozen=True, slots=True)
class Partition:
    """Cyclic partitioning of dimension ``dim`` (1-based, as in the pragma) of a block into
    ``factor`` banks; ``factor_sym`` is the same as an expression of the tiling (the models)."""

    dim: int
    factor: int
    factor_sym: Expr


def block_partitions(op: OperandGeom, tiling: Tiling) -> tuple[Partition, ...]:
    """Banks of an input operand's block so that every access of one pipeline iteration has its
    own memory port: the writer stores ``lanes`` consecutive elements of the innermost dimension
    per DRAM word, and the PE feeder reads ``S`` SIMD lanes at stride ``c`` along every
    dimension whose subscript has coefficient ``c`` on the SIMD loop. Dimension ``d`` is split
    cyclically into ``min(extent_d, max(lanes if d is innermost, c * S))`` banks: consecutive
    lane addresses then fall in distinct banks. Every dimension that can be split is listed,
    with factor 1 where the tiling leaves it whole (the pragma is printed for factors above 1)."""
    design = tiling.design
    simd = design.simd_loop
    s_val, s_sym = (tiling.loop(simd).t2, tiling.loop(simd).t2_sym) if simd and op.simd else (1, const(1))
    last = len(op.box) - 1
    out: list[Partition] = []
    for d, sub in enumerate(op.ref.subscripts):
        c = sub.coeff(simd) if simd and op.simd else 0
        want, want_sym = (c * s_val, const(c) * s_sym) if c else (1, const(1))
        if d == last:
            want, want_sym = max(want, op.lanes), emax(want_sym, op.lanes_sym)
        if c or d == last:  # kept at factor 1 too: the models read the symbolic factor
            out.append(Partition(d + 1, min(want, op.box[d]), emin(want_sym, op.box_sym[d])))
    return tuple(out)


def index_c(sub: Affine, loop_value: dict[str, str]) -> str:
    """C text of a subscript with each loop replaced by its C value expression."""
    parts = [str(sub.const)] if sub.const else []
    for name, c in sub.coeffs:
        val = loop_value.get(name, name)  # size parameters stay as macro names
        parts.append(f"{c} * ({val})" if c != 1 else f"({val})")
    return " + ".join(parts) if parts else "0"

