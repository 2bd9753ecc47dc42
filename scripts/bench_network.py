"""Time and quality of `odyssey network`: CPU and wall seconds, GOP/s overall and per layer.

Usage: python scripts/bench_network.py [--network vgg16] [--shapes K] [--samples 5000]
       [--schedule screen] [--workers 1] [--seed 0] [--reference FILE] [--out FILE] [--command]

Runs :func:`odyssey.network.network_tuning.tune_network` on the network (its first
``--shapes`` distinct layer shapes, all by default: the README's
`odyssey network vgg16 --design all --samples 5000`), every design of kernels/cnn.c (30),
once per entry of ``--workers`` (1: this process; N > 1: a LocalCluster of N processes, its
start-up included). Prints and writes, per run:

* wall seconds, and CPU seconds: this process's (user + system, ``os.times``) plus, for a
  distributed run, the searches' own time summed over the tasks (the workers' CPU is not
  this process's; with one task per single-threaded worker their search seconds are CPU
  seconds on an idle machine, wall seconds on a loaded one);
* the network's GOP/s and each layer's, and the load average before and after (a shared
  machine's wall times are only as good as its idle cores);
* with ``--reference`` (the ``--json`` record of an earlier `odyssey network` run, or a JSON
  object ``{"layers": {name: GOP/s}}``): each layer's GOP/s over the reference's and the
  network's, over the reference's totals (its latency summed over the same layers);
* whether every run's results equal the first run's (designs, tilings, latencies, samples);
* each later run's speed-up over the first, and what that many idle cores would give by the
  first run's task times (list scheduling, an estimate).

``--command`` times the `odyssey network` command itself instead, as a user runs it: a new
process per run (its imports, the cluster's start and close, the printing included), its
wall time and CPU (its own and its workers'), its ``--json`` record compared with the first
run's (every field but the times). No ``--shapes``, ``--reference`` or per-task figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _signature(result: Any) -> list[Any]:
    """What must not depend on where the tasks ran (times aside)."""
    return [(s.index, s.design, s.tiling, s.latency_cycles,
             [(d.design, d.throughput_gops, d.latency_cycles, d.samples, d.stop_reason, d.error,
               d.phase, d.screen_gops) for d in s.designs]) for s in result.shapes]


def _ideal(task_s: list[float], workers: int) -> float:
    """Speed-up of ``workers`` idle single-core workers over one, from one worker's task
    times: each task, in submission order, to the worker free first (Dask's FIFO with
    one task per thread); the cluster's start-up, the transfers and the wait of a search
    phase for its shape's screening are left out."""
    free = [0.0] * workers
    for t in task_s:
        k = free.index(min(free))
        free[k] += t
    return sum(task_s) / max(free) if task_s else 1.0


def _reference(path: Path) -> dict[str, float]:
    """Layer name -> GOP/s of a reference run."""
    doc = json.loads(path.read_text())
    if isinstance(doc.get("layers"), dict):
        return {k: float(v) for k, v in doc["layers"].items()}
    return {x["name"]: float(x["throughput_gops"]) for x in doc["layers"]
            if x.get("throughput_gops") is not None}


def _untimed(record: dict[str, Any]) -> dict[str, Any]:
    """An `odyssey network --json` record without what depends on the run's timing."""
    out = {k: v for k, v in record.items() if k != "seconds"}
    out["shapes"] = [{**{k: v for k, v in s.items() if k != "seconds"},
                      "designs": [{k: v for k, v in d.items() if k != "seconds"}
                                  for d in s["designs"]]} for s in record["shapes"]]
    return out


def _write(doc: dict[str, Any], out: Path | None) -> None:
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {out}")


