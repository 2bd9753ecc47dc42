"""Vitis HLS synthesis as a fidelity, without the vendor tools: the report parser on
reports written for these tests after the layout of Vitis HLS's ``csynth.xml`` (documented in
:mod:`odyssey.codegen.hls_report`), and the whole flow (generate, write, run
``csynth.tcl``, read the report; ``odyssey tune --method mfbo --fidelity hls``) with a
stand-in ``vitis_hls`` that writes such a report where Vitis HLS would."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from odyssey.cli import main
from odyssey.codegen.generate import generate
from odyssey.codegen.hls_report import parse_csynth_report, run_hls_synthesis
from odyssey.codegen.writer import write_design
from odyssey.errors import SimulationError
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse

ROOT = Path(__file__).resolve().parents[2]
MM = ROOT / "kernels" / "mm.c"
TILING = {"T_i1": 8, "T_j1": 8, "T_k1": 8}


def _report(worst: str = "12345", best: str = "12000") -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<profile>
  <UserAssignments><TopModelName>kernel0</TopModelName></UserAssignments>
  <PerformanceEstimates>
    <SummaryOfTimingAnalysis><EstimatedClockPeriod>2.920</EstimatedClockPeriod></SummaryOfTimingAnalysis>
    <SummaryOfOverallLatency>
      <Best-caseLatency>{best}</Best-caseLatency>
      <Worst-caseLatency>{worst}</Worst-caseLatency>
      <Interval-max>{worst}</Interval-max>
    </SummaryOfOverallLatency>
  </PerformanceEstimates>
  <AreaEstimates>
    <Resources><BRAM_18K>64</BRAM_18K><DSP>80</DSP><FF>21000</FF><LUT>17000</LUT><URAM>0</URAM></Resources>
  </AreaEstimates>
</profile>
"""


# a stand-in for vitis_hls: reads the project name from the script it is given and writes a
# report where Vitis HLS writes it; its latency is the size of kernel.cpp (differs by design)
FAKE = """#!{python}
import pathlib, re, sys
script = pathlib.Path(sys.argv[sys.argv.index("-f") + 1]).read_text()
if "csim_design" in script or "csynth_design" not in script:
    sys.exit("expected a synthesis-only script")
name = re.search(r"open_project -reset (\\S+)", script).group(1)
out = pathlib.Path(name, "solution1", "syn", "report")
out.mkdir(parents=True)
cycles = len(pathlib.Path("kernel.cpp").read_text())
(out / "csynth.xml").write_text({report!r}.replace("12345", str(cycles)))
print("INFO: [HLS 200-111] Finished Command csynth_design")
"""


@pytest.fixture
def fake_vitis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    exe = tmp_path / "bin" / "vitis_hls"
    exe.parent.mkdir()
    exe.write_text(FAKE.format(python=sys.executable, report=_report()))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("ODYSSEY_VITIS_HLS", str(exe))
    return exe


def test_parses_latency_clock_and_resources(tmp_path: Path) -> None:
    path = tmp_path / "csynth.xml"
    path.write_text(_report())
    r = parse_csynth_report(path)
    assert (r.worst_cycles, r.best_cycles, r.interval) == (12345, 12000, 12345)
    assert r.clock_ns == pytest.approx(2.92)
    assert (r.dsp, r.bram18k, r.lut, r.ff, r.uram) == (80, 64, 17000, 21000, 0)


def test_an_undef_latency_is_none_and_a_non_report_is_named(tmp_path: Path) -> None:
    path = tmp_path / "csynth.xml"
    path.write_text(_report(worst="undef", best="undef"))
    assert parse_csynth_report(path).worst_cycles is None
    path.write_text("<profile><AreaEstimates/></profile>")
    with pytest.raises(SimulationError, match="csynth.xml: no <PerformanceEstimates"):
        parse_csynth_report(path)
    path.write_text("not xml")
    with pytest.raises(SimulationError, match="not a readable Vitis HLS report"):
        parse_csynth_report(path)


def test_every_design_carries_a_synthesis_only_script() -> None:
    ks = analyse(load_scop(MM, {"I": "32", "J": "32", "K": "32"}))
    files = dict(generate(ks, ks.design("ij-ij.k"), TILING).files)
    assert "csynth_design" in files["csynth.tcl"] and "csim_design" not in files["csynth.tcl"]
    assert "cosim_design" in files["hls.tcl"] and "vitis_hls -f csynth.tcl" in files["Makefile"]


def test_synthesis_runs_the_script_and_reads_the_report(tmp_path: Path, fake_vitis: Path) -> None:
    ks = analyse(load_scop(MM, {"I": "32", "J": "32", "K": "32"}))
    out = write_design(generate(ks, ks.design("ij-ij.k"), TILING), tmp_path / "d")
    run = run_hls_synthesis(out)
    assert run.message == "" and run.report is not None
    assert run.report.worst_cycles == len((out / "kernel.cpp").read_text())
    fake_vitis.write_text("#!/bin/sh\necho 'ERROR: [HLS 207-3776] use of undeclared identifier'"
                          "\nexit 1\n")
    failed = run_hls_synthesis(out)
    assert failed.report is None and "exit status 1" in failed.message
    assert "undeclared identifier" in failed.message


def test_cli_mfbo_confirms_with_the_synthesis_report(tmp_path: Path, fake_vitis: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mfbo.json"
    code = main(["tune", str(MM), "-D", "I=32", "-D", "J=32", "-D", "K=32", "--design", "ij-ij.k",
                 "--method", "mfbo", "--fidelity", "hls", "--budget", "2", "--samples", "200",
                 "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and "expensive fidelity: hls" in text and "hls cycles" in text
    doc = json.loads(out.read_text())
    assert doc["high_fidelity"] == "hls" and len(doc["evaluations"]) == 2
    assert all(e["status"] == "pass" and e["high_cycles"] > 0 for e in doc["evaluations"])


def test_cli_without_vitis_hls_says_what_to_do(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ODYSSEY_VITIS_HLS", "no-such-vitis-hls")
    code = main(["tune", str(MM), "--method", "mfbo", "--fidelity", "hls", "--budget", "2"])
    assert code != 0 and "settings64.sh" in capsys.readouterr().err
