"""Reductions in every spelling, initialisers and scalings: the same design space as `+=`.

Every spelling of a reduction is normalised by the front end to its compound form, so the
reference list, the reuse vectors and hence the design space are those of the `+=` kernel:
MM has 18 designs (Table 2: i, j, k all legal space loops -> 3 + 3 dataflows; RL(C)={k},
RL(A)={j}, RL(B)={i} -> 3 orderings) and CNN 30 (o, h, w, i legal -> 4 + 6 dataflows; 3
orderings), whatever the spelling.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from odyssey.cli import main
from odyssey.frontend import load_scop, parse_kernel
from odyssey.mapping.space import analyse

MM = """#define I 8
#define J 8
#define K 8
void f(float A[I][K], float B[K][J], float C[I][J]) {{
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {{
      {init}
      for (int k = 0; k < K; k++)
        {stmt};
    }}
#pragma endscop
}}
"""

MM_SPELLINGS = [
    "C[i][j] += A[i][k] * B[k][j]",
    "C[i][j] = C[i][j] + A[i][k] * B[k][j]",
    "C[i][j] = A[i][k] * B[k][j] + C[i][j]",
    "C[i][j] = (C[i][j] + A[i][k] * B[k][j])",
]


def _ks(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    src = tmp_path / "k.c"
    src.write_text(text)
    return analyse(parse_kernel(src, text)[0])


@pytest.mark.parametrize("init", ["C[i][j] = 0;", "C[i][j] = 0.0f;", ""])
@pytest.mark.parametrize("stmt", MM_SPELLINGS)
def test_mm_spellings_keep_table2(tmp_path: Path, kernels_dir: Path, stmt: str, init: str) -> None:
    ks = _ks(tmp_path, MM.format(init=init, stmt=stmt))
    ref = analyse(load_scop(kernels_dir / "mm.c"))
    main_st = ks.scop.statement(ks.statement)
    assert main_st.op == "+="
    def refs(st):  # type: ignore[no-untyped-def]
        return [(r.array, r.kind, r.subscripts) for r in st.refs]

    assert refs(main_st) == refs(ref.scop.statement(ref.statement))
    assert len(ks.designs) == 18
    assert [d.id for d in ks.designs] == [d.id for d in ref.designs]
    assert ks.initializers == (("S0",) if init else ())


CNN_SPELLINGS = [
    "fo[o][h][w] = fo[o][h][w] + fi[i][h + p][w + q] * wt[o][i][p][q]",
    "fo[o][h][w] = fi[i][h + p][w + q] * wt[o][i][p][q] + fo[o][h][w]",
]


@pytest.mark.parametrize("stmt", CNN_SPELLINGS)
def test_cnn_spellings_keep_table2(tmp_path: Path, kernels_dir: Path, stmt: str) -> None:
    text = (kernels_dir / "cnn.c").read_text()
    text = text.replace("fo[o][h][w] += fi[i][h + p][w + q] * wt[o][i][p][q]", stmt)
    assert stmt in text
    ks = _ks(tmp_path, text)
    ref = analyse(load_scop(kernels_dir / "cnn.c"))
    assert len(ks.designs) == 30
    assert [d.id for d in ks.designs] == [d.id for d in ref.designs]
    assert ks.initializers == ("S0",)


@pytest.mark.parametrize(("stmt", "op", "rhs_reads"), [
    ("C[i][j] = C[i][j] - A[i][k] * B[k][j]", "-=", ["S0_A_0", "S0_B_0"]),
    ("C[i][j] = C[i][j] - A[i][k] - B[k][j]", "-=", ["S0_A_0", "S0_B_0"]),
    ("C[i][j] = C[i][j] - A[i][k] + B[k][j]", "+=", ["S0_A_0", "S0_B_0"]),
    ("C[i][j] = C[i][j] * A[i][k]", "*=", ["S0_A_0"]),
    ("C[i][j] = A[i][k] * C[i][j] * B[k][j]", "*=", ["S0_A_0", "S0_B_0"]),
])
def test_other_operators(tmp_path: Path, stmt: str, op: str, rhs_reads: list[str]) -> None:
    from odyssey.polyhedral.scop import rexpr_reads

    ks = _ks(tmp_path, MM.format(init="", stmt=stmt))
    st = ks.scop.statement(ks.statement)
    assert st.op == op and rexpr_reads(st.rhs) == rhs_reads
    assert len(ks.designs) == (18 if len(rhs_reads) == 2 else 6 * 2)


def _err(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> str:
    src = tmp_path / "bad.c"
    src.write_text(text)
    assert main(["designs", str(src)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("odyssey: error: ")
    return err


@pytest.mark.parametrize(("stmt", "words"), [
    ("C[i][j] = A[i][k] * B[k][j] - C[i][j]", "not a reduction"),
    ("C[i][j] = C[i][j] + C[i][j] + A[i][k]", "appears more than once"),
    ("C[i][j] = C[i][j] + A[i][k] * C[i][j]", "reads `C[i][j]` again"),
    ("C[i][j] = fmaxf(C[i][j], A[i][k] * B[k][j])", "max/min reduction"),
    ("C[i][j] = C[i][j] > A[i][k] ? C[i][j] : A[i][k]", "max/min reduction"),
])
def test_non_reductions_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str], stmt: str,
                                 words: str) -> None:
    err = _err(tmp_path, MM.format(init="", stmt=stmt), capsys)
    assert "bad.c:10" in err and words in err


def test_partial_initialiser_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _err(tmp_path, MM.format(init="if (j == 0) C[i][j] = 0;", stmt="C[i][j] += A[i][k] * B[k][j]"), capsys)
    assert "bad.c:8" in err and "other elements of `C`" in err


def test_second_array_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = MM.format(init="A[i][j] = 0;", stmt="C[i][j] += A[i][k] * B[k][j]")
    err = _err(tmp_path, text, capsys)
    assert "bad.c:8" in err and "dependent computations" in err
    text = MM.format(init="B[i][j] = 1;", stmt="C[i][j] += A[i][k] * A[k][j]")
    err = _err(tmp_path, text, capsys)
    assert "second array `B`" in err and "one scop (one file) per computation" in err


def test_scaling_before_and_after(tmp_path: Path) -> None:
    """`C *= beta` before the reduction (PolyBench gemm, in its own j loop) is an
    initialiser; `C = alpha * C` after it scales the result."""
    text = """#define N 8
