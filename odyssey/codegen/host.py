"""The host testbench: seeded random inputs, the original loop nest as reference, compare.

Arrays keep their original shapes on the host; the kernel sees zero-padded DRAM images
(packed words for inputs, elements for the output). Integers must match exactly;
floating-point results must satisfy ``|hw - ref| <= 1e-3 + 1e-4 * |ref|`` (the array sums
in a different order than the loop nest).
"""

from __future__ import annotations

from odyssey.codegen.array_ir import ArrayIR
from odyssey.codegen.context import Ctx
from odyssey.codegen.geometry import OperandGeom
from odyssey.polyhedral.scop import Scop, Statement

FLOAT_ATOL = 1e-3
FLOAT_RTOL = 1e-4


def _shape(scop: Scop, name: str) -> list[int]:
    values = scop.param_values
    return [d.evaluate(values) for d in scop.array(name).shape]


def reference_function(scop: Scop) -> str:
    """The scop's loop nest as a C++ function over the original arrays."""
    params = []
    for a in scop.arrays:
        params.append(f"{a.elem} {a.name}" + "".join(f"[{d.evaluate(scop.param_values)}]" for d in a.shape))
    lines = [f"static void reference({', '.join(params)}) {{"]
    _emit_nest(list(scop.statements), 0, lines, 1)
    lines.append("}")
    return "\n".join(lines)


def _emit_nest(stmts: list[Statement], depth: int, out: list[str], indent: int) -> None:
    k = 0
    while k < len(stmts):
        s = stmts[k]
        pad = "  " * indent
        if len(s.loops) == depth:
            guard = " && ".join(_guard_c(a, kind) for a, kind in s.guards)
            stmt = f"{s.text};"
            out.append(f"{pad}if ({guard}) {stmt}" if guard else f"{pad}{stmt}")
            k += 1
            continue
        loop = s.loops[depth]
        group = [s]
        k += 1
        while k < len(stmts) and len(stmts[k].loops) > depth and stmts[k].loops[depth] == loop:
            group.append(stmts[k])
            k += 1
        out.append(f"{pad}for (int {loop.name} = {loop.lower}; {loop.name} < {loop.upper}; {loop.name}++) {{")
        _emit_nest(group, depth + 1, out, indent + 1)
        out.append(f"{pad}}}")


def _guard_c(a: object, kind: str) -> str:
    return f"({a}) {'>=' if kind == '>=0' else '=='} 0"


def _flat(shape: list[int], idx: list[str]) -> str:
    text = idx[0]
    for d in range(1, len(shape)):
        text = f"({text}) * {shape[d]} + {idx[d]}"
    return text


def _loops(shape: list[int], body: list[str], indent: int) -> list[str]:
    out = []
    for d, n in enumerate(shape):
        out.append("  " * (indent + d) + f"for (int d{d} = 0; d{d} < {n}; d{d}++)")
    out.extend("  " * (indent + len(shape)) + b for b in body)
    return out


