"""The model against closed forms derived by hand from the architecture (docs/model.md).

MM ``C[i][j] += A[i][k] * B[k][j]`` in fp32 (MAC = 5 DSP, add latency 8, mul 4, I/O loop
depth 3, PE depth ``2 + 4 + ceil(log2 S)*8 + acc*8`` (the lanes' adder tree; ``acc`` where the PE accumulates), drain loop depth ``2 + 8``, DRAM burst
overhead 20 cycles per run). Notation: ``ti = ceil(I/T_i1)`` (likewise tj, tk),
``Pi = T_i1/T_i2``, ``Pj = T_j1/T_j2``, ``S = T_k2``, ``n`` PE iterations per tile,
``acc`` accumulator elements per PE.

Dataflow ``[i,j]``: A[i][k] is fed along i (one L2 module per PE row, box ``T_i2 x T_k1``,
words along k, the SIMD loop's dimension: ``lanes_A`` = largest power of two <= 16 dividing
T_k1) and flows along j; B[k][j] is fed along j (box ``T_k1 x T_j2``) and flows along i; its
serialized words run along k too (``lanes_B`` = largest power of two <= 16 dividing T_k1)
unless T_k1 is odd, then along j (dividing T_j2); C is drained from every PE through L1
chains (along j) and an L2 chain (along i), in words of the accumulator block.

* PE: ``n = (T_k1/S)*T_i2*T_j2``, ``II = max(1, ceil(8/(T_i2*T_j2)))`` when ``T_k1/S > 1``
  else 1, ``tile = (n-1)*II + depth``; per visit of the C tile the PE's pipeline runs over the
  inner tile loops it accumulates along (flattened with its loops, a perfect nest):
  ``PE = visits_C*((inner*n - 1)*II + depth)`` (``inner = tk`` for ``<[i,j],k>``, else 1);
  its drain process streams
  ``acc = T_i2*T_j2`` elements per visit of the C tile in words of ``lanes_C`` (the largest
  power of two <= 16 dividing acc): ``PE_drain = visits_C*(acc/lanes_C - 1 + 10)``
  with ``visits_C = ti*tj`` for ``<[i,j],k>`` and every tile for the two other orderings
  (their C tile changes every tile).
* L3 readers (perfect nests, flattened): ``N`` words, ``(N-1) + 3 + bursts*20``, every array
  serialized (the host writes each tile in the reader's order: one burst per visit):
  A: ``N = visits_A*Pi*T_i2*(T_k1/lanes_A)``; B: ``N = visits_B*T_k1*Pj*(T_j2/lanes_B)``.
  ``visits_A``: (i,j,k) tiles for <[i,j],k> and <[j,k],i>, (i,k) for <[i,k],j>;
  ``visits_B``: all tiles, except (j,k) for <[j,k],i>.
* C L3 writer: per visit ``Pi*Pj*acc/lanes_C`` words, one burst; with partial sums (the other
  two orderings) the same number is first read back with frequency ``1 - 1/tk``.
* Design latency (accurate): max of the PE-bound, input-bound, output-bound and other-module
  terms of ``odyssey.model.build`` (prologue ``first = max(ceil(L3_A/visits_A), ceil(L3_B/visits_B))``,
  ``drain`` the slowest drain-path stage per output visit, an input-bound term's reader ending
  no earlier than ``first + tile + (v - 2) * L3/v`` (two visits ahead of the PEs), a drain
  chain's forwarding loop streaming at its own depth per visit, its last word of a pass
  crossing the modules after it once at ``chain_hop_cycles`` (1) each): PE-bound ``first + PE + drain + 3``.
"""

from __future__ import annotations

from math import ceil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.platforms import assumption, load_platform

PLAT = load_platform("u250")
BURST = 20
HOP = 1  # platforms/assumptions.json chain_hop_cycles: a word crosses one module per cycle


def pow2_div(x: int, cap: int = 16) -> int:
    lanes = 1
    while lanes * 2 <= cap and x % (lanes * 2) == 0:
        lanes *= 2
    return lanes


def pipe(n: float, ii: float = 1, depth: int = 3, bursts: float = 0) -> float:
    return (n - 1) * ii + depth + bursts * BURST if n > 0 else 0.0


