"""Ctrl-C keeps what a command finished: it prints and writes the results so far, exit 130."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.interrupt import ROOT, interrupt_after

MM = str(ROOT / "kernels" / "mm.c")
BIG = ["-D", "I=1048576", "-D", "J=1048576", "-D", "K=1048576"]


def test_optimum_prints_and_writes_its_best_tiling_and_gap(tmp_path: Path) -> None:
    out = tmp_path / "opt.json"
    run = interrupt_after(["optimum", MM, *BIG, "--design", "ij-ij.k", "--time", "60",
                           "--json", str(out)], tmp_path, when="ij-ij.k: seed", then_s=2.0)
    assert run.returncode == 130, run.stderr
    assert run.answered_s < 2.0, run.answered_s
    assert "accurate model: interrupted" in run.stdout and "tiling: T_i1=" in run.stdout
    assert "gap" in run.stdout and "interrupted" in run.stderr and "Traceback" not in run.stderr
    rec = json.loads(out.read_text())
    assert rec["status"] == "interrupted" and rec["tiling"] is not None
    lat, low = rec["latency_cycles"], rec["lower_bound_cycles"]
    assert 0 <= low <= lat and abs(rec["gap"] - (lat - low) / lat) < 1e-9
