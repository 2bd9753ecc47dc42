"""Space-time mappings and Theorem 3.1 orderings, checked against counts derived by hand.

For each reference r, RL(r) is the set of band loops r does not depend on (e_l is a
uniform reuse vector of r). A loop may be a space loop when every uniform flow/read
reuse vector has distance 0 or 1 on it. The orderings are <NRL(r), RL(r)> per r,
deduplicated by loop order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from odyssey.cli import main
from odyssey.frontend import load_scop, parse_kernel
from odyssey.mapping.space import analyse


def _space(kernels_dir: Path, name: str, **defines: str):
    return analyse(load_scop(kernels_dir / name, defines))


def _dataflows(ks) -> list[str]:
    seen: list[str] = []
    for d in ks.designs:
        if d.dataflow not in seen:
            seen.append(d.dataflow)
    return seen


def test_mm_table2(kernels_dir: Path) -> None:
    """MM: C[i][j] reuses along k (flow), A along j, B along i: all unit vectors, so i, j, k
    are all space-loop candidates: 3 + 3 = 6 dataflows; RL(C)={k}, RL(A)={j}, RL(B)={i}
    give 3 orderings; 18 designs (Table 2)."""
    ks = _space(kernels_dir, "mm.c")
    assert _dataflows(ks) == ["[i]", "[j]", "[k]", "[i,j]", "[i,k]", "[j,k]"]
    assert {d.ordering for d in ks.designs} == {"<[i,j],[k]>", "<[i,k],[j]>", "<[j,k],[i]>"}
    assert len(ks.designs) == 18
    assert [d.index for d in ks.designs] == list(range(18))
    assert len({d.id for d in ks.designs}) == 18


def test_cnn_table2(kernels_dir: Path) -> None:
    """CNN: fi[i][h+p][w+q] has reuse vectors e_o, e_h - e_p and e_w - e_q. The last two have
    distance -1 on p and on q: data of fi reused along h moves *against* p, which a PE chain
    along p cannot carry. So p and q are not space loops; o, h, w, i are (all their
    distances are 0 or 1): 4 + 6 = 10 dataflows. RL(fo)={i,p,q}, RL(wt)={h,w}, RL(fi)={o}
    (the diagonal vectors are not along one loop): 3 orderings; 30 designs."""
    ks = _space(kernels_dir, "cnn.c")
    assert _dataflows(ks) == ["[o]", "[h]", "[w]", "[i]", "[o,h]", "[o,w]", "[o,i]", "[h,w]",
                              "[h,i]", "[w,i]"]
    assert {d.ordering for d in ks.designs} == {
        "<[o,h,w],[i,p,q]>", "<[o,i,p,q],[h,w]>", "<[h,w,i,p,q],[o]>"}
    assert len(ks.designs) == 30
    legal = {lg.loop: lg for lg in ks.legality}
    assert not legal["p"].space_ok and "-1 on `p`" in legal["p"].reason
    assert not legal["q"].space_ok and "-1 on `q`" in legal["q"].reason


def test_cnn_without_init_statement(kernels_dir: Path, tmp_path: Path) -> None:
    text = (kernels_dir / "cnn.c").read_text().replace("fo[o][h][w] = 0;", "")
    src = tmp_path / "cnn_noinit.c"
    src.write_text(text)
    ks = analyse(parse_kernel(src, text)[0])
    assert len(ks.designs) == 30 and ks.initializers == ()


@pytest.mark.parametrize(
    ("kernel", "dataflows", "orderings"),
    [
        # y[i] += A[i][j]*x[j]: RL(y)={j}, RL(A)={}, RL(x)={i}; <[i],[j]> and <[i,j]> are the
        # same order (i,j), so 2 orderings; i and j legal: [i],[j],[i,j].
        ("mv.c", 3, 2),
        # D[i][j] += A[i][k][l]*B[k][j]*C[l][j]: all reuse vectors are unit, 4 legal loops:
        # 4 + 6 = 10 dataflows; RL(D)={k,l}, RL(A)={j}, RL(B)={i,l}, RL(C)={i,k}: 4 orders.
        ("mttkrp.c", 10, 4),
        # D[i][j][k] += A[i][l][m]*B[l][j]*C[m][k]: 5 legal loops: 5 + 10 = 15 dataflows;
        # RL(D)={l,m}, RL(A)={j,k}, RL(B)={i,k,m}, RL(C)={i,j,l}: 4 orders.
        ("ttmc.c", 15, 4),
        # depthwise: fi[c][h+p][w+q] has e_h-e_p, e_w-e_q (so p, q illegal) and no unit vector,
        # so RL(fi)={} gives the same order as RL(fo)={p,q}; RL(wt)={h,w}: 2 orders;
        # c, h, w legal: 3 + 3 = 6 dataflows.
        ("dwconv.c", 6, 2),
        # FIR y[i] += x[i+j]*h[j]: x reuses along (1,-1), so j is illegal; only [i];
        # RL(y)={j} and RL(x)={} give (i,j), RL(h)={i} gives (j,i): 2 orders.
        ("fir.c", 1, 2),
        # SYRK (triangular j <= i): C along k, A[i][k] along j, A[j][k] along i: like MM.
        ("syrk.c", 6, 3),
    ],
)
def test_kernel_counts(kernels_dir: Path, kernel: str, dataflows: int, orderings: int) -> None:
    ks = _space(kernels_dir, kernel)
    assert len(_dataflows(ks)) == dataflows
    assert len(ks.orderings) == orderings
    assert len(ks.designs) == dataflows * orderings


def test_max_dim_3(kernels_dir: Path) -> None:
    ks = analyse(load_scop(kernels_dir / "mm.c"), max_dim=3)
    assert len(ks.designs) == 7 * 3 and ks.designs[-1].dataflow == "[i,j,k]"


def test_design_details_mm(kernels_dir: Path) -> None:
    ks = _space(kernels_dir, "mm.c")
    d = ks.design("ij-ij.k")
    assert d.space_loops == ("i", "j") and d.order == ("i", "j", "k")
    ops = {o.array: o for o in d.operands}
    assert ops["A"].transport == "chain" and ops["A"].chain_loop == "j"
    assert ops["B"].transport == "chain" and ops["B"].chain_loop == "i"
    assert ops["C"].role == "output" and ops["C"].transport == "direct"
    assert d.output_accumulation == "on_chip"
    assert d.reduction_loops == ("k",) and d.simd_loop == "k"
    assert [(p.name, p.level, p.divides) for p in d.params] == [
        ("T_i1", "array_part", None), ("T_j1", "array_part", None), ("T_k1", "array_part", None),
        ("T_i2", "latency", "T_i1"), ("T_j2", "latency", "T_j1"), ("T_k2", "simd", "T_k1")]
    # <[j,k],i>: partial sums of C leave the array between partitions (the paper's C(in) modules)
    assert ks.design("ij-jk.i").output_accumulation == "partial_sums_leave_array"
    # [k]: C is reduced across the PEs along k
    out = next(o for o in ks.design("k-ij.k").operands if o.role == "output")
    assert out.transport == "chain" and out.chain_loop == "k"


def test_design_lookup_errors(kernels_dir: Path) -> None:
    from odyssey.errors import DesignNotFoundError

    ks = _space(kernels_dir, "mm.c")
    assert ks.design("4") is ks.designs[4]
    with pytest.raises(DesignNotFoundError, match="known ids"):
        ks.design("zz")


def test_simd_along_another_reduction_loop(kernels_dir: Path) -> None:
    """``ID@LOOP``: the SIMD parameter moves to reduction loop LOOP (``T_l2``, dividing
    ``T_l1``, at most the lane limit), the rest of the design is the same; the default loop
    is the plain id; a loop that cannot carry the lanes is refused with the candidates."""
    from odyssey.errors import DesignNotFoundError

    ks = analyse(load_scop(kernels_dir / "mttkrp.c", {"I": "8", "J": "8", "K": "8", "L": "64"}))
    base = ks.design("ij-ij.kl")
    assert base.simd_loop == "l" and base.simd_candidates == ("k", "l")  # the largest extent
    alt = ks.design("ij-ij.kl@k")
    assert alt.id == "ij-ij.kl@k" and alt.simd_loop == "k"
    simd = {p.name: p for p in alt.params if p.level == "simd"}
    assert list(simd) == ["T_k2"] and simd["T_k2"].divides == "T_k1" and simd["T_k2"].upper == 8
    assert [p for p in alt.params if p.level != "simd"] == [p for p in base.params if p.level != "simd"]
    assert (alt.order, alt.space_loops, alt.operands) == (base.order, base.space_loops, base.operands)
    assert ks.design("ij-ij.kl@l") is base and ks.design(f"{base.index}@k").id == "ij-ij.kl@k"
    with pytest.raises(DesignNotFoundError, match="the reduction loops that can are k, l"):
        ks.design("ij-ij.kl@i")


def test_lut_multiplier_suffix(kernels_dir: Path) -> None:
    """``ID+lutP``: P percent of each PE's multiply lanes in LUT fabric, on integer statements
    with one multiply per lane; with ``@LOOP`` too; other suffixes and float kernels refused."""
    from odyssey.errors import DesignNotFoundError

    ks = analyse(load_scop(kernels_dir / "autosa" / "mm_i8.c", {"I": "8", "J": "8", "K": "8"}))
    d = ks.design("ij-ij.k+lut50")
    assert d.id == "ij-ij.k+lut50" and d.lut_mul_percent == 50 and d.params == ks.design("ij-ij.k").params
    assert ks.design("ij-ij.k@k+lut100").lut_mul_percent == 100
    for bad in ("ij-ij.k+lut0", "ij-ij.k+lut101", "ij-ij.k+dsp50", "ij-ij.k+lut"):
        with pytest.raises(DesignNotFoundError, match="is not a design option"):
            ks.design(bad)
    fp = analyse(load_scop(kernels_dir / "mm.c", {"I": "8", "J": "8", "K": "8"}))
    with pytest.raises(DesignNotFoundError, match="integer datapaths"):
        fp.design("ij-ij.k+lut50")


def test_word_drain_suffix(kernels_dir: Path) -> None:
    """``ID+wd``: PE drains that move a word per cycle; with the other suffixes in any order,
    on any kernel; given twice, refused."""
    from odyssey.errors import DesignNotFoundError

    fp = analyse(load_scop(kernels_dir / "mm.c", {"I": "8", "J": "8", "K": "8"}))
    d = fp.design("i-ij.k+wd")
    assert d.id == "i-ij.k+wd" and d.word_drain and d.params == fp.design("i-ij.k").params
    assert not fp.design("i-ij.k").word_drain
    ks = analyse(load_scop(kernels_dir / "autosa" / "mm_i8.c", {"I": "8", "J": "8", "K": "8"}))
    both = ks.design("ij-ij.k@k+lut50+wd")
    assert both.id == "ij-ij.k+lut50+wd" and both.word_drain and both.lut_mul_percent == 50
    assert ks.design("ij-ij.k+wd+lut50").id == "ij-ij.k+wd+lut50"
    with pytest.raises(DesignNotFoundError, match="given twice"):
        fp.design("i-ij.k+wd+wd")


def test_binding_suffixes(kernels_dir: Path) -> None:
    """``ID+bram`` (every buffer in block RAM) and ``ID+uram`` (the I/O blocks in UltraRAM):
    with the other suffixes in any order, on any kernel; two bindings refused."""
    from odyssey.errors import DesignNotFoundError

    fp = analyse(load_scop(kernels_dir / "mm.c", {"I": "8", "J": "8", "K": "8"}))
    d = fp.design("ij-ij.k+bram")
    assert d.id == "ij-ij.k+bram" and d.storage == "bram" and d.params == fp.design("ij-ij.k").params
    assert fp.design("ij-ij.k").storage == "rule" and fp.design("ij-ij.k+uram").storage == "uram"
    ks = analyse(load_scop(kernels_dir / "autosa" / "mm_i8.c", {"I": "8", "J": "8", "K": "8"}))
    both = ks.design("ij-ij.k+lut50+bram")
    assert both.id == "ij-ij.k+lut50+bram" and both.storage == "bram" and both.lut_mul_percent == 50
    for bad in ("ij-ij.k+bram+bram", "ij-ij.k+bram+uram"):
        with pytest.raises(DesignNotFoundError, match="given twice"):
            fp.design(bad)


def test_designs_json_interface(kernels_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["designs", str(kernels_dir / "mm.c"), "-D", "I=1024", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data) == 18
    for rec in data:
        assert isinstance(rec["id"], str)
        assert set(rec["space_loops"]) <= {"i", "j", "k"}
        assert sorted(rec["order"]) == ["i", "j", "k"]
        for p in rec["params"]:
            assert set(p) >= {"name", "loop", "level", "lower", "upper", "divides"}
            assert p["level"] in ("array_part", "latency", "simd")
    t_i1 = next(p for p in data[0]["params"] if p["name"] == "T_i1")
    assert t_i1["upper"] == 1024 and t_i1["lower"] == 1


def test_designs_table(kernels_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["designs", str(kernels_dir / "cnn.c")]) == 0
    out = capsys.readouterr().out
    assert "10 dataflows x 3 orderings = 30 designs" in out
    assert "loop p: time only" in out
