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
