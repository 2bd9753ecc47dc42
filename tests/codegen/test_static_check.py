"""`odyssey check`: static checks read from the printed C++ of every MM and CNN design, and
proof that each rule can fail (a mutated design is reported)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from odyssey.codegen.csim import run_csim
from odyssey.codegen.generate import generate
from odyssey.codegen.samples import sample_tiling
from odyssey.codegen.static_check import check_design, parse_functions, position_params
from odyssey.codegen.writer import write_design
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse

ROOT = Path(__file__).resolve().parents[2]
SIZES = {"mm": {"I": "12", "J": "10", "K": "14"},
         "cnn": {"I": "4", "O": "5", "H": "6", "W": "6", "P": "3", "Q": "2"}}
#: still open (issue 15, banks follow the lanes): ARRAY_PARTITION is printed on streams of blocks
KNOWN_OPEN = "a stream of blocks"


def _space(kernel: str):  # type: ignore[no-untyped-def]
    return analyse(load_scop(ROOT / "kernels" / f"{kernel}.c", SIZES[kernel]))


@pytest.fixture(scope="module")
def spaces():  # type: ignore[no-untyped-def]
    return {k: _space(k) for k in SIZES}


@pytest.mark.parametrize("kernel", ["mm", "cnn"])
@pytest.mark.parametrize("kind", ["divisor", "simd"])
def test_every_design_calls_producers_first_with_one_producer_and_consumer(spaces, tmp_path, kernel, kind) -> None:  # type: ignore[no-untyped-def]
    ks = spaces[kernel]
    assert len(ks.designs) == {"mm": 18, "cnn": 30}[kernel]  # Table 2: no design dropped
    for d in ks.designs:
        gen = generate(ks, d, sample_tiling(d, kind))
        # the descriptor's stream graph: every channel written by an earlier call than reads it
        written: set[str] = set()
        for proc in gen.descriptor["processes"]:
            for ch in proc["channels"]:
                if ch["direction"] == "in":
                    assert ch["name"] in written, f"{d.id}: {proc['func']} reads {ch['name']} first"
            written |= {ch["name"] for ch in proc["channels"] if ch["direction"] == "out"}
        out = write_design(gen, tmp_path / d.id)
        report = check_design(out, clock_mhz=300.0)
        problems = [p for p in report.problems if KNOWN_OPEN not in p.what]
        assert problems == [], f"{d.id}: {problems}"
        assert report.channels > 0 and len(report.processes) > 0


def _mm_design(tmp_path: Path, design: str = "ij-jk.i") -> Path:
    ks = _space("mm")
    d = ks.design(design)
    return write_design(generate(ks, d, sample_tiling(d, "divisor")), tmp_path / "d")


def _problems(path: Path) -> list[str]:
    return [p.what for p in check_design(path, clock_mhz=300.0).problems if KNOWN_OPEN not in p.what]


def test_swapped_calls_are_reported_and_fail_sequential_csim(tmp_path: Path) -> None:
    out = _mm_design(tmp_path)
    src = out / "kernel.cpp"
    text = src.read_text()
    calls = [ln for ln in text.splitlines() if ln.strip().startswith("ODYSSEY_TASK(A_IO_L3_in(")]
    assert len(calls) == 1
    # move the A reader after every other process of its region
    text = text.replace(calls[0] + "\n", "").replace("  ODYSSEY_DATAFLOW_END;", calls[0] + "\n  ODYSSEY_DATAFLOW_END;")
    src.write_text(text)
    assert any("before its producer `A_IO_L3_in`" in p for p in _problems(out))
    res = run_csim(out, timeout_s=120)
    assert res.status == "empty_read", res.message
    assert "fifo_A_L3" in res.message and "A_IO_L2_in" in res.message


def test_missing_depth_and_clock_and_lock_dependence_are_reported(tmp_path: Path) -> None:
    out = _mm_design(tmp_path, "ij-ij.k+wd")  # PE drain processes: an accumulator block's lock
    src = out / "kernel.cpp"
    text = src.read_text()
    assert text.count("#pragma HLS DATAFLOW disable_start_propagation") == 1
    text = text.replace("#pragma HLS DATAFLOW disable_start_propagation", "#pragma HLS DATAFLOW")
    text = re.sub(r"(m_axi port=A offset=slave bundle=\w+) depth=\d+", r"\1", text)
    text = text.replace("DEPENDENCE variable=sums", "DEPENDENCE variable=acc", 1)
    text = text.replace("#pragma HLS STREAM variable=fifo_A_L3 ", "#pragma HLS STREAM variable=fifo_A_L9 ")
    src.write_text(text)
    tcl = out / "hls.tcl"
    tcl.write_text(tcl.read_text().replace("-period 3.333", "-period 5.000"))
    found = _problems(out)
    assert any("m_axi port `A` has no depth" in p for p in found)
    assert any("DEPENDENCE on `acc`, an hls lock object" in p for p in found)
    assert any("STREAM pragma on `fifo_A_L9`" in p for p in found)
    assert any("create_clock -period 5.000" in p for p in found)
    assert any("without `disable_start_propagation`" in p for p in found)


def test_a_stream_with_two_readers_is_reported(tmp_path: Path) -> None:
    out = _mm_design(tmp_path, "ij-ij.k")
    src = out / "kernel.cpp"
    text = src.read_text()
    # a second PE feeder reads the first one's block stream as well
    calls = re.findall(r"ODYSSEY_TASK\((\w+_intra)\(([\d, ]*\d), (blocks_\w+),", text)
    first, second = next((a, b) for a in calls for b in calls if a[0] == b[0] and a[2] != b[2])
    text = text.replace(f"{second[0]}({second[1]}, {second[2]},", f"{second[0]}({second[1]}, {first[2]},")
    src.write_text(text)
    found = _problems(out)
    assert any(f"`{first[2]}` has 1 producer(s) and 2 consumer(s)" in p for p in found)
    assert any(f"`{second[2]}` has 1 producer(s) and 0 consumer(s)" in p for p in found)


def test_parser_reads_functions_and_parameters() -> None:
    text = ("void f(int p_i, hls::stream<ap_uint<64>> &a, int t_k) {\n  a.write(1);\n}\n"
            'extern "C" void kernel0(float * C) {\n}\n')
    funcs = parse_functions(text)
    assert set(funcs) == {"f", "kernel0"}
    assert funcs["f"].params == (("int", "p_i"), ("hls::stream<ap_uint<64>> &", "a"), ("int", "t_k"))
    assert position_params(funcs["f"]) == ["p_i"] and position_params(funcs["kernel0"]) == []


def _simd_design(tmp_path: Path) -> Path:
    ks = _space("mm")
    d = ks.design("ij-ij.k")
    return write_design(generate(ks, d, {"T_i1": 6, "T_j1": 5, "T_k1": 14, "T_i2": 3, "T_j2": 5, "T_k2": 7}),
                        tmp_path / "simd")


def test_loops_reach_their_declared_ii_and_pe_ii_matches_the_model(tmp_path: Path) -> None:
    """The PE's II comes from its recurrence: the checker finds it from the code alone."""
    from odyssey.model import build_model
    from odyssey.platforms import load_platform

    ks = _space("mm")
    d = ks.design("ij-ij.k")
    for tiling in ({"T_i1": 4, "T_j1": 2, "T_k1": 14, "T_i2": 1, "T_j2": 1, "T_k2": 2},  # distance 1
                   {"T_i1": 4, "T_j1": 4, "T_k1": 14, "T_i2": 2, "T_j2": 2, "T_k2": 1}):  # distance 4
        out = write_design(generate(ks, d, tiling), tmp_path / str(tiling["T_i2"]))
        report = check_design(out, clock_mhz=300.0)
        assert [p for p in report.problems if KNOWN_OPEN not in p.what] == []
        pe = [lp for lp in report.loops if lp.function.startswith("PE") and "drain" not in lp.function]
        model = build_model(ks, d, platform=load_platform("u250")).evaluate_one(tiling)
        assert pe and all(lp.computed_ii == model["pe_ii"] for lp in pe)
        assert all(lp.recurrence_ii == lp.computed_ii for lp in pe)
    assert model["pe_ii"] == 2  # ceil(8 / 4): the adder latency over the distance


