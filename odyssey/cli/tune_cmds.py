"""`odyssey tune|optimum`: searching one design's tilings, and proving the best one."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from odyssey.cli._common import (
    BINDING_HELP,
    DEFINE_HELP,
    KERNEL_HELP,
    LUT_MUL_HELP,
    PLATFORM_HELP,
    SEED_HELP,
    WORD_DRAIN_HELP,
    ProgressLine,
    add_clock,
    bindings,
    defines,
    kernel_file,
    lut_percents,
    positive_float,
    positive_int,
    seed,
    share,
    table,
    with_bindings,
    with_lut_variants,
    with_word_drain,
)
from odyssey.cli._engine import add_engine_options, engine_from, tune_designs
from odyssey.cli._output import add_json, add_report, emit_dir, emit_json, emit_report, outputs
from odyssey.errors import OdysseyError
from odyssey.platforms import DEFAULT_PLATFORM


def _tune_record(design: Any, model: Any, tuner: Any, result: Any) -> dict[str, Any]:
    """JSON record of one tuned design; the metrics are None without a feasible point."""
    best = result.best
    res = model.platform.resources

    def usage(used: float, name: str) -> dict[str, float]:
        """``used`` of resource ``name``, as shares of the usable budget and of the device."""
        usable, device = float(model.budget[name]), float(getattr(res, name))
        return {"used": used, "usable": usable, "of_usable": used / usable if usable else 0.0,
                "device": device, "of_device": used / device if device else 0.0}

    point = model.evaluate_one(best.tiling) if best else {}
    mp = getattr(tuner, "mp_result", None)
    mp_record = None
    if mp is not None:
        seed = mp.seeds[0] if mp.seeds else None
        mp_record = {
            "status": mp.status, "solver": mp.solver, "objective": mp.objective_name,
            "value": mp.objective_value, "seed": dict(seed) if seed else None,
            "seed_throughput_gops": (float(model.evaluate_one(seed)["throughput_gops"])
                                     if seed else None),
            "fallback": mp.fallback, "message": mp.message, "seconds": mp.seconds,
            "evaluations": mp.evaluations,
            "surrogates": list(mp.surrogates),
        }
    return {
        "design": design.id, "dataflow": design.dataflow, "ordering": design.ordering,
        "tiling": dict(best.tiling) if best else None,
        "latency_cycles": best.latency_cycles if best else None,
        "throughput_gops": best.throughput_gops if best else None,
        "dsp": usage(best.dsp, "dsp") if best else None,
        **{r: usage(float(point[r]), r) if best else None for r in ("lut", "ff")},
        "bram18k": usage(best.bram18k, "bram18k") if best else None,
        # samples spent: the driver's evaluations and the tuner's own (the MP seed's screening),
        # which come first and count against --samples alike
        "samples": result.samples + result.tuner_evaluations, "tuner_evaluations": result.tuner_evaluations,
        "seconds": result.seconds, "stop_reason": result.stop_reason,
        # the tuner's bound search covered the whole space: no legal tiling is faster
        "proven_optimal": bool(getattr(tuner, "proven_optimal", False)),
        "trace": [{"samples": t.samples + result.tuner_evaluations, "seconds": t.seconds,
                   "throughput_gops": t.throughput_gops} for t in result.trace],
        "mp_seed": mp_record,
    }


def _tune_table(records: list[dict[str, Any]], best_id: str | None) -> str:
    rows = [["", "design", "dataflow", "ordering", "GOP/s", "latency", "DSP/usable",
             "BRAM/usable", "samples", "s", "stop", "tiling"]]
    for r in records:
        if "error" in r:
            rows.append(["", r["design"], "", "", "-", "-", "-", "-", "-", "-", "error", r["error"]])
            continue
        t = r["tiling"]
        rows.append([
            "*" if r["design"] == best_id else "", r["design"], r["dataflow"], r["ordering"],
            f"{r['throughput_gops']:.1f}" if t else "-", f"{r['latency_cycles']:,.0f}" if t else "-",
            f"{r['dsp']['of_usable']:.1%}" if t else "-",
            f"{r['bram18k']['of_usable']:.1%}" if t else "-",
            str(r["samples"]), f"{r['seconds']:.1f}",
            "proven optimal" if r.get("proven_optimal") else r["stop_reason"],
            ",".join(f"{k}={v}" for k, v in t.items()) if t else "no feasible point",
        ])
    return table(rows)


def _cmd_tune(args: argparse.Namespace) -> int:
    import time

    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.platforms import at_clock, load_platform
    from odyssey.tune.base import Progress, run_tuner
    from odyssey.tune.registry import TUNERS, make_tuner

    if args.method not in TUNERS:
        raise OdysseyError(f"--method {args.method}: unknown search method; choose one of "
                           f"{', '.join(TUNERS)}")
    if args.method == "mfbo" or args.fidelity != "model" or args.budget is not None:
        from odyssey.cli._mfbo import run_mfbo_command

        if engine_from(args).distributed:
            raise OdysseyError("--workers and --scheduler apply to the per-design searches, "
                               "not to --method mfbo")

        return run_mfbo_command(args)
    if args.method != "odyssey" and (args.mp_objective is not None or args.mp_solver is not None
                                     or args.no_bound_search):
        raise OdysseyError(f"--mp-objective, --mp-solver and --no-bound-search apply to --method "
                           f"odyssey only, not --method {args.method}")
    options: dict[str, Any] = {}
    if args.method == "odyssey":
        options["mp_objective"] = args.mp_objective or "comm-comp"
        solver = args.mp_solver or "ipopt"
        options["mp_solver"] = None if solver == "none" else solver
        options["bound_search"] = not args.no_bound_search
    time_s = args.time if args.time is not None or args.samples is not None else 5.0
    scop = load_scop(args.kernel, defines(args.define))
    ks = analyse(scop, max_dim=2 if args.design == "all" else 3)
    designs = ks.designs if args.design == "all" else (ks.design(args.design),)
    designs = with_bindings(with_word_drain(with_lut_variants(ks, designs, args.lut_mul), ks, args.word_drain),
                            ks, args.binding)
    platform = at_clock(load_platform(args.platform), args.clock)
    line = ProgressLine()
    records: list[dict[str, Any]] = []
    interrupted = False
    overall = 0.0  # the best throughput of the designs finished so far
    engine = engine_from(args)
    if engine.distributed:  # the designs as tasks on Dask workers (docs/cluster.md)
        records, interrupted = tune_designs(args, designs, platform, options, time_s)
    for n, design in enumerate(() if engine.distributed else designs, 1):

        def report(p: Progress, n: int = n, did: str = design.id, overall: float = overall) -> None:
            left = (f"{p.time_left_s:.1f} s left" if p.time_left_s is not None
                    else f"{p.samples_left} samples left")
            best = max(overall, p.best_throughput_gops)
            line(f"[{n}/{len(designs)}] {did}: best {p.best_throughput_gops:.1f} GOP/s "
                 f"(all designs {best:.1f}), {p.evals_per_s:,.0f} evals/s, {left}")

        started = time.perf_counter()
        try:
            model = build_model(ks, design, platform=platform, variant="accurate")
            tuner = make_tuner(args.method, model, seed=args.seed, **options)
            result = run_tuner(tuner, model, time_s=time_s, samples=args.samples, progress=report)
        except KeyboardInterrupt:
            interrupted = True
            break
        except OdysseyError as exc:
            if len(designs) == 1:
                raise
            records.append({"design": design.id, "error": str(exc),
                            "seconds": time.perf_counter() - started})
            continue
        finally:
            line.clear()
        records.append(_tune_record(design, model, tuner, result))
        if result.best is not None:
            overall = max(overall, result.best.throughput_gops)
        if not line.live and len(designs) > 1:
            line(f"[{n}/{len(designs)}] {design.id}: done in {result.seconds:.1f} s, best "
                 f"{result.best.throughput_gops if result.best else 0.0:.1f} GOP/s "
                 f"(all designs {overall:.1f})", force=True)
        if result.stop_reason == "interrupted":
            interrupted = True
            break
    tuned = [r for r in records if r.get("tiling")]
    best = max(tuned, key=lambda r: r["throughput_gops"], default=None)
    best_id: str | None = best["design"] if best else None
    if records:
        print(_tune_table(records, best_id))
    if best is not None:
        print(f"best: design {best_id} at {best['throughput_gops']:.1f} GOP/s "
              f"({best['latency_cycles']:,.0f} cycles at {platform.clock_mhz:g} MHz)")
        print(f"DSP/usable, BRAM/usable: shares of the usable budget ({_usable_note(platform)})")
    else:
        print("no feasible design point found")
    if interrupted:
        print(f"odyssey: interrupted; results of {len(records)} of {len(designs)} designs",
              file=sys.stderr)
    doc = {"kernel": str(args.kernel), "platform": platform.name, "method": args.method, "seed": args.seed,
           "time_s": time_s, "samples": args.samples, "interrupted": interrupted, "best": best_id,
           "designs": records}
    emit_json(args.json, doc)
    if records:
        emit_report(args.report, doc)
    if args.emit and best is not None:
        from odyssey.codegen.generate import generate
        from odyssey.codegen.writer import write_design

        gen = generate(ks, ks.design(best["design"]), best["tiling"], seed=args.seed,
                       command=["odyssey", *sys.argv[1:]], platform=args.platform)
        out = emit_dir(args.emit, lambda path: write_design(gen, path), "--emit")
        print(f"wrote {out}/ for design {best_id}")
    if interrupted:
        return 130
    return 0 if best is not None else 2


def _usable_note(platform: Any) -> str:
    """``"DSP 70%, BRAM18K 70% of the device (platform u250)"``."""
    f = platform.usable_fraction
    return (f"DSP {f.dsp:.0%}, BRAM18K {f.bram18k:.0%} of the device, platform "
            f"{platform.name}")


def _cmd_optimum(args: argparse.Namespace) -> int:
    if args.design == "all":
        from odyssey.cli._optimum_all import run_optimum_all

        return run_optimum_all(args)
    if engine_from(args).distributed:
        raise OdysseyError("--workers and --scheduler apply to --design all")
    if args.word_drain:
        raise OdysseyError("--word-drain applies to --design all (one optimum per variant); for one "
                           "design write ID+wd")
    if args.binding and len(args.binding) > 1:
        raise OdysseyError("--binding with several bindings applies to --design all (one optimum per "
                           "variant); for one design give one, or write ID+bram or ID+uram")
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.platforms import at_clock, load_platform
    from odyssey.tune.exact.optimum import OptimumProgress, find_optimum

    ks = analyse(load_scop(args.kernel, defines(args.define)), max_dim=3)
    if args.lut_mul and len(args.lut_mul) > 1:
        raise OdysseyError("--lut-mul with several percents applies to --design all (one optimum per "
                           "variant); for one design give one percent, or write ID+lutP")
    design = with_bindings(with_lut_variants(ks, (ks.design(args.design),), args.lut_mul), ks, args.binding)[0]
    platform = at_clock(load_platform(args.platform), args.clock)
    model = build_model(ks, design, platform=platform, variant="accurate")
    line = ProgressLine()

    def report(p: OptimumProgress) -> None:
        best = "none yet" if not math.isfinite(p.best_latency) else f"{p.best_latency:,.0f} cycles"
        gap = (f", gap {100 * (p.best_latency - p.lower_bound) / p.best_latency:.2f}%"
               if math.isfinite(p.best_latency) and p.lower_bound > 0 else "")
        line(f"{design.id}: {p.phase}, {p.seconds:.0f} s, best {best}{gap}, {p.points:,} tilings, "
             f"{p.regions:,} regions")

    try:
        r = find_optimum(model, time_limit_s=args.time, seed=args.seed, interruptible=True,
                         progress=report)
    finally:
        line.clear()
    print(f"design {design.id} ({design.dataflow} {design.ordering}) on {platform.name}, "
          f"{model.variant} model: {r.status.replace('_', ' ')}")
    if r.tiling is None:
        print("no legal tiling fits the budget" if r.status == "infeasible" else "no feasible tiling found")
    else:
        print(f"tiling: {', '.join(f'{k}={v}' for k, v in r.tiling.items())}")
        print(f"latency: {r.latency_cycles:,.0f} cycles = "
              f"{r.latency_cycles / (platform.clock_mhz * 1e3):.3f} ms; throughput {r.throughput_gops:.1f} GOP/s")
        for res, used in (("dsp", r.dsp), ("lut", r.lut), ("ff", r.ff), ("bram18k", r.bram18k),
                          ("uram", r.uram)):
            cap = model.budget[res]
            print(f"{res:8s} {used:10,.0f}: {share(used, cap, 'usable')} ({cap:,.0f}), "
                  f"{share(used, getattr(platform.resources, res), 'device')}")
    if r.status in ("time_limit", "interrupted"):
        print(f"no tiling is faster than {r.lower_bound_cycles:,.0f} cycles (gap {100 * r.gap:.2f}%)")
    print(f"search: {r.seconds:.1f} s, {r.points_evaluated:,} tilings evaluated, "
          f"{r.regions_explored:,} regions bounded ({r.regions_pruned_bound:,} pruned by the latency "
          f"bound, {r.regions_pruned_resources:,} by resources, {r.regions_empty:,} empty, "
          f"{r.regions_enumerated:,} enumerated)")
    print(f"proof: {r.proof}")
    doc = {"kernel": str(args.kernel), "platform": platform.name, "variant": model.variant,
           "dataflow": design.dataflow, "ordering": design.ordering, **r.to_json()}
    emit_json(args.json, doc)
    emit_report(args.report, doc)
    if r.status == "interrupted":
        print("odyssey: interrupted; the best tiling so far and the gap proven so far are above",
              file=sys.stderr)
        return 130
    return 2 if r.status == "infeasible" else 0


class _Renamed(argparse.Action):
    """An option's former spelling: stores its value and says the new name."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"odyssey: note: {option_string} is now --time", file=sys.stderr)
        setattr(namespace, self.dest, values)


