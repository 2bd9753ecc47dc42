"""Benchmark: vectorized model evaluations per second (one core) for every MM design.

Usage: python scripts/bench_model.py [--points 200000] [--repeat 3]
Builds the accurate model of each of the 18 MM 1024^3 designs on U250 and evaluates random
legal tilings in batches; prints points/s per design (best of the repeats).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.platforms import load_platform

    plat = load_platform("u250")
    ks = analyse(load_scop("kernels/mm.c", {"I": "1024", "J": "1024", "K": "1024"}))
    rng = np.random.default_rng(0)
    worst = float("inf")
    print(f"{'design':10s} {'build s':>8s} {'points/s':>12s}")
    for d in ks.designs:
        t0 = time.perf_counter()
        m = build_model(ks, d, platform=plat)
        build = time.perf_counter() - t0
        n = args.points
        tl: dict[str, np.ndarray] = {}
        for p in m.params:
            if p.divides is None:
                tl[p.name] = rng.integers(p.lower, p.upper + 1, n)
        for p in m.params:
            if p.divides is not None:
                tl[p.name] = np.ones(n, dtype=np.int64)
        best = 0.0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            m.evaluate(tl)
            best = max(best, n / (time.perf_counter() - t0))
        worst = min(worst, best)
        print(f"{d.id:10s} {build:8.2f} {best:12,.0f}")
    print(f"slowest design: {worst:,.0f} points/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
