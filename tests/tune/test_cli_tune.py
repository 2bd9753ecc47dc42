"""`odyssey tune`: the real model on one design; a stand-in model for the all-designs runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import odyssey.model
from odyssey.cli import main
from odyssey.frontend import load_scop
from odyssey.mapping.space import Design, KernelSpace, analyse
from odyssey.model.design_model import DesignModel
from odyssey.platforms import Platform, load_platform
from odyssey.tune.exact.optimum import find_optimum
from tests.tune.mm_model import mm_model

ROOT = Path(__file__).resolve().parents[2]
MM = str(ROOT / "kernels" / "mm.c")


def test_tune_one_design_with_the_real_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, emit = tmp_path / "tune.json", tmp_path / "best"
    code = main(["tune", MM, "-D", "I=128", "-D", "J=128", "-D", "K=128", "--design", "ij-ij.k",
                 "--samples", "1500", "--seed", "3", "--json", str(out), "--emit", str(emit)])
    text = capsys.readouterr().out
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["method"] == "odyssey" and doc["best"] == "ij-ij.k" and not doc["interrupted"]
    (rec,) = doc["designs"]
    assert set(rec) >= {"design", "tiling", "latency_cycles", "throughput_gops", "dsp", "bram18k",
                        "samples", "seconds", "trace", "mp_seed"}
    assert set(rec["tiling"]) == {"T_i1", "T_j1", "T_k1", "T_i2", "T_j2", "T_k2"}
    # shares are labelled: of the usable budget (70% of the U250) and of the device
    dsp = rec["dsp"]
    assert rec["throughput_gops"] > 0 and 0 < dsp["of_usable"] <= 1
    assert dsp["used"] / dsp["usable"] == dsp["of_usable"]
    assert dsp["used"] / dsp["device"] == dsp["of_device"] <= 0.7
    assert set(rec["bram18k"]) == {"used", "usable", "of_usable", "device", "of_device"}
    assert "DSP/usable" in text
    # the bound search proves the optimum well within the budget and the run stops there
    assert rec["samples"] + rec["mp_seed"]["evaluations"] <= 1500
    assert rec["stop_reason"] == "converged" and rec["proven_optimal"] is True
    ks = analyse(load_scop(MM, {"I": "128", "J": "128", "K": "128"}))
    opt = find_optimum(odyssey.model.build_model(ks, ks.design("ij-ij.k"), platform=load_platform("u250")))
    assert rec["latency_cycles"] == opt.latency_cycles
    assert rec["mp_seed"]["status"] == "locally_optimal" and rec["mp_seed"]["objective"] == "comm-comp"
    assert rec["mp_seed"]["seed"] is not None
    assert rec["trace"][-1]["throughput_gops"] == rec["throughput_gops"]
    assert "best: design ij-ij.k" in text and "*  ij-ij.k" in text and "proven optimal" in text
    assert (emit / "descriptor.json").is_file() and "wrote" in text


def _stand_in(calls: list[str], interrupt_at: int | None = None) -> Any:
    def build(space: KernelSpace, design: Design, *, platform: Platform,
              variant: str = "accurate") -> DesignModel:
        calls.append(design.id)
        if interrupt_at is not None and len(calls) == interrupt_at:
            raise KeyboardInterrupt
        assert variant == "accurate"
        return mm_model(256, 256, 256, platform=platform, design_id=design.id)

    return build


def test_tune_all_designs_reports_each_and_the_overall_best(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(odyssey.model, "build_model", _stand_in(calls))
    out = tmp_path / "all.json"
    code = main(["tune", MM, "--method", "evolutionary", "--samples", "200", "--json", str(out)])
    assert code == 0
    doc = json.loads(out.read_text())
    assert len(doc["designs"]) == len(calls) == 18
    best = max(doc["designs"], key=lambda r: r["throughput_gops"])
    assert doc["best"] == best["design"]
    assert all(r["mp_seed"] is None and r["samples"] == 200 for r in doc["designs"])
    text = capsys.readouterr().out
    assert text.count("\n") >= 20 and f"best: design {best['design']}" in text


def test_ctrl_c_writes_the_results_so_far(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(odyssey.model, "build_model", _stand_in([], interrupt_at=3))
    out = tmp_path / "partial.json"
    code = main(["tune", MM, "--samples", "300", "--mp-solver", "none", "--json", str(out)])
    assert code == 130
    doc = json.loads(out.read_text())
    assert doc["interrupted"] and len(doc["designs"]) == 2
    assert "interrupted; results of 2 of 18 designs" in capsys.readouterr().err


def test_mp_options_need_the_odyssey_method(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tune", MM, "--method", "random", "--mp-solver", "scip", "--samples", "10"])
    assert code == 2
    assert "--mp-objective, --mp-solver and --no-bound-search apply to --method odyssey only" \
        in capsys.readouterr().err
    code = main(["tune", MM, "--method", "random", "--no-bound-search", "--samples", "10"])
    assert code == 2 and "not --method random" in capsys.readouterr().err


def test_no_bound_search_runs_the_seeded_evolutionary_search(tmp_path: Path) -> None:
    out = tmp_path / "tune.json"
    code = main(["tune", MM, "-D", "I=64", "-D", "J=64", "-D", "K=64", "--design", "ij-ij.k",
                 "--samples", "300", "--no-bound-search", "--json", str(out)])
    (rec,) = json.loads(out.read_text())["designs"]
    assert code == 0 and rec["proven_optimal"] is False and rec["stop_reason"] == "samples"


@pytest.mark.parametrize("args", [["--time", "0"], ["--samples", "-3"], ["--time", "inf"]])
def test_bad_budgets_are_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", MM, *args]) == 2
    assert "usage: odyssey tune" in capsys.readouterr().err


def test_an_unknown_method_is_named_with_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", MM, "--method", "annealling", "--samples", "10"]) == 2
    err = capsys.readouterr().err
    assert "--method annealling: unknown search method" in err and "annealing" in err
