"""The host testbench: seeded random inputs, the original loop nest as reference, compare.

Arrays keep their original shapes on the host; the kernel sees zero-padded DRAM images
(packed words for inputs, elements for the output), laid out as the array IR's
:class:`~odyssey.codegen.array_ir.HostImage` says. Integers must match exactly;
floating-point results must satisfy ``|hw - ref| <= 1e-3 + 1e-4 * |ref|`` (the array sums
in a different order than the loop nest). The testbench is built as AST nodes and printed.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

from odyssey.codegen.array_ir import ArrayIR, HostImage
from odyssey.codegen.context import of_bits
from odyssey.codegen.hls_ast import (
    Call,
    Commented,
    Decl,
    Decls,
    For,
    ForEach,
    ForRange,
    Function,
    Guard,
    If,
    Line,
    Param,
    Return,
    Scope,
    Stmt,
    Unit,
    print_unit,
)
from odyssey.polyhedral.affine import Affine
from odyssey.polyhedral.scop import Array, Scalar, Scop, Statement

FLOAT_ATOL = 1e-3
FLOAT_RTOL = 1e-4
_INCLUDES = ('"kernel.h"', "<cmath>", "<cstdio>", "<random>", "<vector>")


def host_source(scop: Scop, ir: ArrayIR, *, seed: int) -> str:
    """The text of ``host.cpp``: the reference function and ``main`` (see :func:`host_main`)."""
    return print_unit(Unit("", _INCLUDES, (reference_function(scop), host_main(scop, ir, seed=seed))))


def reference_function(scop: Scop) -> Function:
    """``static void reference(...)``: the scop's loop nest over the original arrays (loops
    with their lower bounds, statements under their guards)."""
    params = tuple(Param(a.elem, a.name, array_dims=tuple(str(n) for n in _shape(scop, a)))
                   for a in scop.arrays)
    params += tuple(Param(sc.elem, sc.name) for sc in scop.scalars)
    return Function("reference", params, _nest(scop.statements, 0), qualifiers="static")


def _nest(stmts: tuple[Statement, ...], depth: int) -> tuple[Stmt, ...]:
    """Statements at loop depth ``depth``: consecutive statements under the same loop share
    one ``for``; a statement with no loop left is itself, guarded by its extra constraints."""
    out: list[Stmt] = []
    k = 0
    while k < len(stmts):
        s = stmts[k]
        if len(s.loops) == depth:
            guard = " && ".join(_guard_c(a, kind) for a, kind in s.guards)
            out.append(Guard(guard, (Line(s.text),)) if guard else Line(s.text))
            k += 1
            continue
        loop = s.loops[depth]
        end = k + 1
        while end < len(stmts) and len(stmts[end].loops) > depth and stmts[end].loops[depth] == loop:
            end += 1
        out.append(ForRange(loop.name, str(loop.lower), str(loop.upper), _nest(stmts[k:end], depth + 1)))
        k = end
    return tuple(out)


def _guard_c(a: Affine, kind: str) -> str:
    return f"({a}) {'>=' if kind == '>=0' else '=='} 0"


def host_main(scop: Scop, ir: ArrayIR, *, seed: int) -> Function:
    """``int main()``: fill the original arrays from ``std::mt19937(seed)``, build the DRAM
    images, call ``kernel0`` and ``reference``, compare the output, print PASS or FAIL."""
    out = next(im for im in ir.host_images if im.access != "read")
    body: list[Stmt] = [Decl("std::mt19937", "rng", ctor_args=(f"{seed}u",))]
    for a in scop.arrays:
        body += _random_array(a, _shape(scop, a))
    body += [s for im in ir.host_images for s in _image(im)]
    body += [s for sc in scop.scalars for s in _random_scalar(sc)]
    scalars = tuple(sc.name for sc in scop.scalars)
    # one buffer per operand: the partial-sum port reads the one the output port writes
    body += [Call("kernel0", tuple(f"{p.operand}_dram.data()" for p in ir.ports) + scalars),
             Commented(Call("ODYSSEY_TIMED_REPORT", ()), "cycle counts of a timed simulation; nothing otherwise"),
             Call("reference", tuple(a.name for a in scop.arrays) + scalars),
             Decl("long", "errors", init="0"),
             *((Decl("long", "seen", init="0"),) if out.layout.kind == "serialized" else ()),
             _compare(out)]
    total = prod(out.shape)
    if out.layout.kind == "serialized":  # every output element must come back exactly once
        body.append(Guard(f"seen != {total}", (
            Call("std::printf", (f'"ODYSSEY CSIM FAIL %ld of {total} outputs in the image\\n"', "seen")),
            Return("1"))))
    body += [Guard("errors", (Call("std::printf", (f'"ODYSSEY CSIM FAIL %ld of {total} outputs differ\\n"', "errors")),
                              Return("1"))),
             Call("std::printf", (f'"ODYSSEY CSIM PASS {total} outputs match\\n"',)),
             Return("0")]
    return Function("main", (), tuple(body), returns="int")


def _shape(scop: Scop, a: Array) -> tuple[int, ...]:
    return tuple(d.evaluate(scop.param_values) for d in a.shape)


def _random_array(a: Array, shape: tuple[int, ...]) -> list[Stmt]:
    """``{a}_buf``, a vector of the array's elements, seen as ``a`` with the array's shape,
    filled with uniform values: reals in [-1, 1); 8-bit integers over their whole range
    ([-128, 127], [0, 255] unsigned: the extremes of a quantized datapath, whose products and
    sums fit a C ``int`` for any reduction shorter than 2^17); wider integers in [-8, 7] ([0, 15]
    unsigned: a full-range 16-bit product already overflows the ``int`` C promotes it to)."""
    dims = "".join(f"[{n}]" for n in shape[1:])
    view = f"reinterpret_cast<{a.elem} (*){dims}>({a.name}_buf.data())" if len(shape) > 1 else f"{a.name}_buf.data()"
    if a.is_float:
        dist, bounds = f"std::uniform_real_distribution<{a.elem}>", ("-1", "1")
    else:
        unsigned = a.elem.startswith("unsigned") or a.elem.startswith("uint")
        if a.bits == 8:
            bounds = ("0", "255") if unsigned else ("-128", "127")
        else:
            bounds = ("0", "15") if unsigned else ("-8", "7")
        dist = "std::uniform_int_distribution<int>"
    return [Decl(f"std::vector<{a.elem}>", f"{a.name}_buf", ctor_args=(str(prod(shape)),)),
            Decl("auto", a.name, init=view),
            Decl(dist, f"dist_{a.name}", ctor_args=bounds),
            ForEach("auto &x", f"{a.name}_buf", (Line(f"x = ({a.elem})dist_{a.name}(rng)"),))]


def _random_scalar(sc: Scalar) -> list[Stmt]:
    """A scalar argument drawn from the same generator: reals in [0.5, 1.5), integers in
    [1, 3] (nonzero, so a scaling by it is seen)."""
    if sc.is_float:
        dist, bounds = f"std::uniform_real_distribution<{sc.elem}>", ("0.5", "1.5")
    else:
        dist, bounds = "std::uniform_int_distribution<int>", ("1", "3")
    return [Decl(dist, f"dist_{sc.name}", ctor_args=bounds),
            Decl(sc.elem, sc.name, init=f"({sc.elem})dist_{sc.name}(rng)")]


def _image(im: HostImage) -> list[Stmt]:
    """``{operand}_dram``, the DRAM image of ``im`` (zero words), and the loops copying the
    array into it: elements packed ``lanes`` to a word for an input, one per word otherwise."""
    decl = Decl(f"std::vector<{im.word_type}>", f"{im.operand}_dram", ctor_args=(str(im.words),))
    if im.layout.kind == "serialized":
        return [decl, _serialize(im)]
    idx = _indices(im)
    src = f"{im.array}_buf[{_flat(im.shape, idx)}]"
    store: Stmt
    if im.packed:
        lanes, b = im.lanes, im.bits
        store = Scope((Decl("long", "f", init=_flat(im.dram_shape, idx)),
                       Line(f"{im.operand}_dram[f / {lanes}](f % {lanes} * {b} + {b - 1}, f % {lanes} * {b}) "
                            f"= bits_of({src})")))
    else:
        store = Line(f"{im.operand}_dram[{_flat(im.dram_shape, idx)}] = {src}")
    return [decl, _loops(im.shape, store)]


def _serial_loops(im: HostImage, body: tuple[Stmt, ...]) -> Stmt:
    """``body`` inside the loops of a serialized image: every distinct tile, then the words of
    one visit in the kernel's order; ``k`` is the word's index in the image."""
    lay = im.layout
    inner: tuple[Stmt, ...] = (Decl("long", "k", init=lay.serial_index()), *body)
    for a in reversed((*lay.tiles, *lay.visit)):
        inner = (For(a.var, a.trip, inner),)
    return inner[0]


def _coords(im: HostImage, lane: str | None) -> tuple[tuple[Stmt, ...], str, str]:
    """Declarations of the element's coordinates ``c0 ..`` for lane ``lane`` of the current
    word (along the layout's pack dimension for an input, along the flattened accumulator
    block for a serialized output), the C test that they lie in the original array, and its flat index
    there."""
    lay = im.layout
    pre: tuple[Stmt, ...] = ()
    coords = list(lay.coords)
    if lay.lane_decls:
        pre = (Decls("long", tuple((n, v.format(lane=lane or "0")) for n, v in lay.lane_decls)),)
    elif lane is not None:
        coords[lay.pack_dim] = f"{coords[lay.pack_dim]} + {lane}"
    names = tuple(f"c{d}" for d in range(len(coords)))
    decls = (*pre, Decls("long", tuple(zip(names, coords, strict=True))))
    inside = " && ".join(f"{c} >= 0 && {c} < {n}" for c, n in zip(names, im.shape, strict=True))
    return decls, inside, _flat(im.shape, names)


def _lanes(im: HostImage, body: Callable[[str | None], tuple[Stmt, ...]]) -> tuple[Stmt, ...]:
    """``body(lane)`` for every lane of the current word (``None`` for unpacked words)."""
    if not im.packed:
        return body(None)
    return (For("ln", im.layout.lanes_trip, (Scope(body("ln")),)),)


def _serialize(im: HostImage) -> Stmt:
    """Write the array into its serialized image in the kernel's order; elements outside the
    array (padding) stay zero."""
    b = im.bits

    def store(lane: str | None) -> tuple[Stmt, ...]:
        decls, inside, flat = _coords(im, lane)
        src = f"{im.array}_buf[{flat}]"
        put = (f"{im.operand}_dram[k](ln * {b} + {b - 1}, ln * {b}) = bits_of({src})" if lane is not None
               else f"{im.operand}_dram[k] = {src}")
        return (*decls, Guard(inside, (Line(put),)))

    return _serial_loops(im, _lanes(im, store))


def _compare(out: HostImage) -> Stmt:
    """Loops over the output comparing the kernel's image (``hw``) with the reference (``sw``);
    the first five mismatches are printed, all are counted in ``errors`` and the compared
    elements in ``seen``."""
    serial = out.layout.kind == "serialized"
    if out.is_float:
        bad = f"std::fabs((double)hw - (double)sw) > {FLOAT_ATOL} + {FLOAT_RTOL} * std::fabs((double)sw)"
    else:
        bad = "hw != sw"
    idx = tuple(f"c{d}" for d in range(len(out.shape))) if serial else _indices(out)
    fmt = f'"mismatch at {",".join("%ld" if serial else "%d" for _ in idx)}: hw=%g ref=%g\\n"'
    report = Guard("errors < 5", (Call("std::printf", (fmt, *idx, "(double)hw", "(double)sw")),))

    def check(hw: str, sw: str) -> tuple[Stmt, ...]:
        return (Decls(out.elem, (("hw", hw), ("sw", sw))), If(bad, (report, Line("errors++"))))

    if not serial:
        hw, sw = f"{out.operand}_dram[{_flat(out.dram_shape, idx)}]", f"{out.array}_buf[{_flat(out.shape, idx)}]"
        return _loops(out.shape, Scope(check(hw, sw)))
    b = out.bits

    def compare(lane: str | None) -> tuple[Stmt, ...]:
        decls, inside, flat = _coords(out, lane)
        hw = (f"{of_bits(out.elem)}({out.operand}_dram[k](ln * {b} + {b - 1}, ln * {b}))" if lane is not None
              else f"{out.operand}_dram[k]")
        return (*decls, If(inside, (Line("seen++"), *check(hw, f"{out.array}_buf[{flat}]"))))

    return _serial_loops(out, _lanes(out, compare))


def _indices(im: HostImage) -> tuple[str, ...]:
    return tuple(f"d{d}" for d in range(len(im.shape)))


def _flat(shape: tuple[int, ...], idx: tuple[str, ...]) -> str:
    """C text of the row-major flat index of ``idx`` in an array of ``shape``."""
    text = idx[0]
    for d in range(1, len(shape)):
        text = f"({text}) * {shape[d]} + {idx[d]}"
    return text


def _loops(shape: tuple[int, ...], body: Stmt) -> Stmt:
    """``body`` inside one loop ``d{k}`` over each dimension of ``shape``, outermost first."""
    for d in reversed(range(len(shape))):
        body = ForRange(f"d{d}", "0", str(shape[d]), (body,), layout="bare")
    return body


__all__ = ["FLOAT_ATOL", "FLOAT_RTOL", "host_main", "host_source", "reference_function"]
