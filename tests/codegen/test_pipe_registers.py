"""A PE pipeline's registers: closed forms of the printed schedule (fp32 chain, int16 tree, the
waiting factor of a three-operand product), the model's chain sum against a brute-force sum, and
the witness catching a printed pipeline the description does not describe."""

from __future__ import annotations

import math
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from odyssey.codegen.generate import generate
from odyssey.codegen.pipe_registers import pipe_registers
from odyssey.codegen.resource_check import _UINT
from odyssey.codegen.static_check import parse_functions
from odyssey.codegen.writer import write_design
from odyssey.expr import const, evaluate
from odyssey.frontend import load_scop
from odyssey.frontend.bundled import bundled_kernel
from odyssey.mapping.space import analyse
from odyssey.model.fabric import register_usage
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


def test_fp32_lanes_form_a_chain(tmp_path: Path) -> None:
    """MM fp32, SIMD 8 (fmul 4 cycles, fadd 8, optable.json): products ready at 4, lane l's sum
    at 4 + 8 l, the running sum at 4 + 64: 70 stages. Lanes 2..7 wait 8, 16, ..., 48 cycles
    for the chain: 2 x 32 FF each and 32 LUT per 32 cycles (1,1,1,1,2,2)."""
    _, r = _pe(tmp_path, "mm", MM, "ij-ij.k", {"T_i1": 8, "T_j1": 8, "T_k1": 16, "T_i2": 2, "T_j2": 2, "T_k2": 8})
    assert r.stages == 2 + 4 + 8 * 8
    assert r.word_bits == 2 * 8 * 32
    assert sorted(r.waits) == [(32, 8 * m) for m in range(1, 7)]
    lut, ff = r.price(16 * 32, fabric_costs())  # 8 fmul and 8 fadd results
    assert (lut, ff) == (32 * (1 + 1 + 1 + 1 + 2 + 2), 70 + 512 + 512 + 6 * 64)


def test_int16_lanes_form_a_tree(tmp_path: Path) -> None:
    """MM uint16, SIMD 16: the tool rebalances integer adds (UG1399), so the lanes' sum is ready
    ceil(log2 16) = 4 adds (1 cycle each) after the products (2 cycles), the running sum one
    add later: 2 + 2 + 5 + 1 stages; no integer value waits, no result register."""
    _, r = _pe(tmp_path, "autosa/mm_u16", {**MM, "K": "32"}, "ij-ij.k",
               {"T_i1": 8, "T_j1": 8, "T_k1": 16, "T_i2": 2, "T_j2": 2, "T_k2": 16})
    assert r.stages == 2 + 2 + math.ceil(math.log2(16)) + 1
    assert r.word_bits == 2 * 16 * 16
    assert r.waits == []


def test_the_third_factor_waits_for_the_first_product(tmp_path: Path) -> None:
    """MTTKRP fp32 (``B * C * D``): ``D`` waits 4 cycles for ``B * C`` in each lane."""
    _, r = _pe(tmp_path, "autosa/mttkrp", {}, "ij-ij.kl@l",
               {"T_i1": 4, "T_j1": 4, "T_k1": 2, "T_l1": 8, "T_i2": 2, "T_j2": 2, "T_l2": 4})
    assert r.waits.count((32, 4)) == 4
    assert r.stages == 2 + 4 + 4 + 4 * 8


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 62), step=st.sampled_from([1, 2, 3, 4, 6, 7, 8, 12, 40]), bits=st.sampled_from([16, 32, 64]))
def test_chain_sum_is_the_sum_of_its_delays(n: int, step: int, bits: int) -> None:
    """The model's closed form of a chain of delays ``step, 2 step, ..., n step`` equals the
    sum of the delay lines priced one by one."""
    most = 62
    m = {"registers": [{"kind": "chain", "bits_sym": bits, "count_sym": "n", "cycles": step, "most": most}]}
    u = register_usage(m, {"n": const(n)}, fabric_costs())  # type: ignore[arg-type]
    pc = fabric_costs().pipeline
    lut = sum(pc.delay(bits, k * step).lut for k in range(1, n + 1))
    ff = sum(pc.delay(bits, k * step).ff for k in range(1, n + 1))
    assert (evaluate(u.lut, {}), evaluate(u.ff, {})) == (lut, ff)


def test_the_witness_sees_a_pipeline_the_description_does_not(tmp_path: Path) -> None:
    """Printing the lanes' products as one wider expression (an extra factor that waits) moves
    the witness's PE registers and LUTs off the model's."""
    d, _ = _pe(tmp_path, "mm", MM, "ij-ij.k", {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 4})
    plat = load_platform("u250")
    assert compare(d, plat)[2] == []
    src = (d / "kernel.cpp").read_text()
    assert "float p = ((v_A * v_B));" in src
    (d / "kernel.cpp").write_text(src.replace("float p = ((v_A * v_B));", "float p = (((v_A * v_B) * v_B));"))
    assert {(x.where, x.resource) for x in compare(d, plat)[2]} >= {("PE", "ff")}
