"""DRAM layouts: serialized images (one burst per tile) and row-major images, per array.

Closed form: the serialized reader of MM ``ij-ij.k`` issues one burst per visit, so its latency
is ``(words - 1) + depth + visits * overhead``. Differential: designs with mixed layouts pass C
simulation against the loop nest (Vitis semantics), padded tiles and partial sums included.
"""

from __future__ import annotations

import pytest

from odyssey.codegen.csim import run_csim
from odyssey.codegen.generate import generate, generate_descriptor
from odyssey.codegen.geometry import Layout
from odyssey.codegen.static_check import check_design
from odyssey.codegen.writer import write_design
from odyssey.errors import CodegenError
from odyssey.expr import evaluate, from_json
from odyssey.model import model_from_descriptor
from odyssey.platforms import assumption, load_platform

from .conftest import space_of

MM = {"T_i1": 16, "T_j1": 16, "T_k1": 16, "T_i2": 4, "T_j2": 4, "T_k2": 4}


def _reader_latency(layouts: dict[str, Layout] | None) -> tuple[float, dict[str, object]]:
    ks = space_of("mm.c", I="64", J="64", K="64")
    desc = generate_descriptor(ks, ks.design("ij-ij.k"), MM, layouts=layouts)
    model = model_from_descriptor(desc, load_platform("u250"))
    return float(model.evaluate_one(MM)["module:A_IO_L3_in"]), desc


SERIAL: dict[str, Layout] = {"A": "serialized", "B": "serialized", "C": "serialized"}


def test_serialized_reader_is_one_burst_per_visit() -> None:
    lat, desc = _reader_latency(SERIAL)
    # A[i][k]: visits over (t_i, t_j, t_k) = 4^3, each 4 modules x 4 rows x 1 word of 16 floats
    visits, words = 4 * 4 * 4, 4 * 4 * 1
    depth = assumption("io_pipeline_depth").value
    overhead = load_platform("u250").memories[0].burst_overhead_cycles
    assert lat == (visits * words - 1) + depth + visits * overhead
    port = next(p for p in desc["ports"] if p["name"] == "A")
    assert evaluate(from_json(port["lanes_sym"]), MM) == 16


def test_row_major_reader_pays_a_burst_per_row() -> None:
    serial, _ = _reader_latency(None)  # the default
    rows, _ = _reader_latency({"A": "row_major"})
    # the same words, but one burst per box row (4 per module and visit) instead of per visit
    overhead = load_platform("u250").memories[0].burst_overhead_cycles
    assert rows - serial == 64 * (16 - 1) * overhead


def test_unknown_array_or_layout_is_an_error() -> None:
    ks = space_of("mm.c", I="16", J="16", K="16")
    with pytest.raises(CodegenError, match="`X`, which is not an array"):
        generate(ks, ks.design("ij-ij.k"), MM, layouts={"X": "row_major"})
    with pytest.raises(CodegenError, match="layout `tiled` of `A`"):
        generate(ks, ks.design("ij-ij.k"), MM, layouts={"A": "tiled"})  # type: ignore[dict-item]


@pytest.mark.parametrize(("kernel", "design", "tiling", "sizes", "layouts"), [
    ("mm.c", "ij-ik.j", {"T_i1": 6, "T_j1": 5, "T_k1": 7, "T_i2": 3, "T_j2": 5, "T_k2": 7},
     {"I": "37", "J": "41", "K": "43"}, {"B": "serialized"}),
    ("mm.c", "ij-ik.j", {"T_i1": 6, "T_j1": 5, "T_k1": 7, "T_i2": 3, "T_j2": 5, "T_k2": 7},
     {"I": "37", "J": "41", "K": "43"}, {"A": "serialized", "C": "serialized"}),
    ("mm.c", "k-ij.k", {"T_i1": 5, "T_j1": 4, "T_k1": 8, "T_i2": 5, "T_j2": 2, "T_k2": 2},
     {"I": "13", "J": "11", "K": "19"}, {"A": "serialized", "B": "serialized", "C": "serialized"}),
    ("cnn.c", "hi-hwipq.o", {"T_o1": 3, "T_h1": 4, "T_w1": 5, "T_i1": 4, "T_p1": 2, "T_q1": 2,
                             "T_o2": 1, "T_h2": 2, "T_w2": 1, "T_i2": 2},
     {"O": "7", "I": "5", "H": "9", "W": "11", "P": "3", "Q": "2"},
     {"fi": "serialized", "wt": "serialized", "fo": "serialized"}),
], ids=["mm-B-serialized", "mm-AC-serialized", "mm-all-serialized", "cnn-all-serialized"])
def test_mixed_layouts_match_the_loop_nest(tmp_path, kernel, design, tiling, sizes, layouts) -> None:  # type: ignore[no-untyped-def]
    ks = space_of(kernel, **sizes)
    gen = generate(ks, ks.design(design), tiling, layouts=layouts)
    res = run_csim(write_design(gen, tmp_path / "d"), timeout_s=120)
    assert res.status == "pass", res.message + res.stdout[-1000:] + res.stderr[-1000:]


