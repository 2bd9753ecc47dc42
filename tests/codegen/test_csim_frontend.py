"""Differential C simulation of the front end's kernel forms (scalar arguments, scaling of the
start value and of the result, initialisers in a loop of their own, triangular outputs whose
other elements must keep their values), with non-divisor tilings."""

from __future__ import annotations

import pytest

T3 = {"T_i1": 4, "T_j1": 4, "T_k1": 4, "T_i2": 2, "T_j2": 2, "T_k2": 2}

CASES = [
    # beta * C read back on the first visit, partial sums on the others (k outside j)
    ("polybench/gemm.c", "ik-ik.j", T3, {"NI": "13", "NJ": "11", "NK": "9"}),
    # triangular output: the upper triangle keeps its values, the lower one is scaled
    ("polybench/syrk.c", "ij-ij.k", T3, {"N": "10", "M": "9"}),
    # constant start, result scaled by alpha after the reduction, k >= i
    ("polybench/trmm_oop.c", "ik-ik.j", {**T3, "T_j1": 3, "T_j2": 3}, {"M": "10", "N": "9"}),
    # initialiser in a loop of its own, over the output's index
    ("polybench/bicg_s.c", "j-j.i", {"T_i1": 4, "T_j1": 5, "T_i2": 2, "T_j2": 5}, {"N": "11", "M": "13"}),
]


@pytest.mark.parametrize(("kernel", "design", "tiling", "sizes"), CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_frontend_forms_match_loop_nest(simulate, kernel, design, tiling, sizes) -> None:  # type: ignore[no-untyped-def]
    gen, res = simulate(kernel, design, tiling, **sizes)
    assert res.status == "pass", res.message + "\n" + res.stdout[-1500:] + res.stderr[-1500:]
    assert "ODYSSEY CSIM PASS" in res.stdout


def test_scalars_are_axilite_arguments(simulate) -> None:  # type: ignore[no-untyped-def]
    gen, res = simulate("polybench/gemm.c", "ij-ij.k", T3, NI="8", NJ="8", NK="8")
    assert res.passed
    cpp = dict(gen.files)["kernel.cpp"]
    assert "#pragma HLS INTERFACE s_axilite port=alpha" in cpp
    assert "#pragma HLS INTERFACE s_axilite port=beta" in cpp
    host = dict(gen.files)["host.cpp"]
    assert "kernel0(A_dram.data(), B_dram.data(), C_dram.data(), C_dram.data(), alpha, beta)" in host


AUTOSA = [
    ("autosa/ttm.c", "kl-ijk.l", {"T_i1": 2, "T_j1": 3, "T_k1": 4, "T_l1": 4, "T_i2": 1, "T_j2": 3, "T_k2": 2,
                                  "T_l2": 2}, {"I": "3", "J": "5", "K": "7", "L": "6"}),
    ("autosa/mm_int8.c", "k-jk.i", {"T_i1": 4, "T_j1": 4, "T_k1": 8, "T_i2": 2, "T_j2": 2, "T_k2": 4},
     {"I": "13", "J": "11", "K": "19"}),
    ("autosa/pointwise.c", "rc-rcipq.o", {"T_o1": 4, "T_r1": 4, "T_c1": 3, "T_i1": 4, "T_p1": 2, "T_q1": 2,
                                          "T_o2": 2, "T_r2": 2, "T_c2": 3, "T_i2": 2},
     {"O": "7", "I": "5", "R": "6", "C": "5", "K": "3"}),
]


@pytest.mark.parametrize(("kernel", "design", "tiling", "sizes"), AUTOSA, ids=[f"{c[0]}:{c[1]}" for c in AUTOSA])
def test_autosa_forms_match_loop_nest(simulate, kernel, design, tiling, sizes) -> None:  # type: ignore[no-untyped-def]
    gen, res = simulate(kernel, design, tiling, **sizes)
    assert res.status == "pass", res.message + "\n" + res.stdout[-1500:] + res.stderr[-1500:]


def test_array_named_like_a_generated_local_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An array `w` would be shadowed by the I/O modules' word `w`: a clear error, not wrong code."""
    from odyssey.codegen.generate import generate
    from odyssey.errors import CodegenError
    from odyssey.frontend import parse_kernel
    from odyssey.mapping.space import analyse

    src = tmp_path / "w.c"
    text = ("#define N 8\nvoid f(float A[N][N], float w[N], float y[N]) {\n#pragma scop\n"
            "  for (int i = 0; i < N; i++)\n    for (int j = 0; j < N; j++)\n      y[i] += A[i][j] * w[j];\n"
            "#pragma endscop\n}\n")
    src.write_text(text)
    ks = analyse(parse_kernel(src, text)[0])
    with pytest.raises(CodegenError, match="`w` has the name of a variable"):
        generate(ks, ks.design("ij-j.i"), {"T_i1": 4, "T_j1": 4, "T_i2": 2, "T_j2": 2})
