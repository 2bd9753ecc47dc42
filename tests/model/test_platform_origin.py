"""A model built outside the repository root: the bundled platform is reloaded by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from odyssey.frontend import load_scop
from odyssey.mapping import analyse
from odyssey.model.from_design import build_model
from odyssey.platforms import load_platform

KERNELS = Path(__file__).resolve().parents[2] / "odyssey" / "kernels"


def test_bundled_platform_model_builds_from_any_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the bundled platform's origin label is not a path from here
    ks = analyse(load_scop(str(KERNELS / "mm.c"), {"I": "16", "J": "16", "K": "16"}))
    model = build_model(ks, ks.design("ij-ij.k"), platform=load_platform("u250"))
    got = model.evaluate_one({"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 2})
    assert got["latency_cycles"] > 0 and got["dsp"] == 4 * 2 * 2 * 5
