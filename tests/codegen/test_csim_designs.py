"""Differential tests: generated designs under C simulation against the original loop nest.

A representative subset runs on every CI run (the whole sweep is scripts/csim_sweep.py):
every array shape (1D, 2D), input chains and direct feeds, on-chip accumulation, partial
sums that leave the array, output reduced along the PE chain, SIMD, latency hiding,
non-divisor (zero-padded) tiles, prime sizes, integer and triangular kernels.
"""

from __future__ import annotations

import pytest

CASES = [
    # kernel, design, tiling, sizes
    ("mm.c", "ij-ij.k", {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 2},
     {"I": "16", "J": "16", "K": "16"}),
    ("mm.c", "ij-jk.i", {"T_i1": 6, "T_j1": 5, "T_k1": 7, "T_i2": 3, "T_j2": 5, "T_k2": 7},
     {"I": "37", "J": "41", "K": "43"}),
    ("mm.c", "k-ij.k", {"T_i1": 5, "T_j1": 4, "T_k1": 8, "T_i2": 5, "T_j2": 2, "T_k2": 2},
     {"I": "13", "J": "11", "K": "19"}),
    ("mm.c", "ik-ik.j", {"T_i1": 4, "T_j1": 3, "T_k1": 6, "T_i2": 2, "T_j2": 1, "T_k2": 2},
     {"I": "9", "J": "10", "K": "11"}),
    ("cnn.c", "oh-ohw.ipq", {"T_o1": 4, "T_h1": 4, "T_w1": 4, "T_i1": 4, "T_p1": 3, "T_q1": 3,
                             "T_o2": 2, "T_h2": 2, "T_w2": 2, "T_i2": 2},
     {"O": "8", "I": "8", "H": "8", "W": "8", "P": "3", "Q": "3"}),
    ("cnn.c", "hi-hwipq.o", {"T_o1": 3, "T_h1": 4, "T_w1": 5, "T_i1": 4, "T_p1": 2, "T_q1": 2,
                             "T_o2": 1, "T_h2": 2, "T_w2": 1, "T_i2": 2},
     {"O": "7", "I": "5", "H": "9", "W": "11", "P": "3", "Q": "2"}),
    ("fir.c", "i-j.i", {"T_i1": 7, "T_j1": 4, "T_i2": 7, "T_j2": 2}, {"N": "30", "T": "13"}),
    ("syrk.c", "ij-ij.k", {"T_i1": 4, "T_j1": 4, "T_k1": 5, "T_i2": 2, "T_j2": 2, "T_k2": 5},
     {"N": "10", "K": "9"}),
    # SIMD lanes along the second reduction loop (AutoSA's MTTKRP), non-divisor tiles
    # int8 with half (and all) of each PE's multipliers in LUT fabric, extreme values included
    # by the testbench's data; non-divisor tiles, an odd SIMD factor
    ("autosa/mm_i8.c", "ij-ij.k+lut50", {"T_i1": 6, "T_j1": 4, "T_k1": 10, "T_i2": 3, "T_j2": 2, "T_k2": 5},
     {"I": "13", "J": "11", "K": "37"}),
    ("autosa/mm_i8.c", "ij-ij.k+lut100", {"T_i1": 4, "T_j1": 4, "T_k1": 8, "T_i2": 2, "T_j2": 2, "T_k2": 4},
     {"I": "8", "J": "8", "K": "16"}),
    # the quantized network kernels: int8 / int16 inputs with int32 sums, a long reduction of
    # full-range int8 values (the testbench draws -128..127), half the multipliers in LUTs
    ("int8/mm.c", "ij-ij.k+lut50", {"T_i1": 4, "T_j1": 4, "T_k1": 64, "T_i2": 2, "T_j2": 2, "T_k2": 16},
     {"I": "7", "J": "6", "K": "1000"}),
    ("int16/cnn.c", "oh-ohw.ipq", {"T_o1": 4, "T_h1": 4, "T_w1": 4, "T_i1": 4, "T_p1": 3, "T_q1": 3,
                                   "T_o2": 2, "T_h2": 2, "T_w2": 2, "T_i2": 2},
     {"O": "5", "I": "6", "H": "5", "W": "7", "P": "3", "Q": "3"}),
    ("autosa/mttkrp.c", "ij-ij.kl@l", {"T_i1": 6, "T_j1": 4, "T_k1": 3, "T_l1": 7, "T_i2": 3, "T_j2": 2,
                                        "T_l2": 7}, {"I": "13", "J": "11", "K": "7", "L": "10"}),
    # PE drains that move a word per cycle where the default streams one element (`+wd`), on a
    # 1-D output-stationary array with non-divisor tiles, and on an int8 design with LUT lanes
    ("mm.c", "i-ij.k+wd", {"T_i1": 6, "T_j1": 8, "T_k1": 5, "T_i2": 2, "T_j2": 4, "T_k2": 5},
     {"I": "13", "J": "11", "K": "17"}),
    ("autosa/mm_i8.c", "ij-ij.k+lut50+wd", {"T_i1": 6, "T_j1": 4, "T_k1": 10, "T_i2": 3, "T_j2": 2, "T_k2": 5},
     {"I": "13", "J": "11", "K": "37"}),
    # every buffer bound to block RAM (`+bram`), the I/O blocks to UltraRAM (`+uram`): pragmas
    # only, the same computation
    ("autosa/mm_i8.c", "ij-ij.k+lut50+bram", {"T_i1": 6, "T_j1": 4, "T_k1": 10, "T_i2": 3, "T_j2": 2, "T_k2": 5},
     {"I": "13", "J": "11", "K": "37"}),
    ("mm.c", "ij-ij.k+uram", {"T_i1": 6, "T_j1": 8, "T_k1": 5, "T_i2": 2, "T_j2": 4, "T_k2": 5},
     {"I": "13", "J": "11", "K": "17"}),
]


@pytest.mark.parametrize(("kernel", "design", "tiling", "sizes"), CASES,
                         ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_design_matches_loop_nest(simulate, kernel, design, tiling, sizes) -> None:  # type: ignore[no-untyped-def]
    gen, res = simulate(kernel, design, tiling, **sizes)
    assert res.status == "pass", res.message + "\n" + res.stdout[-1500:] + res.stderr[-1500:]
    assert "ODYSSEY CSIM PASS" in res.stdout


def test_a_wrong_design_is_caught(simulate, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The testbench really compares: corrupt the kernel and C simulation must fail."""
    from odyssey.codegen.csim import run_csim
    from odyssey.codegen.writer import write_design

    gen, res = simulate("mm.c", "ij-ij.k", {"T_i1": 4, "T_j1": 4, "T_k1": 4, "T_i2": 2, "T_j2": 2},
                        I="8", J="8", K="8")
    assert res.passed
    files = dict(gen.files)
    files["kernel.cpp"] = files["kernel.cpp"].replace("float p = ((v_A * v_B))", "float p = ((v_A * v_A))")
    assert files["kernel.cpp"] != dict(gen.files)["kernel.cpp"]
    bad = type(gen)(tuple(files.items()), gen.descriptor, gen.tiling, None)
    out = write_design(bad, tmp_path / "bad")
    res2 = run_csim(out, timeout_s=120)
    assert res2.status == "mismatch"
