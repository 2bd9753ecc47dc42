"""Operand geometry: which PEs an operand reaches, the on-chip boxes, packing and padding.

For an operand ``r`` with subscripts ``a_d . x + c_d`` (non-negative coefficients):

* the *injection* loops are the space loops except the one ``r`` flows (or, for the
  output, reduces) along; one lowest-level I/O module serves each injection position;
* the *box* of one module is the part of ``r`` its PEs touch in one tile:
  ``ext_d = 1 + sum_l a_{d,l} * (R_l - 1)`` with ``R_l = T_l2`` for injection loops and
  ``T_l1`` for time loops (``R = 1`` for loops ``r`` does not depend on);
* words on the I/O chain pack ``lanes`` consecutive elements of one box dimension, the
  *pack dimension* (:func:`pack_factors`). With ``L_d`` the largest power of two (at most
  512 bits of elements) dividing the box extent ``ext_d``:

  - a *serialized* input (the host writes each visit in the reader's order, so a word may
    run along any dimension) packs along the dimension ``s`` the SIMD loop indexes when
    ``L_s > 1`` (the word's lanes are then the PE's SIMD reads and the block's cyclic banks
    along ``s``); otherwise along the dimension with the largest ``L_d``, the innermost of
    those that tie; ``lanes = L`` of that dimension;
  - a *row-major* input packs along the innermost dimension, ``L`` also dividing every
    stride of the innermost base address (words aligned to the array's rows);

  the rule is one symbolic expression per dimension (``pack_sym``: ``L_d`` at the pack
  dimension, 1 elsewhere), so the models see it at every tiling;
* DRAM holds ``r`` zero-padded to the tiled iteration space (and the innermost dimension to
  a multiple of ``lanes`` in the row-major layout); the host copies the data in and out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import gcd
from typing import Literal

from odyssey.codegen.tiling import Tiling
from odyssey.errors import CodegenError
from odyssey.expr import (
    Const,
    Expr,
    add,
    const,
    emax,
    emin,
    eq,
    evaluate,
    floor_div,
    le,
    lt,
    sym,
    where,
)
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
    # an input's word runs along box dimension ``pack_dim`` (0-based) at this tiling;
    # ``pack_sym[d]`` is the elements of dimension ``d`` in one word at every tiling (``lanes``
    # at the pack dimension, 1 elsewhere; :func:`pack_factors`)
    pack_dim: int = -1
    pack_sym: tuple[Expr, ...] = ()

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
        inside: when the injection loop indexes the innermost array dimension (and words run
        along it), the boxes of consecutive modules are adjacent in DRAM, so a row of all of
        them is one burst."""
        return (len(self.inj) == 1 and self.role == "input" and self.pack_dim == len(self.box) - 1
                and self.ref.subscripts[-1].coeff(self.inj[0]) != 0)

    def pack_macro(self, d: int) -> str:
        """The macro of ``pack_sym[d]`` in the generated code: ``LANES_<name>`` when dimension
        ``d`` is the only one that can be packed, else ``PACK_<name>_<d>``."""
        return self.lanes_macro if self.pack_sym[d] == self.lanes_sym else f"PACK_{self.name}_{d}"

    def pack_macros(self) -> tuple[tuple[int, str, Expr], ...]:
        """``(d, macro, factor)`` for every dimension the rule can pack (``pack_sym[d]`` not the
        constant 1) with its own macro (not ``LANES_<name>``)."""
        return tuple((d, self.pack_macro(d), f) for d, f in enumerate(self.pack_sym)
                     if not _is_one(f) and self.pack_macro(d) != self.lanes_macro)

    def words_sym(self, d: int) -> Expr:
        """Words along box dimension ``d`` in one box: ``ext_d / pack_d`` (the extent where the
        rule never packs ``d``)."""
        if _is_one(self.pack_sym[d]):
            return self.box_sym[d]
        return self.box_sym[d] // sym(self.pack_macro(d))

    def pack_values(self) -> dict[str, int]:
        """The pack macros' values at the tiling (:meth:`pack_macros`)."""
        return {m: (self.lanes if d == self.pack_dim else 1) for d, m, _ in self.pack_macros()}

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
        env = {**scop.param_values, **tiling.as_dict}
        pack_sym: tuple[Expr, ...] = ()
        pack_dim = -1
        if role == "input":
            if layout == "row_major" or not box_sym:
                inner = _lanes_sym(ref, tiling, inj, box_sym[-1] if box_sym else const(1), arr.bits,
                                   aligned=layout == "row_major")
                pack_sym = (*(const(1) for _ in box_sym[:-1]), inner) if box_sym else ()
            else:
                pack_sym = pack_factors(ref, box_sym, arr.bits, design.simd_loop if simd else None)
            lanes_sym = _lanes_of(pack_sym)
            pack_dim = _pack_dim(pack_sym, env)
        elif layout == "serialized":  # the drain moves words of the flattened accumulator block
            acc: Expr = const(1)
            for name in design.parallel_loops:
                acc = acc * tiling.loop(name).pe_range_sym
            lanes_sym = pow2_lanes([acc], arr.bits)
        else:
            lanes_sym = const(1)
        lanes = int(evaluate(lanes_sym, env))
        out.append(OperandGeom(
            name=names[op.ref_id], array=arr, ref=ref, role=role, inj=inj, chain=op.chain_loop,
            trunc=trunc, box=box, box_sym=box_sym, lanes=lanes, lanes_sym=lanes_sym, simd=simd and role == "input",
            dram_shape=_dram_shape(ref, arr, tiling, scop, lanes if layout == "row_major" else 1), layout=layout,
            pack_dim=pack_dim, pack_sym=pack_sym,
        ))
    return out