void f(float alpha, float beta, float A[N][N], float B[N][N], float C[N][N]) {
#pragma scop
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++)
      C[i][j] *= beta;
    for (int k = 0; k < N; k++)
      for (int j = 0; j < N; j++)
        C[i][j] = C[i][j] + A[i][k] * B[k][j];
    for (int j = 0; j < N; j++)
      C[i][j] = alpha * C[i][j];
  }
#pragma endscop
}
"""
    ks = _ks(tmp_path, text)
    assert ks.statement == "S1" and ks.initializers == ("S0",) and ks.finalizers == ("S2",)
    assert [s.name for s in ks.scop.scalars] == ["alpha", "beta"]
    assert len(ks.designs) == 18


@pytest.mark.parametrize("kernel", ["mm.c", "cnn.c", "mv.c", "fir.c", "dwconv.c", "autosa/ttm.c"])
def test_isl_agrees_with_the_fast_path(kernels_dir: Path, kernel: str) -> None:
    """The bundled initialisers take the syntactic fast path; the isl checks it stands for
    (same elements, each once, all before the computation) hold on them too."""
    from odyssey.polyhedral.dependences import same_elements, write_order

    scop = load_scop(kernels_dir / kernel)
    ks = analyse(scop)
    main_st = scop.statement(ks.statement)
    assert ks.initializers
    for name in ks.initializers:
        s = scop.statement(name)
        assert same_elements(scop, s, main_st) == (True, True)
        assert write_order(scop, s, main_st) == "before"
