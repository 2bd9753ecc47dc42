"""The pace of a drain chain fed by the PEs, against the timed simulation.

Until 2026-11-28 a design whose drains read no partial sums had PE drain processes that
streamed one element per cycle, packing a word every LANES cycles, and the drain chain then
moved a word every LANES cycles (MM 256^3 ``i-ij.k``, 97 PEs: 17% slower than a word per
cycle; ``docs/validation.md``, item 9). Its PEs now pack their own words into a FIFO one visit
deep, and the chain moves a word per cycle; ``+wd`` keeps PE drain processes that move a word
per cycle from a ping-pong block. Differential: the model against the timed simulation of the
same generated C++, on a 1-D output-stationary array whose chain is long enough for the pace to
matter, both designs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from odyssey.codegen.generate import generate
from odyssey.codegen.timedsim import run_timed_sim
from odyssey.codegen.writer import write_design
from odyssey.frontend import load_scop
from odyssey.frontend.bundled import bundled_kernel
from odyssey.mapping.space import analyse
from odyssey.model import model_from_descriptor
from odyssey.platforms import load_platform

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

#: 24 PEs in one chain along i, each holding 2 x 96 outputs (words of 16 lanes: 12 per PE, more
#: than a stage holds ahead), 2 reduction steps per output tile: the drain chain sets the pace
SIZES = {"I": "48", "J": "96", "K": "16"}
TILING = {"T_i1": 48, "T_j1": 96, "T_k1": 16, "T_i2": 2, "T_j2": 1, "T_k2": 8}


def _model_and_sim(design: str, tmp: Path) -> tuple[float, int]:
    ks = analyse(load_scop(bundled_kernel("mm"), SIZES))
    gen = generate(ks, ks.design(design), TILING)
    pred = model_from_descriptor(gen.descriptor, load_platform("u250")).evaluate_one(gen.descriptor["tiling"])
    res = run_timed_sim(write_design(gen, tmp / design.replace("+", "_")), timeout_s=300)
    assert res.status == "pass", res.message
    return float(pred["latency_cycles"]), res.cycles


def test_the_model_follows_both_drains_and_the_pe_words_keep_pace(tmp_path: Path) -> None:
    own_model, own_sim = _model_and_sim("i-ij.k", tmp_path)
    word_model, word_sim = _model_and_sim("i-ij.k+wd", tmp_path)
    assert abs(own_model - own_sim) <= 0.05 * own_sim, (own_model, own_sim)
    assert abs(word_model - word_sim) <= 0.05 * word_sim, (word_model, word_sim)
    # a word per cycle down the chain: 24 PEs x 12 words, in 4,278 cycles with the former
    # single-element PE drains (2026-11-28), 2,048 with `+wd`, 1,979 with the PEs' own words
    assert own_sim <= word_sim < 0.6 * 4278


def test_a_scaled_result_lengthens_the_pe_pipeline() -> None:
    """Closed form: a PE that packs its own words and scales each result (PolyBench trmm_oop,
    ``Out = alpha * Out``) has a pipeline of 2 + its product + its accumulation + the scaling
    multiply (fp32: 2 + 4 + 8 + 4 = 18 stages), and writes its word in the last stage: the
    printed write lag is depth - 1 (the descriptor's PE loop is given the same depth; the
    multiply's stages were missing until 2026-11-28, a lag of 13)."""
    from odyssey.platforms import op_cost

    ks = analyse(load_scop(bundled_kernel("polybench/trmm_oop"), {}))
    gen = generate(ks, ks.design("i-ij.k"), {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 2, "T_k2": 1})
    mul, add = op_cost("float", "mul")[1], op_cost("float", "add")[1]
    depth = 2 + mul + add + mul
    assert f"ODYSSEY_WRITE_LAG({depth - 1})" in dict(gen.files)["kernel.cpp"]