def test_a_missing_partition_or_dependence_is_reported(tmp_path: Path) -> None:
    out = _simd_design(tmp_path)
    src = out / "kernel.cpp"
    text = src.read_text()
    assert check_design(out, clock_mhz=300.0).ok
    lines = text.splitlines()
    # drop the partitions of A's blocks: 7 SIMD lanes then read one bank with two ports
    cut = [ln for ln in lines if "ARRAY_PARTITION variable=blocks_A" not in ln]
    assert len(cut) < len(lines)
    src.write_text("\n".join(cut) + "\n")
    found = _problems(out)
    assert any("A_IO_L2_in_intra" in p or "reaches II=4" in p for p in found), found
    # drop the PE's DEPENDENCE pragma: the accumulation is then assumed to recur every iteration
    src.write_text("\n".join(ln for ln in lines if "DEPENDENCE" not in ln) + "\n")
    found = _problems(out)
    assert any("declares II=1, the code reaches II=8" in p for p in found), found


def test_a_block_consumer_called_first_is_reported(tmp_path: Path) -> None:
    """Sequential C simulation reports a stream of blocks read before any block was written,
    naming the process, and the static check reports the call order."""
    out = _mm_design(tmp_path, "ij-ij.k")
    src = out / "kernel.cpp"
    lines = src.read_text().splitlines()
    intra = next(k for k, ln in enumerate(lines) if ln.strip().startswith("ODYSSEY_TASK(A_IO_L2_in_intra(0, "))
    begin = next(k for k, ln in enumerate(lines) if ln.strip() == "ODYSSEY_DATAFLOW_BEGIN;")
    call = lines.pop(intra)
    lines.insert(begin + 1, call)
    src.write_text("\n".join(lines) + "\n")
    assert any("before its producer" in p and "blocks_A" in p for p in _problems(out))
    res = run_csim(out, timeout_s=120)
    assert res.status == "empty_read", res.message
    assert "stream_of_blocks" in res.message and "A_IO_L2_in_intra(0, " in res.message