def test_a_serialized_image_that_misses_outputs_fails(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The testbench counts the output elements it finds in the image: dropping the writer's
    last visit must fail C simulation, not pass on stale zeros."""
    ks = space_of("mm.c", I="16", J="16", K="16")
    tiling = {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 4, "T_j2": 4, "T_k2": 1}
    gen = generate(ks, ks.design("ij-ij.k"), tiling, layouts=SERIAL)
    files = dict(gen.files)
    host = files["host.cpp"]
    assert "seen++" in host
    files["host.cpp"] = host.replace("seen++", "seen += (k > 0)")
    bad = type(gen)(tuple(files.items()), gen.descriptor, gen.tiling, None)
    res = run_csim(write_design(bad, tmp_path / "bad"), timeout_s=120)
    assert res.status != "pass"
    assert "outputs in the image" in res.stdout


def _short_cnn(tmp_path):  # type: ignore[no-untyped-def]
    """cnn.c with int16 feature maps and weights (int outputs), in ``tmp_path``."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "kernels" / "cnn.c").read_text()
    text = text.replace("float fi[", "short fi[").replace("float wt[", "short wt[").replace("float fo[", "int fo[")
    path = tmp_path / "cnn16.c"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("design", "sizes", "tiling", "int16", "want"), [
    # conv5-1's shape at reduced size: words of 16 floats along i (the SIMD loop), padded o and q
    ("oh-ohw.ipq", {"O": "40", "I": "48", "H": "6", "W": "5", "P": "3", "Q": "3"},
     {"T_o1": 12, "T_h1": 6, "T_w1": 5, "T_i1": 16, "T_p1": 3, "T_q1": 2, "T_o2": 4, "T_h2": 3, "T_w2": 1,
      "T_i2": 4}, False, {"fi": (0, 16), "wt": (1, 16)}),
    # T_i1 odd (padded i): wt packs along o, fi along its widest power-of-two dimension (w+q)
    ("oh-ohw.ipq", {"O": "16", "I": "7", "H": "6", "W": "7", "P": "3", "Q": "3"},
     {"T_o1": 8, "T_h1": 6, "T_w1": 6, "T_i1": 3, "T_p1": 3, "T_q1": 3, "T_o2": 4, "T_h2": 3, "T_w2": 1,
      "T_i2": 1}, False, {"fi": (2, 8), "wt": (0, 4)}),
    # int16: 32 lanes along i, partial sums through DRAM
    ("oh-oipq.hw", {"O": "12", "I": "64", "H": "4", "W": "5", "P": "3", "Q": "3"},
     {"T_o1": 6, "T_h1": 4, "T_w1": 5, "T_i1": 32, "T_p1": 3, "T_q1": 3, "T_o2": 3, "T_h2": 2, "T_w2": 1,
      "T_i2": 8}, True, {"fi": (0, 32), "wt": (1, 32)}),
], ids=["cnn-along-i", "cnn-fallback", "cnn-int16"])
def test_inputs_pack_along_the_rules_dimension(tmp_path, design, sizes, tiling, int16, want) -> None:  # type: ignore[no-untyped-def]
    """Each input's words run along the pack dimension (``(dimension, lanes)`` per operand, by
    the rule of :func:`odyssey.codegen.geometry.pack_factors`), the block is split into that
    many banks along it, and the design matches the loop nest in C simulation."""
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse

    ks = analyse(load_scop(_short_cnn(tmp_path), sizes)) if int16 else space_of("cnn.c", **sizes)
    gen = generate(ks, ks.design(design), tiling)
    ops = {op["name"]: op for op in gen.descriptor["operands"]}
    mem = {m["operand"]: m for m in gen.descriptor["memory"] if m["role"] == "input_block"}
    for name, (dim, lanes) in want.items():
        assert (ops[name]["pack_dim"], ops[name]["lanes"]) == (dim, lanes)
        banks = {p["dim"]: p["factor"] for p in mem[name]["partition"]}
        assert banks[dim + 1] >= lanes  # a word's lanes land in distinct banks
    out = write_design(gen, tmp_path / "d")
    res = run_csim(out, timeout_s=180)
    assert res.status == "pass", res.message + res.stdout[-1000:] + res.stderr[-1000:]
    check = check_design(out, clock_mhz=300.0)  # banks, IIs, channels from the printed code
    assert check.ok, [p.what for p in check.problems]
