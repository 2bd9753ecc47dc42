"""Benchmark: vectorized model evaluations per second (one core) for every MM design.

Usage: python scripts/bench_model.py [--kernel mm|cnn|conv5_1] [--points 200000] [--repeat 3]
Builds the accurate model of each design on U250 (``mm``: the 18 MM 1024^3 designs; ``cnn``:
the 30 1D/2D designs of VGG16 conv2-1, O=128 I=64 H=W=112 P=Q=3, which the transfer race
builds on every shape; ``conv5_1``: the 30 designs of VGG16 conv5-1, O=I=512 H=W=14 P=Q=3) and evaluates random legal tilings in batches; prints the build
seconds and points/s per design (best of the repeats) and the total build time.
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
    ap.add_argument("--kernel", choices=("mm", "cnn", "conv5_1"), default="mm")
    args = ap.parse_args()
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.platforms import load_platform

    plat = load_platform("u250")
    if args.kernel == "mm":
        ks = analyse(load_scop("kernels/mm.c", {"I": "1024", "J": "1024", "K": "1024"}))
    elif args.kernel == "cnn":
        sizes = {"O": "128", "I": "64", "H": "112", "W": "112", "P": "3", "Q": "3"}
        ks = analyse(load_scop("kernels/cnn.c", sizes), max_dim=2)
    else:  # VGG16 conv5-1, the layer of issue 33's goal
        sizes = {"O": "512", "I": "512", "H": "14", "W": "14", "P": "3", "Q": "3"}
        ks = analyse(load_scop("kernels/cnn.c", sizes), max_dim=2)
    rng = np.random.default_rng(0)
    worst = float("inf")
    builds = 0.0
    print(f"{'design':12s} {'build s':>8s} {'points/s':>12s}")
    for d in ks.designs:
        t0 = time.perf_counter()
        m = build_model(ks, d, platform=plat)
        build = time.perf_counter() - t0
        builds += build
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
        print(f"{d.id:12s} {build:8.3f} {best:12,.0f}")
    print(f"slowest design: {worst:,.0f} points/s; every model built in {builds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
