"""The pace of a drain chain fed by single-element PE drains, against the timed simulation.

A PE drain that streams one element per cycle packs a word every LANES cycles, and its FIFO to
the drain chain holds two words: the chain then moves a word every LANES cycles, which the model
missed until 2026-11-27 (MM 256^3 ``i-ij.k``, 97 PEs: 17% optimistic; ``docs/validation.md``,
item 9). With ``+wd`` the PE drains move a word per cycle and the chain keeps that pace.
Differential: the model against the timed simulation of the same generated C++, on a 1-D
output-stationary array whose chain is long enough for the pace to matter, both drains."""

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


def test_the_model_follows_both_drains_and_the_word_drain_is_faster(tmp_path: Path) -> None:
    serial_model, serial_sim = _model_and_sim("i-ij.k", tmp_path)
    word_model, word_sim = _model_and_sim("i-ij.k+wd", tmp_path)
    assert abs(serial_model - serial_sim) <= 0.05 * serial_sim, (serial_model, serial_sim)
    assert abs(word_model - word_sim) <= 0.05 * word_sim, (word_model, word_sim)
    assert word_sim < 0.8 * serial_sim  # the chain moves a word per cycle, not one per 16
