"""`odyssey optimum --design all`: the proven optimum of every design of the paper's space
(arrays of at most two dimensions), one task per design on the engine of ``--workers`` /
``--scheduler`` (docs/cluster.md)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

from odyssey.cli._common import defines, table, with_bindings, with_lut_variants, with_word_drain
from odyssey.cli._engine import TaskProgress, engine_from
from odyssey.cli._output import emit_json, emit_report
from odyssey.errors import OdysseyError

#: largest array dimension of `--design all` (as `odyssey tune --design all`)
ALL_MAX_DIM = 2


def optimum_task(src: Any, design_id: str, platform: Any, time_limit_s: float | None,
                 seed: int) -> dict[str, Any]:
    """One design's optimum on a worker: the model rebuilt from the kernel source,
    :func:`find_optimum` on it; its JSON record (an OdysseyError becomes ``error``)."""
    from odyssey.tune.exact.optimum import find_optimum
    from odyssey.tune.tasks import design_model, kernel_space

    design = kernel_space(src).design(design_id)
    head = {"design": design_id, "dataflow": design.dataflow, "ordering": design.ordering}
    started = time.perf_counter()
    try:
        model = design_model(src, design_id, platform)
        r = find_optimum(model, time_limit_s=time_limit_s, seed=seed)
    except OdysseyError as exc:
        return {**head, "error": str(exc), "seconds": time.perf_counter() - started}
    res = model.platform.resources
    return {**head, **r.to_json(), "platform_dsp": res.dsp, "platform_bram18k": res.bram18k}


def _row(r: dict[str, Any], best: str | None) -> list[str]:
    mark = "*" if r["design"] == best else ""
    if "error" in r:
        return [mark, r["design"], r["dataflow"], r["ordering"], "error", "-", "-", "-", "-",
                f"{r['seconds']:.1f}", r["error"]]
    t = r["tiling"]
    gap = "" if r["status"] != "time_limit" or r["gap"] is None else f" (gap {100 * r['gap']:.2f}%)"
    return [mark, r["design"], r["dataflow"], r["ordering"], r["status"].replace("_", " ") + gap,
            f"{r['throughput_gops']:.1f}" if t else "-",
            f"{r['latency_cycles']:,.0f}" if t else "-",
            f"{r['dsp'] / max(r['platform_dsp'], 1):.0%}" if t else "-",
            f"{r['bram18k'] / max(r['platform_bram18k'], 1):.0%}" if t else "-",
            f"{r['seconds']:.1f}",
            ",".join(f"{k}={v}" for k, v in t.items()) if t else "no tiling"]


def run_optimum_all(args: argparse.Namespace) -> int:
    """`odyssey optimum KERNEL --design all`: print one row per design and the best; write
    the records to ``--json``; 130 when interrupted, 1 when no design has a tiling."""
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.platforms import load_platform
    from odyssey.tune.engine import Task, run_tasks
    from odyssey.tune.tasks import KernelSource

    defs = defines(args.define)
    ks = analyse(load_scop(args.kernel, defs), max_dim=ALL_MAX_DIM)
    designs = with_bindings(with_word_drain(with_lut_variants(ks, ks.designs, args.lut_mul), ks, args.word_drain),
                            ks, args.binding)
    platform = load_platform(args.platform)
    src = KernelSource.read(args.kernel, defs, max_dim=ALL_MAX_DIM)
    engine = engine_from(args)
    tasks = [Task(d.id, optimum_task, (src, d.id, platform, args.time, args.seed))
             for d in designs]
    report = TaskProgress(engine, len(tasks), lambda r: r.get("throughput_gops") if r.get("tiling")
                          else None, "design")
    run = run_tasks(tasks, engine, on_done=report.done, on_notice=report.notice)
    report.close(run)
    records = [run.results[t.key] for t in tasks if t.key in run.results]
    with_tiling = [r for r in records if r.get("tiling")]
    best = max(with_tiling, key=lambda r: r["throughput_gops"], default=None)
    best_id = best["design"] if best else None
    if records:
        print(table([["", "design", "dataflow", "ordering", "status", "GOP/s", "latency", "DSP",
                      "BRAM", "s", "tiling"], *(_row(r, best_id) for r in records)]))
    proven = sum(r.get("status") == "optimal" for r in records)
    print(f"{proven} of {len(designs)} designs proven optimal on {platform.name} "
          f"(accurate model{f', {args.time:g} s limit each' if args.time else ''})")
    if best is not None:
        sure = "proven optimal" if best["status"] == "optimal" else "not proven"
        print(f"best: design {best_id} at {best['throughput_gops']:.1f} GOP/s "
              f"({best['latency_cycles']:,.0f} cycles at {platform.clock_mhz:g} MHz; {sure})")
        unproven = [r for r in records if r.get("status") == "time_limit"
                    and r.get("lower_bound_cycles") is not None
                    and r["lower_bound_cycles"] < best["latency_cycles"]]
        if best["status"] == "optimal" and unproven:
            print(f"note: {len(unproven)} unproven design(s) may still beat it: "
                  f"{', '.join(r['design'] for r in unproven)}")
    if run.interrupted:
        print(f"odyssey: interrupted; results of {len(records)} of {len(designs)} designs",
              file=sys.stderr)
    doc = {"kernel": str(args.kernel), "platform": platform.name, "variant": "accurate",
           "time_limit_s": args.time, "seed": args.seed, "interrupted": run.interrupted,
           "best": best_id, "designs": [_clean(r) for r in records]}
    emit_json(args.json, doc)
    if records:
        emit_report(args.report, doc)
    if run.interrupted:
        return 130
    return 0 if best is not None else 2


def _clean(r: dict[str, Any]) -> dict[str, Any]:
    """The record without non-finite numbers (JSON has none)."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
