"""The host testbench: built from AST nodes, its DRAM images read from the array IR."""

from __future__ import annotations

from math import prod
from pathlib import Path

from odyssey.codegen.generate import _build, generate
from odyssey.codegen.hls_ast import (
    Call,
    Commented,
    Decls,
    ForEach,
    ForRange,
    Guard,
    Line,
    Return,
    Scope,
    print_function,
    print_stmt,
    stmt_json,
)
from odyssey.codegen.host import reference_function
from odyssey.frontend import load_scop
from tests.codegen.conftest import space_of

MM = {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 2}


def _printed(*stmts: object) -> list[str]:
    out: list[str] = []
    for s in stmts:
        print_stmt(s, 1, out)  # type: ignore[arg-type]
    return out


def test_layouts_of_the_host_statements() -> None:
    body = (Line("x = 1"),)
    assert _printed(ForRange("i", "1", "N", body)) == ["  for (int i = 1; i < N; i++) {", "    x = 1;", "  }"]
    assert _printed(ForRange("i", "0", "4", (ForRange("j", "0", "3", (Scope(body),), layout="bare"),),
                             layout="bare")) == [
        "  for (int i = 0; i < 4; i++)", "    for (int j = 0; j < 3; j++)", "      {", "        x = 1;", "      }"]
    assert _printed(ForEach("auto &x", "v", body)) == ["  for (auto &x : v) x = 1;"]
    assert _printed(Guard("e", (Call("f", ("1",)), Return("1")))) == ["  if (e) { f(1); return 1; }"]
    assert _printed(Guard("e", body, layout="block"), Return()) == ["  if (e) {", "    x = 1;", "  }", "  return;"]
    assert _printed(Decls("int", (("a", "1"), ("b", "a")))) == ["  int a = 1, b = a;"]
    assert _printed(Commented(Call("g", ()), "why")) == ["  g();  // why"]
    assert stmt_json(Guard("e", body))["type"] == "if"
    assert stmt_json(ForRange("i", "0", "N", body))["body"] == [{"type": "stmt", "text": "x = 1"}]


def test_reference_keeps_lower_bounds_and_guards(tmp_path: Path) -> None:
    src = tmp_path / "guard.c"
    src.write_text("#define N 12\n#define M 10\nvoid k(float A[N][M], float B[N]) {\n#pragma scop\n"
                   "  for (int i = 1; i < N; i++) {\n    B[i] = 0;\n    for (int j = i - 1; j < M; j++)\n"
                   "      if (i + j >= 3)\n        B[i] += A[i][j] * A[i - 1][j];\n  }\n#pragma endscop\n}\n")
    # the expected text is what the string-built generator before this AST rewrite printed
    assert print_function(reference_function(load_scop(src))) == "\n".join([
        "static void reference(float B[12], float A[12][10]) {",
        "  for (int i = 1; i < N; i++) {",
        "    B[i] = 0;",
        "    for (int j = i - 1; j < M; j++) {",
        "      if ((i + j - 3) >= 0) B[i] += A[i][j] * A[i - 1][j];",
        "    }",
        "  }",
        "}"])


def test_host_images_describe_what_the_host_builds() -> None:
    ks = space_of("mm.c", I="37", J="41", K="43")
    design = ks.design("ij-jk.i")  # reads partial sums back: the output image is read and written
    ir = _build(ks, design, MM, "u250").ir
    images = {im.operand: im for im in ir.host_images}
    assert [(im.operand, im.access, im.packed) for im in ir.host_images] == [
        ("A", "read", True), ("B", "read", True), ("C", "read_write", True)]
    assert images["A"].shape == (37, 43) and images["C"].shape == (37, 41)
    assert images["A"].lanes > 1 and images["C"].lanes > 1  # serialized images pack words
    for p in ir.ports:  # the image behind every port holds exactly the words the port declares
        im = images[p.operand]
        assert (im.words, im.lanes, im.word_type) == (p.words, p.lanes, p.ctype)
    rows = _build(ks, design, MM, "u250", {"A": "row_major", "B": "row_major", "C": "row_major"}).ir
    for im in rows.host_images:  # row-major: the padded array, lanes to a word
        assert im.words * im.lanes == prod(im.dram_shape)
    assert [im.packed for im in rows.host_images] == [True, True, False]  # the output: elements
    host = dict(generate(ks, design, MM).files)["host.cpp"]
    for im in ir.host_images:
        assert f"std::vector<{im.word_type}> {im.operand}_dram({im.words});" in host
    assert "kernel0(A_dram.data(), B_dram.data(), C_dram.data(), C_dram.data());" in host
