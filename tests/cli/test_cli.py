"""The command line's contract: outputs checked before any work and never lost, exit 0/2/130
and no traceback, one vocabulary (--json FILE|-, --time, --version, help for every option),
-D and --tiling checked, labelled shares, progress in logs, bundled kernels from anywhere."""

from __future__ import annotations

import argparse
import json
import os
import stat
from pathlib import Path

import pytest

import odyssey.fsutil
from odyssey.cli import build_parser, main
from tests.cli.fuzz import run

SMALL = ["-D", "I=16", "-D", "J=16", "-D", "K=16"]
TILING = "T_i1=4,T_j1=4,T_k1=4,T_i2=2,T_j2=2,T_k2=1"
TUNE = ["tune", "mm", *SMALL, "--design", "ij-ij.k", "--samples", "20", "--method", "random"]


# ------------------------------------------------------------------ outputs


@pytest.mark.parametrize(("argv", "message"), [
    (["--json", "/proc/x/out.json"], "--json /proc/x/out.json: cannot create the folder /proc/x"),
    (["--json", "{tmp}"], "is a folder; give a file name inside it"),
    (["--json", "."], "--json '.': expected a file name"),
    (["--emit", "/proc/x"], "--emit /proc/x: cannot write into /proc"),
    (["--emit", "{tmp}/notes.txt"], "exists and is not a folder"),
])
def test_bad_outputs_stop_tune_before_it_searches(tmp_path: Path, argv: list[str], message: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    import odyssey.frontend

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("the kernel was read before the outputs were checked")

    monkeypatch.setattr(odyssey.frontend, "load_scop", no_work)
    o = run([*TUNE, *(a.format(tmp=tmp_path) for a in argv)])
    assert o.code == 2 and message in o.err and "Traceback" not in o.err
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("argv", [
    ["optimum", "mm", "--design", "ij-ij.k", "--json", "{tmp}"],
    ["pareto", "mm", "--out", "/proc/x"],
    ["generate", "mm", "--design", "ij-ij.k", "--tiling", TILING, "--out", "/proc/x"],
    ["generate", "mm", "--design", "ij-ij.k", "--tiling", TILING, "--out", "{tmp}/user"],
    ["study", "mm-dataflows", "--quick", "--out", "{tmp}/user"],
    ["network", "vgg16", "--json", "/proc/x/y.json"],
])
def test_unwritable_outputs_of_every_command(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "notes.txt").write_text("mine")
    o = run([a.format(tmp=tmp_path) for a in argv])
    assert o.code == 2 and "odyssey: error: --" in o.err, o.describe()
    assert (tmp_path / "user" / "notes.txt").read_text() == "mine"


def test_missing_folders_of_an_output_are_created(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "dir" / "out.json"
    o = run([*TUNE, "--json", str(out)])
    assert o.code == 0 and json.loads(out.read_text())["best"] == "ij-ij.k"


def test_a_write_that_fails_at_the_end_keeps_the_result(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills up after the search: the JSON lands in a fallback file in the working
    directory, the message names it, and the exit status is 2."""
    target = tmp_path / "out.json"
    real = odyssey.fsutil.write_bytes_atomically

    def full_disk(path: str | Path, data: bytes) -> Path:
        if Path(path) == target:
            raise OSError(28, "No space left on device")
        return real(path, data)

    monkeypatch.setattr(odyssey.fsutil, "write_bytes_atomically", full_disk)
    monkeypatch.chdir(tmp_path)
    o = run([*TUNE, "--json", str(target)])
    assert o.code == 2 and not target.exists()
    (kept,) = tmp_path.glob("odyssey-*-out.json")
    assert f"cannot write --json {target} (No space left on device); the result is kept in " \
           f"{kept}" in o.err
    assert json.loads(kept.read_text())["best"] == "ij-ij.k"
    assert "best: design ij-ij.k" in o.out  # the table was printed as well


def test_a_design_folder_that_fails_at_the_end_is_kept(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import odyssey.codegen.writer

    target = tmp_path / "mm"
    real = odyssey.codegen.writer.write_design

    def fails_once(design: object, out: Path) -> Path:
        if Path(out) == target:
            raise OSError(13, "Permission denied")
        return real(design, out)  # type: ignore[arg-type]

    monkeypatch.setattr(odyssey.codegen.writer, "write_design", fails_once)
    monkeypatch.chdir(tmp_path)
    o = run(["generate", "mm", *SMALL, "--design", "ij-ij.k", "--tiling", TILING,
             "--out", str(target)])
    (kept,) = tmp_path.glob("odyssey-*-mm")
    assert o.code == 2 and f"the result is kept in {kept}" in o.err
    assert (kept / "descriptor.json").is_file() and f"wrote {kept}/" in o.out


def test_outputs_get_the_usual_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        out, js = tmp_path / "mm", tmp_path / "model.json"
        assert run(["generate", "mm", *SMALL, "--design", "ij-ij.k", "--tiling", TILING,
                    "--out", str(out)]).code == 0
        assert run(["model", "mm", *SMALL, "--design", "ij-ij.k", "--tiling", TILING,
                    "--json", str(js)]).code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    assert stat.S_IMODE((out / "kernel.cpp").stat().st_mode) == 0o644
    assert stat.S_IMODE(js.stat().st_mode) == 0o644


def test_generate_lists_every_file_it_writes(tmp_path: Path) -> None:
    out = tmp_path / "mm"
    o = run(["generate", "mm", *SMALL, "--design", "ij-ij.k", "--tiling", TILING, "--out", str(out)])
    listed = o.out.split("(", 1)[1].split(")", 1)[0].split(", ")
    assert sorted(listed) == sorted(p.name for p in out.iterdir())
    again = run(["generate", "mm", *SMALL, "--design", "ij-ij.k", "--tiling", TILING, "--out",
                 str(out), "--json", "-"])
    rec = json.loads(again.out)
    assert again.code == 0 and sorted(rec["files"]) == sorted(listed)
    assert rec["design_dir"] == str(out) and rec["pes"] == 4 and rec["array"] == [2, 2]


def test_generate_at_another_clock_keeps_it(tmp_path: Path) -> None:
    """`generate --clock` prints hls.tcl's period and records the clock in the descriptor;
    `check` and `sim --compare` take the platform at that clock without being told."""
    out = tmp_path / "mm"
    o = run(["generate", "mm", *SMALL, "--design", "ij-ij.k", "--tiling", TILING, "--out", str(out),
             "--clock", "250"])
    assert o.code == 0, o.err
    assert "create_clock -period 4.000" in (out / "hls.tcl").read_text()
    desc = json.loads((out / "descriptor.json").read_text())
    assert desc["clock_mhz"] == 250.0 and desc["platform"] == "u250"
    ok = run(["check", str(out)])
    assert ok.code == 0 and " ok" in ok.out, ok.out
    other = run(["check", str(out), "--platform", "u250"])  # the platform file's own 300 MHz
    assert other.code == 2 and "the platform's clock is 300 MHz" in other.out


def test_network_at_another_clock(tmp_path: Path) -> None:
    """`network --clock`: the platform at the clock given, GOP/s at that clock (a network of
    two conv layers: VGG16 took 40 s of the README's first check)."""
    net = tmp_path / "net.json"
    net.write_text(json.dumps({
        "format": "odyssey-network/1", "name": "two", "title": "two", "source": "test",
        "layers": [{"name": f"c{n}", "kind": "conv",
                    "sizes": {"O": 16 * n, "I": 16, "H": 8, "W": 8, "P": 3, "Q": 3}}
                   for n in (1, 2)]}))
    argv = ["network", str(net), "--design", "oh-ohw.ipq", "--samples", "30", "--seed", "0",
            "--json", "-"]
    a, b = run(argv), run([*argv, "--clock", "150"])
    assert a.code == 0 and b.code == 0, b.err
    ra, rb = json.loads(a.out), json.loads(b.out)
    assert ra["clock_mhz"] == 300.0 and rb["clock_mhz"] == 150.0
    t = rb["totals"]
    assert t["throughput_gops"] == pytest.approx(t["ops"] / (t["latency_cycles"] / 150e6) / 1e9)
    for x in rb["layers"]:
        assert x["throughput_gops"] == pytest.approx(x["ops"] / (x["latency_cycles"] / 150e6) / 1e9)


# ------------------------------------------------------------------ exit status


def test_interrupt_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import odyssey.cli.design_cmds as design_cmds

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(design_cmds, "_cmd_designs", interrupted)
    o = run(["designs", "mm"])
    assert o.code == 130 and "interrupted" in o.err


def test_debug_shows_the_traceback_of_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    import odyssey.cli.design_cmds as design_cmds

    def bug(args: object) -> int:
        raise ZeroDivisionError("x")

    monkeypatch.setattr(design_cmds, "_cmd_designs", bug)
    o = run(["designs", "mm"])
    assert o.code == 2 and "internal error: ZeroDivisionError: x" in o.err
    assert "--debug" in o.err
    with pytest.raises(ZeroDivisionError):
        main(["--debug", "designs", "mm"])


def test_usage_errors_and_help_exit_2_and_0() -> None:
    assert run(["tune", "mm", "--time", "0"]).code == 2
    assert run(["--help"]).code == 0
    o = run(["--version"])
    assert o.code == 0 and o.out.startswith("odyssey ")


# ------------------------------------------------------------------ vocabulary


def _actions(parser: argparse.ArgumentParser, path: str = "odyssey"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, f"{path} {name}")
        else:
            yield path, action


def test_every_option_has_help_text() -> None:
    missing = [f"{path} {'/'.join(a.option_strings) or a.dest}"
               for path, a in _actions(build_parser()) if not a.help]
    assert missing == []


def test_one_vocabulary_for_json_and_time() -> None:
    json_opts, time_opts = {}, {}
    for path, a in _actions(build_parser()):
        if "--json" in a.option_strings:
            json_opts[path] = (a.nargs, a.const, a.metavar)
        if any(s in a.option_strings for s in ("--time", "--time-limit")):
            time_opts.setdefault(path, []).append((a.option_strings, a.help))
    assert set(json_opts) == {"odyssey designs", "odyssey model", "odyssey sim", "odyssey csim",
                              "odyssey check", "odyssey tune", "odyssey optimum",
                              "odyssey network", "odyssey pareto", "odyssey study",
                              "odyssey generate"}
    assert set(json_opts.values()) == {("?", "-", "FILE")}
    # --time-limit of optimum survives as a hidden alias of --time
    assert time_opts["odyssey optimum"] == [(["--time"], time_opts["odyssey optimum"][0][1]),
                                            (["--time-limit"], argparse.SUPPRESS)]


def test_json_to_stdout_is_json_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "mm", *SMALL, "--design", "ij-ij.k", "--tiling", TILING, "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["design"] == "ij-ij.k" and "latency:" in err
    assert main(["designs", "mm", "--json"]) == 0  # no FILE: standard output
    assert len(json.loads(capsys.readouterr().out)) == 18


def test_optimum_time_limit_still_works(capsys: pytest.CaptureFixture[str]) -> None:
    """The former spelling sets the same option (with a note), and a proof within the limit
    gives the same optimum either way."""
    base = ["optimum", "mm", "-D", "I=8", "-D", "J=8", "-D", "K=8", "--design", "ij-ij.k"]
    assert build_parser().parse_args([*base, "--time-limit", "7"]).time == 7.0
    assert "--time-limit is now --time" in capsys.readouterr().err
    new = run([*base, "--time", "60", "--json", "-"])
    old = run([*base, "--time-limit", "60", "--json", "-"])
    a, b = json.loads(new.out), json.loads(old.out)
    assert new.code == old.code == 0 and a["status"] == b["status"] == "optimal"
    assert a["latency_cycles"] == b["latency_cycles"]


def test_study_list_fits_100_columns() -> None:
    o = run(["study", "--list"])
    assert o.code == 0 and "mm-dataflows" in o.out
    assert max(len(line) for line in o.out.splitlines()) <= 100


# ------------------------------------------------------------------ -D and --tiling


@pytest.mark.parametrize(("define", "message"), [
    ("Z=5", "`Z` is not a size parameter of the kernel (a `#define Z <integer>` line); its size "
            "parameters are: I, J, K"),
    ("i=1024", "`i` is not a size parameter"),
    ("I=0", "-D I=0: a size must be a positive integer"),
    ("I=-5", "-D I=-5: a size must be a positive integer"),
    ("I=abc", "-D I=abc: a size must be a positive integer"),
    ("I=2.5", "-D I=2.5: a size must be a positive integer"),
])
@pytest.mark.parametrize("cmd", [["designs"], ["model", "--design", "ij-ij.k", "--tiling", TILING],
                                 ["optimum", "--design", "ij-ij.k"],
                                 ["generate", "--design", "ij-ij.k", "--tiling", TILING, "--out", "x"]])
def test_defines_must_be_positive_sizes_of_the_kernel(cmd: list[str], define: str, message: str,
                                                      tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    o = run([cmd[0], "mm", "-D", define, *cmd[1:]])
    assert o.code == 2 and message in o.err and "mm.c" in o.err
    assert not (tmp_path / "x").exists()


def test_a_kernel_with_a_non_positive_size(tmp_path: Path) -> None:
    src = (Path(__file__).parents[2] / "kernels" / "mm.c").read_text()
    bad = tmp_path / "zero.c"
    bad.write_text(src.replace("#define J 64", "#define J 0"))
    o = run(["designs", str(bad)])
    assert o.code == 2 and "zero.c:4: size parameter J is 0" in o.err
    assert run(["designs", str(bad), "-D", "J=8"]).code == 0


def test_a_loop_nest_that_never_executes(tmp_path: Path) -> None:
    src = (Path(__file__).parents[2] / "kernels" / "mm.c").read_text()
    bad = tmp_path / "empty.c"
    bad.write_text(src.replace("int j = 0;", "int j = 999;"))
    o = run(["designs", str(bad)])
    assert o.code == 2 and "never executes (I=64, J=64, K=64)" in o.err


def test_a_tiling_must_give_every_parameter(tmp_path: Path) -> None:
    partial = "T_i1=16,T_j1=16,T_k1=16,T_i2=4,T_j2=4"
    for cmd in (["model"], ["generate", "--out", str(tmp_path / "x")]):
        o = run([cmd[0], "mm", "--design", "ij-ij.k", "--tiling", partial, *cmd[1:]])
        assert o.code == 2 and "design ij-ij.k also needs T_k2" in o.err
    assert not (tmp_path / "x").exists()


# ------------------------------------------------------------------ shares and tables


def test_resource_shares_are_labelled_and_agree() -> None:
    """The same tiling: `tune` shows the share of the usable budget, `model` and `optimum`
    show it labelled, with the share of the device beside it."""
    t = run([*TUNE, "--json", "-"])
    rec = json.loads(t.out)["designs"][0]
    tiling = ",".join(f"{k}={v}" for k, v in rec["tiling"].items())
    m = run(["model", "mm", *SMALL, "--design", "ij-ij.k", "--tiling", tiling])
    dsp = rec["dsp"]
    assert f"{100 * dsp['of_usable']:.1f}%" in t.err  # the table (on stderr with --json -)
    assert "DSP/usable" in t.err
    line = next(x for x in m.out.splitlines() if x.startswith("dsp"))
    assert f"{100 * dsp['of_usable']:.1f}% of usable" in line
    assert f"{100 * dsp['of_device']:.1f}% of device" in line


def test_model_tables_add_up() -> None:
    for tiling in (TILING, "T_i1=16,T_j1=16,T_k1=16,T_i2=4,T_j2=4,T_k2=4"):
        o = run(["model", "mm", "-D", "I=256", "-D", "J=256", "-D", "K=256", "--design",
                 "i-ij.k", "--tiling", tiling, "--json", "-"])
        rec = json.loads(o.out)
        for res in ("dsp", "lut", "ff", "bram18k", "uram"):  # the modules and the interfaces are everything
            parts = sum(m[res] for m in rec["modules"]) + rec["interfaces"].get(res, 0.0)
            assert parts == pytest.approx(rec[res], rel=1e-12), res
        assert sum(rec["offchip_bytes"].values()) == rec["offchip_bytes_total"]
        totals = [x.split() for x in o.err.splitlines() if x.startswith("total ")]
        assert totals[0][-2:] == [f"{rec['bram18k']:,.0f}", f"{rec['uram']:,.0f}"]
        assert totals[1][-1] == f"{rec['offchip_bytes_total']:,.0f}"
        assert all(res in rec["budget"] and res in rec["share"] for res in ("dsp", "lut", "ff", "bram18k", "uram"))


# ------------------------------------------------------------------ progress


def test_tune_and_pareto_report_progress_in_a_log(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    import odyssey.cli._common

    monkeypatch.setattr(odyssey.cli._common, "PROGRESS_EVERY_S", 0.0)
    o = run(["tune", "mm", *SMALL, "--design", "ij-ij.k", "--time", "0.8", "--method", "random"])
    lines = [x for x in o.err.splitlines() if x.startswith("[1/1] ij-ij.k: best")]
    assert o.code == 0 and lines and "\r" not in o.err
    assert all("evals/s" in x and "s left" in x for x in lines)
    p = run(["pareto", "mm", *SMALL, "--design", "ij-ij.k", "--method", "nsga2", "--time", "0.8"])
    lines = [x for x in p.err.splitlines() if x.startswith("nsga2: ij-ij.k, front")]
    assert p.code == 0 and lines and all("/s)" in x and "left" in x for x in lines)


# ------------------------------------------------------------------ bundled kernels


def test_bundled_kernels_and_networks_work_from_anywhere(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    o = run(["designs", "mm.c", "-D", "I=8"])
    assert o.code == 0 and "18 designs" in o.out
    args = build_parser().parse_args(["network", "vgg16"])
    assert Path(args.kernel).is_file() and Path(args.kernel).name == "cnn.c"
    o = run(["network", "nosuch.json"])
    assert o.code == 2 and "bundled networks: bert-base, mobilenetv2, resnet50, vgg16, vit-b16" in o.err


def test_tune_reports_the_samples_it_spent_with_the_seeds_own() -> None:
    """--samples N: the MP seed's screening evaluations are samples too (they count against
    the budget), so the record says N spent, the seed's share beside it, and the trace's
    sample positions start after the seed's."""
    o = run(["tune", "mm", *SMALL, "--design", "ij-ij.k", "--samples", "120", "--seed", "0", "--json", "-"])
    assert o.code == 0, o.describe()
    rec = json.loads(o.out)["designs"][0]
    assert rec["tuner_evaluations"] > 0
    assert rec["samples"] == 120 or rec["stop_reason"] == "converged"
    assert rec["samples"] <= 120
    assert all(rec["tuner_evaluations"] < t["samples"] <= rec["samples"] for t in rec["trace"])


def test_network_dtype_picks_the_quantized_kernels() -> None:
    """`network --dtype int8`: every layer is tuned with the bundled int8 kernels (int8 inputs
    and weights, int32 sums); with --kernel as well it is refused."""
    o = run(["network", "vgg16", "--dtype", "int8", "--design", "oh-ohw.ipq", "--samples", "20", "--seed", "0",
             "--json", "-"])
    assert o.code == 0, o.describe()
    doc = json.loads(o.out)
    kernels = {x["kernel"] for x in doc["layers"]}
    assert kernels and all(k.endswith(("int8/cnn.c", "int8/mm.c")) for k in kernels), kernels
    assert doc["kernel"].endswith("int8/cnn.c") and doc["mm_kernel"].endswith("int8/mm.c")
    bad = run(["network", "vgg16", "--dtype", "int8", "--kernel", "mm"])
    assert bad.code == 2 and "--dtype int8 chooses the bundled int8 kernels" in bad.err


def test_lut_mul_tries_each_design_with_its_multipliers_in_luts() -> None:
    """`tune --lut-mul 0,50`: each design as it is and with half its multipliers in LUTs (the
    search trades DSPs for LUTs); on a float kernel the choice is refused."""
    o = run(["tune", "int8/mm", *SMALL, "--design", "ij-ij.k", "--lut-mul", "0,50", "--samples", "30",
             "--method", "random", "--json", "-"])
    assert o.code == 0, o.describe()
    recs = {r["design"]: r for r in json.loads(o.out)["designs"]}
    assert set(recs) == {"ij-ij.k", "ij-ij.k+lut50"}
    assert recs["ij-ij.k+lut50"]["dsp"]["used"] < recs["ij-ij.k"]["dsp"]["used"] or \
        recs["ij-ij.k+lut50"]["tiling"] != recs["ij-ij.k"]["tiling"]
    bad = run(["tune", "mm", *SMALL, "--design", "ij-ij.k", "--lut-mul", "50", "--samples", "5"])
    assert bad.code == 2 and "integer datapaths" in bad.err
    worse = run(["tune", "int8/mm", *SMALL, "--lut-mul", "0,150"])
    assert worse.code == 2 and "a percent is 0-100" in worse.err


def test_word_drain_adds_the_designs_whose_drains_stream_elements() -> None:
    """`tune --design all --word-drain`: `ID+wd` beside each design whose output stays in its
    PEs with no chain through them (MM: `i-ij.k`, `j-ij.k`, `ij-ij.k`), not beside those whose
    partial sums move (chains along `k`, passes that read them back); `optimum` takes it with
    `--design all` only."""
    o = run(["tune", "mm", *SMALL, "--design", "all", "--word-drain", "--samples", "10", "--method", "random",
             "--json", "-"])
    assert o.code == 0, o.describe()
    ids = [r["design"] for r in json.loads(o.out)["designs"]]
    assert [d for d in ids if d.endswith("+wd")] == ["i-ij.k+wd", "j-ij.k+wd", "ij-ij.k+wd"]
    assert len(ids) == 18 + 3
    one = run(["optimum", "mm", *SMALL, "--design", "i-ij.k", "--word-drain"])
    assert one.code == 2 and "write ID+wd" in one.err, one.describe()


def test_binding_adds_each_designs_bound_variants() -> None:
    """`tune --design all --binding rule,bram`: `ID+bram` after each design; `optimum` takes
    several bindings with `--design all` only, one with a single design; a bad one is an error."""
    o = run(["tune", "mm", *SMALL, "--design", "all", "--binding", "rule,bram", "--samples", "10",
             "--method", "random", "--json", "-"])
    assert o.code == 0, o.describe()
    ids = [r["design"] for r in json.loads(o.out)["designs"]]
    assert len(ids) == 36 and ids[1::2] == [f"{d}+bram" for d in ids[0::2]]
    one = run(["optimum", "mm", *SMALL, "--design", "ij-ij.k", "--binding", "rule,uram"])
    assert one.code == 2 and "write ID+bram or ID+uram" in one.err, one.describe()
    uram = run(["optimum", "mm", *SMALL, "--design", "ij-ij.k", "--binding", "uram", "--json", "-"])
    assert uram.code == 0 and json.loads(uram.out)["design"] == "ij-ij.k+uram", uram.describe()
    bad = run(["tune", "mm", *SMALL, "--binding", "rule,sram"])
    assert bad.code == 2 and "rule, bram, uram" in bad.err


def test_a_clock_beyond_10_ghz_is_an_error(tmp_path: Path) -> None:
    """A platform file's clock_mhz of 1e308 made `pareto`'s plot fail (an internal
    OverflowError; the CLI fuzzer at 1,000 command lines, seed 20); `--clock` is bounded too."""
    from odyssey.platforms import load_platform

    doc = json.loads((Path(load_platform.__code__.co_filename).parent / "u250.json").read_text())
    doc["clock_mhz"] = 1e308
    plat = tmp_path / "fast.json"
    plat.write_text(json.dumps(doc))
    o = run(["pareto", "mm", "-D", "I=16", "-D", "J=16", "-D", "K=16", "--design", "i-ij.k",
             "--samples", "40", "--method", "nsga2", "--out", str(tmp_path / "o"),
             "--platform", str(plat)])
    assert o.code == 2 and "clock_mhz must be a number in (0, 10000]" in o.err, o.describe()
    o = run(["model", "mm", "--design", "ij-ij.k", "--tiling",
             "T_i1=1,T_j1=1,T_k1=1,T_i2=1,T_j2=1,T_k2=1", "--clock", "20000"])
    assert o.code == 2 and "at most 10,000 MHz" in o.err, o.describe()
