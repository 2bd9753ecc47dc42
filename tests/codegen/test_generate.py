"""Generator interface: tiling validation, the atomic writer, the descriptor, the CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from odyssey.cli import main
from odyssey.codegen.generate import generate
from odyssey.codegen.tiling import make_tiling, parse_tiling_text
from odyssey.codegen.writer import write_design
from odyssey.errors import CodegenError, TilingError
from tests.codegen.conftest import ROOT, space_of

MM = {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 2}


def test_tiling_geometry_with_padding() -> None:
    d = space_of("mm.c", I="37", J="41", K="43").design("ij-ij.k")
    t = make_tiling(d, {"T_i1": 6, "T_j1": 5, "T_k1": 7, "T_i2": 3, "T_j2": 5, "T_k2": 7})
    i = t.loop("i")
    assert (i.tiles, i.padded, i.outer, i.is_padded) == (7, 42, 2, True)
    assert t.num_pes == 2 * 1
    assert t.loop("k").level2 == "simd"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"T_i1": 8, "T_j1": 8}, "T_k1 (array partitioning of loop k) is missing"),
        ({**MM, "T_i1": 99}, "T_i1=99 is out of range; allowed: integers in [1, 64]"),
        ({**MM, "T_i2": 3}, "T_i2=3 must divide T_i1=8; allowed values: 1, 2, 4, 8"),
        ({**MM, "T_x1": 3}, "unknown tiling parameter(s) T_x1"),
    ],
)
def test_tiling_errors(values: dict[str, int], message: str) -> None:
    d = space_of("mm.c").design("ij-ij.k")
    with pytest.raises(TilingError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
        make_tiling(d, values)


def test_parse_tiling_text() -> None:
    assert parse_tiling_text("T_i1=16, T_j1=8") == {"T_i1": 16, "T_j1": 8}
    with pytest.raises(TilingError, match="expected NAME=VALUE"):
        parse_tiling_text("T_i1")
    with pytest.raises(TilingError, match="must be an integer"):
        parse_tiling_text("T_i1=x")


def test_generation_is_fast_and_complete() -> None:
    ks = space_of("cnn.c")
    t0 = time.perf_counter()
    gen = generate(ks, ks.design("oh-ohw.ipq"), {"T_o1": 8, "T_h1": 8, "T_w1": 4, "T_i1": 4, "T_p1": 3,
                                                  "T_q1": 3, "T_o2": 2, "T_h2": 2, "T_w2": 2, "T_i2": 4})
    assert time.perf_counter() - t0 < 1.0
    files = dict(gen.files)
    assert set(files) >= {"kernel.cpp", "kernel.h", "host.cpp", "hls.tcl", "Makefile", "descriptor.json"}
    cpp = files["kernel.cpp"]
    for pragma in ("#pragma HLS DATAFLOW", "#pragma HLS PIPELINE II=", "#pragma HLS INLINE OFF",
                   "#pragma HLS INTERFACE m_axi", "#pragma HLS ARRAY_PARTITION", "hls::stream<"):
        assert pragma in cpp, pragma
    for module in ("fi_IO_L3_in", "wt_IO_L2_in_inter", "PE", "fo_drain_IO_L3_out", "fo_drain_IO_L1_out"):
        assert f"void {module}" in cpp, module
    assert "design oh-ohw.ipq" in cpp.splitlines()[2]


def test_descriptor_sections() -> None:
    ks = space_of("mm.c")
    gen = generate(ks, ks.design("ij-ij.k"), MM)
    d = json.loads(dict(gen.files)["descriptor.json"])
    assert d["schema_version"] == 12 and d["platform"] == "u250" and d["clock_mhz"] == 300.0
    for key in ("kernel", "design", "tiling", "params", "loops", "modules", "memory", "compute", "topology",
                "fifos", "passes", "processes", "ports"):
        assert key in d
    assert d["passes"]["loops"] == []  # partial sums stay on chip in ij-ij.k: one pass
    assert [p["name"] for p in d["ports"]] == ["A", "B", "C"]
    roles = {m["name"]: m["role"] for m in d["memory"]}
    # the PEs pack their own words (no partial sums read): no accumulator block, a deep FIFO
    assert roles == {"A_block": "input_block", "B_block": "input_block", "acc_running": "running_sums"}
    assert not any(m["kind"] == "pe_drain" for m in d["modules"])
    deep = [o for m in d["modules"] if m["kind"] == "pe" for o in m["outputs"] if o["depth_sym"] is not None]
    assert len(deep) == sum(m["kind"] == "pe" for m in d["modules"]) and all(o["storage"] == "rule" for o in deep)
    readers = {m["operand"]: m["name"] for m in d["modules"] if m["kind"] == "io_l3_in"}
    assert readers == {"A": "A_IO_L3_in", "B": "B_IO_L3_in"}
    assert all(m["boundary"] == m["name"].endswith("_boundary") for m in d["modules"])
    assert d["topology"]["array_dims"] == [4, 2] and d["topology"]["num_pes"] == 8
    assert d["compute"]["simd_lanes"] == 2 and d["compute"]["pe_ii"] == 1  # 2*4 = 8 >= fadd latency 8
    assert d["compute"]["ops_per_lane"] == ["mul", "add"]
    pe = next(m for m in d["modules"] if m["kind"] == "pe")
    assert len(pe["instances"]) >= 1 and pe["ast"][0]["type"] == "pragma"
    a_block = next(m for m in d["memory"] if m["name"] == "A_block")
    assert a_block["dims"] == [2, 8] and a_block["double_buffered"] and a_block["instances"] == 4


def test_ii_follows_latency_hiding() -> None:
    """II = max(1, ceil(8 / (T_i2*T_j2))) for an fp32 accumulation with k.1 iterating."""
    ks = space_of("mm.c")
    for t_i2, t_j2, ii in ((1, 1, 8), (2, 1, 4), (2, 2, 2), (2, 4, 1), (4, 4, 1)):
        gen = generate(ks, ks.design("ij-ij.k"), {**MM, "T_i2": t_i2, "T_j2": t_j2})
        assert gen.descriptor["compute"]["pe_ii"] == ii
        assert f"PIPELINE II={ii}" in dict(gen.files)["kernel.cpp"]


def test_writer_is_atomic(tmp_path: Path) -> None:
    ks = space_of("mm.c")
    gen = generate(ks, ks.design("ij-ij.k"), MM)
    broken = type(gen)(gen.files + (("kernel.cpp/oops", "x"),), gen.descriptor, gen.tiling, None)
    with pytest.raises(OSError):
        write_design(broken, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == []
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "notes.txt").write_text("mine")
    with pytest.raises(CodegenError, match="not an odyssey design directory"):
        write_design(gen, tmp_path / "user")
    write_design(gen, tmp_path / "out")
    write_design(gen, tmp_path / "out")  # replacing an earlier design is fine
    assert (tmp_path / "out" / "descriptor.json").is_file()


def test_cli_generate_and_csim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mm"
    code = main(["generate", str(ROOT / "kernels" / "mm.c"), "-D", "I=8", "-D", "J=8", "-D", "K=8",
                 "--design", "ij-ij.k", "--tiling", "T_i1=4,T_j1=4,T_k1=4,T_i2=2,T_j2=2,T_k2=1", "--out", str(out)])
    assert code == 0
    assert "array 2 x 2 = 4 PEs" in capsys.readouterr().out
    assert main(["csim", str(out)]) == 0
    assert "pass: ODYSSEY CSIM PASS 64 outputs match" in capsys.readouterr().out


def test_cli_generate_bad_tiling(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["generate", str(ROOT / "kernels" / "mm.c"), "--design", "ij-ij.k",
                 "--tiling", "T_i1=4,T_j1=4,T_k1=4,T_i2=3,T_j2=1,T_k2=1", "--out", str(tmp_path / "x")])
    assert code == 2
    assert "T_i2=3 must divide T_i1=4" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_cli_csim_not_a_design(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["csim", str(tmp_path)]) == 2
    assert "not a design directory" in capsys.readouterr().err


def test_cli_u280_design_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--platform u280``: ports on HBM2 pseudo-channels (C and its read-back port C_in on one,
    one bundle each), the Vitis-semantics C simulation passes on a non-divisor tiling,
    ``odyssey check`` (the U280's clock, read from the descriptor) finds nothing, and the
    timed simulation, pacing every port at 47.9 bytes per cycle, agrees with the model."""
    out = tmp_path / "mm280"
    code = main(["generate", str(ROOT / "kernels" / "mm.c"), "-D", "I=19", "-D", "J=16", "-D", "K=21",
                 "--design", "ij-ik.j", "--tiling", "T_i1=8,T_j1=8,T_k1=8,T_i2=4,T_j2=4,T_k2=4",
                 "--out", str(out), "--platform", "u280"])
    assert code == 0
    capsys.readouterr()
    cfg = (out / "connectivity.cfg").read_text()
    assert "sp=kernel0_1.C:HBM[" in cfg and "sp=kernel0_1.C_in:HBM[" in cfg
    cpp = (out / "kernel.cpp").read_text()
    bundles = {p["name"]: p["bundle"] for p in json.loads((out / "descriptor.json").read_text())["ports"]}
    assert bundles["C"] == bundles["C_in"] and len(set(bundles.values())) == 3
    assert f"port=C_in offset=slave bundle={bundles['C']} " in cpp
    assert main(["csim", str(out)]) == 0
    assert "pass: ODYSSEY CSIM PASS" in capsys.readouterr().out
    assert main(["check", str(out)]) == 0
    assert ": ok" in capsys.readouterr().out
    assert main(["sim", str(out), "--compare", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["status"] == "pass" and abs(rec["error_percent"]) < 5
