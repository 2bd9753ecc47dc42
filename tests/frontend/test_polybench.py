"""PolyBench/C 4.2 kernels as PolyBench writes them (kernels/polybench/, written for odyssey):
mapped with hand-derived design counts, or rejected with exit 2, file, line, reason and fix.

Counts: a loop is a space-loop candidate when every reuse vector has 0 or 1 on it; the
orderings are <NRL(r), RL(r)> per reference r (RL(r): the loops r does not depend on),
deduplicated by loop order; designs = dataflows (1D + 2D) x orderings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from odyssey.cli import main
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse

MAPPED = [
    # C[i][j] += alpha*A[i][k]*B[k][j] (loops i, k, j): RL(C)={k}, RL(A)={j}, RL(B)={i}; all
    # reuse vectors are unit: 3 + 3 dataflows x 3 orderings. `C *= beta` is an initialiser.
    ("gemm.c", 18, ("S0",), ()),
    # syrk: C[i][j] {k}, A[i][k] {j}, A[j][k] {i} on the triangle j <= i: as gemm.
    ("syrk.c", 18, ("S0",), ()),
    # syr2k: C {k}, A[j][k] and B[j][k] {i}, B[i][k] and A[i][k] {j}: 3 orderings, 6 dataflows.
    ("syr2k.c", 18, ("S0",), ()),
    # trmm out of place: Out[i][j] {k}, A[k][i] {j}, B[k][j] {i} (k >= i): 18; `Out = 0` before,
    # `Out = alpha * Out` after the reduction.
    ("trmm_oop.c", 18, ("S0",), ("S2",)),
    # y[i] += alpha*A[i][j]*x[j] + beta*B[i][j]*x[j]: RL(y)={j}, RL(x)={i}, A and B depend on
    # both: orders (i,j) and (j,i); i, j legal: [i], [j], [i,j]: 3 x 2.
    ("gesummv_fused.c", 6, ("S0",), ()),
    # x1[i] += A[i][j]*y_1[j] and x2[i] += A[j][i]*y_2[j]: as matrix-vector, 3 x 2 each.
    ("mvt_x1.c", 6, (), ()),
    ("mvt_x2.c", 6, (), ()),
    # s[j] += r[i]*A[i][j] (initialised in a loop of its own): RL(s)={i}, RL(r)={j}: 3 x 2.
    ("bicg_s.c", 6, ("S0",), ()),
    ("bicg_q.c", 6, ("S0",), ()),
    # Out[r][q][p] += A[r][q][s]*C4[s][p]: RL(Out)={s}, RL(A)={p}, RL(C4)={r,q}; 4 legal loops:
    # 4 + 6 dataflows x 3 orderings.
    ("doitgen_oop.c", 30, ("S0",), ()),
]


@pytest.mark.parametrize(("kernel", "designs", "inits", "finals"), MAPPED, ids=[m[0] for m in MAPPED])
def test_polybench_mapped(kernels_dir: Path, kernel: str, designs: int, inits: tuple[str, ...],
                          finals: tuple[str, ...]) -> None:
    ks = analyse(load_scop(kernels_dir / "polybench" / kernel))
    assert len(ks.designs) == designs
    assert ks.initializers == inits and ks.finalizers == finals


REJECTED = [
    ("trmm.c", 12, ["`B[i][j]`", "`B[k][j]`", "not uniform", "out of place"]),
    ("symm.c", 12, ["scalar `temp2`", "expand it into an array"]),
    ("gesummv.c", 14, ["two independent reductions", "`tmp`", "`y`", "fuse them into one reduction"]),
    ("mvt.c", 13, ["two independent reductions", "`x1`", "`x2`", "one file per computation"]),
    ("bicg.c", 15, ["two independent reductions", "`s`", "`q`"]),
    ("atax.c", 16, ["two dependent computations", "reads `tmp`", "one after the other"]),
    ("doitgen.c", 18, ["two dependent computations", "reads `sum`"]),
]


@pytest.mark.parametrize(("kernel", "line", "words"), REJECTED, ids=[r[0] for r in REJECTED])
def test_polybench_rejected(kernels_dir: Path, capsys: pytest.CaptureFixture[str], kernel: str, line: int,
                            words: list[str]) -> None:
    assert main(["designs", str(kernels_dir / "polybench" / kernel)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{kernel}:{line}:" in err
    for w in words:
        assert w in err, w