def _is_one(e: Expr) -> bool:
    return isinstance(e, Const) and e.value == 1


def pack_factors(ref: Reference, box_sym: tuple[Expr, ...], bits: int, simd_loop: str | None) -> tuple[Expr, ...]:
    """Elements of each box dimension in one word of a serialized input, as expressions of the
    tiling (the rule of the module docstring). ``L_d`` is the largest power of two, at most
    ``512 / bits``, dividing ``ext_d``; ``s`` the innermost dimension whose subscript has a
    coefficient on ``simd_loop`` (none when the operand does not depend on it). Then
    ``pack_s = L_s`` and, for ``d != s``, ``pack_d = L_d`` when ``L_s = 1``, ``L_d`` exceeds
    ``L_e`` of every dimension ``e`` inside ``d`` and is at least ``L_e`` of every dimension
    ``e`` outside it (ties go inward), else 1. At most one factor exceeds 1."""
    dims = len(box_sym)
    ls = [pow2_lanes([e], bits) for e in box_sym]
    s = None
    if simd_loop is not None:
        s = max((d for d, sub in enumerate(ref.subscripts) if sub.coeff(simd_loop)), default=None)
    others = [d for d in range(dims) if d != s]
    out: list[Expr] = [const(1)] * dims
    if s is not None:
        out[s] = ls[s]
    for d in others:
        cond: Expr = eq(ls[s], 1) if s is not None else const(1)
        for e in others:
            if e > d:
                cond = cond * lt(ls[e], ls[d])
            elif e < d:
                cond = cond * le(ls[e], ls[d])
        out[d] = where(cond, ls[d], 1) if not _is_one(ls[d]) else const(1)
    return tuple(out)


def _lanes_of(pack_sym: tuple[Expr, ...]) -> Expr:
    """Elements per word: the one pack factor above 1 (1 when none is)."""
    cands = [f for f in pack_sym if not _is_one(f)]
    if not cands:
        return const(1)
    return cands[0] if len(cands) == 1 else emax(*cands)


def _pack_dim(pack_sym: tuple[Expr, ...], env: Mapping[str, int]) -> int:
    """The dimension whose pack factor exceeds 1 at ``env`` (the innermost when none does)."""
    vals = [int(evaluate(f, env)) for f in pack_sym]
    return next((d for d, v in enumerate(vals) if v > 1), len(pack_sym) - 1)


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
    own memory port: the writer stores a DRAM word's ``lanes`` consecutive elements of the
    pack dimension (``pack_d`` elements of dimension ``d``, see :func:`pack_factors`), and the
    PE feeder reads ``S`` SIMD lanes at stride ``c`` along every dimension whose subscript has
    coefficient ``c`` on the SIMD loop. Dimension ``d`` is split cyclically into
    ``min(extent_d, max(pack_d, c * S))`` banks: consecutive lane addresses of either access
    then fall in distinct banks. Every dimension that can be split is listed, with factor 1
    where the tiling leaves it whole (the pragma is printed for factors above 1)."""
    design = tiling.design
    simd = design.simd_loop
    s_val, s_sym = (tiling.loop(simd).t2, tiling.loop(simd).t2_sym) if simd and op.simd else (1, const(1))
    out: list[Partition] = []
    for d, sub in enumerate(op.ref.subscripts):
        c = sub.coeff(simd) if simd and op.simd else 0
        want, want_sym = (c * s_val, const(c) * s_sym) if c else (1, const(1))
        packable = d < len(op.pack_sym) and not _is_one(op.pack_sym[d])
        if packable:
            want = max(want, op.lanes if d == op.pack_dim else 1)
            want_sym = emax(want_sym, op.pack_sym[d])
        if c or packable:  # kept at factor 1 too: the models read the symbolic factor
            out.append(Partition(d + 1, min(want, op.box[d]), emin(want_sym, op.box_sym[d])))
    return tuple(out)


def index_c(sub: Affine, loop_value: dict[str, str]) -> str:
    """C text of a subscript with each loop replaced by its C value expression."""
    parts = [str(sub.const)] if sub.const else []
    for name, c in sub.coeffs:
        val = loop_value.get(name, name)  # size parameters stay as macro names
        parts.append(f"{c} * ({val})" if c != 1 else f"({val})")
    return " + ".join(parts) if parts else "0"

