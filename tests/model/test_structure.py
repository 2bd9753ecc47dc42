"""The tuner's model of a design is built once, from the design's description at a
representative tiling, and read at every tiling; the model of a generated design is built
from its own description at its tiling. The two must agree: a structural choice made from
one tiling's values (a drain's words packed or not, a loop that exists only above one lane)
would hold at that tiling only (2026-11-28: MM 1024^3 `ij-ij.k` at T_i2=512, T_j2=2 modelled at
645,657 cycles by the tuner, 1,034,382 by its own design's model; the timed simulation of a
scaled case sides with the latter)."""

from __future__ import annotations

import numpy as np
import pytest

from odyssey.frontend import load_scop
from odyssey.frontend.bundled import bundled_kernel
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.model.build import model_from_descriptor
from odyssey.model.from_design import generate_descriptor
from odyssey.platforms import load_platform
from odyssey.tune.space import SearchSpace

PLAT = load_platform("u250")
RESOURCES = ("dsp", "lut", "ff", "bram18k", "uram")


def _both(ks, design, tiling):  # type: ignore[no-untyped-def]
    tuner = build_model(ks, design, platform=PLAT).evaluate_one(tiling)
    own = model_from_descriptor(generate_descriptor(ks, design, tiling, platform=PLAT), PLAT).evaluate_one(tiling)
    return tuner, own


def test_pes_that_pack_their_own_words_in_the_tuners_model() -> None:
    """The scaled case of the MM 1024^3 optimum: 2 x 4 PEs of 128 results each (words of 16
    lanes), 4 reduction tiles per output visit: the tuner's model equals the design's own,
    857 cycles (the timed simulation: 812 with the PEs' own words, 840 with `+wd` drains;
    1,120 with the former single-element PE drains, 2026-11-28)."""
    ks = analyse(load_scop(bundled_kernel("mm"), {"I": "128", "J": "8", "K": "60"}))
    t = {"T_i1": 128, "T_j1": 8, "T_k1": 15, "T_i2": 64, "T_j2": 2, "T_k2": 15}
    tuner, own = _both(ks, ks.design("ij-ij.k"), t)
    assert tuner["latency_cycles"] == own["latency_cycles"] == pytest.approx(857, abs=0.01)


@pytest.mark.parametrize(("kernel", "sizes", "n"), [
    ("mm", {"I": "96", "J": "80", "K": "64"}, 2),
    ("cnn", {"O": "24", "I": "20", "H": "10", "W": "12", "P": "3", "Q": "3"}, 1),
])
def test_the_tuners_model_is_each_designs_own(kernel: str, sizes: dict[str, str], n: int) -> None:
    """Property, every design at random legal tilings (non-divisors included): resources equal,
    latency within 0.2% (the residue: a loop's few cycles of fill that exist above one lane)."""
    ks = analyse(load_scop(bundled_kernel(kernel), sizes), max_dim=2)
    rng = np.random.default_rng(1)
    checked = 0
    for d in ks.designs:
        space = SearchSpace(build_model(ks, d, platform=PLAT).params)
        for row in space.sample(rng, n):
            t = {name: int(v) for name, v in zip(space.names, row, strict=True)}
            tuner, own = _both(ks, d, t)
            if not tuner["legal"]:
                continue
            checked += 1
            assert {r: tuner[r] for r in RESOURCES} == {r: own[r] for r in RESOURCES}, (d.id, t)
            assert tuner["latency_cycles"] == pytest.approx(own["latency_cycles"], rel=2e-3), (d.id, t)
    assert checked >= len(ks.designs)
