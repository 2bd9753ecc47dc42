"""A PE pipeline's registers: closed forms of the printed schedule (the fp32 lanes' printed tree
and its odd levels, the int16 lanes' rebalanced sum, the waiting factor of a three-operand
product), the model's count of the tree's waits against the printed tree, and the witness
catching a printed pipeline the description does not describe."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from odyssey.codegen.generate import generate
from odyssey.codegen.pe import lane_tree, odd_levels
from odyssey.codegen.pipe_registers import pipe_registers
from odyssey.codegen.resource_check import _UINT
from odyssey.codegen.static_check import parse_functions
from odyssey.codegen.writer import write_design
from odyssey.expr import const, evaluate
from odyssey.frontend import load_scop
from odyssey.frontend.bundled import bundled_kernel
from odyssey.mapping.space import analyse
from odyssey.model.witness import compare
from odyssey.platforms import load_platform
from odyssey.platforms.fabric import fabric_costs

MM = {"I": "16", "J": "16", "K": "16"}


def _pe(tmp: Path, kernel: str, sizes: dict[str, str], design: str, tiling: dict[str, int]) -> tuple[Path, object]:
    path = bundled_kernel(kernel)
    assert path is not None
    ks = analyse(load_scop(path, sizes))
    d = write_design(generate(ks, ks.design(design), tiling), tmp / "d")
    src = (d / "kernel.cpp").read_text()
    text = (d / "kernel.h").read_text() + src
    env = {m.group(1): int(m.group(2)) for m in re.finditer(r"^#define (\w+) (-?\d+)$", text, re.M)}
    types = {m.group(2): int(m.group(1)) for m in _UINT.finditer(text)}
    return d, pipe_registers(parse_functions(src)["PE"].body, env, types)


def test_fp32_lanes_form_the_printed_tree(tmp_path: Path) -> None:
    """MM fp32, SIMD 8 (fmul 4 cycles, fadd 8, optable.json): products ready at 4, the lanes'
    tree (printed: Vitis does not reassociate fp adds) 3 adds deep, the running sum one add
    later: 2 + 4 + 24 + 8 = 38 stages; SIMD 8 has no odd level, so nothing waits."""
    _, r = _pe(tmp_path, "mm", MM, "ij-ij.k", {"T_i1": 8, "T_j1": 8, "T_k1": 16, "T_i2": 2, "T_j2": 2, "T_k2": 8})
    assert r.stages == 2 + 4 + 3 * 8 + 8
    # two operand words of 8 lanes, and the output word of 4 lanes (2 x 2 results per PE)
    # the PE assembles itself
    assert r.word_bits == 2 * 8 * 32 + 4 * 32
    assert r.waits == []
    lut, ff = r.price(16 * 32, fabric_costs())  # 8 fmul and 8 fadd results
    assert (lut, ff) == (0, 38 + 512 + 128 + 512)


def test_an_odd_level_delays_one_value(tmp_path: Path) -> None:
    """SIMD 5: levels of 5, 3 and 2 values; the odd ones each leave one value waiting one add
    (8 cycles): 2 delay lines of 2 x 32 FF and 32 LUT."""
    _, r = _pe(tmp_path, "mm", {**MM, "K": "20"}, "ij-ij.k",
               {"T_i1": 8, "T_j1": 8, "T_k1": 10, "T_i2": 2, "T_j2": 2, "T_k2": 5})
    assert r.stages == 2 + 4 + 3 * 8 + 8
    assert sorted(r.waits) == [(32, 8), (32, 8)]


@pytest.mark.parametrize("lanes", range(1, 70))
def test_odd_levels_counts_the_printed_trees_waits(lanes: int) -> None:
    """:func:`odd_levels` (the model's count) against the waits of :func:`lane_tree`'s text
    scheduled as the witness does, every lane count up to 69."""
    text = lane_tree([f"pl[{k}]" for k in range(lanes)], "+")
    body = (f"float pl[{lanes}];", f"#pragma HLS ARRAY_PARTITION variable=pl cyclic factor={lanes} dim=1",
            "for (int x = 0; x < 4; x++) {", "#pragma HLS PIPELINE II=1", "A_v w_A = fifo_A_in.read();",
            f"for (int ln = 0; ln < {lanes}; ln++) {{", "#pragma HLS UNROLL", "float v_A = float_of(w_A);",
            "pl[ln] = v_A;", "}",
            f"float v = {text};", "}")
    r = pipe_registers(body, {}, {})
    assert len(r.waits) == evaluate(odd_levels(const(lanes), 128), {})
    assert all(w == (32, 8) for w in r.waits)
    assert r.stages == 2 + max(0, (lanes - 1).bit_length()) * 8


def test_int16_lanes_form_a_tree(tmp_path: Path) -> None:
    """MM uint16, SIMD 16: the tool rebalances integer adds (UG1399), so the lanes' sum is ready
    ceil(log2 16) = 4 adds (1 cycle each) after the products (2 cycles), the running sum one
    add later: 2 + 2 + 5 + 1 stages; no integer value waits, no result register."""
    _, r = _pe(tmp_path, "autosa/mm_u16", {**MM, "K": "32"}, "ij-ij.k",
               {"T_i1": 8, "T_j1": 8, "T_k1": 16, "T_i2": 2, "T_j2": 2, "T_k2": 16})
    assert r.stages == 2 + 2 + math.ceil(math.log2(16)) + 1
    assert r.word_bits == 2 * 16 * 16 + 4 * 16  # and the 4-lane output word it assembles
    assert r.waits == []


def test_the_third_factor_waits_for_the_first_product(tmp_path: Path) -> None:
    """MTTKRP fp32 (``B * C * D``): ``D`` waits 4 cycles for ``B * C`` in each lane."""
    _, r = _pe(tmp_path, "autosa/mttkrp", {}, "ij-ij.kl@l",
               {"T_i1": 4, "T_j1": 4, "T_k1": 2, "T_l1": 8, "T_i2": 2, "T_j2": 2, "T_l2": 4})
    assert r.waits.count((32, 4)) == 4
    assert r.stages == 2 + 4 + 4 + 2 * 8 + 8


def test_the_witness_sees_a_pipeline_the_description_does_not(tmp_path: Path) -> None:
    """Printing the lanes' products as one wider expression (an extra factor that waits) moves
    the witness's PE registers off the model's."""
    d, _ = _pe(tmp_path, "mm", MM, "ij-ij.k", {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 4})
    plat = load_platform("u250")
    assert compare(d, plat)[2] == []
    src = (d / "kernel.cpp").read_text()
    assert "float p = ((v_A * v_B));" in src
    (d / "kernel.cpp").write_text(src.replace("float p = ((v_A * v_B));", "float p = (((v_A * v_B) * v_B));"))
    assert {(x.where, x.resource) for x in compare(d, plat)[2]} >= {("PE", "ff")}
