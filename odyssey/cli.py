"""The `odyssey` command line: the only module that prints, logs or exits."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from odyssey.errors import OdysseyError


def _defines(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise OdysseyError(f"-D {item}: expected NAME=VALUE, e.g. -D I=1024")
        out[name] = value
    return out


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cmd_designs(args: argparse.Namespace) -> int:
    from odyssey.frontend import load_scop
    from odyssey.mapping.report import design_record, design_table
    from odyssey.mapping.space import analyse

    scop = load_scop(args.kernel, _defines(args.define))
    ks = analyse(scop, max_dim=args.max_dim)
    if args.json:
        print(json.dumps([design_record(d) for d in ks.designs], indent=1))
        return 0
    main = scop.statement(ks.statement)
    print(f"{args.kernel}: {main.text}")
    print("sizes: " + ", ".join(f"{n}={v}" for n, v in scop.params))
    for lg in ks.legality:
        print(f"  loop {lg.loop}: {'space loop candidate' if lg.space_ok else 'time only'} ({lg.reason})")
    dataflows = sorted({d.dataflow for d in ks.designs}, key=lambda s: (s.count(","), s))
    print(f"{len(dataflows)} dataflows x {len(ks.orderings)} orderings = {len(ks.designs)} designs")
    print(_table(design_table(ks)))
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from odyssey.codegen.generate import generate
    from odyssey.codegen.tiling import parse_tiling_text
    from odyssey.codegen.writer import write_design
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse

    scop = load_scop(args.kernel, _defines(args.define))
    ks = analyse(scop, max_dim=3)
    design = ks.design(args.design)
    values = parse_tiling_text(args.tiling)
    gen = generate(ks, design, values, seed=args.seed, command=["odyssey", *sys.argv[1:]])
    out = write_design(gen, Path(args.out))
    t = gen.tiling
    dims = " x ".join(str(g.outer) for g in t.space)
    print(f"wrote {out}/ (kernel.cpp, kernel.h, host.cpp, hls.tcl, Makefile, descriptor.json)")
    print(f"design {design.id}: dataflow {design.dataflow}, ordering {design.ordering}; "
          f"array {dims} = {t.num_pes} PEs; tiling {t.describe()}")
    padded = [g.name for g in t.loops if g.is_padded]
    if padded:
        print("zero-padded loops: " + ", ".join(f"{g.name} {g.extent}->{g.padded}" for g in t.loops if g.is_padded))
    if gen.model_only:
        print(f"model only: {gen.model_only}")
    return 0


def _model_only(d: Path) -> str | None:
    """Why the design in ``d`` cannot be simulated (None when it can); checks it is a design."""
    desc_path = d / "descriptor.json"
    if not desc_path.is_file():
        raise OdysseyError(f"{d}: not a design directory (no descriptor.json); create one with `odyssey generate`")
    desc = json.loads(desc_path.read_text())
    reason = desc.get("design", {}).get("model_only")
    return f"design {desc['design']['id']} is model-only ({reason})" if reason else None


def _cmd_csim(args: argparse.Namespace) -> int:
    from odyssey.codegen.csim import run_csim

    d = Path(args.dir)
    reason = _model_only(d)
    if reason:
        print(f"{d}: {reason}; nothing to simulate")
        return 3
    res = run_csim(d, timeout_s=args.timeout)
    print(f"{d}: {res.status}: {res.message} (compile {res.compile_seconds:.1f} s, run {res.run_seconds:.2f} s)")
    if not res.passed and res.status in ("compile_error", "runtime_error", "deadlock", "mismatch"):
        tail = (res.stderr or res.stdout).strip().splitlines()[-20:]
        for line in tail:
            print("  " + line)
    return 0 if res.passed else 1


def _cmd_sim(args: argparse.Namespace) -> int:
    from odyssey.codegen.timedsim import run_timed_sim

    d = Path(args.dir)
    reason = _model_only(d)
    if reason:
        print(f"{d}: {reason}; nothing to simulate")
        return 3
    if args.timeout <= 0:
        raise OdysseyError(f"--timeout {args.timeout}: must be a positive number of seconds")
    res = run_timed_sim(d, timeout_s=args.timeout)
    record: dict[str, object] = {
        "design_dir": str(d),
        "status": res.status,
        "message": res.message,
        "simulated_cycles": res.cycles,
        "modules": [{"name": n, "end_cycles": e, "stall_cycles": s} for n, e, s in res.modules],
        "compile_seconds": round(res.compile_seconds, 3),
        "run_seconds": round(res.run_seconds, 3),
    }
    if args.compare and res.cycles:
        from odyssey.model import model_from_descriptor
        from odyssey.platforms import load_platform

        desc = json.loads((d / "descriptor.json").read_text())
        model = model_from_descriptor(desc, load_platform(args.platform))
        pred = model.evaluate_one(desc["tiling"])
        record["model_cycles"] = float(pred["latency_cycles"])
        record["error_percent"] = 100.0 * (float(pred["latency_cycles"]) - res.cycles) / res.cycles
        ends: dict[str, int] = {}
        for n, e, _ in res.modules:
            kind = n.split("<")[0]
            ends[kind] = max(ends.get(kind, 0), e)
        record["module_model_cycles"] = {k[len("module:"):]: float(v) for k, v in pred.items()
                                         if k.startswith("module:")}
        record["module_sim_end_cycles"] = ends
    if args.json:
        print(json.dumps(record, indent=1))
        return 0 if res.passed else 1
    cycles = "unknown" if res.cycles is None else f"{res.cycles}"
    print(f"{d}: {res.status}: {res.message} (compile {res.compile_seconds:.1f} s, run {res.run_seconds:.2f} s)")
    print(f"simulated latency: {cycles} cycles")
    if "model_cycles" in record:
        print(f"model latency:     {record['model_cycles']:.0f} cycles (error {record['error_percent']:+.2f}%)")
    if res.modules:
        rows = [["module", "end cycle", "stall cycles"]]
        rows += [[n, str(e), str(s)] for n, e, s in res.modules]
        print(_table(rows))
    if not res.passed and res.status != "timeout":
        for line in (res.stderr or res.stdout).strip().splitlines()[-20:]:
            print("  " + line)
    return 0 if res.passed else 1


def _cmd_model(args: argparse.Namespace) -> int:
    from odyssey.codegen.tiling import make_tiling, parse_tiling_text
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.model.report import model_record
    from odyssey.platforms import load_platform

    ks = analyse(load_scop(args.kernel, _defines(args.define)))
    design = ks.design(args.design)
    tiling = make_tiling(design, parse_tiling_text(args.tiling)).as_dict
    model = build_model(ks, design, platform=load_platform(args.platform), variant=args.variant)
    rec = model_record(model, tiling)
    if args.json:
        print(json.dumps(rec, indent=1))
        return 0
    b = rec["budget"]
    print(f"design {design.id} ({design.dataflow} {design.ordering}) on {rec['platform']}, {args.variant} model")
    print(f"tiling: {', '.join(f'{k}={v}' for k, v in tiling.items())}")
    print(f"latency: {rec['latency_cycles']:,.0f} cycles = {rec['latency_seconds'] * 1e3:.3f} ms; "
          f"throughput {rec['throughput_gops']:.1f} GOP/s; PE II {rec['pe_ii']:.0f}; "
          f"padding x{rec['padding_ratio']:.3f}")
    print(f"bound by: {rec['bottleneck']} (compute {rec['compute_cycles']:,.0f} cycles, "
          f"communication {rec['comm_cycles']:,.0f}, prologue {rec['prologue_cycles']:,.0f}, "
          f"drain {rec['drain_cycles']:,.0f})")
    for res in ("dsp", "bram18k", "uram"):
        print(f"{res:8s} {rec[res]:10,.0f} of {b[res]:,.0f} usable ({100 * rec[res] / max(b[res], 1):.1f}%)")
    print("feasible" if rec["feasible"] else f"INFEASIBLE: {rec['reason']}")
    rows = [["module", "latency (cycles)", "BRAM18K", ""]]
    for mod in sorted(rec["modules"], key=lambda x: -x["latency_cycles"]):
        rows.append([mod["name"], f"{mod['latency_cycles']:,.0f}", f"{mod['bram18k']:,.0f}",
                     "<- bottleneck" if mod["bottleneck"] else ""])
    print(_table(rows))
    rows = [["array", "off-chip bytes"]]
    rows += [[k, f"{v:,.0f}"] for k, v in rec["offchip_bytes"].items()]
    print(_table(rows))
    return 0


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _tune_record(design: Any, model: Any, tuner: Any, result: Any) -> dict[str, Any]:
    """JSON record of one tuned design; the metrics are None without a feasible point."""
    best = result.best
    res = model.platform.resources

    def usage(used: float, total: int) -> dict[str, float]:
        return {"used": used, "fraction": used / total if total else 0.0}

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
        "dsp": usage(best.dsp, res.dsp) if best else None,
        "bram18k": usage(best.bram18k, res.bram18k) if best else None,
        "samples": result.samples, "seconds": result.seconds, "stop_reason": result.stop_reason,
        "trace": [{"samples": t.samples, "seconds": t.seconds, "throughput_gops": t.throughput_gops}
                  for t in result.trace],
        "mp_seed": mp_record,
    }


def _tune_table(records: list[dict[str, Any]], best_id: str | None) -> str:
    rows = [["", "design", "dataflow", "ordering", "GOP/s", "latency", "DSP", "BRAM", "samples",
             "s", "stop", "tiling"]]
    for r in records:
        if "error" in r:
            rows.append(["", r["design"], "", "", "-", "-", "-", "-", "-", "-", "error", r["error"]])
            continue
        t = r["tiling"]
        rows.append([
            "*" if r["design"] == best_id else "", r["design"], r["dataflow"], r["ordering"],
            f"{r['throughput_gops']:.1f}" if t else "-", f"{r['latency_cycles']:,.0f}" if t else "-",
            f"{r['dsp']['fraction']:.0%}" if t else "-", f"{r['bram18k']['fraction']:.0%}" if t else "-",
            str(r["samples"]), f"{r['seconds']:.1f}", r["stop_reason"],
            ",".join(f"{k}={v}" for k, v in t.items()) if t else "no feasible point",
        ])
    return _table(rows)


def _cmd_tune(args: argparse.Namespace) -> int:
    import time

    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.platforms import load_platform
    from odyssey.tune import Progress, make_tuner, run_tuner

    if args.method != "odyssey" and (args.mp_objective is not None or args.mp_solver is not None):
        raise OdysseyError(f"--mp-objective and --mp-solver apply to --method odyssey only, "
                           f"not --method {args.method}")
    options: dict[str, Any] = {}
    if args.method == "odyssey":
        options["mp_objective"] = args.mp_objective or "comm-comp"
        solver = args.mp_solver or "ipopt"
        options["mp_solver"] = None if solver == "none" else solver
    time_s = args.time if args.time is not None or args.samples is not None else 5.0
    scop = load_scop(args.kernel, _defines(args.define))
    ks = analyse(scop, max_dim=2 if args.design == "all" else 3)
    designs = ks.designs if args.design == "all" else (ks.design(args.design),)
    platform = load_platform(args.platform)
    live = sys.stderr.isatty()
    records: list[dict[str, Any]] = []
    interrupted = False
    for n, design in enumerate(designs, 1):

        def report(p: Progress, n: int = n, did: str = design.id) -> None:
            left = (f"{p.time_left_s:.1f} s left" if p.time_left_s is not None
                    else f"{p.samples_left} samples left")
            print(f"\r[{n}/{len(designs)}] {did}: best {p.best_throughput_gops:.1f} GOP/s, "
                  f"{p.evals_per_s:,.0f} evals/s, {left}\x1b[K", end="", file=sys.stderr, flush=True)

        started = time.perf_counter()
        try:
            model = build_model(ks, design, platform=platform, variant="accurate")
            tuner = make_tuner(args.method, model, seed=args.seed, **options)
            result = run_tuner(tuner, model, time_s=time_s, samples=args.samples,
                               progress=report if live else None)
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
            if live:
                print("\r\x1b[K", end="", file=sys.stderr, flush=True)
        records.append(_tune_record(design, model, tuner, result))
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
    else:
        print("no feasible design point found")
    if interrupted:
        print(f"odyssey: interrupted; results of {len(records)} of {len(designs)} designs",
              file=sys.stderr)
    if args.json:
        out = {"kernel": str(args.kernel), "platform": platform.name, "method": args.method,
               "seed": args.seed, "time_s": time_s, "samples": args.samples,
               "interrupted": interrupted, "best": best_id, "designs": records}
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    if args.emit and best is not None:
        from odyssey.codegen.generate import generate
        from odyssey.codegen.writer import write_design

        gen = generate(ks, ks.design(best["design"]), best["tiling"], seed=args.seed,
                       command=["odyssey", *sys.argv[1:]])
        print(f"wrote {write_design(gen, Path(args.emit))}/ for design {best_id}")
    return 130 if interrupted else 0


def _cmd_optimum(args: argparse.Namespace) -> int:
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.platforms import load_platform
    from odyssey.tune.optimum import find_optimum

    ks = analyse(load_scop(args.kernel, _defines(args.define)), max_dim=3)
    design = ks.design(args.design)
    platform = load_platform(args.platform)
    model = build_model(ks, design, platform=platform, variant="accurate")
    r = find_optimum(model, time_limit_s=args.time_limit, seed=args.seed)
    if args.json:
        doc = {"kernel": str(args.kernel), "platform": platform.name, "variant": model.variant,
               "dataflow": design.dataflow, "ordering": design.ordering, **r.to_json()}
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"design {design.id} ({design.dataflow} {design.ordering}) on {platform.name}, "
          f"{model.variant} model: {r.status.replace('_', ' ')}")
    if r.tiling is None:
        print("no feasible tiling found" if r.status == "time_limit" else "no legal tiling fits the budget")
    else:
        print(f"tiling: {', '.join(f'{k}={v}' for k, v in r.tiling.items())}")
        print(f"latency: {r.latency_cycles:,.0f} cycles = "
              f"{r.latency_cycles / (platform.clock_mhz * 1e3):.3f} ms; throughput {r.throughput_gops:.1f} GOP/s")
        for res, used in (("dsp", r.dsp), ("bram18k", r.bram18k), ("uram", r.uram)):
            cap = model.budget[res]
            print(f"{res:8s} {used:10,.0f} of {cap:,.0f} usable ({100 * used / max(cap, 1):.1f}%)")
    if r.status == "time_limit":
        print(f"no tiling is faster than {r.lower_bound_cycles:,.0f} cycles (gap {100 * r.gap:.2f}%)")
    print(f"search: {r.seconds:.1f} s, {r.points_evaluated:,} tilings evaluated, "
          f"{r.regions_explored:,} regions bounded ({r.regions_pruned_bound:,} pruned by the latency "
          f"bound, {r.regions_pruned_resources:,} by resources, {r.regions_empty:,} empty, "
          f"{r.regions_enumerated:,} enumerated)")
    print(f"proof: {r.proof}")
    return 1 if r.status == "infeasible" else 0


def _cmd_network(args: argparse.Namespace) -> int:
    from odyssey.platforms import load_platform
    from odyssey.studies.network_tuning import NetworkProgress, network_record, tune_network
    from odyssey.studies.networks import load_network, unique_shapes

    network = load_network(args.network)
    platform = load_platform(args.platform)
    time_s = args.time if args.time is not None or args.samples is not None else 2.0
    live = sys.stderr.isatty()
    n_shapes = len(unique_shapes(network))

    def report(p: NetworkProgress) -> None:
        t = p.tuner
        best = max(p.best_gops, t.best_throughput_gops if t else 0.0)
        print(f"\r[shape {p.shape}/{p.shapes}: {','.join(p.layers)}] design {p.design}/{p.designs} "
              f"{p.design_id}: best {best:.1f} GOP/s, {p.seconds:.0f} s\x1b[K",
              end="", file=sys.stderr, flush=True)

    try:
        result = tune_network(network, kernel=args.kernel, dw_kernel=args.dw_kernel,
                              platform=platform, design=args.design, time_s=time_s,
                              samples=args.samples, seed=args.seed, method=args.method,
                              progress=report if live else None)
    finally:
        if live:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
    rows = [["layer", "kind", "shape", "design", "GOP/s", "cycles", "ms", "DSP eff", "lanes",
             "DSP", "tiling"]]
    for r in result.layers:
        s = r.shape
        head = [r.layer.name, r.layer.kind, r.layer.describe()]
        if s is None or s.design is None or s.tiling is None:
            rows.append([*head, "-", "-", "-", "-", "-", "-", "-",
                         "not reached" if s is None else "no feasible design"])
            continue
        assert s.latency_cycles is not None and s.throughput_gops is not None
        rows.append([*head, s.design, f"{s.throughput_gops:.1f}", f"{s.latency_cycles:,.0f}",
                     f"{s.latency_cycles / (result.clock_mhz * 1e3):.3f}",
                     f"{s.dsp_efficiency:.0%}", str(s.mac_lanes), f"{s.dsp:,.0f}",
                     f"= {r.duplicate_of}" if r.duplicate_of else
                     ",".join(f"{k}={v}" for k, v in s.tiling)])
    print(f"{network.title} on {platform.name} at {platform.clock_mhz:g} MHz: "
          f"{len(network.layers)} layers, {n_shapes} unique shapes, design {args.design}")
    print(_table(rows))
    for s in result.shapes:
        if s.note:
            print(f"note: {', '.join(s.layers)}: {s.note}")
        for d in s.designs:
            if d.error:
                print(f"note: {', '.join(s.layers)}: design {d.design} failed: {d.error}")
    print(f"total: {result.latency_cycles:,.0f} cycles = {result.latency_ms:.3f} ms, "
          f"{result.ops / 1e9:.3f} GOP, {result.throughput_gops:.1f} GOP/s overall "
          f"({len(result.layers) - len(result.missing)} of {len(result.layers)} layers; "
          f"tuned in {result.seconds:.1f} s)")
    print("DSP eff = throughput / (2 * MAC lanes * clock); lanes = #PE * SIMD")
    if network.unmapped:
        print("not mapped: " + "; ".join(f"{u.name} ({u.op})" for u in network.unmapped))
    if result.missing and not result.interrupted:
        print(f"odyssey: no feasible design for {', '.join(result.missing)}; the total leaves "
              "them out", file=sys.stderr)
    if result.interrupted:
        print(f"odyssey: interrupted; results of {len(result.shapes)} of {n_shapes} shapes",
              file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(network_record(result), indent=1) + "\n")
    if result.interrupted:
        return 130
    return 1 if result.missing else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="odyssey", description="Systolic-array generator and auto-tuner for FPGAs")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("designs", help="list the space-time mappings and pruned loop orderings of a kernel")
    d.add_argument("kernel", help="C file with a #pragma scop region")
    d.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE",
                   help="override a size parameter (repeatable)")
    d.add_argument("--max-dim", type=int, choices=(1, 2, 3), default=2,
                   help="largest systolic array dimension (default 2)")
    d.add_argument("--json", action="store_true", help="print a JSON list of designs")
    d.set_defaults(func=_cmd_designs)

    g = sub.add_parser("generate", help="generate the HLS C++ design of one design and tiling")
    g.add_argument("kernel")
    g.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE")
    g.add_argument("--design", required=True, help="design id or index from `odyssey designs`")
    g.add_argument("--tiling", required=True, metavar="T_i1=16,...",
                   help="tiling factors by name (see `odyssey designs --json`)")
    g.add_argument("--out", required=True, help="output directory (replaced if it holds an odyssey design)")
    g.add_argument("--seed", type=int, default=1, help="seed of the testbench's random inputs")
    g.set_defaults(func=_cmd_generate)

    c = sub.add_parser("csim", help="build and run a generated design's C simulation with g++")
    c.add_argument("dir", help="design directory written by `odyssey generate`")
    c.add_argument("--timeout", type=float, default=120.0, help="seconds before a run counts as hung")
    c.set_defaults(func=_cmd_csim)

    s = sub.add_parser("sim", help="timed C simulation: simulated latency in cycles, per module")
    s.add_argument("dir", help="design directory written by `odyssey generate`")
    s.add_argument("--timeout", type=float, default=300.0, help="seconds before a run counts as hung")
    s.add_argument("--json", action="store_true",
                   help="print a JSON object with simulated_cycles and modules")
    s.add_argument("--compare", action="store_true",
                   help="also print the analytic model's latency and its error")
    s.add_argument("--platform", default="u250", help="platform of the model (with --compare)")
    s.set_defaults(func=_cmd_sim)

    m = sub.add_parser("model", help="latency, resources and off-chip traffic of a design and tiling")
    m.add_argument("kernel")
    m.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE")
    m.add_argument("--design", required=True)
    m.add_argument("--tiling", required=True, metavar="T_i1=16,...")
    m.add_argument("--platform", default="u250", help="bundled platform name or a platform JSON file")
    m.add_argument("--variant", default="accurate", choices=("accurate", "max"),
                   help="accurate (default) or the max(compute, communication) simplification")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=_cmd_model)

    t = sub.add_parser("tune", help="search the tiling of one or every design with the performance model")
    t.add_argument("kernel", help="C file with a #pragma scop region")
    t.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE",
                   help="override a size parameter (repeatable)")
    t.add_argument("--platform", default="u250", help="bundled platform name or JSON file (default u250)")
    t.add_argument("--design", default="all", help="design id or index, or `all` (default)")
    t.add_argument("--time", type=_positive_float, metavar="SECONDS",
                   help="search time per design (default 5 when --samples is not given)")
    t.add_argument("--samples", type=_positive_int, metavar="N",
                   help="evaluations per design (with --time, whichever ends first)")
    t.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    t.add_argument("--method", choices=("odyssey", "evolutionary", "random"), default="odyssey",
                   help="search method (default odyssey: MP seed + evolutionary search)")
    t.add_argument("--mp-objective", choices=("comm-comp", "comp", "comm"),
                   help="objective of the MP seed (default comm-comp)")
    t.add_argument("--mp-solver", choices=("ipopt", "scip", "none"),
                   help="solver of the MP seed, or none for no seed (default ipopt)")
    t.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    t.add_argument("--emit", metavar="DIR", help="generate the HLS design of the best point into DIR")
    t.set_defaults(func=_cmd_tune)

    o = sub.add_parser("optimum", help="the provably best tiling of one design under the accurate model")
    o.add_argument("kernel", help="C file with a #pragma scop region")
    o.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE",
                   help="override a size parameter (repeatable)")
    o.add_argument("--design", required=True, help="design id or index from `odyssey designs`")
    o.add_argument("--platform", default="u250", help="bundled platform name or JSON file (default u250)")
    o.add_argument("--time-limit", type=_positive_float, metavar="SECONDS",
                   help="stop with the best tiling found and the remaining gap (default: none)")
    o.add_argument("--seed", type=int, default=0, help="seed of the incumbent's random start (default 0)")
    o.add_argument("--json", metavar="OUT", help="write the result as JSON to OUT")
    o.set_defaults(func=_cmd_optimum)

    nw = sub.add_parser("network", help="tune every convolution layer of a CNN (identical shapes once)")
    nw.add_argument("network", help="bundled network (vgg16, resnet50, mobilenetv2) or a network JSON file")
    nw.add_argument("--kernel", default="kernels/cnn.c",
                    help="kernel of the conv and pointwise layers (default kernels/cnn.c)")
    nw.add_argument("--dw-kernel", metavar="KERNEL",
                    help="kernel of the depthwise layers (default dwconv.c next to --kernel)")
    nw.add_argument("--design", default="all",
                    help="design id or index of --kernel on every layer, or `all`: each layer's "
                         "best (default)")
    nw.add_argument("--time", type=_positive_float, metavar="SECONDS",
                    help="search time per design and shape (default 2 when --samples is not given)")
    nw.add_argument("--samples", type=_positive_int, metavar="N",
                    help="evaluations per design and shape (with --time, whichever ends first)")
    nw.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    nw.add_argument("--platform", default="u250", help="bundled platform name or JSON file (default u250)")
    nw.add_argument("--method", choices=("odyssey", "evolutionary", "random"), default="odyssey",
                    help="search method (default odyssey: MP seed + evolutionary search)")
    nw.add_argument("--json", metavar="OUT", help="write per-layer results and totals as JSON to OUT")
    nw.set_defaults(func=_cmd_network)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except OdysseyError as exc:
        print(f"odyssey: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # output piped into `head` and friends
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("odyssey: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
