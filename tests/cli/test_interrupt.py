"""Ctrl-C keeps what a command finished: it prints and writes the results so far, exit 130."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.fuzz import run as odyssey
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


def _slow_sim_design(tmp_path: Path) -> Path:
    """An MM design whose timed simulation runs some 20 s here (compile 3 s)."""
    out = tmp_path / "mm1024"
    o = odyssey(["generate", "mm", "-D", "I=1024", "-D", "J=1024", "-D", "K=1024", "--design", "ij-ij.k",
             "--tiling", "T_i1=16,T_j1=32,T_k1=16,T_i2=4,T_j2=8,T_k2=4", "--out", str(out)])
    assert o.code == 0, o.describe()
    return out


def test_sim_prints_and_writes_how_far_the_simulation_got(tmp_path: Path) -> None:
    """Ctrl-C once the kernel runs (its first progress line, within 5 s of the start): the
    program prints its state, odyssey shows it as interrupted (no latency) and writes it."""
    design, out = _slow_sim_design(tmp_path), tmp_path / "sim.json"
    run = interrupt_after(["sim", str(design), "--json", str(out)], tmp_path,
                          when=" reached, ", limit_s=60)
    assert run.returncode == 130, run.stderr
    assert run.answered_s < 5.0, run.answered_s
    assert run.stderr.startswith(f"sim {design}: compiling"), run.stderr
    assert "Traceback" not in run.stderr and "odyssey: interrupted" in run.stderr
    assert f"{design}: interrupted: interrupted after" in run.stdout, run.stdout
    assert "(interrupted, not a final latency): cycle " in run.stdout
    assert "simulated latency" not in run.stdout and "ODYSSEY" not in run.stdout
    rec = json.loads(out.read_text())
    assert rec["status"] == "interrupted" and rec["simulated_cycles"] is None
    assert rec["tasks_started"] == len(rec["tasks"]) > 0
    assert rec["tasks_finished"] < rec["tasks_started"]  # the DRAM writer had not ended
    cycles = [t["cycle"] for t in rec["tasks"]]
    assert rec["cycle_reached"] == max(cycles) > 0 and all(c >= 0 for c in cycles)
    assert f"cycle {rec['cycle_reached']:,} reached" in run.stdout


def test_sim_interrupted_while_compiling_says_so(tmp_path: Path) -> None:
    """SIGINT to odyssey alone (not its compiler): the compiler is stopped, exit 130, and the
    record says where it was."""
    design, out = _slow_sim_design(tmp_path), tmp_path / "sim.json"
    run = interrupt_after(["sim", str(design), "--json", str(out)], tmp_path, when="compiling",
                          then_s=0.5, group=False)
    assert run.returncode == 130, run.stderr
    assert "Traceback" not in run.stderr
    rec = json.loads(out.read_text())
    assert rec["status"] == "interrupted" and rec["cycle_reached"] is None
    assert rec["message"].startswith("interrupted while compiling"), rec
    assert "nothing the program could report" in run.stdout


def test_study_keeps_the_designs_it_finished(tmp_path: Path) -> None:
    out = tmp_path / "div"
    run = interrupt_after(["study", "divisor-only", "--out", str(out)], tmp_path,
                          when="design 1/18", then_s=0.0)  # after design 1 of 18 finished
    # (not its first progress line: on a loaded machine design 1's search reports before it ends)
    assert run.returncode == 130, run.stderr
    assert "interrupted; the results of the designs that finished" in run.stderr
    assert "Traceback" not in run.stderr and "best full-space throughput" in run.stdout
    rec = json.loads((out / "study.json").read_text())
    assert rec["settings"]["interrupted"] is True
    rows = (out / "divisor-only.csv").read_text().splitlines()[1:]
    assert 2 <= len(rows) < 36 and len(rows) % 2 == 0  # full and divisor-only per finished design
    assert (out / "divisor_only.png").is_file()
    assert "Interrupted (Ctrl-C)" in (out / "README.md").read_text()


def test_study_interrupted_before_any_design_writes_nothing_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C in the first design's search: no result to write (it was a bare
    "odyssey: interrupted"); an earlier study in the folder is left as it was."""
    import odyssey.studies._common as common
    from odyssey.cli import main

    def ctrl_c(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(common, "optimum_point", ctrl_c)
    out = tmp_path / "div"
    assert main(["study", "divisor-only", "--quick", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert f"interrupted before any design finished: nothing written to {out}/" in err, err
    assert not out.exists()


def test_transfer_reports_and_keeps_every_finished_shape(tmp_path: Path) -> None:
    history = tmp_path / "h.json"
    run = interrupt_after(["network", "vgg16", "--transfer", "--design", "oh-ohw.ipq", "--time",
                           "2.5", "--history", str(history)], tmp_path,
                          when=("with transfer: shape", "from scratch: shape 2/"))
    assert run.returncode == 130, run.stderr
    assert "Traceback" not in run.stderr
    last = [ln for ln in run.stderr.splitlines() if ": shape " in ln][-1]
    shape = int(last.split(": shape ")[1].split("/")[0])
    scratch, transfer = (shape, shape - 1) if last.startswith("with transfer") else (shape - 1,) * 2
    assert (f"shapes finished: {scratch} from scratch, {transfer} with transfer; the "
            f"{transfer} finished in both are compared") in run.stderr, run.stderr
    shapes = json.loads(history.read_text())["shapes"]
    assert len(shapes) == scratch >= 1  # the scratch run's shape is kept too
    assert f"history: {scratch} shapes added" in run.stdout


def test_shared_array_answers_ctrl_c_at_once(tmp_path: Path) -> None:
    """It ignored SIGINT (the optimum's fallback tuner swallowed it) and was silent."""
    out = tmp_path / "sa.json"
    run = interrupt_after(["network", "vgg16", "--shared-array", "--json", str(out)], tmp_path,
                          when="[shared array", then_s=4.0)
    assert run.returncode == 130, run.stderr
    assert run.answered_s < 2.0, run.answered_s
    assert "per-layer optimum 1/9" in run.stderr and "Traceback" not in run.stderr
    assert "interrupted before any design's shared array was found" in run.stderr
    rec = json.loads(out.read_text())  # the record says so (it wrote nothing)
    assert rec["arrays"] == [] and rec["interrupted"] is True


@pytest.mark.slow
def test_shared_array_keeps_the_designs_it_finished(tmp_path: Path) -> None:
    """About 3 minutes: one design's nine per-layer optima, then the second design's start."""
    out = tmp_path / "sa.json"
    run = interrupt_after(["network", "vgg16", "--shared-array", "--time", "0.3", "--samples", "3",
                           "--json", str(out)], tmp_path, when="] design 2/10", limit_s=1200)
    assert run.returncode == 130, run.stderr
    assert "the shared arrays of the 1 design(s) finished are above" in run.stderr
    assert "o-ohw.ipq" in run.stdout
    assert len(json.loads(out.read_text())["arrays"]) == 1


def test_a_study_tells_of_a_long_optimum_search_every_5_s() -> None:
    import math

    from odyssey.platforms import load_platform
    from odyssey.studies._common import _every
    from odyssey.studies.registry import get_study
    from odyssey.studies.study import StudyContext
    from odyssey.tune.exact.optimum import OptimumProgress

    said: list[str] = []
    ctx = StudyContext(preset=get_study("divisor-only").preset("quick"),
                       platform=load_platform("u250"), say=said.append)
    tell = _every(ctx, "ij-ij.k")
    for t in (0.0, 2.0, 5.5, 7.0, 10.6):
        tell(OptimumProgress("bound", t, math.inf if t < 5 else 1e6, 0.0, 10, 2))
    assert said == ["ij-ij.k: optimum search 6 s (bound), best 1,000,000 cycles",
                    "ij-ij.k: optimum search 11 s (bound), best 1,000,000 cycles"]
