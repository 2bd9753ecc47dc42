"""DRAM images: where each element of an operand sits in the buffer the kernel reads or writes.

Two layouts, chosen per operand:

* ``serialized`` (the default): the host writes the operand in the order the kernel reads it
  (and reads the output back in the order the kernel writes it). The image is one record per
  *distinct tile* (the tile loops the operand depends on, outer first), and a record holds the
  words one visit of that tile moves, in the order the kernel moves them. Every visit is then
  one contiguous run of DRAM words, one burst, and words need no alignment to the array's rows.
  Data that two tiles share (a convolution's halo) is stored once per tile.
* ``row_major``: the array zero-padded to the tiled iteration space, in its own row-major order
  (the innermost dimension padded to a multiple of the word's lanes); a visit reads one burst
  per box row. For a host that cannot reorder its data.

The kernel's readers and writers (:mod:`.io_modules`) take their loops and word index from a
:class:`DramLayout`; the testbench (:mod:`.host`) takes from the same object the loops that
(de)serialize and the array coordinates of every element, so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey.codegen.geometry import LAYOUTS, Layout, OperandGeom, index_c
from odyssey.expr import Expr, const, mul, sym, to_c

if TYPE_CHECKING:
    from odyssey.codegen.context import Ctx



@dataclass(frozen=True, slots=True)
class Axis:
    """A loop of the image: C variable ``var`` over ``trip`` values (from 0)."""

    var: str
    trip: Expr


@dataclass(frozen=True, slots=True)
class DramLayout:
    """The DRAM image of one operand.

    ``tiles`` enumerate the distinct tiles (``t_<loop>`` over the tile loops the operand
    depends on), ``visit`` the words of one visit in the order the kernel moves them, and
    ``coords`` give, per array dimension, the C expression of the coordinate of the word's
    first element in those variables; an input word's ``lanes`` elements follow along
    dimension ``pack_dim`` (lane ``ln`` adds ``ln`` to that coordinate: the last dimension in
    the row-major layout, the rule of :func:`~odyssey.codegen.geometry.pack_factors` in a
    serialized one).
    """

    operand: str
    kind: Layout
    tiles: tuple[Axis, ...]
    visit: tuple[Axis, ...]
    coords: tuple[str, ...]
    lanes: int
    lanes_macro: str
    row_major_shape: tuple[int, ...]  # the padded array, for the row-major layout
    # C declarations (name, value) that give the variables ``coords`` use from the lane: a
    # serialized output's word holds consecutive elements of the flattened accumulator block,
    # so its lane ``{lane}`` decodes into the block's axes ``a_<loop>``; empty for inputs,
    # whose lanes run along ``pack_dim``
    lane_decls: tuple[tuple[str, str], ...] = ()
    pack_dim: int = -1  # the array dimension an input word's lanes run along (-1: the last)

    @property
    def visit_words(self) -> Expr:
        """Words one visit moves (the run of a serialized visit)."""
        return mul(*[a.trip for a in self.visit]) if self.visit else const(1)

    @property
    def lanes_trip(self) -> Expr:
        """The lanes of a word, as the loop bound the generated code uses."""
        return sym(self.lanes_macro) if self.lanes > 1 else const(1)

    @property
    def words(self) -> Expr:
        """Words of the whole image."""
        if self.kind == "serialized":
            n: Expr = self.visit_words
            for a in self.tiles:
                n = n * a.trip
            return n
        total = 1
        for d in self.row_major_shape:
            total *= d
        return const(total) // sym(self.lanes_macro)

    def word_index(self) -> str:
        """C index of the current word, in the kernel's loop variables."""
        if self.kind == "serialized":
            tile = _linear(self.tiles)
            visit = _linear(self.visit)
            return f"({tile}) * ({to_c(self.visit_words)}) + {visit}" if self.tiles else visit
        # row-major: the padded array's flat index of the word's first element, over lanes
        flat = self.coords[0]
        for d in range(1, len(self.coords)):
            flat = f"({flat}) * {self.row_major_shape[d]} + {self.coords[d]}"
        return f"({flat}) / {self.lanes_macro}" if self.lanes > 1 else flat

    def serial_index(self) -> str:
        """C index of the current word in a serialized image, for the host's loops (which
        enumerate ``tiles`` and ``visit`` in order)."""
        tile = _linear(self.tiles)
        visit = _linear(self.visit)
        return f"({tile}) * ({to_c(self.visit_words)}) + {visit}" if self.tiles else visit


def _linear(axes: tuple[Axis, ...]) -> str:
    """Mixed-radix linear index of the axes' variables (the first axis outermost)."""
    if not axes:
        return "0"
    text = axes[0].var
    for a in axes[1:]:
        text = f"({text}) * ({to_c(a.trip)}) + {a.var}"
    return text


def _tile_value(ctx: Ctx, loop: str) -> str:
    g = ctx.g(loop)
    return f"{g.lower} + t_{loop} * T_{loop}1" if g.lower else f"t_{loop} * T_{loop}1"


def _tiles(ctx: Ctx, op: OperandGeom) -> tuple[Axis, ...]:
    return tuple(Axis(f"t_{n}", ctx.g(n).tiles_sym) for n in ctx.order[: op.trunc] if op.dep(n))