def test_bundles_and_memory_banks_are_checked(tmp_path: Path) -> None:
    """A u280 design checks clean; binding two arguments of one bundle to two memories, an
    argument twice or a port without a bundle is reported."""
    ks = analyse(load_scop(str(ROOT / "kernels" / "mm.c"), {"I": "8", "J": "8", "K": "8"}))
    gen = generate(ks, ks.design("ij-ik.j"), {"T_i1": 4, "T_j1": 4, "T_k1": 4, "T_i2": 2, "T_j2": 2, "T_k2": 2},
                   platform="u280")
    d = write_design(gen, tmp_path / "ok")
    assert check_design(d).ok
    cfg = (d / "connectivity.cfg").read_text()
    c_mem = next(line.split(":")[1] for line in cfg.splitlines() if line.startswith("sp=kernel0_1.C:"))
    (d / "connectivity.cfg").write_text(cfg.replace(f"sp=kernel0_1.C_in:{c_mem}", "sp=kernel0_1.C_in:HBM[31]")
                                        + "sp=kernel0_1.A:HBM[7]\n")
    cpp = (d / "kernel.cpp").read_text()
    (d / "kernel.cpp").write_text(cpp.replace("port=B offset=slave bundle=", "port=B offset=slave nobundle="))
    whats = [p.what for p in check_design(d).problems]
    assert any(w.startswith("bundle `") and "HBM[31]" in w for w in whats), whats
    assert "`A` is bound 2 times in connectivity.cfg" in whats
    assert "m_axi port `B` names no bundle" in whats


def test_every_position_of_a_process_kind_is_one_module(tmp_path: Path) -> None:
    """A process's position is an argument, not a template: the printed code has no template,
    each kind of process is one function (one synthesized module), and the check counts the
    modules apart from the processes, PE<i, j> labels kept."""
    out = _mm_design(tmp_path, "ij-ij.k")
    text = (out / "kernel.cpp").read_text()
    assert "template <" not in text
    report = check_design(out, clock_mhz=300.0)
    defined = set(re.findall(r"^void (\w+)\(", text, re.M))
    assert set(report.modules) <= defined and len(report.modules) < len(report.processes)
    assert {p.split("<")[0] for p in report.processes} == set(report.modules)
    assert any(re.fullmatch(r"PE\w*<\d+, \d+>", p) for p in report.processes)
    assert report.as_json()["modules"] == len(report.modules)