def host_source(ctx: Ctx, ir: ArrayIR, seed: int) -> str:
    scop = ctx.scop
    out_op = ctx.output
    lines = ['#include "kernel.h"', "#include <cmath>", "#include <cstdio>", "#include <random>",
             "#include <vector>", "", reference_function(scop), "", "int main() {",
             f"  std::mt19937 rng({seed}u);"]
    # original arrays
    for a in scop.arrays:
        shp = _shape(scop, a.name)
        total = 1
        for n in shp:
            total *= n
        dims = "".join(f"[{n}]" for n in shp[1:])
        lines.append(f"  std::vector<{a.elem}> {a.name}_buf({total});")
        cast = f"reinterpret_cast<{a.elem} (*){dims}>({a.name}_buf.data())" if len(shp) > 1 else f"{a.name}_buf.data()"
        lines.append(f"  auto {a.name} = {cast};")
        if a.is_float:
            gen = f"std::uniform_real_distribution<{a.elem}> dist_{a.name}(-1, 1);"
        elif a.elem.startswith("unsigned"):
            gen = f"std::uniform_int_distribution<int> dist_{a.name}(0, 15);"
        else:
            gen = f"std::uniform_int_distribution<int> dist_{a.name}(-8, 7);"
        lines.append(f"  {gen}")
        lines.append(f"  for (auto &x : {a.name}_buf) x = ({a.elem})dist_{a.name}(rng);")
    lines.append("  std::vector<" + out_op.ctype + f"> {out_op.name}_init({out_op.name}_buf);")
    # DRAM images
    for op in ctx.inputs:
        lines.extend(_pack_input(scop, op))
    lines.extend(_output_image(scop, out_op))
    # one buffer per operand: the partial-sum port reads the one the output port writes
    call = [f"{p.operand}_dram.data()" for p in ir.ports]
    lines.append(f"  kernel0({', '.join(call)});")
    lines.append("  ODYSSEY_TIMED_REPORT();  // cycle counts of a timed simulation; nothing otherwise")
    lines.append(f"  reference({', '.join(a.name for a in scop.arrays)});")
    shp = _shape(scop, out_op.array.name)
    pshp = list(out_op.dram_shape)
    idx = [f"d{d}" for d in range(len(shp))]
    cmp = (f"{out_op.ctype} hw = {out_op.name}_dram[{_flat(pshp, idx)}], "
           f"sw = {out_op.name}_buf[{_flat(shp, idx)}];")
    if out_op.array.is_float:
        bad = f"std::fabs((double)hw - (double)sw) > {FLOAT_ATOL} + {FLOAT_RTOL} * std::fabs((double)sw)"
    else:
        bad = "hw != sw"
    lines.append("  long errors = 0;")
    lines.extend(_loops(shp, ["{", f"  {cmp}", f"  if ({bad}) {{",
                              "    if (errors < 5) std::printf(\"mismatch at " + ",".join("%d" for _ in idx)
                              + ": hw=%g ref=%g\\n\", " + ", ".join(idx) + ", (double)hw, (double)sw);",
                              "    errors++;", "  }", "}"], 1))
    total_out = 1
    for n in shp:
        total_out *= n
    lines.append(f'  if (errors) {{ std::printf("ODYSSEY CSIM FAIL %ld of {total_out} outputs differ\\n", errors); return 1; }}')
    lines.append(f'  std::printf("ODYSSEY CSIM PASS {total_out} outputs match\\n");')
    lines.append("  return 0;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _pack_input(scop: Scop, op: OperandGeom) -> list[str]:
    shp = _shape(scop, op.array.name)
    pshp = list(op.dram_shape)
    total = 1
    for n in pshp:
        total *= n
    words = total // op.lanes
    idx = [f"d{d}" for d in range(len(shp))]
    src = f"{op.array.name}_buf[{_flat(shp, idx)}]"
    flat = _flat(pshp, idx)
    b = op.bits
    body = ["{", f"  long f = {flat};",
            f"  {op.name}_dram[f / {op.lanes}](f % {op.lanes} * {b} + {b - 1}, f % {op.lanes} * {b}) = bits_of({src});",
            "}"]
    return [f"  std::vector<{op.word_type}> {op.name}_dram({words});", *_loops(shp, body, 1)]


def _output_image(scop: Scop, op: OperandGeom) -> list[str]:
    shp = _shape(scop, op.array.name)
    pshp = list(op.dram_shape)
    total = 1
    for n in pshp:
        total *= n
    idx = [f"d{d}" for d in range(len(shp))]
    body = [f"{op.name}_dram[{_flat(pshp, idx)}] = {op.array.name}_buf[{_flat(shp, idx)}];"]
    return [f"  std::vector<{op.ctype}> {op.name}_dram({total});", *_loops(shp, body, 1)]
