"""The engine's speed-up: `odyssey network` in this process (--workers 1) and on a local Dask
cluster (--workers 2, ...), with the same seed, and whether the results are identical.

Usage: python scripts/bench_engine.py [--network vgg16] [--shapes K] [--samples 5000]
       [--workers 1,2] [--seed 0] [--out docs/results/engine.json]

Runs :func:`odyssey.network.network_tuning.tune_network` on the network's first ``--shapes``
distinct layer shapes (all of them by default: the README's
`odyssey network vgg16 --kernel kernels/cnn.c --design all --samples 5000`), every design of
kernels/cnn.c (30), ``--samples`` evaluations per (shape, design), once per entry of
``--workers`` (1: the serial path, no Dask; N > 1: a LocalCluster of N single-threaded
processes, its start-up included in the time). Prints and writes, per run: wall seconds, the
CPU seconds of the designs' searches summed (what the workers did), the speed-up over the first
run, the load average of the machine before and after (a shared machine's speed-ups are only
as good as its idle cores), what N idle cores would give by the first run's task times (each
task to the worker free first; start-up and transfers left out: an estimate, not a
measurement), and whether every (shape, design) result -- best tiling, latency, samples,
stop reason -- equals the first run's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _signature(result: Any) -> list[Any]:
    """What must not depend on where the tasks ran: every design's outcome on every shape
    (the time it took aside), and each shape's best."""
    return [(s.index, s.design, s.tiling, s.latency_cycles,
             [(d.design, d.throughput_gops, d.latency_cycles, d.samples, d.stop_reason, d.error)
              for d in s.designs]) for s in result.shapes]


def _ideal(task_s: list[float], workers: int) -> float:
    """Speed-up of ``workers`` idle single-core workers over one, from one worker's task
    times: each task, in submission order, to the worker free first (Dask's FIFO with
    one task per thread); the cluster's start-up and the transfers are left out."""
    free = [0.0] * workers
    for t in task_s:
        k = free.index(min(free))
        free[k] += t
    return sum(task_s) / max(free) if task_s else 1.0


def main() -> None:
    from odyssey.network.network_tuning import tune_network
    from odyssey.network.networks import load_network, unique_shapes
    from odyssey.platforms import load_platform
    from odyssey.tune.engine import Engine

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", default="vgg16")
    ap.add_argument("--shapes", type=int, help="the first K distinct shapes (default: all)")
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    network = load_network(args.network)
    groups = unique_shapes(network)
    if args.shapes is not None:
        keep = {g.first.shape_key for g in groups[:args.shapes]}
        network = dataclasses.replace(
            network, layers=tuple(x for x in network.layers if x.shape_key in keep))
    n_shapes = len(unique_shapes(network))
    platform = load_platform("u250")
    runs: list[dict[str, Any]] = []
    first: list[Any] | None = None
    for workers in (int(w) for w in args.workers.split(",")):
        load0 = os.getloadavg()[0]
        start = time.perf_counter()
        result = tune_network(network, kernel=ROOT / "kernels" / "cnn.c", platform=platform,
                              design="all", samples=args.samples, seed=args.seed,
                              engine=Engine(workers=workers))
        wall = time.perf_counter() - start
        sig = _signature(result)
        first = sig if first is None else first
        run = {"workers": workers, "wall_s": wall,
               "search_s": sum(d.seconds for s in result.shapes for d in s.designs),
               "tasks": sum(len(s.designs) for s in result.shapes),
               "throughput_gops": result.throughput_gops, "latency_cycles": result.latency_cycles,
               "identical_to_first": sig == first, "load_before": load0,
               "load_after": os.getloadavg()[0]}
        run["speedup"] = runs[0]["wall_s"] / wall if runs else 1.0
        if runs:  # what N idle cores would give: the first run's task times, list-scheduled
            run["ideal_speedup"] = _ideal(runs[0]["task_s"], workers)
        run["task_s"] = [d.seconds for s in result.shapes for d in s.designs]
        runs.append(run)
        print(f"workers {workers}: {wall:.1f} s wall, {run['search_s']:.1f} s of searches, "
              f"speed-up {run['speedup']:.2f}x, {run['tasks']} tasks, network "
              f"{result.throughput_gops:.1f} GOP/s, identical to the first run: "
              f"{run['identical_to_first']}, load {load0:.1f} -> {run['load_after']:.1f}"
              + (f"; on idle cores about {run['ideal_speedup']:.2f}x" if "ideal_speedup" in run
                 else ""), flush=True)
    doc = {"command": f"odyssey network {args.network} --kernel kernels/cnn.c --design all "
                      f"--samples {args.samples} --seed {args.seed}",
           "shapes": n_shapes, "all_shapes": len(groups), "cpus": os.cpu_count(), "runs": runs}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":  # the LocalCluster's worker processes import this file again
    main()
