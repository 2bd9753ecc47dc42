"""`odyssey network` and :func:`tune_network` on a tiny custom network (fast model builds).

The network has a 3x3 convolution, a second layer of the same shape (tuned once, result
shared) and a depthwise layer (tuned with kernels/dwconv.c, its own 12 designs).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import odyssey.network.network_tuning as nt
import odyssey.network.schedule as schedule
from odyssey.cli import main
from odyssey.errors import NetworkError
from odyssey.network.networks import load_network
from odyssey.platforms import load_platform

ROOT = Path(__file__).resolve().parents[2]
CNN = str(ROOT / "kernels" / "cnn.c")
CONV = {"O": 4, "I": 4, "H": 4, "W": 4, "P": 3, "Q": 3}
TINY = {
    "format": "odyssey-network/1", "name": "tiny", "title": "Tiny test network", "source": "test",
    "layers": [
        {"name": "c1", "kind": "conv", "sizes": CONV},
        {"name": "dw1", "kind": "depthwise", "sizes": {"C": 4, "H": 4, "W": 4, "P": 3, "Q": 3},
         "stride": 2},
        {"name": "c2", "kind": "conv", "sizes": CONV},
    ],
}


def _net_file(folder: Path) -> Path:
    path = folder / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def all_designs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("network")
    out = folder / "out.json"
    rc, stdout, _ = _run(["network", str(_net_file(folder)), "--kernel", CNN, "--design", "all",
                          "--samples", "12", "--seed", "1", "--json", str(out)])
    yield rc, stdout, json.loads(out.read_text())


def test_all_designs_takes_each_shapes_best(all_designs: tuple[int, str, dict[str, Any]]) -> None:
    rc, stdout, rec = all_designs
    assert rc == 0
    assert [s["layers"] for s in rec["shapes"]] == [["c1", "c2"], ["dw1"]]
    assert [len(s["designs"]) for s in rec["shapes"]] == [30, 12]
    assert rec["shapes"][1]["kernel"].endswith("dwconv_s2.c")  # dw1 has stride 2
    for s in rec["shapes"]:
        assert s["complete"]
        assert s["throughput_gops"] == max(d["throughput_gops"] or 0 for d in s["designs"])
        assert s["design"] in {d["design"] for d in s["designs"]}
    for name in ("c1", "dw1", "c2", "total:"):
        assert name in stdout


def test_duplicate_shares_the_first_layers_result(all_designs: tuple[int, str, dict[str, Any]]) -> None:
    _, stdout, rec = all_designs
    c1, dw1, c2 = rec["layers"]
    assert (c1["duplicate_of"], dw1["duplicate_of"], c2["duplicate_of"]) == (None, None, "c1")
    assert c1["shape"] == c2["shape"] == 1 and dw1["shape"] == 2
    same = ("design", "tiling", "latency_cycles", "throughput_gops", "dsp_efficiency")
    assert {k: c1[k] for k in same} == {k: c2[k] for k in same}
    assert "= c1" in stdout


def test_json_fields_and_totals(all_designs: tuple[int, str, dict[str, Any]]) -> None:
    _, _, rec = all_designs
    assert rec["network"] == "tiny" and rec["platform"] == "u250" and rec["design"] == "all"
    assert rec["samples"] == 12 and rec["interrupted"] is False
    clock = rec["clock_mhz"]
    for layer in rec["layers"]:
        lat, lanes = layer["latency_cycles"], layer["mac_lanes"]
        assert math.isclose(layer["latency_ms"], lat / (clock * 1e3))
        seconds = lat / (clock * 1e6)
        assert math.isclose(layer["throughput_gops"], layer["ops"] / seconds / 1e9)
        # DSP efficiency = throughput / (2 * lanes * clock) = MACs / (lanes * cycles)
        assert math.isclose(layer["dsp_efficiency"],
                            layer["throughput_gops"] / (2 * lanes * clock / 1e3))
        assert 0 < layer["dsp_efficiency"] <= 1
        # an fp32 MAC lane: fmul 3 + fadd 2 DSPs; a drain that adds partial sums adds more
        assert layer["dsp"] >= 5 * lanes
        assert layer["tiling"] and layer["dataflow"] and layer["ordering"]
    macs = {"c1": 4 * 4 * 4 * 4 * 9, "dw1": 4 * 4 * 4 * 9, "c2": 4 * 4 * 4 * 4 * 9}
    assert {x["name"]: x["macs"] for x in rec["layers"]} == macs
    t = rec["totals"]
    assert t["complete"] and t["missing"] == [] and (t["layers"], t["unique_shapes"]) == (3, 2)
    assert math.isclose(t["latency_cycles"], sum(x["latency_cycles"] for x in rec["layers"]))
    assert t["ops"] == 2 * sum(macs.values())
    assert math.isclose(t["throughput_gops"], t["ops"] / (t["latency_cycles"] / (clock * 1e6)) / 1e9)


def test_fixed_design_tunes_each_shape_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = nt.build_model

    def counting(space: Any, design: Any, **kw: Any) -> Any:
        built.append(design.id)
        return real(space, design, **kw)

    monkeypatch.setattr(nt, "build_model", counting)
    out = tmp_path / "fixed.json"
    rc, stdout, _ = _run(["network", str(_net_file(tmp_path)), "--kernel", CNN, "--design",
                          "o-ohw.ipq", "--samples", "8", "--json", str(out)])
    assert rc == 0
    rec = json.loads(out.read_text())
    # c1 and c2 share one build; dw1 has no o-ohw.ipq, so every dwconv.c design is tried
    assert built.count("o-ohw.ipq") == 1 and len(built) == 1 + 12
    c1, dw1, c2 = rec["layers"]
    assert c1["design"] == c2["design"] == "o-ohw.ipq"
    assert "not in the design space" in dw1["note"] and dw1["design"] != "o-ohw.ipq"
    assert "note: dw1: design o-ohw.ipq is not in the design space" in stdout


def test_interrupt_keeps_the_results_so_far(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = schedule.run_tuner

    def interrupt_second(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(schedule, "run_tuner", interrupt_second)
    out = tmp_path / "partial.json"
    rc, _, err = _run(["network", str(_net_file(tmp_path)), "--kernel", CNN, "--design",
                       "o-ohw.ipq", "--samples", "8", "--json", str(out)])
    assert rc == 130 and "interrupted; results of 1 of 2 shapes" in err
    rec = json.loads(out.read_text())
    assert rec["interrupted"] and [x["design"] is not None for x in rec["layers"]] == [True, False, True]
    assert rec["totals"]["missing"] == ["dw1"] and not rec["totals"]["complete"]


def test_no_feasible_design_exits_2(tmp_path: Path) -> None:
    platform = json.loads((ROOT / "odyssey" / "platforms" / "u250.json").read_text())
    platform["resources"]["dsp"] = 4  # not even one fp32 MAC lane (5 DSPs) fits
    platform["kernel_region"]["resources"]["dsp"] = 4
    pfile = tmp_path / "tiny_fpga.json"
    pfile.write_text(json.dumps(platform))
    tiny = {**TINY, "layers": TINY["layers"][:1]}
    net = tmp_path / "one.json"
    net.write_text(json.dumps(tiny))
    rc, stdout, err = _run(["network", str(net), "--kernel", CNN, "--design", "o-ohw.ipq",
                            "--samples", "8", "--platform", str(pfile)])
    assert rc == 2 and "no feasible design" in stdout and "no feasible design for c1" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["network", "nope"], "unknown network `nope`; bundled networks: bert-base, mobilenetv2, resnet50, vgg16, vit-b16"),
    (["network", "{net}", "--kernel", CNN, "--design", "zz", "--samples", "4"],
     "design `zz` is not in the design space"),
    (["network", "{net}", "--kernel", str(ROOT / "kernels" / "mm.c"), "--samples", "4"],
     "mm.c: its size parameters are I, J, K, but conv layers such as c1 set O, I, H, W, P, Q"),
    (["network", "{net}", "--kernel", CNN, "--dw-kernel", "{dir}/none.c", "--samples", "4"],
     "none.c: no such file, and no bundled kernel of that name"),
])
def test_errors_exit_2(tmp_path: Path, argv: list[str], message: str) -> None:
    net = _net_file(tmp_path)
    rc, _, err = _run([a.format(net=net, dir=tmp_path) for a in argv])
    assert rc == 2 and message in err


def test_library_checks_and_progress(tmp_path: Path) -> None:
    net = load_network(_net_file(tmp_path))
    u250 = load_platform("u250")
    with pytest.raises(NetworkError, match="needs a budget"):
        nt.tune_network(net, kernel=CNN, platform=u250)
    with pytest.raises(NetworkError, match="unknown option"):
        nt.tune_network(net, kernel=CNN, platform=u250, samples=4, tuner_options={"nope": 1})
    seen: list[nt.NetworkProgress] = []
    result = nt.tune_network(net, kernel=CNN, platform=u250, design="o-ohw.ipq", samples=8,
                             method="random", progress=seen.append)
    assert result.complete and len(result.shapes) == 2
    assert {(p.shape, p.shapes) for p in seen} == {(1, 2), (2, 2)}
    assert [p.design for p in seen if p.shape == 2 and p.tuner is None] == list(range(1, 13))
    assert result.layers[2].duplicate_of == "c1" and result.layers[2].shape is result.layers[0].shape


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_in_place_on_a_terminal_whole_lines_in_a_log(tmp_path: Path) -> None:
    argv = ["network", str(_net_file(tmp_path)), "--kernel", CNN, "--design", "o-ohw.ipq",
            "--samples", "8", "--method", "random"]
    tty = _Terminal()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(tty):
        assert main(argv) == 0
    assert "\r[shape 1/2: c1,c2] design 1/1 o-ohw.ipq" in tty.getvalue()
    assert tty.getvalue().endswith("\r\x1b[K")
    _, _, err = _run(argv)  # a log: at most a whole line every 5 s, never a carriage return
    assert "\r" not in err and all(x.startswith("[shape ") for x in err.splitlines())