def hand_mm_ij(sizes: dict[str, int], t: dict[str, int], order: str) -> dict[str, float]:
    """Module latencies and bounds of one pass (the orderings with a reduction tile loop outside
    the output's loops, ``ij-ik.j`` and ``ij-jk.i``, run one pass per (i, k) or (j, k) tile;
    ``ij-ij.k`` has one pass)."""
    ii_, jj, kk = sizes["I"], sizes["J"], sizes["K"]
    ti, tj, tk = ceil(ii_ / t["T_i1"]), ceil(jj / t["T_j1"]), ceil(kk / t["T_k1"])
    pi, pj, s = t["T_i1"] // t["T_i2"], t["T_j1"] // t["T_j2"], t["T_k2"]
    tiles = ti * tj * tk
    passes = {"ij-ij.k": 1, "ij-ik.j": ti * tk, "ij-jk.i": tj * tk}[order]
    n = (t["T_k1"] // s) * t["T_i2"] * t["T_j2"]
    ii = max(1, ceil(8 / (t["T_i2"] * t["T_j2"]))) if t["T_k1"] // s > 1 else 1
    on_chip = order == "ij-ij.k"
    # the lanes' adder tree, and the running sum's add where the PE accumulates (its k.1 loop,
    # or ij-ij.k's k tile loop inside the accumulator's lock, iterates)
    depth = 2 + 4 + (s - 1).bit_length() * 8 + 8 * (t["T_k1"] // s > 1 or (on_chip and tk > 1))
    tile = pipe(n, ii, depth)
    acc = t["T_i2"] * t["T_j2"]
    visits_c = ti * tj if on_chip else tiles // passes  # output visits in one pass
    inner = tk if on_chip else 1
    # a PE that packs its own words (ij-ij.k) holds no block lock: its output tile loops and
    # PE loops form one perfect nest, flattened into one pipeline (filled once); else the
    # pipeline fills once per output visit, inside the accumulator block's lock
    pe = pipe(visits_c * inner * n, ii, depth) if on_chip else visits_c * pipe(inner * n, ii, depth)
    lc = pow2_div(acc)  # the drain path's words: lanes of the flattened accumulator block
    # where no drain reads partial sums (ij-ij.k) the PEs pack their own words into a FIFO one
    # visit deep: no PE drain process; else PE drains move a word of lc elements per cycle
    drained = acc // lc
    pe_drain = visits_c * pipe(drained, 1, 10)
    accumulates = 1 if (on_chip and tk > 1) or t["T_k1"] // s > 1 else 0
    la = pow2_div(t["T_k1"])
    lb = la if la > 1 else pow2_div(t["T_j2"])  # along k (the SIMD loop) when it packs, else j
    visits_a = (ti * tk if order == "ij-ik.j" else tiles) // passes
    visits_b = (tj * tk if order == "ij-jk.i" else tiles) // passes
    na = visits_a * pi * t["T_i2"] * (t["T_k1"] // la)
    l3a = pipe(na, bursts=visits_a)  # serialized: one burst per visit
    nb = visits_b * pj * (t["T_k1"] * t["T_j2"] // lb)
    l3b = pipe(nb, bursts=visits_b)
    words = pi * pj * acc // lc
    write = pipe(words, bursts=1)
    l3c = pipe(visits_c * words, bursts=visits_c)
    read_back = 0.0 if on_chip else visits_c * (1 - 1 / tk) * write  # the reader, averaged over passes
    first = max(ceil(l3a / visits_a), ceil(l3b / visits_b))
    # the drain path per output visit: the L2 chain along i (its own row of Pj blocks, then the
    # rows after it, forwarded at the loop's own depth while the chain streams), the L1 chains
    # along j likewise, the PE drains, the writer; the epilogue is the slowest of them, a
    # chain's last word crossing the modules after it once (Pi or Pj hops)
    # A module whose own words of a visit exceed its FIFO (2) cannot park them ahead: the pause
    # between its two loops (depth - 1 = 2) reaches the head, once per module after the head
    # but the boundary; the L2 level reads each row's L1 chain at that chain's cold pace
    # (cycles per visit over its words) when a row's words do not fit in the FIFO either.
    w = acc // lc
    l1 = pipe(w) + pipe((pj - 1) * w, depth=3 + max(0, pj - 2) * (2 if w > 2 else 0))
    rate = max(1.0, l1 / (pj * w)) if pj * w > 2 else 1.0
    l2 = pipe(pj * w, rate) + pipe((pi - 1) * pj * w, rate, depth=3 + max(0, pi - 2) * (2 if pj * w > 2 else 0))
    drain = max(ceil(l2) + HOP * pi, ceil(l1) + HOP * pj, 0 if on_chip else ceil(pipe(drained, 1, 10)),
                ceil(l3c / visits_c))

    # the writer pays its burst overhead (one burst per visit, serialized) after a visit's
    # first word; the L2 head that feeds it waits BURST + 2 - fifo_depth cycles for it, unless
    # it reads its rows' L1 chains at their cold pace (rate > 1), restarting one meanwhile
    fifo = assumption("fifo_depth").value
    writer_wait = 0.0 if rate > 1 else visits_c * max(0, BURST + 2 - fifo)

    def ahead(l3: float, v: int) -> float:
        # a reader moves two visits (its loaders' ping-pong blocks) before the PEs take one,
        # then waits for the first tile to free a block and reads the other v - 2 at its pace
        return max(l3, first + tile + l3 / v * (v - 2)) if v > 2 else l3

    return {"PE": pe, "PE_drain": pe_drain, "A_IO_L3_in": l3a, "B_IO_L3_in": l3b, "C_L3": l3c,
            "C_read": read_back, "passes": passes,
            "bound:PE": first + pe + drain + 3,
            "bound:A": ahead(l3a, visits_a) + tile + drain + 3,
            "bound:B": ahead(l3b, visits_b) + tile + drain + 3,
            "bound:C": first + tile + l3c,
            # every PE: s multiplies (3 DSP), s - 1 lane adds and the accumulation's add (2 DSP)
            # where a reduction loop of its pipeline iterates; every PE drain of a partial-sum
            # design adds the value read back from DRAM on each of its lc lanes
            "dsp": pi * pj * (3 * s + 2 * (s - 1 + accumulates)) + (0 if on_chip else pi * pj * lc * 2),
            # a drain chain module: every visit at its loops' own depths, its last word once
            # through the rest of its chain; bounded from the first output visit like the writer
            "L2_out": visits_c * l2 + HOP * pi, "L1_out": visits_c * l1 + HOP * pj,
            # the first output visit: its inner reduction tiles in one pipeline, filled once
            "bound:L2_out": first + tile + (inner - 1) * n * ii + visits_c * l2 + HOP * pi + writer_wait,
            # the partial-sum reader: its words reach the PE drains row by row (each L1
            # loader publishes its row's blocks with the row's last word), so after its last
            # word the last of the Pi rows' share of the epilogue remains
            "bound:C_in": read_back + ceil(drain / pi) + 3}


@pytest.fixture(scope="module")
def mm_space():  # type: ignore[no-untyped-def]
    return {size: analyse(load_scop("kernels/mm.c", {"I": str(size[0]), "J": str(size[1]), "K": str(size[2])}))
            for size in ((16, 16, 16), (37, 41, 43), (16, 36, 16))}


TILINGS = [
    ((16, 16, 16), {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 2}),  # divisors
    ((37, 41, 43), {"T_i1": 6, "T_j1": 5, "T_k1": 7, "T_i2": 3, "T_j2": 5, "T_k2": 7}),  # non-divisors
    ((37, 41, 43), {"T_i1": 12, "T_j1": 8, "T_k1": 16, "T_i2": 1, "T_j2": 2, "T_k2": 4}),
]
#: 3 x 3 PEs of 48 accumulators (3 words of 16): the drain chains pause and the L2 level waits
#: for each row's L1 chain
COLD_CHAINS = ((16, 36, 16), {"T_i1": 12, "T_j1": 36, "T_k1": 8, "T_i2": 4, "T_j2": 12, "T_k2": 2})


@pytest.mark.parametrize("order", ["ij-ij.k", "ij-ik.j", "ij-jk.i"])
@pytest.mark.parametrize(("size", "tiling"), TILINGS)
def test_mm_ij_matches_hand_derivation(mm_space, order, size, tiling) -> None:  # type: ignore[no-untyped-def]
    check_mm_ij(mm_space, order, size, tiling)


def test_mm_ij_cold_drain_chains(mm_space) -> None:  # type: ignore[no-untyped-def]
    """Own words per PE (3) above the FIFO depth: the closed forms of the pausing chains."""
    check_mm_ij(mm_space, "ij-ij.k", *COLD_CHAINS)


def check_mm_ij(mm_space, order, size, tiling) -> None:  # type: ignore[no-untyped-def]
    ks = mm_space[size]
    model = build_model(ks, ks.design(order), platform=PLAT)
    got = model.evaluate_one(tiling)
    want = hand_mm_ij(dict(zip("IJK", size, strict=True)), tiling, order)
    assert got["module:PE"] == pytest.approx(want["PE"])
    if order == "ij-ij.k":  # the PEs pack their own words
        assert "module:PE_drain" not in got
    else:
        assert got["module:PE_drain"] == pytest.approx(want["PE_drain"])
    assert got["module:A_IO_L3_in"] == pytest.approx(want["A_IO_L3_in"])
    assert got["module:B_IO_L3_in"] == pytest.approx(want["B_IO_L3_in"])
    assert got["module:C_drain_IO_L3_out"] == pytest.approx(want["C_L3"])
    if order != "ij-ij.k":
        assert got["module:C_IO_L3_in"] == pytest.approx(want["C_read"])
        assert got["bound:C_IO_L3_in"] == pytest.approx(want["bound:C_in"])
    assert got["bound:PE"] == pytest.approx(want["bound:PE"])
    assert got["bound:A_IO_L3_in"] == pytest.approx(want["bound:A"])
    assert got["bound:B_IO_L3_in"] == pytest.approx(want["bound:B"])
    assert got["dsp"] == want["dsp"]
    assert got["passes"] == want["passes"]
    assert got["module:C_drain_IO_L2_out"] == pytest.approx(want["L2_out"])
    assert got["module:C_drain_IO_L1_out"] == pytest.approx(want["L1_out"])
    assert got["bound:C_drain_IO_L2_out"] == pytest.approx(want["bound:L2_out"])
    per_pass = max(want["bound:PE"], want["bound:A"], want["bound:B"], want["bound:C"])
    restart = assumption("region_restart_cycles").value
    floor = want["passes"] * per_pass + (want["passes"] - 1) * restart
    assert got["latency_cycles"] >= floor * (1 - 1e-12)  # rounding of fractional visit times


def test_mm_1d_dsp_bram_latency() -> None:
    """Dataflow [i], <[i,j],k>, I=J=K=256, T_i1=32, T_j1=64, T_k1=256, T_i2=8, T_j2=4, S=4:
    Pi = 4 PEs, DSP = 4*4*5 = 80.
    PE loops: j.1 (16), k.1 (64), i.2 (8), j.2 (4): n = 32768, II = 1 (8*4 >= 8),
    depth 2+4+2*8+8 = 30, tile = 32767 + 30 = 32797, tiles = 8*4*1 = 32 (k has one tile, so
    each tile is one visit of the C tile).
    acc = T_i2*T_j1 = 512 per PE, packed by the PE into 32 words of 16 elements, written to
    a FIFO 32 words deep (no PE drain process, no block lock: the tile loops and the PE loops
    are one perfect nest, one pipeline of 32 * 32768 iterations).
    BRAM (a bank is block RAM when it fills at least 0.2 of its RAMB18E2s, fabric.json `bram`):
    A block T_i2 x T_k1 = 2048 elements, banks max(lanes 16, S 4) = 16, depth 128: 4096 bits,
    0.22 of one 512 x 36 RAMB18E2 -> 1 block per bank: 4 modules x 2 buffers x 16 = 128;
    B block (one module, B flows along i) T_k1 x T_j1 = 256 x 64: the feeder reads S = 4 lanes
    along k (dim 1) and the writer 16 packed elements along k too (the serialized words run
    along the SIMD loop's dimension), so max(16, 4) = 16 banks along k of
    ceil(256/16) * 64 = 1024 elements -> ceil(1024/512) = 2 blocks each: 1 x 2 x 16 x 2 = 64;
    the PE's running sums, 512 elements in one plain array: 1 per PE, 4; its output FIFO, 32
    words of 512 bits (16 Kbit), fills less than 0.2 of the 15 RAMB18E2s its width takes:
    distributed RAM. Total 196 in the buffers; the three m_axi adapters (512-bit words) each
    hold a read and a write buffer of 16 x 16 words (UG1399's defaults, printed): 2 *
    ceil(512/36) = 30 each, 90. Total 286."""
    ks = analyse(load_scop("kernels/mm.c", {"I": "256", "J": "256", "K": "256"}))
    m = build_model(ks, ks.design("i-ij.k"), platform=PLAT)
    r = m.evaluate_one({"T_i1": 32, "T_j1": 64, "T_k1": 256, "T_i2": 8, "T_j2": 4, "T_k2": 4})
    assert r["dsp"] == 80
    assert r["bram18k"] == 286
    assert r["bram:A_block"] == 128 and r["bram:B_block"] == 64 and "bram:acc" not in r
    assert r["bram:acc_running"] == 4
    assert r["module:PE"] == 32 * 32768 - 1 + 30  # the 32 tiles flattened into one pipeline
    assert "module:PE_drain" not in r
    assert r["pe_ii"] == 1


def test_dsp_fp32_mac_is_5_and_int16_is_1() -> None:
    ks = analyse(load_scop("kernels/fir.c", {"N": "128", "T": "16"}))
    m = build_model(ks, ks.design("i-i.j"), platform=PLAT)
    r = m.evaluate_one({"T_i1": 16, "T_j1": 16, "T_i2": 2, "T_j2": 4})
    assert r["dsp"] == 8 * 4 * 1  # 8 PEs x 4 lanes x (int16 mul 1 + int add 0)


@pytest.fixture(scope="module")
def mm1024():  # type: ignore[no-untyped-def]
    ks = analyse(load_scop("kernels/mm.c", {"I": "1024", "J": "1024", "K": "1024"}))
    return ks, {v: build_model(ks, ks.design("ij-ij.k"), platform=PLAT, variant=v) for v in ("accurate", "max")}


def _random_tilings(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    out = {}
    for loop in "ijk":
        t1 = rng.integers(1, 1025, n)
        div = np.array([rng.choice([d for d in (1, 2, 3, 4, 8, 16) if x % d == 0]) for x in t1])
        out[f"T_{loop}1"], out[f"T_{loop}2"] = t1, div
    return out


def test_max_variant_never_above_accurate(mm1024) -> None:  # type: ignore[no-untyped-def]
    _, models = mm1024
    tl = _random_tilings(np.random.default_rng(1), 5000)
    acc = models["accurate"].evaluate(tl)
    mx = models["max"].evaluate(tl)
    assert np.all(acc.legal) and np.all(mx.latency_cycles <= acc.latency_cycles + 1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 64), st.integers(1, 8), st.integers(1, 4))
def test_resources_monotone_in_array_size(mm1024, pe_rows: int, t_i2: int, s: int) -> None:  # type: ignore[no-untyped-def]
    _, models = mm1024
    m = models["accurate"]
    base = {"T_j1": 64, "T_k1": 64, "T_j2": 4, "T_k2": [1, 2, 4, 8][s - 1]}
    small = m.evaluate_one({**base, "T_i1": pe_rows * t_i2, "T_i2": t_i2})
    big = m.evaluate_one({**base, "T_i1": (pe_rows + 1) * t_i2, "T_i2": t_i2})
    assert big["dsp"] >= small["dsp"] and big["bram18k"] >= small["bram18k"]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 64), st.integers(1, 64), st.integers(1, 64), st.integers(0, 40))
def test_padding_never_reduces_latency(t_i1: int, t_j1: int, t_k1: int, extra: int) -> None:
    """A larger problem (more padding or more tiles) never takes fewer cycles."""
    sizes = [64, 64 + extra]
    lats = []
    for n in sizes:
        ks = _space_cache(n)
        m = _model_cache(n, ks)
        lats.append(m.evaluate_one({"T_i1": t_i1, "T_j1": t_j1, "T_k1": t_k1, "T_i2": 1, "T_j2": 1, "T_k2": 1})
                    ["latency_cycles"])
    assert lats[1] >= lats[0] * (1 - 1e-9)  # the prologue is a ratio: allow rounding


_SPACES: dict[int, object] = {}
_MODELS: dict[int, object] = {}


def _space_cache(n: int):  # type: ignore[no-untyped-def]
    if n not in _SPACES:
        _SPACES[n] = analyse(load_scop("kernels/mm.c", {"I": str(n), "J": str(n), "K": str(n)}))
    return _SPACES[n]


def _model_cache(n: int, ks):  # type: ignore[no-untyped-def]
    if n not in _MODELS:
        _MODELS[n] = build_model(ks, ks.design("ij-ij.k"), platform=PLAT)
    return _MODELS[n]


def pack_rule(box: list[int], simd_dim: int | None, cap: int = 16) -> tuple[int, int]:
    """``(pack dimension, lanes)`` of a serialized input by hand: along the SIMD loop's
    dimension when its extent has a power-of-two factor above 1, else along the dimension with
    the largest one (``<= cap``), the innermost of those that tie."""
    if simd_dim is not None and pow2_div(box[simd_dim], cap) > 1:
        return simd_dim, pow2_div(box[simd_dim], cap)
    best, lanes = len(box) - 1, 1
    for d, e in enumerate(box):
        if d != simd_dim and pow2_div(e, cap) >= lanes and pow2_div(e, cap) > 1:
            best, lanes = d, pow2_div(e, cap)
    return best, lanes


CNN_TILINGS = [
    # conv5-1's channels reduced: words of 16 floats along i, the SIMD loop (both inputs)
    ({"O": 64, "I": 48, "H": 14, "W": 14, "P": 3, "Q": 3},
     {"T_o1": 16, "T_h1": 14, "T_w1": 14, "T_i1": 16, "T_p1": 3, "T_q1": 3,
      "T_o2": 4, "T_h2": 7, "T_w2": 1, "T_i2": 4}),
    # non-divisor tiles, T_i1 = 24: 8 lanes along i
    ({"O": 40, "I": 56, "H": 9, "W": 11, "P": 3, "Q": 3},
     {"T_o1": 12, "T_h1": 6, "T_w1": 5, "T_i1": 24, "T_p1": 3, "T_q1": 2,
      "T_o2": 4, "T_h2": 3, "T_w2": 1, "T_i2": 2}),
    # T_i1 odd: no lanes along i; wt packs along o (T_o2 = 4), fi along w+q (T_w1+T_q1-1 = 8)
    ({"O": 64, "I": 48, "H": 14, "W": 14, "P": 3, "Q": 3},
     {"T_o1": 16, "T_h1": 14, "T_w1": 7, "T_i1": 3, "T_p1": 3, "T_q1": 2,
      "T_o2": 4, "T_h2": 7, "T_w2": 1, "T_i2": 1}),
]


@pytest.mark.parametrize(("sizes", "t"), CNN_TILINGS, ids=["along-i", "along-i-padded", "fallback"])
def test_cnn_readers_move_words_of_the_pack_rule(sizes: dict[str, int], t: dict[str, int]) -> None:
    """CNN ``oh-ohw.ipq`` (fi flows along o, wt along h; every tile a visit of both): the L3
    readers move ``visits * modules * box / lanes`` words in one burst per visit, with the box
    ``wt: T_o2 x T_i1 x T_p1 x T_q1`` (T_o1/T_o2 modules) and ``fi: T_i1 x (T_h2+T_p1-1) x
    (T_w1+T_q1-1)`` (T_h1/T_h2 modules) and the lanes of :func:`pack_rule`."""
    ks = analyse(load_scop("kernels/cnn.c", {k: str(v) for k, v in sizes.items()}))
    got = build_model(ks, ks.design("oh-ohw.ipq"), platform=PLAT).evaluate_one(t)
    visits = 1
    for n in "ohwipq":
        visits *= ceil(sizes[n.upper()] / t[f"T_{n}1"])
    wt_box = [t["T_o2"], t["T_i1"], t["T_p1"], t["T_q1"]]
    fi_box = [t["T_i1"], t["T_h2"] + t["T_p1"] - 1, t["T_w1"] + t["T_q1"] - 1]
    _, l_wt = pack_rule(wt_box, 1)
    _, l_fi = pack_rule(fi_box, 0)
    n_wt = visits * (t["T_o1"] // t["T_o2"]) * int(np.prod(wt_box)) // l_wt
    n_fi = visits * (t["T_h1"] // t["T_h2"]) * int(np.prod(fi_box)) // l_fi
    assert got["module:wt_IO_L3_in"] == pytest.approx(pipe(n_wt, bursts=visits))
    assert got["module:fi_IO_L3_in"] == pytest.approx(pipe(n_fi, bursts=visits))
    # the chain's head moves every module's words of a visit, one per cycle, in one pipelined
    # nest per visit (inside the tile loops)
    assert got["module:wt_IO_L2_in_inter"] == pytest.approx(visits * pipe(n_wt // visits))
    assert got["module:fi_IO_L2_in_inter"] == pytest.approx(visits * pipe(n_fi // visits))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.integers(1, 48), st.integers(1, 3), st.integers(1, 3), st.integers(1, 14),
       st.integers(1, 14), st.sampled_from(["float", "short"]))
def test_pack_rule_is_the_same_at_every_tiling(t_o2: int, t_i1: int, t_p1: int, t_q1: int, t_h2: int,
                                               t_w1: int, elem: str) -> None:
    """The descriptor is generated at one tiling; its per-dimension pack factors, evaluated at
    any other, give the rule's pack dimension and lanes there (fp32: at most 16 lanes, int16:
    32)."""
    from odyssey.expr import evaluate, from_json

    desc = _cnn_descriptor(elem)
    t = {"T_o1": t_o2, "T_h1": t_h2, "T_w1": t_w1, "T_i1": t_i1, "T_p1": t_p1, "T_q1": t_q1,
         "T_o2": t_o2, "T_h2": t_h2, "T_w2": 1, "T_i2": 1}
    boxes = {"wt": ([t_o2, t_i1, t_p1, t_q1], 1), "fi": ([t_i1, t_h2 + t_p1 - 1, t_w1 + t_q1 - 1], 0)}
    cap = 16 if elem == "float" else 32
    for op in desc["operands"]:
        if op["role"] != "input":
            continue
        box, simd_dim = boxes[op["name"]]
        dim, lanes = pack_rule(box, simd_dim, cap)
        factors = [int(evaluate(from_json(f), t)) for f in op["pack_sym"]]
        assert int(evaluate(from_json(op["lanes_sym"]), t)) == lanes
        assert factors == [lanes if d == dim else 1 for d in range(len(box))]


_CNN_DESC: dict[str, object] = {}


def _cnn_descriptor(elem: str):  # type: ignore[no-untyped-def]
    """The descriptor of CNN ``oh-ohw.ipq`` (O=I=48, 14x14, 3x3) with ``elem`` inputs."""
    if elem not in _CNN_DESC:
        import tempfile
        from pathlib import Path

        from odyssey.codegen.generate import generate_descriptor
        from odyssey.model.from_design import representative_tiling

        text = Path("kernels/cnn.c").read_text()
        if elem != "float":
            text = text.replace("float fi[", f"{elem} fi[").replace("float wt[", f"{elem} wt[").replace(
                "float fo[", "int fo[")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "cnn.c"
            path.write_text(text)
            ks = analyse(load_scop(path, {"O": "48", "I": "48", "H": "14", "W": "14"}))
            d = ks.design("oh-ohw.ipq")
            _CNN_DESC[elem] = generate_descriptor(ks, d, representative_tiling(d))
    return _CNN_DESC[elem]
def test_dram_channel_bandwidth_bounds_the_readers_and_writer() -> None:
    """MM 64^3, ``[i,j]``, T1 = 16, T2 = (4, 4, 4): A and B (packed along k) move 16-float (64-byte)
    words, C 16-float words (``acc = 16``). Each reader or writer takes
    ``(N - 1) * max(1, pace) + 3 + bursts * 20`` with ``pace`` = its word's bytes over its share
    of its channel's bytes per cycle:

    * U250 (64 bytes per cycle per DDR4-2400 channel, one array per channel): pace 1 for A and
      B and C, so the same figures as one word per cycle;
    * U280 (one HBM2 pseudo-channel per array, 14.375e9 / 300e6 = 47.92 bytes per cycle): A
      and C at 64 / 47.92 = 1.336 cycles per word, the channel the bottleneck: A's reader
      takes its bytes over the channel's rate plus its burst overheads;
    * U250, ordering ``<[i,k],j>``: C's partial sums are read back through C_in on C's own
      channel, so the two ports split it in proportion to their words in a busy pass (equal):
      32 bytes per cycle each, 2 cycles per 64-byte word.
    """
    ks = analyse(load_scop("kernels/mm.c", {"I": "64", "J": "64", "K": "64"}))
    t = {"T_i1": 16, "T_j1": 16, "T_k1": 16, "T_i2": 4, "T_j2": 4, "T_k2": 4}
    tiles = 4 * 4 * 4
    na = tiles * 4 * 4 * (16 // 16)  # visits x Pi x T_i2 x words per row
    nc = 4 * 4 * (4 * 4 * 16 // 16)  # output visits x Pi*Pj*acc/lanes
    rate = 14375 / 300
    u250 = build_model(ks, ks.design("ij-ij.k"), platform=PLAT).evaluate_one(t)
    assert u250["module:A_IO_L3_in"] == pytest.approx(pipe(na, 1, bursts=tiles))
    assert u250["module:C_drain_IO_L3_out"] == pytest.approx(pipe(nc, 1, bursts=16))
    assert u250["pace:A"] == pytest.approx(1.0) and u250["pace:B"] == pytest.approx(1.0)
    u280 = build_model(ks, ks.design("ij-ij.k"), platform=load_platform("u280")).evaluate_one(t)
    assert u280["pace:A"] == pytest.approx(64 / rate)
    assert u280["module:A_IO_L3_in"] == pytest.approx((na - 1) * 64 / rate + 3 + tiles * BURST)
    assert u280["module:A_IO_L3_in"] == pytest.approx(na * 64 / rate + tiles * BURST + 3 - 64 / rate)
    assert u280["module:C_drain_IO_L3_out"] == pytest.approx(pipe(nc, 64 / rate, bursts=16))
    assert u280["latency_cycles"] > u250["latency_cycles"]
    shared = build_model(ks, ks.design("ij-ik.j"), platform=PLAT).evaluate_one(t)
    assert shared["pace:C"] == pytest.approx(2.0) and shared["pace:C_in"] == pytest.approx(2.0)
    # one pass per (i, k) tile: its 4 output visits (j) of 16 words each, one burst per visit
    assert shared["module:C_drain_IO_L3_out"] == pytest.approx(pipe(4 * 16, 2.0, bursts=4))


def test_model_refuses_a_descriptor_of_another_memory() -> None:
    """A descriptor generated for the U280 (ports on HBM2) cannot be modelled on the U250,
    which has no HBM: the error names both and says what to do."""
    from odyssey.codegen.generate import generate_descriptor
    from odyssey.errors import ModelError
    from odyssey.model import model_from_descriptor

    ks = analyse(load_scop("kernels/mm.c", {"I": "16", "J": "16", "K": "16"}))
    desc = generate_descriptor(ks, ks.design("ij-ij.k"), {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2,
                                                          "T_j2": 2, "T_k2": 2}, platform="u280")
    assert desc["platform"] == "u280" and {p["memory"] for p in desc["ports"]} == {"HBM2"}
    with pytest.raises(ModelError, match=r"no memory of kind 'HBM2'.*--platform"):
        model_from_descriptor(desc, PLAT)
    assert model_from_descriptor(desc, load_platform("u280")).evaluate_one(desc["tiling"])["latency_cycles"] > 0


def test_writer_stall_is_the_burst_overhead_beyond_the_fifo_slack() -> None:
    """The feeder's write ``D + 1`` waits for the writer's read 1, which comes ``1 + overhead``
    after its read 0: ``overhead + 2 - D`` cycles later than unhindered, never negative."""
    from odyssey.model.build import writer_stall

    fifo = assumption("fifo_depth").value
    assert writer_stall(BURST) == BURST + 2 - fifo
    assert writer_stall(0) == max(0, 2 - fifo)
