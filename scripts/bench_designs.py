"""Benchmark: wall time of `odyssey designs` on the bundled kernels (whole process, cold start).

Usage: python scripts/bench_designs.py [--repeat N]
Prints the median and best wall time per kernel, including interpreter start-up and imports,
which is what a user waits for.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    exe = [sys.executable, "-m", "odyssey.cli", "designs"]
    print(f"{'kernel':12s} {'designs':>7s} {'median s':>9s} {'best s':>7s}")
    for name in ("mm", "cnn", "mv", "mttkrp", "ttmc", "dwconv", "fir", "syrk"):
        times = []
        out = ""
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            proc = subprocess.run([*exe, str(ROOT / "kernels" / f"{name}.c")], capture_output=True,
                                  text=True, check=True)
            times.append(time.perf_counter() - t0)
            out = proc.stdout
        count = next(line.split("= ")[1].split()[0] for line in out.splitlines() if "designs" in line and "=" in line)
        print(f"{name:12s} {count:>7s} {statistics.median(times):9.3f} {min(times):7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
