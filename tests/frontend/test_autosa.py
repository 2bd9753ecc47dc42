"""Kernels in the forms of AutoSA's test corpus (kernels/autosa/, written for odyssey, not
copied): design counts derived by hand, and the uniformized LU's rejection with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from odyssey.cli import main
from odyssey.frontend import load_scop, parse_kernel
from odyssey.mapping.space import analyse

COUNTS = [
    # C[i][j][k] = C + A[i][j][l]*B[k][l]: RL(C)={l}, RL(A)={k}, RL(B)={i,j}: 3 orderings;
    # every reuse vector is unit, 4 legal loops: 4 + 6 dataflows.
    ("ttm.c", 10, 3),
    # int8 MM with B[j][k]: RL(C)={k}, RL(A)={j}, RL(B)={i}: as MM, 6 x 3.
    ("mm_int8.c", 6, 3),
    # cin[r+p][c+q][i] reuses along e_o, e_r-e_p, e_c-e_q (p, q illegal: -1), RL(cin)={o};
    # RL(cout)={i,p,q}, RL(wt)={r,c}: 3 orderings; o, r, c, i legal: 4 + 6 dataflows (= CNN).
    ("pointwise.c", 10, 3),
    # depthwise: cin[r+p][c+q][o] has no unit reuse vector, so its ordering is cout's
    # (o,r,c,p,q); RL(wt)={r,c}: 2 orderings; o, r, c legal: 3 + 3 dataflows.
    ("depthwise.c", 6, 2),
    # FC: cout[i] {j}, cin[i][j] {}, wt[j] {i}: orders (i,j), (j,i); [i], [j], [i,j].
    ("fc.c", 3, 2),
]


@pytest.mark.parametrize(("kernel", "dataflows", "orderings"), COUNTS, ids=[c[0] for c in COUNTS])
def test_autosa_forms_mapped(kernels_dir: Path, kernel: str, dataflows: int, orderings: int) -> None:
    ks = analyse(load_scop(kernels_dir / "autosa" / kernel))
    assert len({d.dataflow for d in ks.designs}) == dataflows
    assert len(ks.orderings) == orderings
    assert len(ks.designs) == dataflows * orderings
    assert ks.initializers == ("S0",)


def test_mm_int8_types(kernels_dir: Path) -> None:
    scop = load_scop(kernels_dir / "autosa" / "mm_int8.c")
    assert scop.array("A").elem == "signed char" and scop.array("C").elem == "int"


def test_uniformized_lu_rejected_with_reason(kernels_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Local arrays declared in the scop and `if`/`else` guards parse; the kernel is then
    rejected as a system of several statements, which odyssey's one-statement PEs do not map."""
    assert main(["designs", str(kernels_dir / "autosa" / "lu_uniform.c")]) == 2
    err = capsys.readouterr().err
    assert "lu_uniform.c:19:" in err and "system of 9 statements computing 6 arrays" in err
    assert "AutoSA's uniformized LU" in err and "one statement" in err


def test_plain_lu_suggests_uniformized_form(kernels_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["designs", str(kernels_dir / "lu.c")]) == 2
    err = capsys.readouterr().err
    assert "not uniform" in err and "uniformize it" in err and "lu_uniform.c" in err


def test_else_branch_is_the_complement(tmp_path: Path) -> None:
    src = tmp_path / "e.c"
    text = """#define N 8
void f(float A[N][N], float B[N][N]) {
#pragma scop
  for (int k = 0; k < N; k++)
    for (int i = 0; i < N; i++) {
      if (k == 0)
        B[i][k] = A[i][k];
      else
        B[i][k] = A[i][k - 1];
    }
#pragma endscop
}
"""
    src.write_text(text)
    s0, s1 = parse_kernel(src, text)[0].statements
    scop = parse_kernel(src, text)[0]
    assert scop.domain(s0).count_val().to_python() == 8      # k == 0
    assert scop.domain(s1).count_val().to_python() == 7 * 8  # k >= 1


def test_division_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "d.c"
    src.write_text("""#define N 8
void f(float A[N][N], float y[N]) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      y[i] += A[i][j] / 3.0f;
#pragma endscop
}
""")
    assert main(["designs", str(src)]) == 2
    err = capsys.readouterr().err
    assert "d.c:6:" in err and "no divider" in err