def register(sub: Any) -> None:
    """Add this module's subcommands to the `odyssey` parser."""
    t = sub.add_parser("tune", help="search the tiling of one or every design with the performance model")
    t.add_argument("kernel", type=kernel_file, help=KERNEL_HELP)
    t.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE",
                   help=DEFINE_HELP)
    t.add_argument("--platform", default=DEFAULT_PLATFORM, help=PLATFORM_HELP)
    add_clock(t)
    t.add_argument("--design", default="all", help="design id or index, or `all` (default); ID@LOOP puts "
                   "the design's SIMD lanes along reduction loop LOOP; ID+lutP, ID+wd as for "
                   "`generate`")
    t.add_argument("--lut-mul", type=lut_percents, metavar="P,P,...", help=LUT_MUL_HELP)
    t.add_argument("--word-drain", action="store_true", help=WORD_DRAIN_HELP)
    t.add_argument("--binding", type=bindings, metavar="B,B,...", help=BINDING_HELP)
    t.add_argument("--time", type=positive_float, metavar="SECONDS",
                   help="search time per design (default 5 when --samples is not given)")
    t.add_argument("--samples", type=positive_int, metavar="N",
                   help="evaluations per design (with --time, whichever ends first)")
    t.add_argument("--seed", type=seed, default=0, help=SEED_HELP)
    t.add_argument("--method", default="odyssey", metavar="NAME",
                   help="search method, a name of odyssey.tune.TUNERS (default odyssey: MP seed + "
                        "evolutionary search + bound-guided search); an unknown name lists them")
    t.add_argument("--mp-objective", choices=("comm-comp", "comp", "comm", "latency"),
                   help="objective of the MP seed (default comm-comp)")
    t.add_argument("--mp-solver", choices=("ipopt", "scip", "none"),
                   help="solver of the MP seed, or none for no seed (default ipopt)")
    t.add_argument("--no-bound-search", action="store_true",
                   help="without the bound-guided search beside the evolutionary one (docs/tuners.md)")
    add_json(t, "every design's result and the best one")
    add_report(t, "the search (every design's best, resources, convergence)")
    t.add_argument("--emit", metavar="DIR",
                   help="generate the HLS design of the best point into DIR (created; replaced "
                        "only if it holds an earlier odyssey design)")
    add_engine_options(t, "designs' searches")
    t.add_argument("--fidelity", choices=("model", "sim", "hls"), default="model",
                   help="with --method mfbo: what confirms the model's best designs, the timed "
                        "simulation (sim), the Vitis HLS synthesis report (hls: needs "
                        "vitis_hls) or the accurate model above the max variant (model, "
                        "default); docs/mfbo.md")
    t.add_argument("--budget", type=positive_int, metavar="N",
                   help="with --method mfbo: expensive evaluations (default 20)")
    t.set_defaults(func=_cmd_tune, outputs=outputs(("json", "file"), ("emit", "design"), ("report", "report")))

    o = sub.add_parser("optimum", help="the provably best tiling of one design under the accurate model")
    o.add_argument("kernel", type=kernel_file, help=KERNEL_HELP)
    o.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE",
                   help=DEFINE_HELP)
    o.add_argument("--design", required=True,
                   help="design id or index from `odyssey designs`, or `all`: every design of "
                        "the paper's space (arrays of at most two dimensions)")
    o.add_argument("--platform", default=DEFAULT_PLATFORM, help=PLATFORM_HELP)
    o.add_argument("--lut-mul", type=lut_percents, metavar="P,P,...", help=LUT_MUL_HELP)
    o.add_argument("--word-drain", action="store_true", help=WORD_DRAIN_HELP + "; with --design all")
    o.add_argument("--binding", type=bindings, metavar="B,B,...", help=BINDING_HELP)
    add_clock(o)
    o.add_argument("--time", type=positive_float, metavar="SECONDS",
                   help="stop after SECONDS with the best tiling found and the remaining gap "
                        "(default: no limit, run until proven)")
    # the old spelling, kept working but no longer listed
    o.add_argument("--time-limit", dest="time", type=positive_float, action=_Renamed,
                   help=argparse.SUPPRESS)
    o.add_argument("--seed", type=seed, default=0,
                   help="seed of the incumbent's random start, a non-negative integer (default 0)")
    add_json(o, "the result (tiling, bounds, proof)")
    add_report(o, "the search (every design's optimum, resources, proof status)")
    add_engine_options(o, "designs' proofs (with --design all)")
    o.set_defaults(func=_cmd_optimum, outputs=outputs(("json", "file"), ("report", "report")))
