"""The architecture studies at their `quick` presets: properties of the results, the files
written, and the `odyssey study` command.

Each quick study runs once per test session (the ``quick`` fixture caches the results);
the properties are those the paper's claims rest on: normalised throughputs in (0, 1]
with the best design at 1, restricted searches never above the full search, and so on.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from odyssey.cli import main
from odyssey.errors import StudyError
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.platforms import load_platform
from odyssey.studies.divisor_only import divisor_tilings
from odyssey.studies.registry import STUDIES, get_study
from odyssey.studies.study import Cell, StudyContext, StudyResult, Table
from odyssey.studies.writer import write_study

ROOT = Path(__file__).resolve().parents[2]
EPS = 1e-9
_CACHE: dict[str, StudyResult] = {}


def quick(name: str) -> StudyResult:
    if name not in _CACHE:
        study = get_study(name)
        ctx = StudyContext(preset=study.quick, platform=load_platform(study.platform), seed=0,
                           kernels=ROOT / "kernels")
        _CACHE[name] = study.execute(ctx)
    return _CACHE[name]


def num(cell: Cell) -> float:
    assert cell is not None
    return float(cell)


def floats(table: Table, column: str) -> list[float]:
    return [num(v) for v in table.column(column) if v is not None]


def test_registry_names_match() -> None:
    for name, study in STUDIES.items():
        assert study.name == name
        assert study.quick.name == "quick" and study.full.name == "full"
    with pytest.raises(StudyError, match="unknown study"):
        get_study("no-such-study")


def test_mm_dataflows() -> None:
    r = quick("mm-dataflows")
    norm = floats(r.table, "normalised")
    assert all(0 < v <= 1 + EPS for v in norm) and max(norm) == pytest.approx(1.0)
    # proven within the preset's 60 s cap (about a second each on an idle machine; the cap
    # is wall-clock, so it is generous for a loaded CI machine)
    assert all(s == "optimal" for s in r.table.column("status"))
    t6 = next(t for t in r.tables if t.name == "table6")
    assert sorted(str(o) for o in t6.column("ordering")) == ["<[i,j],[k]>", "<[i,k],[j]>", "<[j,k],[i]>"]
    assert min(floats(t6, "latency_ratio")) == pytest.approx(1.0)
    for row in t6.rows:  # BRAM shares of the buffers add up to at most the total
        j = t6.columns.index("bram_A_io")
        assert sum(num(v) for v in row[j:j + 4]) <= 1 + EPS


def test_divisor_only_never_beats_the_full_space() -> None:
    r = quick("divisor-only")
    rows = {(row[0], row[1]): row for row in r.table.rows}
    g = r.table.columns.index("throughput_gops")
    for (space, design), row in rows.items():
        if space == "divisor-only":
            assert num(row[g]) <= num(rows[("full", design)][g]) + EPS
            tiling = dict(kv.split("=") for kv in str(row[r.table.columns.index("tiling")]).split(","))
            for loop in "ijk":
                assert 96 % int(tiling[f"T_{loop}1"]) == 0
    assert 0 < r.headline("div_vs_full").value <= 1 + EPS
    assert r.headline("div_vs_full").paper == pytest.approx(0.61)


def test_divisor_tilings_are_every_divisor_tiling() -> None:
    ks = analyse(load_scop(ROOT / "kernels" / "mm.c", {"I": "12", "J": "8", "K": "6"}))
    model = build_model(ks, ks.design("ij-ij.k"), platform=load_platform("u250"))
    cols = divisor_tilings(model)
    n = len(cols["T_i1"])
    brute = 0
    for i1 in (1, 2, 3, 4, 6, 12):
        for j1 in (1, 2, 4, 8):
            for k1 in (1, 2, 3, 6):
                brute += sum(1 for d in range(1, i1 + 1) if i1 % d == 0) \
                    * sum(1 for d in range(1, j1 + 1) if j1 % d == 0) \
                    * sum(1 for d in range(1, k1 + 1) if k1 % d == 0)
    assert n == brute
    assert np.all(model.evaluate(cols).legal)


def test_max_model_choice_is_never_better_than_the_accurate_optimum() -> None:
    r = quick("max-model")
    t = r.table
    g, claim = t.columns.index("throughput_gops"), t.columns.index("max_model_gops")
    for acc, chosen in zip(t.rows[::2], t.rows[1::2], strict=True):
        assert acc[0] == "accurate optimum" and chosen[0] == "max-model choice"
        assert num(chosen[g]) <= num(acc[g]) + EPS
        # the max model never predicts a longer latency than the accurate one
        assert num(chosen[claim]) >= num(chosen[g]) - EPS
    assert r.headline("max_vs_acc").value <= 1 + EPS


def test_comm_pruning_keeps_least_traffic_and_loses_throughput() -> None:
    r = quick("comm-pruning")
    t = r.table
    g, mb = t.columns.index("throughput_gops"), t.columns.index("offchip_mb")
    least = t.columns.index("least_offchip_mb")
    for opt, pruned, first in zip(t.rows[::3], t.rows[1::3], t.rows[2::3], strict=True):
        assert num(pruned[g]) <= num(opt[g]) + EPS
        assert num(first[g]) <= num(pruned[g]) + EPS
        assert num(pruned[mb]) == pytest.approx(num(pruned[least]))
        assert num(opt[mb]) >= num(pruned[mb]) - EPS
    assert r.headline("pruned_vs_opt").value <= 1 + EPS


def test_mp_objectives_traces_are_monotone_and_bounded() -> None:
    r = quick("mp-objectives")
    assert [row[0] for row in r.table.rows] == ["comp", "comm", "comm-comp", "odyssey"]
    traces = next(t for t in r.tables if t.name == "traces")
    by: dict[str, list[float]] = {}
    for row in traces.rows:
        by.setdefault(str(row[0]), []).append(num(row[2]))
    assert set(by) == {"no solver", "Obj1: -comp", "Obj2: comm", "Obj3: comm-comp"}
    for curve in by.values():
        assert all(b >= a - EPS for a, b in zip(curve, curve[1:], strict=False))
        assert 0 < curve[-1] <= 1 + EPS  # never above the exact optimum
    assert len(r.plots) == 2


def test_cnn_conv12_normalised_per_layer() -> None:
    r = quick("cnn-conv12")
    for layer in ("CONV1", "CONV2"):
        norm = [num(row[-2]) for row in r.table.rows if row[0] == layer]
        assert all(0 < v <= 1 + EPS for v in norm) and max(norm) == pytest.approx(1.0)
    eff = [num(v) for v in r.table.column("dsp_efficiency") if v is not None]
    assert all(0 < v <= 1 + EPS for v in eff)
    t7 = next(t for t in r.tables if t.name == "table7")
    assert {row[1] for row in t7.rows} == {"hi-ohw.ipq", "oh-ohw.ipq"}


def test_cnn_dataflows_geomean_below_layer_peak() -> None:
    r = quick("cnn-dataflows")
    vs_peak = floats(r.table, "vs_layer_peak")
    assert all(0 < v <= 1 + EPS for v in vs_peak)
    layers = {row[1] for row in r.table.rows}
    for layer in layers:  # every layer has its peak dataflow at 1
        assert max(num(row[7]) for row in r.table.rows if row[1] == layer) == pytest.approx(1.0)
    geo = next(t for t in r.tables if t.name == "geomean")
    assert all(0 < num(v) <= 1 + EPS for v in geo.column("geomean_vs_layer_peak"))
    assert max(num(v) for v in geo.column("geomean_vs_layer_peak")) <= 1 + EPS


def test_shared_array_fixes_the_hardware() -> None:
    r = quick("shared-array")
    (row,) = r.table.rows
    hw = dict(kv.split("=") for kv in str(row[r.table.columns.index("hardware")]).split(","))
    layers = next(t for t in r.tables if t.name == "layers")
    for lay in layers.rows:
        tiling = dict(kv.split("=") for kv in str(lay[-1]).split(","))
        for name, value in tiling.items():
            if name.endswith("2") or name in ("T_o1", "T_h1"):  # level two, space loops: fixed
                assert value == hw[name]
            else:  # time loops: within the capacity
                assert int(value) <= int(hw[name])
    assert 0 < r.headline("gap_tiny").value <= 1 + EPS
    assert r.headline("gap_tiny").value <= r.headline("same_tiny").value + EPS


def test_writer_and_cli(tmp_path: Path) -> None:
    study = get_study("mm-dataflows")
    res = quick("mm-dataflows")
    out = write_study(study, res, tmp_path / "mm")
    names = {p.name for p in out.iterdir()}
    assert {"mm-dataflows.csv", "mm-dataflows-table6.csv", "README.md", "study.json",
            "throughput_dsp.png"} <= names
    assert (out / "throughput_dsp.png").read_bytes()[:4] == b"\x89PNG"
    record = json.loads((out / "study.json").read_text())
    assert record["study"] == "mm-dataflows" and record["preset"] == "quick"
    assert "| quantity | ours | paper |" in (out / "README.md").read_text()
    write_study(study, res, out)  # replacing an earlier result is fine
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("x")
    with pytest.raises(StudyError, match="not a study result"):
        write_study(study, res, tmp_path / "other")
    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        assert main(["study", "--list"]) == 0
        assert main(["study", "no-such-study"]) == 2
    assert all(name in buf.getvalue() for name in STUDIES)
    assert "unknown study" in err.getvalue()


def test_tuners_study_normalises_by_the_optimum() -> None:
    r = quick("tuners")
    fractions = [num(v) for v in r.table.column("fraction") if v is not None]
    assert fractions and all(0 <= v <= 1 + EPS for v in fractions)
    assert 0 < r.headline("odyssey_median").value <= 1 + EPS
    assert r.headline("odyssey_worst").paper == pytest.approx(0.90)


def test_headlines_are_finite() -> None:
    for name in _CACHE:
        for h in _CACHE[name].headlines:
            assert math.isfinite(h.value) or h.key.startswith("reach_"), (name, h.key)