def box_var(op: OperandGeom, d: int) -> str:
    """The loop variable over box dimension ``d`` in words: ``ew`` along the pack dimension
    (words of ``lanes`` elements), ``e<d>`` along the others (single elements)."""
    return "ew" if d == op.pack_dim else f"e{d}"


def box_axes(op: OperandGeom) -> tuple[Axis, ...]:
    """The box's dimensions in words, outer first: ``ext_d / pack_d`` (symbolic in the pack
    rule, so the trip is right at every tiling whichever dimension packs)."""
    return tuple(Axis(box_var(op, d), op.words_sym(d)) for d in range(len(op.box_sym)))


def input_visit(ctx: Ctx, op: OperandGeom) -> tuple[Axis, ...]:
    """The words of one visit of input ``op``, in the L3 reader's order: the module positions
    (``b_<loop>``), then the box's dimensions (:func:`box_axes`); or, when the boxes of
    consecutive modules abut along the innermost dimension (``rows_outer``), the rows
    outermost and the positions between the rows and the words of a row."""
    axes = box_axes(op)
    positions = tuple(Axis(f"b_{s}", ctx.g(s).outer_sym) for s in op.inj)
    if op.rows_outer:
        return (*axes[:-1], *positions, *axes[-1:])
    return (*positions, *axes)


def input_layout(ctx: Ctx, op: OperandGeom) -> DramLayout:
    vals = {n: _tile_value(ctx, n) + (f" + b_{n} * T_{n}2" if n in op.inj else "")
            for n in ctx.order}
    coords = []
    for d, sub in enumerate(op.ref.subscripts):
        elem = f"ew * {op.lanes_macro}" if d == op.pack_dim else f"e{d}"
        coords.append(f"{index_c(sub, vals)} + {elem}")
    return DramLayout(op.name, op.layout, _tiles(ctx, op), input_visit(ctx, op), tuple(coords),
                      op.lanes, op.lanes_macro, op.dram_shape, pack_dim=op.pack_dim)


def output_visit(ctx: Ctx, op: OperandGeom) -> tuple[Axis, ...]:
    """The words of one visit of the output, in the writer's order: the module positions along
    the output's injection loops, then the words ``aw`` of the flattened accumulator block
    (serialized), or its axes ``a_<loop>``, one element each (row-major)."""
    positions = tuple(Axis(f"b_{s}", ctx.g(s).outer_sym) for s in op.inj)
    if op.layout == "serialized":
        return (*positions, Axis("aw", ctx.out_words_sym()))
    return (*positions, *(Axis(f"a_{name}", size) for name, size, _ in ctx.acc_dims()))


def _acc_decls(ctx: Ctx, op: OperandGeom) -> tuple[tuple[str, str], ...]:
    """``f``, the element's index in the flattened accumulator block (word ``aw``, lane
    ``{lane}``), and its axes ``a_<loop>`` (the last axis fastest)."""
    f = f"aw * {op.lanes_macro} + {{lane}}" if op.lanes > 1 else "aw"
    out = [("f", f)]
    stride = ""
    if ctx.pe_words:  # the PE's order (Ctx.emission_axes): its pipeline's parallel loops
        for var, _, trip in reversed(ctx.emission_axes()):
            div = f"f / ({stride})" if stride else "f"
            out.append((var, f"{div} % ({to_c(trip)})"))
            stride = f"{stride} * ({to_c(trip)})" if stride else f"({to_c(trip)})"
        local = [(f"a_{name}", ctx.local(name, "0")) for name, _, _ in ctx.acc_dims()]
        return (out[0], *reversed(out[1:]), *local)
    for name, size, _ in reversed(ctx.acc_dims()):
        div = f"f / ({stride})" if stride else "f"
        out.append((f"a_{name}", f"{div} % ({to_c(size)})"))
        stride = f"{stride} * ({to_c(size)})" if stride else f"({to_c(size)})"
    return (out[0], *reversed(out[1:]))


def output_layout(ctx: Ctx, op: OperandGeom) -> DramLayout:
    vals: dict[str, str] = {}
    for name, _, _ in ctx.acc_dims():
        g = ctx.g(name)
        base = _tile_value(ctx, name)
        vals[name] = f"{base} + b_{name} * T_{name}2 + a_{name}" if g.space else f"{base} + a_{name}"
    coords = tuple(index_c(sub, vals) for sub in op.ref.subscripts)
    decls = _acc_decls(ctx, op) if op.layout == "serialized" else ()
    return DramLayout(op.name, op.layout, _tiles(ctx, op), output_visit(ctx, op), coords or ("0",),
                      op.lanes, op.lanes_macro, op.dram_shape, decls)


def dram_layout(ctx: Ctx, op: OperandGeom) -> DramLayout:
    """The DRAM image of ``op`` (an input or the output)."""
    return input_layout(ctx, op) if op.role == "input" else output_layout(ctx, op)


__all__ = ["LAYOUTS", "Axis", "DramLayout", "Layout", "box_axes", "box_var", "dram_layout", "input_layout",
           "input_visit", "output_layout", "output_visit"]
