"""Throughput of compiled expression evaluators on an MM-sized model.

Builds a latency/resource model shaped like the one for a 2-D output-stationary
MM systolic array (trip counts, PE counts, II, DRAM bursts, BRAM blocks, data
movement; about a hundred distinct nodes, ten outputs), compiles it with
:func:`odyssey.expr.compile_vectorized` and reports points per second on
batches of random tilings. A helper script, not a timed test.

Usage: ``python scripts/bench_expr.py [--points 100000] [--repeats 20]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from odyssey.expr import Expr, ExprLike, ceil_div, compile_vectorized, emax, le, sym

PARAMS = ("I", "J", "K", "T_i1", "T_j1", "T_k1", "T_i2", "T_j2", "T_k2")


def _bram18k(words: ExprLike, width_bits: ExprLike) -> Expr:
    """BRAM18K blocks for a buffer: ``ceil(width/36) * ceil(words/512)`` (36x512 shape)."""
    return ceil_div(width_bits, 36) * ceil_div(words, 512)


def _dram_cycles(words: Expr, beats_per_burst: int = 256, overhead: int = 20) -> Expr:
    """Cycles to move ``words`` fp32 words over a 512-bit port with 20-cycle bursts."""
    beats = ceil_div(words * 32, 512)
    return beats + ceil_div(beats, beats_per_burst) * overhead


def mm_model() -> dict[str, Expr]:
    """The benchmark model: ten outputs over :data:`PARAMS`."""
    s = {p: sym(p) for p in PARAMS}
    i0, j0, k0 = (ceil_div(s[n], s[t]) for n, t in (("I", "T_i1"), ("J", "T_j1"), ("K", "T_k1")))
    pe_i, pe_j = ceil_div(s["T_i1"], s["T_i2"]), ceil_div(s["T_j1"], s["T_j2"])
    n_pe = pe_i * pe_j
    ii = emax(1, ceil_div(8, s["T_k2"]))
    pe_lat = s["T_i2"] * s["T_j2"] * ceil_div(s["T_k1"], s["T_k2"]) * ii + 12
    a_words, b_words = s["T_i1"] * s["T_k1"], s["T_j1"] * s["T_k1"]
    c_words = s["T_i1"] * s["T_j1"]
    a_cyc, b_cyc, c_cyc = _dram_cycles(a_words), _dram_cycles(b_words), _dram_cycles(c_words)
    # on-chip feeders: L2 modules stream a tile through each PE row/column
    a_feed = ceil_div(s["T_i1"] * s["T_k1"], s["T_k2"] * pe_i) + pe_j
    b_feed = ceil_div(s["T_j1"] * s["T_k1"], s["T_k2"] * pe_j) + pe_i
    drain = ceil_div(c_words, pe_j) + pe_i + pe_j
    steady = i0 * j0 * k0 * emax(pe_lat, a_cyc, b_cyc, a_feed, b_feed)
    latency = a_cyc + b_cyc + steady + emax(drain, c_cyc)
    dsp = 5 * n_pe * s["T_k2"]
    simd_bits = 32 * s["T_k2"]
    bram = (
        pe_i * 2 * _bram18k(ceil_div(s["T_i2"] * s["T_k1"], s["T_k2"]), simd_bits)
        + pe_j * 2 * _bram18k(ceil_div(s["T_j2"] * s["T_k1"], s["T_k2"]), simd_bits)
        + n_pe * _bram18k(s["T_i2"] * s["T_j2"], 32)
        + pe_i * _bram18k(s["T_i2"] * s["T_j1"], 32)
    )
    return {
        "latency": latency,
        "dsp": dsp,
        "bram18k": bram,
        "dm_a": i0 * j0 * k0 * a_words,
        "dm_b": i0 * j0 * k0 * b_words,
        "dm_c": i0 * j0 * c_words,
        "ii": ii,
        "uram": pe_j * ceil_div(s["T_i1"] * s["T_j2"] * 32, 72 * 4096) + ceil_div(c_words, 4096),
        "gflops": 2 * s["I"] * s["J"] * s["K"] * 0.3 / latency,
        "feasible": le(dsp, 8601) * le(bram, 3763),
    }


def count_nodes(exprs: dict[str, Expr]) -> int:
    """Distinct subtrees across all outputs (what the compiled tape evaluates)."""
    seen: set[Expr] = set()
    stack = list(exprs.values())
    while stack:
        e = stack.pop()
        if e not in seen:
            seen.add(e)
            stack.extend(e.children())
    return len(seen)


def random_tilings(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``n`` random MM tilings for a 1024^3 problem (int64 arrays)."""
    pts = {p: np.full(n, 1024, dtype=np.int64) for p in ("I", "J", "K")}
    for loop in ("i", "j", "k"):
        t1 = rng.integers(1, 1025, n)
        pts[f"T_{loop}1"] = t1
        pts[f"T_{loop}2"] = np.minimum(rng.integers(1, 65, n), t1)
    return pts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    model = mm_model()
    fn = compile_vectorized(model, PARAMS)
    pts = random_tilings(args.points, np.random.default_rng(0))
    fn(pts)  # warm-up
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        fn(pts)
        times.append(time.perf_counter() - t0)
    best, median = min(times), float(np.median(times))
    print(f"model: {count_nodes(model)} distinct nodes, {len(model)} outputs")
    print(f"batch: {args.points} points, {args.repeats} repeats")
    print(f"median {median * 1e3:.1f} ms/batch -> {args.points / median:,.0f} points/s")
    print(f"best   {best * 1e3:.1f} ms/batch -> {args.points / best:,.0f} points/s")


if __name__ == "__main__":
    main()
