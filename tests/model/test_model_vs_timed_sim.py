"""Differential: the model against the timed simulation of two small partial-sum designs.

Both designs have drain chains whose modules' own words of a visit (3 and 5) exceed the
FIFO depth (2), so the chains pause between their two loops, and both read partial sums
back (passes over the reduction's tiles). The figures were measured on 2026-11-25:

* MM 16 x 36 x 16 ``ij-ik.j``, 3 x 3 PEs of 48 accumulators (3 words of 16), 2 k tiles:
  simulated 1,400 cycles, model 1,420 (+1.4%).
* CNN [I,O,H,W,P,Q] = [16,24,4,5,1,1] ``oh-hwipq.o``, 3 x 4 PEs of 5 one-float words, 8
  output visits per pass: simulated 881 cycles, model 809 (-8.2%; the model before the
  pausing chains said 734, -16.7%). The small arrays' remaining gap is stated, not hidden:
  the bound below is what the model achieves, and tightening it is the next step.

Two MM 64^3 designs whose one-level drain chain (along ``i`` / ``j``) feeds the DRAM writer
directly, from the small validation set: the writer pays its burst overhead after every
visit's first word and the chain's head, with two FIFO slots between them, waits for it
(:func:`odyssey.model.build.writer_stall`). Measured 2026-11-25: ``ik-jk.i`` simulated
41,580 cycles, model 41,792 (+0.5%; -8.2% without the wait); ``jk-ik.j`` simulated 131,648,
model 131,156 (-0.4%; -7.9% without it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from odyssey.codegen.generate import generate
from odyssey.codegen.timedsim import run_timed_sim
from odyssey.codegen.writer import write_design
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import model_from_descriptor
from odyssey.platforms import load_platform

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

ROOT = Path(__file__).resolve().parents[2]

#: (kernel, sizes, design, tiling, largest |error| accepted)
CASES = [
    ("mm", {"I": "16", "J": "36", "K": "16"}, "ij-ik.j",
     {"T_i1": 12, "T_j1": 36, "T_k1": 8, "T_i2": 4, "T_j2": 12, "T_k2": 2}, 0.03),
    ("cnn", {"I": "16", "O": "24", "H": "4", "W": "5", "P": "1", "Q": "1"}, "oh-hwipq.o",
     {"T_o1": 3, "T_h1": 4, "T_w1": 5, "T_i1": 16, "T_p1": 1, "T_q1": 1, "T_o2": 1, "T_h2": 1, "T_w2": 1,
      "T_i2": 16}, 0.10),
    ("mm", {"I": "64", "J": "64", "K": "64"}, "ik-jk.i",
     {"T_i1": 8, "T_i2": 2, "T_j1": 13, "T_j2": 1, "T_k1": 6, "T_k2": 2}, 0.02),
    ("mm", {"I": "64", "J": "64", "K": "64"}, "jk-ik.j",
     {"T_i1": 6, "T_i2": 1, "T_j1": 6, "T_j2": 3, "T_k1": 3, "T_k2": 1}, 0.02),
]


@pytest.mark.parametrize(("kernel", "sizes", "design", "tiling", "tolerance"), CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_partial_sum_design_model_matches_timed_sim(tmp_path: Path, kernel: str, sizes: dict[str, str],
                                                    design: str, tiling: dict[str, int], tolerance: float) -> None:
    space = analyse(load_scop(ROOT / "kernels" / f"{kernel}.c", sizes))
    gen = generate(space, space.design(design), tiling)
    assert gen.descriptor["passes"]["loops"], "a partial-sum design runs one region per pass"
    predicted = model_from_descriptor(gen.descriptor, load_platform("u250")).evaluate_one(gen.descriptor["tiling"])
    result = run_timed_sim(write_design(gen, tmp_path / "d"), timeout_s=300)
    assert result.passed, result.message
    assert result.cycles is not None
    error = (float(predicted["latency_cycles"]) - result.cycles) / result.cycles
    assert abs(error) <= tolerance, f"model {predicted['latency_cycles']:.0f} vs simulated {result.cycles}"
