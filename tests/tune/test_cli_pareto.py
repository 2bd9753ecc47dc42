"""`odyssey pareto`: files written, their content, clean errors, Ctrl-C."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from odyssey.cli import main
from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel
from odyssey.studies.pareto_report import figure_png, front_csv, front_title, plot_front
from odyssey.tune.pareto import adrs, load_front

ROOT = Path(__file__).resolve().parents[2]
MM = str(ROOT / "kernels" / "mm.c")
SMALL = ["-D", "I=12", "-D", "J=12", "-D", "K=12"]


def test_pareto_writes_json_csv_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "front"
    code = main(["pareto", MM, *SMALL, "--design", "all", "--objectives", "latency,dsp,bram18k",
                 "--method", "nsga2", "--samples", "3000", "--seed", "1", "--adrs", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    doc = json.loads((out / "front.json").read_text())
    assert doc["method"] == "nsga2" and doc["status"] == "samples" and doc["seed"] == 1
    assert doc["objectives"] == ["latency", "dsp", "bram18k"] and len(doc["designs"]) == 18
    assert doc["front_size"] == len(doc["points"]) > 0
    assert set(doc["reference"]) == {"latency", "dsp", "bram18k"}
    assert 0 < doc["hypervolume"] <= 1 and doc["adrs"]["value"] >= 0
    assert doc["command"].startswith("odyssey pareto ") and "--samples 3000" in doc["command"]
    point = doc["points"][0]
    assert set(point) >= {"design", "dataflow", "ordering", "tiling", "latency_cycles",
                          "throughput_gops", "dsp", "bram18k", "feasible"}
    with (out / "front.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == doc["front_size"]
    assert rows[0]["design"] == point["design"] and rows[0]["feasible"] == "true"
    assert rows[0]["tiling"] == " ".join(f"{k}={v}" for k, v in point["tiling"].items())
    assert (out / "front.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "front.csv").stat().st_mode & 0o044  # readable by others, as files usually are
    assert not list(out.glob(".front*"))  # no temporary left behind
    assert "hypervolume" in text and "ADRS to the exact front" in text and "wrote" in text


def test_pareto_exact_one_design(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["pareto", MM, *SMALL, "--design", "ij-ij.k", "--objectives", "latency,dsp",
                 "--out", str(tmp_path)])
    assert code == 0
    doc = json.loads((tmp_path / "front.json").read_text())
    assert doc["method"] == "exact" and doc["exact"] and doc["designs"][0]["design"] == "ij-ij.k"
    assert "exact: every legal tiling evaluated" in capsys.readouterr().out


def test_front_files_load_back_with_or_without_the_json_points(tmp_path: Path) -> None:
    assert main(["pareto", MM, *SMALL, "--design", "all", "--objectives", "latency,dsp,bram18k",
                 "--method", "nsga2", "--samples", "2000", "--seed", "0", "--out",
                 str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "front.json").read_text())
    csv_text = (tmp_path / "front.csv").read_text()
    full = load_front(doc)
    trimmed = {k: v for k, v in doc.items() if k != "points"}
    from_csv = load_front(trimmed, csv_text)
    assert [p.to_json() for p in full.points] == doc["points"]
    assert [(p.design_id, dict(p.tiling)) for p in from_csv.points] == [
        (p.design_id, dict(p.tiling)) for p in full.points]
    objectives = ["latency", "dsp", "bram18k", "uram", "offchip"]
    assert (from_csv.matrix(objectives) == full.matrix(objectives)).all()
    assert from_csv.hypervolume_at(from_csv.reference) == pytest.approx(doc["hypervolume"], rel=1e-12)
    assert front_csv(from_csv) == csv_text
    # the figure the command wrote, redrawn from the JSON without points and the CSV
    png = figure_png(plot_front(from_csv, title=front_title(from_csv, doc)))
    assert png == (tmp_path / "front.png").read_bytes()
    with pytest.raises(TunerError, match="front.csv"):
        load_front(trimmed)


def test_bad_objective_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["pareto", MM, *SMALL, "--objectives", "latency,power", "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 2
    assert "unknown objective 'power'" in err and "latency, dsp, bram18k, uram, offchip" in err
    assert not (tmp_path / "x").exists()


def test_reference_point_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["pareto", MM, *SMALL, "--design", "ij-ij.k", "--objectives", "latency,dsp",
                 "--reference", "latency=1e6", "--out", str(tmp_path)])
    assert code == 0
    doc = json.loads((tmp_path / "front.json").read_text())
    assert doc["reference"]["latency"] == 1e6 and doc["reference"]["dsp"] == doc["budget"]["dsp"]
    capsys.readouterr()
    assert main(["pareto", MM, *SMALL, "--objectives", "latency,dsp", "--reference", "bram18k=4"]) == 2
    assert "--reference bram18k=4: expected OBJECTIVE=VALUE" in capsys.readouterr().err
    assert main(["pareto", MM, *SMALL, "--reference", "dsp=-1"]) == 2
    assert "positive" in capsys.readouterr().err


def test_ctrl_c_still_writes_the_front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    calls = {"n": 0}
    real = DesignModel.evaluate

    def evaluate(self: DesignModel, *args: object, **kw: object) -> object:
        calls["n"] += 1
        if calls["n"] == 40:
            raise KeyboardInterrupt
        return real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(DesignModel, "evaluate", evaluate)
    code = main(["pareto", MM, *SMALL, "--method", "nsga2", "--samples", "1000000",
                 "--out", str(tmp_path)])
    assert code == 130
    doc = json.loads((tmp_path / "front.json").read_text())
    assert doc["status"] == "interrupted" and doc["front_size"] > 0
    assert "interrupted" in capsys.readouterr().err


def test_convergence_script_compares_runs_with_their_union(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """`scripts/pareto_convergence.py` (the convergence table of docs/results/pareto): with an
    exact run among the runs, the union is the exact front, the exact run covers all of it
    at ADRS 0, and a short NSGA-II run's row gives its ADRS, its count of covered points
    (the exact points at distance 0) and its hypervolumes at 10x and 2x the fastest latency."""
    spec = importlib.util.spec_from_file_location("pareto_convergence",
                                                  ROOT / "scripts" / "pareto_convergence.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    base = ["pareto", MM, *SMALL, "--design", "all", "--objectives", "latency,dsp,bram18k"]
    assert main([*base, "--method", "exact", "--out", str(tmp_path / "exact")]) == 0
    assert main([*base, "--method", "nsga2", "--samples", "300", "--seed", "0",
                 "--out", str(tmp_path / "short")]) == 0
    capsys.readouterr()
    exact = load_front(json.loads((tmp_path / "exact" / "front.json").read_text()))
    stored = tmp_path / "exact" / "front.json"  # as committed: the points only in front.csv
    stored.write_text(json.dumps({k: v for k, v in json.loads(stored.read_text()).items()
                                  if k != "points"}))
    assert script.main([str(tmp_path / "exact"), str(tmp_path / "short")]) == 0
    lines = capsys.readouterr().out.splitlines()
    short = load_front(json.loads((tmp_path / "short" / "front.json").read_text()))
    g, w = exact.matrix(), short.matrix()
    n = len(g)
    fastest = min(p.latency_cycles for p in exact.points)
    assert lines[0].startswith(f"union: {n} points; fastest {fastest:,.0f} cycles")
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[3:]]
    assert rows[0][3:6] == [f"{n:,}", f"{n:,} / {n:,}", "0.0e+00"]
    covered = sum(adrs(g[k:k + 1], w) == 0.0 for k in range(n))
    assert covered < n  # 300 evaluations do not find the whole front
    hv = [short.hypervolume_at((f * fastest, *short.reference[1:])) for f in (10, 2)]
    assert rows[1][3:] == [f"{len(w):,}", f"{covered:,} / {n:,}", f"{adrs(g, w):.1e}",
                           *(f"{h:.6f}" for h in hv)]
