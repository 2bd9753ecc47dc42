"""`odyssey sim --trace`: every process's stalls from the timed simulation, as a Chrome/Perfetto
trace and on the design's report page. Closed form against the untraced run: tracing changes no
cycle, and each process's stall spans add up to the stall count the report prints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from odyssey.cli import main
from odyssey.codegen.generate import generate
from odyssey.codegen.sim_trace import chrome_trace
from odyssey.codegen.timedsim import STALL_KINDS, run_timed_sim
from odyssey.codegen.writer import write_design
from odyssey.frontend import load_scop
from odyssey.frontend.bundled import bundled_kernel
from odyssey.mapping.space import analyse

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

SIZES = {"I": "32", "J": "24", "K": "40"}
TILING = {"T_i1": 16, "T_j1": 12, "T_k1": 8, "T_i2": 4, "T_j2": 3, "T_k2": 4}  # padded k, two k tiles


def _design(tmp: Path) -> Path:
    ks = analyse(load_scop(bundled_kernel("mm"), SIZES))
    return write_design(generate(ks, ks.design("ij-ij.k"), TILING), tmp / "d")


def test_the_trace_changes_no_cycle_and_its_spans_are_the_stalls(tmp_path: Path) -> None:
    d = _design(tmp_path)
    plain = run_timed_sim(d, timeout_s=300)
    traced = run_timed_sim(d, timeout_s=300, trace=True)
    assert plain.passed and traced.passed, (plain.message, traced.message)
    assert traced.cycles == plain.cycles and traced.modules == plain.modules
    assert [t.name for t in traced.traces] == [m[0] for m in traced.modules]
    for t, (_, end, stall) in zip(traced.traces, traced.modules, strict=True):
        assert t.end == end and t.stall == stall and t.merged == 0
        assert sum(b - a for a, b, _ in t.spans) == stall, t.name
        assert all(t.start <= a < b <= t.end and k in STALL_KINDS for a, b, k in t.spans)
        assert all(x[1] <= y[0] for x, y in zip(t.spans, t.spans[1:], strict=False))  # ordered, disjoint
    kinds = {k for t in traced.traces for _, _, k in t.spans}
    assert {"r", "w"} <= kinds  # the drains wait for the PEs, the readers for free FIFO slots
    doc = chrome_trace(traced.traces, 300.0, design="d")
    runs = [e for e in doc["traceEvents"] if e["name"] == "run"]
    assert len(runs) == len(traced.traces)
    assert max(e["ts"] + e["dur"] for e in runs) == pytest.approx(traced.cycles / 300.0)


def test_sim_trace_writes_the_trace_and_the_report_shows_the_timeline(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _design(tmp_path)
    trace = tmp_path / "t.json"
    assert main(["sim", str(d), "--compare", "--trace", str(trace)]) == 0
    doc = json.loads(trace.read_text())
    assert any(e["name"].startswith("stalled: ") for e in doc["traceEvents"])
    kept = json.loads((d / "sim.json").read_text())
    assert kept["status"] == "pass" and kept["timeline"]
    assert main(["report", str(d)]) == 0
    rep = json.loads((d / "report.json").read_text())
    sim = rep["simulation"]
    assert sim["simulated_cycles"] == kept["simulated_cycles"]
    assert sim["model_cycles"] == pytest.approx(kept["model_cycles"])
    assert "Timed simulation" in (d / "report.html").read_text()
    capsys.readouterr()
    assert main(["sim", str(d), "--trace", str(d)]) == 2  # a folder: refused before simulating
    err = capsys.readouterr().err
    assert "--trace" in err and "compiling" not in err