def _time_command(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Run the `odyssey network` command once per ``--workers`` entry (see the module)."""
    runs: list[dict[str, Any]] = []
    first: dict[str, Any] | None = None
    for workers in (int(w) for w in args.workers.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run.json"
            argv = [sys.executable, "-m", "odyssey.cli", "network", args.network, "--design",
                    "all", "--samples", str(args.samples), "--schedule", args.schedule,
                    "--seed", str(args.seed), "--kernel", str(ROOT / "kernels" / "cnn.c"),
                    "--workers", str(workers), "--json", str(out)]
            load0 = os.getloadavg()[0]
            t0 = os.times()
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall = time.perf_counter() - start
            t1 = os.times()
            record = json.loads(out.read_text())
        sig = _untimed(record)
        first = sig if first is None else first
        cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
        run = {"workers": workers, "wall_s": wall, "cpu_s": cpu,
               "throughput_gops": record["totals"]["throughput_gops"],
               "identical_to_first": sig == first, "load_before": load0,
               "load_after": os.getloadavg()[0],
               "speedup": runs[0]["wall_s"] / wall if runs else 1.0}
        runs.append(run)
        print(f"odyssey network --workers {workers}: {wall:.1f} s wall (speed-up "
              f"{run['speedup']:.2f}x), {cpu:.1f} s CPU, network {run['throughput_gops']:.1f} "
              f"GOP/s, identical to the first run: {run['identical_to_first']}, "
              f"load {load0:.1f} -> {run['load_after']:.1f}", flush=True)
    return runs


def main() -> None:
    from odyssey.network.network_tuning import tune_network
    from odyssey.network.networks import load_network, unique_shapes
    from odyssey.platforms import load_platform
    from odyssey.runtime import tune_gc
    from odyssey.tune.engine import Engine

    tune_gc()  # as the `odyssey` command does

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", default="vgg16")
    ap.add_argument("--shapes", type=int, help="the first K distinct shapes (default: all)")
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--schedule", default="screen", choices=("screen", "full"))
    ap.add_argument("--workers", default="1")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reference", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--command", action="store_true",
                    help="time the `odyssey network` command in a new process per run")
    args = ap.parse_args()
    if args.command:
        if args.shapes is not None or args.reference is not None:
            ap.error("--command runs the whole network, without --shapes or --reference")
        doc = {"command": f"odyssey network {args.network} --design all --samples "
                          f"{args.samples} --schedule {args.schedule} --seed {args.seed} "
                          "--kernel kernels/cnn.c --workers N --json FILE",
               "cpus": os.cpu_count(), "runs": _time_command(args)}
        _write(doc, args.out)
        return
    network = load_network(args.network)
    groups = unique_shapes(network)
    if args.shapes is not None:
        keep = {g.first.shape_key for g in groups[:args.shapes]}
        network = dataclasses.replace(
            network, layers=tuple(x for x in network.layers if x.shape_key in keep))
    platform = load_platform("u250")
    ref = _reference(args.reference) if args.reference else None
    runs: list[dict[str, Any]] = []
    first: list[Any] | None = None
    for workers in (int(w) for w in args.workers.split(",")):
        load0 = os.getloadavg()[0]
        t0 = os.times()
        start = time.perf_counter()
        result = tune_network(network, kernel=ROOT / "kernels" / "cnn.c", platform=platform,
                              design="all", samples=args.samples, seed=args.seed,
                              engine=Engine(workers=workers), schedule=args.schedule)
        wall = time.perf_counter() - start
        t1 = os.times()
        here = (t1.user - t0.user) + (t1.system - t0.system)
        search = sum(d.seconds for s in result.shapes for d in s.designs)
        sig = _signature(result)
        first = sig if first is None else first
        layers = {r.layer.name: r.shape.throughput_gops for r in result.layers
                  if r.tuned and r.shape is not None}
        run: dict[str, Any] = {
            "workers": workers, "wall_s": wall,
            "cpu_s": here if workers == 1 else here + search,
            "cpu_s_here": here, "search_s": search,
            "tasks": sum(len(s.designs) for s in result.shapes),
            "searched": sum(1 for s in result.shapes for d in s.designs
                            if d.phase in ("full", "screen+search")),
            "throughput_gops": result.throughput_gops, "latency_cycles": result.latency_cycles,
            "layers": layers, "identical_to_first": sig == first, "load_before": load0,
            "load_after": os.getloadavg()[0]}
        if ref is not None:
            common = [r for r in result.layers if r.layer.name in ref and r.tuned]
            ref_lat = sum(r.layer.ops / (ref[r.layer.name] * 1e9) for r in common)
            ops = sum(r.layer.ops for r in common)
            run["reference_gops"] = ops / ref_lat / 1e9 if ref_lat > 0 else None
            run["vs_reference"] = result.throughput_gops / run["reference_gops"] \
                if run["reference_gops"] else None
            run["layer_vs_reference"] = {k: v / ref[k] for k, v in layers.items() if k in ref and v is not None}
        run["speedup"] = runs[0]["wall_s"] / wall if runs else 1.0
        if runs:  # what N idle cores would give: the first run's task times, list-scheduled
            run["ideal_speedup"] = _ideal(runs[0]["task_s"], workers)
        run["task_s"] = [d.seconds for s in result.shapes for d in s.designs]
        runs.append(run)
        print(f"workers {workers}: {wall:.1f} s wall (speed-up {run['speedup']:.2f}x"
              + (f"; on idle cores about {run['ideal_speedup']:.2f}x" if "ideal_speedup" in run
                 else "") + f"), {run['cpu_s']:.1f} s CPU "
              f"({here:.1f} s here, {search:.1f} s of searches), {run['tasks']} designs x shapes "
              f"({run['searched']} searched in full), network {result.throughput_gops:.1f} GOP/s"
              + (f" = {run['vs_reference']:.4f}x the reference {run['reference_gops']:.1f}"
                 if run.get("vs_reference") else "")
              + f", identical to the first run: {run['identical_to_first']}, "
              f"load {load0:.1f} -> {run['load_after']:.1f}", flush=True)
        for name, gops in layers.items():
            vs = run.get("layer_vs_reference", {}).get(name)
            print(f"  {name}: {gops:.1f} GOP/s" + (f" ({vs:.4f}x)" if vs is not None else ""))
    doc = {"command": f"odyssey network {args.network} --design all --samples {args.samples} "
                      f"--schedule {args.schedule} --seed {args.seed}",
           "shapes": len(unique_shapes(network)), "all_shapes": len(groups),
           "cpus": os.cpu_count(), "reference": str(args.reference) if args.reference else None,
           "runs": runs}
    _write(doc, args.out)


if __name__ == "__main__":  # the LocalCluster's worker processes import this file again
    main()
