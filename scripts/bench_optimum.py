"""Benchmark: `find_optimum` (the exact branch and bound) on every design of a kernel.

Usage:
    python scripts/bench_optimum.py mm1024 [--designs i-ij.k,ij-ij.k] [--time-limit S] [--json OUT]
    python scripts/bench_optimum.py vgg-conv5-1

Runs one design at a time in this process (single-threaded numpy, as `odyssey optimum`), on
U250 with the accurate model, and prints per design the status, the search seconds (model
build excluded, as `seconds` in `odyssey optimum --json`, and the process's CPU seconds,
steadier than wall time on a loaded machine), the boxes bounded, GOP/s, the peak resident
set of that design (Linux: `VmHWM`, reset before each design) and the tiling. Problems:
* ``mm1024``: ``kernels/mm.c -D I=1024 -D J=1024 -D K=1024`` (18 designs);
* ``vgg-conv5-1``: ``kernels/cnn.c -D O=512 -D I=512 -D H=14 -D W=14 -D P=3 -D Q=3`` (VGG16
  conv5_1, 30 designs).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

PROBLEMS = {
    "mm1024": ("mm.c", {"I": "1024", "J": "1024", "K": "1024"}),
    "vgg-conv5-1": ("cnn.c", {"O": "512", "I": "512", "H": "14", "W": "14", "P": "3", "Q": "3"}),
}


def _reset_peak_rss() -> None:
    """Linux: reset the process's peak resident set (``VmHWM``) so it is read per design."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _peak_rss_mb() -> float:
    """The process's peak resident set in MB since the last reset (``VmHWM``; else
    ``ru_maxrss``, the peak of the whole run)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.platforms import load_platform
    from odyssey.runtime import tune_gc, tune_malloc
    from odyssey.tune.exact.optimum import find_optimum

    tune_gc()  # as the `odyssey` command does
    tune_malloc()

    ap = argparse.ArgumentParser()
    ap.add_argument("problem", choices=sorted(PROBLEMS))
    ap.add_argument("--designs", default="", help="comma-separated design ids (default: all)")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--platform", default="u250")
    ap.add_argument("--json", default="", help="write the per-design records here")
    args = ap.parse_args()
    kernel, defines = PROBLEMS[args.problem]
    ks = analyse(load_scop(str(ROOT / "kernels" / kernel), defines))
    platform = load_platform(args.platform)
    ids = args.designs.split(",") if args.designs else [d.id for d in ks.designs]
    records = []
    print(f"{'design':14s} {'status':10s} {'search s':>8s} {'cpu s':>6s} {'boxes':>9s} {'evaluated':>9s} "
          f"{'GOP/s':>8s} {'peak MB':>7s}  tiling", flush=True)
    for d in ids:
        model = build_model(ks, ks.design(d), platform=platform, variant="accurate")
        _reset_peak_rss()
        t0, c0 = time.perf_counter(), time.process_time()
        r = find_optimum(model, time_limit_s=args.time_limit)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        peak = _peak_rss_mb()
        tiling = ",".join(f"{k}={v}" for k, v in (r.tiling or {}).items())
        print(f"{d:14s} {r.status:10s} {wall:8.1f} {cpu:6.1f} {r.regions_explored:9,d} {r.points_evaluated:9,d} "
              f"{r.throughput_gops:8.1f} {peak:7.0f}  {tiling}", flush=True)
        records.append({"design": d, "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak, **r.to_json()})
        if args.json:
            Path(args.json).write_text(json.dumps(records, indent=1) + "\n")
    print(f"{len(records)} designs, {sum(r['status'] == 'optimal' for r in records)} optimal; wall s: "
          f"total {sum(r['wall_s'] for r in records):.1f}, max {max(r['wall_s'] for r in records):.1f}; "
          f"cpu s: total {sum(r['cpu_s'] for r in records):.1f}, max {max(r['cpu_s'] for r in records):.1f}; "
          f"peak MB max {max(r['peak_rss_mb'] for r in records):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
