"""`odyssey report`: the figures of its pages against the records they come from, the page
self-contained, and (where a headless Chromium is installed, as CI installs it) rendered by a
real browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from odyssey.cli import main

MM = ["-D", "I=32", "-D", "J=32", "-D", "K=32"]
TILING = "T_i1=16,T_j1=16,T_k1=16,T_i2=4,T_j2=4,T_k2=4"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _design(tmp: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    code, _, err = _run(["generate", "mm", *MM, "--design", "ij-ij.k", "--tiling", TILING, "--out",
                         str(tmp / "d")], capsys)
    assert code == 0, err
    return tmp / "d"


def _self_contained(html: str) -> None:
    """Nothing the page would fetch: no script, stylesheet or image by address, no URL but the
    SVG and XLink namespaces."""
    assert "<script" not in html and "<link" not in html and "<img" not in html
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls


def test_a_design_page_shows_the_models_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Differential: report.json of a generated design holds the figures of the model of its
    own description at its tiling (what `odyssey sim --compare` compares with), the record
    `odyssey model --json` prints; the page draws the array, the resources against the budget,
    the roofline and the modules, each chart with its axis titles."""
    from odyssey.codegen.descriptor import load_descriptor
    from odyssey.model.build import model_from_descriptor
    from odyssey.model.report import model_record
    from odyssey.platforms import load_platform

    d = _design(tmp_path, capsys)
    code, out, err = _run(["report", str(d)], capsys)
    assert code == 0, err
    rep = json.loads((d / "report.json").read_text())
    desc = load_descriptor(d / "descriptor.json")
    rec = model_record(model_from_descriptor(desc, load_platform("u250")), desc["tiling"])
    h = rep["headline"]
    assert h["latency_cycles"] == rec["latency_cycles"] and h["throughput_gops"] == rec["throughput_gops"]
    assert {r["resource"]: r["used"] for r in rep["resources"]} == {r: rec[r] for r in ("dsp", "lut", "ff",
                                                                                         "bram18k", "uram")}
    assert [m["name"] for m in rep["modules"]] == [m["name"] for m in rec["modules"]]
    assert [x["pes"] for x in rep["array"]["dims"]] == [4, 4]
    roof = rep["roofline"]
    assert roof["compute_roof_gops"] == pytest.approx(8591 // 5 * 2 * 0.3)  # usable DSPs / 5 per fp32 MAC
    assert 0 < h["share_of_roofline"] <= 1
    html = (d / "report.html").read_text()
    _self_contained(html)
    for title in ("share of the usable budget (%)", "throughput (GOP/s)", "latency (cycles)",
                  "arithmetic intensity (operations per off-chip byte)"):
        assert f"<!-- {title} -->" in html, title  # matplotlib keeps each text as a comment
    assert html.count("<svg") == 4  # the array, resources, roofline, modules


ARRAYS = [  # a 2-D array with SIMD, a 1-D array, a CNN design
    ("mm", {"I": "32", "J": "32", "K": "32"}, "ij-ij.k", "T_i1=16,T_j1=16,T_k1=16,T_i2=4,T_j2=2,T_k2=4"),
    ("mm", {"I": "32", "J": "32", "K": "32"}, "i-ij.k", "T_i1=16,T_j1=16,T_k1=16,T_i2=2,T_j2=4,T_k2=4"),
    ("cnn", {"O": "8", "I": "8", "H": "8", "W": "8", "P": "3", "Q": "3"}, "oh-ohw.ipq",
     "T_o1=4,T_h1=4,T_w1=4,T_i1=4,T_p1=3,T_q1=3,T_o2=2,T_h2=2,T_w2=2,T_i2=2"),
]


@pytest.mark.parametrize(("kernel", "sizes", "design", "tiling"), ARRAYS, ids=[a[2] for a in ARRAYS])
def test_the_array_picture_counts_the_pes_and_chains_of_the_descriptor(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kernel: str, sizes: dict[str, str], design: str,
        tiling: str) -> None:
    """Differential: the picture's PEs are the descriptor's PE processes, and each operand's
    chains are its PEs minus the PE-to-PE links of its channels (a chain of n PEs has n - 1)."""
    defines = [x for k, v in sizes.items() for x in ("-D", f"{k}={v}")]
    d = tmp_path / "d"
    code, _, err = _run(["generate", kernel, *defines, "--design", design, "--tiling", tiling, "--out", str(d)], capsys)
    assert code == 0, err
    code, _, err = _run(["report", str(d)], capsys)
    assert code == 0, err
    desc = json.loads((d / "descriptor.json").read_text())
    pes = [p for p in desc["processes"] if p["func"] == "PE" or p["func"].startswith("PE_")
           and not p["func"].startswith("PE_drain")]
    html = (d / "report.html").read_text()
    assert f'data-pes="{len(pes)}"' in html
    for o in desc["operands"]:
        if o.get("chain_loop") is None:
            continue
        name = o["name"]
        links = sum(1 for p in pes for c in p["channels"]
                    if c["direction"] == "out" and c["name"].startswith(f"fifo_{name}_PE_"))
        chains = len(pes) - links
        length = len(pes) // chains
        assert f"{name} ({o['role']}): moves along {o['chain_loop']}: {chains} chains of {length} PEs" in html


def test_search_and_network_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tune record: every design on the page with its best and status, convergence curves
    named; a network record: each layer's share of the time, summing to one."""
    rec = tmp_path / "t.json"
    code, _, err = _run(["tune", "mm", *MM, "--design", "all", "--samples", "60", "--method", "random",
                         "--json", str(rec)], capsys)
    assert code == 0, err
    code, out, err = _run(["report", str(rec)], capsys)
    assert code == 0, err
    rep = json.loads((tmp_path / "t-report" / "report.json").read_text())
    tuned = json.loads(rec.read_text())
    assert rep["kind"] == "search" and len(rep["designs"]) == len(tuned["designs"]) == 18
    assert rep["headline"]["best_gops"] == max(d["throughput_gops"] for d in tuned["designs"])
    html = (tmp_path / "t-report" / "report.html").read_text()
    _self_contained(html)
    assert all(d["design"] in html for d in tuned["designs"])
    net = Path(__file__).resolve().parents[2] / "docs" / "results" / "network_bert_base.json"
    code, _, err = _run(["report", str(net), "--out", str(tmp_path / "n")], capsys)
    assert code == 0, err
    nrep = json.loads((tmp_path / "n" / "report.json").read_text())
    assert nrep["kind"] == "network" and len(nrep["layers"]) == 97
    assert sum(x["share_of_time"] for x in nrep["layers"]) == pytest.approx(1.0)


def test_report_at_the_end_of_a_run_is_the_report_of_its_record(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Differential: `--report DIR` on `model`, `tune` and `optimum` writes the same figures
    as `odyssey report` of the run's own `--json` record; an occupied folder is refused before
    any work."""
    runs = {
        "model": ["model", "mm", *MM, "--design", "ij-ij.k", "--tiling", TILING],
        "tune": ["tune", "mm", *MM, "--design", "all", "--samples", "40", "--method", "random"],
        "optimum": ["optimum", "mm", *MM, "--design", "ij-ij.k", "--time", "20"],
        "pareto": ["pareto", "mm", *MM, "--samples", "400"],
    }
    for name, argv in runs.items():
        rec, at_end = tmp_path / f"{name}.json", tmp_path / f"{name}-end"
        code, out, err = _run([*argv, "--json", str(rec), "--report", str(at_end)], capsys)
        assert code == 0, err
        assert f"report: {at_end / 'report.html'}" in out
        code, _, err = _run(["report", str(rec), "--out", str(tmp_path / f"{name}-after")], capsys)
        assert code == 0, err
        end = json.loads((at_end / "report.json").read_text())
        after = json.loads((tmp_path / f"{name}-after" / "report.json").read_text())
        assert {k: v for k, v in end.items() if k != "source"} == {k: v for k, v in after.items() if k != "source"}
        _self_contained((at_end / "report.html").read_text())
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep")
    code, _, err = _run([*runs["model"], "--report", str(tmp_path / "notes")], capsys)
    assert code == 2 and "--report" in err and (tmp_path / "notes" / "mine.txt").read_text() == "keep"


def test_a_pareto_page_holds_the_front(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The published front (its record keeps the points in front.csv beside it): every point on
    the page's data, the fastest one named; each design's share of the front as recorded."""
    folder = Path(__file__).resolve().parents[2] / "docs" / "results" / "pareto"
    code, _, err = _run(["report", str(folder / "front.json"), "--out", str(tmp_path / "p")], capsys)
    assert code == 0, err
    rep = json.loads((tmp_path / "p" / "report.json").read_text())
    rows = (folder / "front.csv").read_text().strip().splitlines()
    doc = json.loads((folder / "front.json").read_text())
    assert rep["kind"] == "pareto" and rep["headline"]["points"] == len(rows) - 1 == doc["front_size"]
    assert rep["headline"]["fastest"]["latency_cycles"] == min(p["latency_cycles"] for p in rep["points"])
    assert {d["design"]: d["on_front"] for d in rep["designs"]} == {d["design"]: d["on_front"] for d in doc["designs"]}
    _self_contained((tmp_path / "p" / "report.html").read_text())


def test_bad_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"a": 1}')
    code, _, err = _run(["report", str(bad)], capsys)
    assert code == 2 and "not a record odyssey reports on" in err
    code, _, err = _run(["report", str(tmp_path / "missing.json")], capsys)
    assert code == 2 and "no such file or directory" in err
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep")
    code, _, err = _run(["report", str(bad), "--out", str(tmp_path / "notes")], capsys)
    assert code == 2 and "not replaced" in err and (tmp_path / "notes" / "mine.txt").read_text() == "keep"


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium here (.ci/run installs Debian's chromium)")
def test_the_page_renders_in_a_real_browser(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Headless Chromium, offline (every request sent to a closed proxy), loads the design
    page: its DOM holds the title, four drawings and the tables, and its screenshot is not blank."""
    d = _design(tmp_path, capsys)
    assert _run(["report", str(d)], capsys)[0] == 0
    base = [str(CHROMIUM), "--headless=new", "--no-sandbox", "--disable-gpu", "--proxy-server=127.0.0.1:9",
            f"--user-data-dir={tmp_path / 'profile'}"]
    url = (d / "report.html").resolve().as_uri()
    dom = subprocess.run([*base, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True).stdout
    assert "<h1>design ij-ij.k on u250</h1>" in dom and dom.count("<svg") == 4 and dom.count("<table") == 3
    shot = tmp_path / "page.png"
    subprocess.run([*base, "--window-size=1280,2000", f"--screenshot={shot}", url], capture_output=True,
                   timeout=120, check=True)
    assert shot.stat().st_size > 50_000  # a page of charts and tables, not an empty frame
