"""C front end: preprocessing, scop extraction, statements, accesses and isl model."""

from __future__ import annotations

from pathlib import Path

from odyssey.frontend import load_scop, parse_kernel
from odyssey.polyhedral.dependences import exact_dependences


def test_mm_scop(kernels_dir: Path) -> None:
    scop = load_scop(kernels_dir / "mm.c")
    assert scop.params == (("I", 64), ("J", 64), ("K", 64))
    assert [a.name for a in scop.arrays] == ["C", "A", "B"]
    init, main = scop.statements
    assert init.text == "C[i][j] = 0" and init.iterators == ("i", "j")
    assert main.op == "+=" and main.iterators == ("i", "j", "k")
    assert [r.ref_id for r in main.refs] == ["S1_C_0", "S1_A_0", "S1_B_0"]


def test_defines_override_sizes(kernels_dir: Path) -> None:
    scop = load_scop(kernels_dir / "mm.c", {"I": "37", "J": "41", "K": "43"})
    assert scop.param_values == {"I": 37, "J": 41, "K": 43}
    main = scop.statements[1]
    assert scop.domain(main).count_val().to_python() == 37 * 41 * 43


def test_cnn_subscripts_and_shapes(kernels_dir: Path) -> None:
    scop = load_scop(kernels_dir / "cnn.c")
    assert str(scop.array("fi").shape[1]) == "H + P - 1"
    main = scop.statements[1]
    fi = main.ref("S1_fi_0")
    assert [str(s) for s in fi.subscripts] == ["i", "h + p", "q + w"]


def test_triangular_domain(kernels_dir: Path) -> None:
    scop = load_scop(kernels_dir / "syrk.c", {"N": "4", "K": "2"})
    main = scop.statements[0]
    assert main.loops[1].upper.coeff("i") == 1  # j <= i
    # 4*5/2 = 10 (i, j) pairs times K = 2
    assert scop.domain(main).count_val().to_python() == 20


def test_guards_and_operators(tmp_path: Path) -> None:
    src = tmp_path / "g.c"
    src.write_text("""#define N 8
void f(int A[N][N], int B[N]) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      if (j <= i && i - j < 3)
        B[i] -= 2 * A[i][j] + -A[j][i];
#pragma endscop
}
""")
    scop = parse_kernel(src, src.read_text())[0]
    st = scop.statements[0]
    assert st.op == "-=" and len(st.guards) == 2
    assert scop.domain(st).is_subset(scop.domain(st))


def test_several_scops_and_element_types(tmp_path: Path) -> None:
    src = tmp_path / "two.c"
    src.write_text("""#define N 4
void f(unsigned char a[N], short b[N], double c[N]) {
#pragma scop
  for (int i = 0; i < N; i++) b[i] *= a[i];
#pragma endscop
#pragma scop
  for (int i = 0; i < N; i++) c[i] = c[i] + 1.5;
#pragma endscop
}
""")
    scops = parse_kernel(src, src.read_text())
    assert len(scops) == 2
    assert scops[0].array("a").elem == "unsigned char" and scops[0].array("b").bits == 16
    assert scops[1].array("c").elem == "double"


def test_exact_dependences_mm(kernels_dir: Path) -> None:
    deps = exact_dependences(load_scop(kernels_dir / "mm.c"))
    flow = {(d.source, d.sink): d.distance for d in deps if d.kind == "flow"}
    assert flow[("S1_C_0", "S1_C_0")] == (0, 0, 1)
    assert flow[("S0_C_0", "S1_C_0")] == (0, 0)
    read = {(d.source, d.sink): d.distance for d in deps if d.kind == "read"}
    assert read[("S1_A_0", "S1_A_0")] == (0, 1, 0)
    assert read[("S1_B_0", "S1_B_0")] == (1, 0, 0)
    out = {(d.source, d.sink): d.distance for d in deps if d.kind == "output"}
    assert out[("S1_C_0", "S1_C_0")] == (0, 0, 1)


def test_exact_dependences_anti(tmp_path: Path) -> None:
    src = tmp_path / "anti.c"
    src.write_text("""#define N 8
void f(float A[N], float B[N]) {
#pragma scop
  for (int i = 0; i < N; i++) { B[i] = A[i]; A[i] = 0; }
#pragma endscop
}
""")
    deps = exact_dependences(parse_kernel(src, src.read_text())[0])
    anti = [d for d in deps if d.kind == "anti"]
    assert [(d.source, d.sink, d.distance) for d in anti] == [("S0_A_0", "S1_A_0", (0,))]
