"""The resource witness (counts the printed C++) against the model (reads the description):
they agree on generated designs, and a change to the printed code that the description does
not know is caught, resource by resource."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from odyssey.codegen.generate import generate
from odyssey.codegen.writer import write_design
from odyssey.frontend import load_scop
from odyssey.frontend.bundled import bundled_kernel
from odyssey.mapping.space import analyse
from odyssey.model.witness import compare
from odyssey.platforms import load_platform

PLAT = load_platform("u250")
MM = {"I": "16", "J": "16", "K": "16"}
CASES = [
    ("mm", MM, "ij-ij.k", {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 4}),
    ("mm", MM, "k-ij.k", {"T_i1": 4, "T_j1": 4, "T_k1": 16, "T_i2": 1, "T_j2": 1, "T_k2": 4}),
    ("mttkrp", {}, "ij-ij.kl", {"T_i1": 4, "T_j1": 4, "T_k1": 4, "T_l1": 4, "T_i2": 2, "T_j2": 2, "T_k2": 2}),
    ("autosa/mttkrp", {}, "ij-ij.kl@l",
     {"T_i1": 4, "T_j1": 4, "T_k1": 2, "T_l1": 8, "T_i2": 2, "T_j2": 2, "T_l2": 4}),
    ("autosa/mm_i8", MM, "ij-ij.k", {"T_i1": 8, "T_j1": 8, "T_k1": 16, "T_i2": 4, "T_j2": 4, "T_k2": 16}),
    ("autosa/mm_i8", MM, "ij-ij.k+lut40", {"T_i1": 8, "T_j1": 8, "T_k1": 10, "T_i2": 4, "T_j2": 4, "T_k2": 5}),
    ("autosa/mm_u16", MM, "ij-ij.k+lut100", {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 4, "T_j2": 2, "T_k2": 4}),
    ("mm", MM, "i-ij.k+wd", {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 4}),
    ("autosa/mm_i8", MM, "ij-ij.k+lut50+bram", {"T_i1": 8, "T_j1": 8, "T_k1": 16, "T_i2": 4, "T_j2": 4, "T_k2": 16}),
    ("mm", MM, "ij-ij.k+uram", {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 4}),
    # triangular drains that compute each element's index (`int g_i = t_i * T_i1 + ...`, with
    # pass indices as arguments): address arithmetic, no operator of the datapath (the size
    # fuzzer found the witness counting it)
    ("polybench/syrk", {"N": "8", "M": "8"}, "i-ik.j",
     {"T_i1": 1, "T_k1": 1, "T_j1": 1, "T_i2": 1, "T_j2": 1, "T_k2": 1}),
    ("polybench/syr2k", {"N": "8", "M": "8"}, "kj-ik.j",
     {"T_i1": 3, "T_k1": 4, "T_j1": 5, "T_i2": 3, "T_j2": 1, "T_k2": 4}),
    # a PE that packs its own words and scales each result (`alpha * r`) on its way out: one
    # multiply per PE, its result register and stages (the model had charged a multiply per
    # lane of the word, as a drain process that moves a word per cycle holds)
    ("polybench/trmm_oop", {}, "i-ij.k", {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 2, "T_k2": 1}),
]


def _design(tmp: Path, kernel: str, sizes: dict[str, str], design: str, tiling: dict[str, int]) -> Path:
    path = bundled_kernel(kernel)
    assert path is not None
    ks = analyse(load_scop(path, sizes))
    return write_design(generate(ks, ks.design(design), tiling), tmp / "d")


@pytest.mark.parametrize(("kernel", "sizes", "design", "tiling"), CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_witness_equals_model(tmp_path: Path, kernel: str, sizes: dict[str, str], design: str,
                              tiling: dict[str, int]) -> None:
    w, totals, disagree = compare(_design(tmp_path, kernel, sizes, design, tiling), PLAT)
    assert disagree == []
    assert w.total.dsp == totals["dsp"] and w.total.lut == totals["lut"] and w.total.ff == totals["ff"]
    assert totals["dsp"] > 0 or design.endswith("+lut100")


def test_the_printed_pe_has_one_add_per_lane_and_the_drain_none(tmp_path: Path) -> None:
    """Closed form: an fp32 PE of SIMD 4 holds 4 multiplies and 3 + 1 adds, and nothing more
    on the way out of an output without a chain and with a zero start (no `0 + x`): it packs
    its own words; a `+wd` drain process holds no operator either."""
    w, _, _ = compare(_design(tmp_path, *CASES[0]), PLAT)
    assert w.operators["PE"] == {("mul", "fp32"): 4, ("add", "fp32"): 4}
    assert "PE_drain" not in w.operators
    kernel, sizes, design, tiling = CASES[0]
    w, _, disagree = compare(_design(tmp_path / "wd", kernel, sizes, design + "+wd", tiling), PLAT)
    assert w.operators["PE_drain"] == {} and not disagree


def test_a_deep_fifo_rebound_is_caught(tmp_path: Path) -> None:
    """The PEs' output FIFOs (a visit of words) are memories bound by the bank rule: bound to
    block RAM instead, the witness sees the change and the model does not."""
    d = _design(tmp_path, *CASES[0])
    text = (d / "kernel.cpp").read_text()
    assert "type=fifo impl=lutram" in text
    bad = _edit(d, tmp_path / "bad", "type=fifo impl=lutram", "type=fifo impl=bram")
    _, _, disagree = compare(bad, PLAT)
    assert ("total", "bram18k") in {(x.where, x.resource) for x in disagree}


def _edit(src: Path, dst: Path, old: str, new: str, count: int = -1) -> Path:
    shutil.copytree(src, dst)
    text = (dst / "kernel.cpp").read_text()
    assert old in text
    (dst / "kernel.cpp").write_text(text.replace(old, new, count))
    return dst


def test_a_zero_based_lane_sum_put_back_is_caught(tmp_path: Path) -> None:
    d = _design(tmp_path, *CASES[0])
    bad = _edit(d, tmp_path / "bad", "float v = ((pl[0] + pl[1])", "float v = ((0.0f + (pl[0] + pl[1]))")
    w, _, disagree = compare(bad, PLAT)
    assert {(x.where, x.resource) for x in disagree} >= {("PE", "dsp"), ("total", "dsp")}
    pe = next(x for x in disagree if x.where == "PE" and x.resource == "dsp")
    assert pe.witness - pe.model == 2 * w.instances["PE"]  # one more fp32 add (2 DSP) in each PE


def test_a_deepened_fifo_is_caught(tmp_path: Path) -> None:
    d = _design(tmp_path, *CASES[0])
    bad = _edit(d, tmp_path / "bad", "variable=fifo_A_PE_0_0 depth=2", "variable=fifo_A_PE_0_0 depth=64", 1)
    _, _, disagree = compare(bad, PLAT)
    assert ("total", "lut") in {(x.where, x.resource) for x in disagree}


def test_a_changed_binding_is_caught(tmp_path: Path) -> None:
    d = _design(tmp_path, *CASES[0])
    bad = _edit(d, tmp_path / "bad", "variable=fifo_A_L3 type=fifo impl=srl", "variable=fifo_A_L3 type=fifo impl=bram", 1)
    _, _, disagree = compare(bad, PLAT)
    assert ("total", "bram18k") in {(x.where, x.resource) for x in disagree}


def _sweep(kernel: str, sizes: dict[str, str], per_design: int, seed: int, tmp: Path,
           designs: tuple[str, ...] | None = None) -> int:
    """The tuner's model (built once per design, at its representative tiling) against the
    witness of the design printed at random tilings: every resource equal."""
    import numpy as np

    from odyssey.errors import CodegenError
    from odyssey.model import build_model
    from odyssey.model.witness import witness
    from odyssey.tune.space import SearchSpace

    path = bundled_kernel(kernel)
    assert path is not None
    ks = analyse(load_scop(path, sizes))
    rng = np.random.default_rng(seed)
    checked = 0
    for d in ks.designs:
        if designs is not None and d.id not in designs:
            continue
        try:
            model = build_model(ks, d, platform=PLAT)
        except CodegenError:  # 3D, or two reducing space loops: not generated
            continue
        space = SearchSpace(model.params)
        for p in space.to_points(space.sample(rng, per_design)):
            tiling = {k: int(v) for k, v in p.items()}
            out = write_design(generate(ks, d, tiling), tmp / f"{d.id}-{checked}")
            w = witness(out).total
            r = model.evaluate_one(tiling)
            for res in ("dsp", "lut", "ff", "bram18k"):
                assert getattr(w, res) == pytest.approx(r[res], abs=0.5), (d.id, tiling, res)
            shutil.rmtree(out)
            checked += 1
    return checked


#: one design of each structure: 1D and 2D, on-chip and partial-sum orderings, output chains
_KINDS = ("i-ij.k", "k-ij.k", "k-ik.j", "ij-ij.k", "ij-jk.i", "ik-ij.k")


def test_the_tuners_model_is_the_printed_code_at_random_tilings(tmp_path: Path) -> None:
    """Property: six MM designs of different structure, two random tilings each (non-divisors,
    one PE along a chain and every variant a tiling may or may not instantiate included);
    every design of eight kernels in the slow sweep below."""
    assert _sweep("mm", {"I": "23", "J": "19", "K": "17"}, 2, 0, tmp_path, _KINDS) == 12


@pytest.mark.slow
@pytest.mark.parametrize(("kernel", "sizes"), [
    ("mm", {"I": "23", "J": "19", "K": "17"}), ("cnn", {"I": "5", "O": "7", "H": "6", "W": "5", "P": "3", "Q": "3"}),
    ("mttkrp", {}), ("autosa/mm_i8", {}), ("syrk", {}), ("fir", {}), ("mv", {}), ("dwconv", {})])
def test_the_tuners_model_is_the_printed_code_sweep(tmp_path: Path, kernel: str, sizes: dict[str, str]) -> None:
    assert _sweep(kernel, sizes, 3, 1, tmp_path) > 0


def test_lut_multipliers_are_priced_and_a_lost_binding_is_caught(tmp_path: Path) -> None:
    """``+lut50``: half of each PE's int8 multipliers (floor) are bound to LUT fabric: the model
    and the printed code agree that they cost no DSP and ``mul_fabric`` LUTs; the same design
    without the binding pragma is caught (its multipliers would be DSPs)."""
    tiling = {"T_i1": 8, "T_j1": 8, "T_k1": 16, "T_i2": 4, "T_j2": 4, "T_k2": 16}
    plain = compare(_design(tmp_path / "a", "autosa/mm_i8", MM, "ij-ij.k", tiling), PLAT)[1]
    d = _design(tmp_path / "b", "autosa/mm_i8", MM, "ij-ij.k+lut50", tiling)
    w, totals, disagree = compare(d, PLAT)
    assert disagree == []
    pes = 4  # 2 x 2 PEs
    assert plain["dsp"] - totals["dsp"] == pes * 8  # 8 of 16 lanes per PE
    # fabric.json's int8 mul_fabric (62 LUT) per LUT lane, and its lane add, which a LUT product
    # does not fuse into a DSP post-adder (8 LUT, an int8 add)
    assert totals["lut"] - plain["lut"] == pes * 8 * (62 + 8)
    src = d / "kernel.cpp"
    text = src.read_text()
    assert text.count("#pragma HLS BIND_OP variable=q op=mul impl=fabric") == 4  # one per PE variant
    src.write_text(text.replace("#pragma HLS BIND_OP variable=q op=mul impl=fabric", ""))
    _, _, lost = compare(d, PLAT)
    assert ("total", "dsp") in {(x.where, x.resource) for x in lost}


def test_all_bram_binds_every_buffer_to_block_ram(tmp_path: Path) -> None:
    """``+bram``: the int8 design's small buffers, distributed RAM under the fill rule, are
    printed ``impl=bram`` and priced as block RAM by both the model and the printed code: the
    LUTs of distributed RAM go, BRAM18Ks come; a buffer bound back to LUTRAM is caught."""
    tiling = {"T_i1": 8, "T_j1": 8, "T_k1": 16, "T_i2": 4, "T_j2": 4, "T_k2": 16}
    rule = compare(_design(tmp_path / "a", "autosa/mm_i8", MM, "ij-ij.k", tiling), PLAT)[1]
    d = _design(tmp_path / "b", "autosa/mm_i8", MM, "ij-ij.k+bram", tiling)
    _, totals, disagree = compare(d, PLAT)
    assert disagree == []
    assert totals["bram18k"] > rule["bram18k"] and totals["lut"] < rule["lut"]
    assert totals["dsp"] == rule["dsp"] and totals["ff"] == rule["ff"]
    text = (d / "kernel.cpp").read_text()
    assert "impl=lutram" not in text and text.count("impl=bram") >= 3  # A and B blocks, acc, sums
    (d / "kernel.cpp").write_text(text.replace("type=ram_s2p impl=bram", "type=ram_s2p impl=lutram", 1))
    _, _, lost = compare(d, PLAT)
    assert {"bram18k", "lut"} <= {x.resource for x in lost if x.where == "total"}


def test_uram_binds_the_io_blocks_to_ultraram(tmp_path: Path) -> None:
    """``+uram``: the feeders' blocks are printed ``impl=uram`` and priced as URAM288 blocks
    (4K x 72) by the model and the printed code alike, their BRAM gone; the PEs' buffers stay
    by the rule. Closed form: MM 16^3 at 4 x 2 PEs, T_i2=2, T_j2=4, T_k1=8: an A block (2 x 8
    fp32, 8 banks along k, the writer's word of 16 lanes capped at the extent) per A feeder
    (4) and a B block (8 x 4, 8 banks along k) per B feeder (2), double-buffered: a URAM288
    per bank, (4 + 2) * 8 * 2 = 96 URAM; a block bound back to BRAM is caught."""
    tiling = {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 4}
    rule = compare(_design(tmp_path / "a", "mm", MM, "ij-ij.k", tiling), PLAT)[1]
    d = _design(tmp_path / "b", "mm", MM, "ij-ij.k+uram", tiling)
    w, totals, disagree = compare(d, PLAT)
    assert disagree == []
    assert rule["uram"] == 0 and totals["uram"] == w.total.uram == 96
    assert totals["dsp"] == rule["dsp"] and totals["ff"] == rule["ff"]
    text = (d / "kernel.cpp").read_text()
    assert text.count("impl=uram") == 6  # the blocks of the 4 A and 2 B feeders
    (d / "kernel.cpp").write_text(text.replace("impl=uram", "impl=bram", 1))
    _, _, lost = compare(d, PLAT)
    assert {"uram", "bram18k"} <= {x.resource for x in lost if x.where == "total"}


def test_integer_lane_adds_fuse_into_the_dsp_of_their_multiply(tmp_path: Path) -> None:
    """An integer lane's ``v + p`` after a DSP multiply is a multiply-add in one DSP48E2 (UG1399,
    DSP multi-operation matching): the model and the printed code agree that the lanes' adds
    cost no LUT or FF (the accumulation into the running sums still does), and an fp32
    design's adds are unchanged (fadd cores)."""
    tiling = {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 4, "T_j2": 4, "T_k2": 8}
    d = _design(tmp_path, "autosa/mm_i8", MM, "ij-ij.k", tiling)
    w, totals, disagree = compare(d, PLAT)
    assert disagree == []
    pe = w.operators["PE"]
    assert pe[("add_fused", "int8")] == 7 and pe[("add", "int8")] == 1  # 8 lanes: 7 fused, 1 accumulation
    f = compare(_design(tmp_path / "f", "mm", MM, "ij-ij.k", tiling), PLAT)[0].operators["PE"]
    assert ("add_fused", "fp32") not in f and f[("add", "fp32")] == 8
