"""`odyssey designs|generate|csim|sim|model`: the front end, the generator and the models."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from odyssey.cli._common import (
    DEFINE_HELP,
    KERNEL_HELP,
    PLATFORM_HELP,
    PROGRESS_EVERY_S,
    ProgressLine,
    add_clock,
    defines,
    full_tiling,
    kernel_file,
    layouts,
    positive_float,
    seed,
    share,
    table,
)
from odyssey.cli._output import add_json, add_report, emit_dir, emit_json, emit_report, outputs
from odyssey.errors import OdysseyError
from odyssey.platforms import DEFAULT_PLATFORM, Platform, at_clock, design_platform, load_platform


def _cmd_designs(args: argparse.Namespace) -> int:
    from odyssey.frontend import load_scop
    from odyssey.mapping.report import design_record, design_table
    from odyssey.mapping.space import analyse

    scop = load_scop(args.kernel, defines(args.define))
    ks = analyse(scop, max_dim=args.max_dim)
    main = scop.statement(ks.statement)
    print(f"{args.kernel}: {main.text}")
    print("sizes: " + ", ".join(f"{n}={v}" for n, v in scop.params))
    for lg in ks.legality:
        print(f"  loop {lg.loop}: {'space loop candidate' if lg.space_ok else 'time only'} ({lg.reason})")
    dataflows = sorted({d.dataflow for d in ks.designs}, key=lambda s: (s.count(","), s))
    print(f"{len(dataflows)} dataflows x {len(ks.orderings)} orderings = {len(ks.designs)} designs")
    print(table(design_table(ks)))
    cands = ks.designs[0].simd_candidates if ks.designs else ()
    if len(cands) > 1:
        print(f"simd: the default SIMD loop; `--design ID@LOOP` puts the lanes along another reduction loop "
              f"({', '.join(cands)}), e.g. {ks.designs[0].id}@{cands[-1]}")
    emit_json(args.json, [design_record(d) for d in ks.designs])
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from odyssey.codegen.generate import generate
    from odyssey.codegen.writer import write_design
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse

    scop = load_scop(args.kernel, defines(args.define))
    ks = analyse(scop, max_dim=3)
    design = ks.design(args.design)
    values = full_tiling(design, args.tiling)
    gen = generate(ks, design, values, seed=args.seed, command=["odyssey", *sys.argv[1:]],
                   layouts=layouts(args.layout), platform=at_clock(load_platform(args.platform), args.clock))
    out = emit_dir(args.out, lambda path: write_design(gen, path))
    t = gen.tiling
    dims = " x ".join(str(g.outer) for g in t.space)
    print(f"wrote {out}/ ({', '.join(rel for rel, _ in gen.files)})")
    print(f"design {design.id}: dataflow {design.dataflow}, ordering {design.ordering}; "
          f"array {dims} = {t.num_pes} PEs; tiling {t.describe()}")
    padded = [g.name for g in t.loops if g.is_padded]
    if padded:
        print("zero-padded loops: " + ", ".join(f"{g.name} {g.extent}->{g.padded}" for g in t.loops if g.is_padded))
    if gen.model_only:
        print(f"model only: {gen.model_only}")
    emit_json(args.json, {"design_dir": str(out), "files": [rel for rel, _ in gen.files],
                          "design": design.id, "dataflow": design.dataflow,
                          "ordering": design.ordering, "tiling": dict(values),
                          "array": [g.outer for g in t.space], "pes": t.num_pes,
                          "padded": {g.name: [g.extent, g.padded] for g in t.loops if g.is_padded},
                          "model_only": gen.model_only})
    return 0


def _check_simulatable(d: Path) -> None:
    """OdysseyError unless ``d`` is a design directory whose design can be simulated."""
    desc_path = d / "descriptor.json"
    if not desc_path.is_file():
        raise OdysseyError(f"{d}: not a design directory (no descriptor.json); create one with `odyssey generate`")
    from odyssey.codegen.descriptor import load_descriptor

    desc = load_descriptor(desc_path)
    reason = desc["design"]["model_only"]
    if reason:
        raise OdysseyError(f"{d}: design {desc['design']['id']} is model-only ({reason}); "
                           "nothing to simulate (`odyssey model` predicts it)")


def _cmd_csim(args: argparse.Namespace) -> int:
    from odyssey.codegen.csim import run_csim

    d = Path(args.dir)
    _check_simulatable(d)
    res = run_csim(d, mode="concurrent" if args.concurrent else "sequential", timeout_s=args.timeout,
                   compile_timeout_s=args.compile_timeout, interruptible=True)
    emit_json(args.json, {"design_dir": str(d), "mode": res.mode, "headers": res.headers,
                          "status": res.status, "message": res.message,
                          "compile_seconds": round(res.compile_seconds, 3),
                          "run_seconds": round(res.run_seconds, 3)})
    # a failure (the compiler's included) goes to standard error with its output, exit 2
    report = sys.stdout if res.passed else sys.stderr
    print(f"{d}: {res.status}: {res.message} ({res.mode}; compile {res.compile_seconds:.1f} s, "
          f"run {res.run_seconds:.2f} s; headers {res.headers})", file=report)
    if not res.passed and res.status not in ("pass", "timeout"):
        tail = (res.stderr or res.stdout).strip().splitlines()[-20:]
        for line in tail:
            print("  " + line, file=sys.stderr)
    return 0 if res.passed else 130 if res.status == "interrupted" else 2


def _design_platform(d: Path, given: str | None) -> Platform:
    """``given`` (at its own clock), else the platform a design directory's descriptor was
    generated for, at the clock it records (the default platform where it cannot say)."""
    if given:
        return load_platform(given)
    try:
        desc = json.loads((d / "descriptor.json").read_text())
        found, clock = desc.get("platform"), desc.get("clock_mhz")
    except (OSError, ValueError, AttributeError):
        return load_platform(DEFAULT_PLATFORM)
    name = found if isinstance(found, str) and found else DEFAULT_PLATFORM
    return design_platform(name, clock if isinstance(clock, int | float) and not isinstance(clock, bool) else None)


def _cmd_check(args: argparse.Namespace) -> int:
    from odyssey.codegen.static_check import check_design

    d = Path(args.dir)
    if not (d / "descriptor.json").is_file():
        raise OdysseyError(f"{d}: not a design directory (no descriptor.json); create one with `odyssey generate`")
    from odyssey.codegen.static_check import Problem
    from odyssey.model.witness import compare

    platform = _design_platform(d, args.platform)
    report = check_design(d, clock_mhz=platform.clock_mhz)
    wit, model_totals, disagree = compare(d, platform)
    for x in disagree:
        report.problems.append(Problem(
            f"{x.resource}: the printed code holds {x.witness:,.0f}, the model says {x.model:,.0f}", x.where,
            "the resource model must count what the printed code instantiates (odyssey/model/fabric.py)"))
    record = {**report.as_json(), "resources": wit.as_json(), "model_resources": model_totals}
    emit_json(args.json, record)
    print(f"{d}: {len(report.processes)} processes of {len(report.modules)} modules, {report.channels} channels: "
          + ("ok" if report.ok else f"{len(report.problems)} problem(s)"))
    total = wit.total
    print("resources counted in the printed code: " + ", ".join(
        f"{r} {getattr(total, r):,.0f}" for r in ("dsp", "lut", "ff", "bram18k", "uram"))
          + (" (the model's figures)" if not disagree else ""))
    for p in report.problems:
        print(f"  {p.where}: {p.what}\n      ({p.why})")
    return 0 if report.ok else 2


def _cmd_sim(args: argparse.Namespace) -> int:
    from odyssey.codegen.timedsim import TimedProgress, run_timed_sim

    d = Path(args.dir)
    _check_simulatable(d)
    say = ProgressLine()
    say(f"sim {d}: compiling, then simulating (a progress line every "
         f"{PROGRESS_EVERY_S:g} s; Ctrl-C stops it and prints how far it got)", force=True)

    def said(p: TimedProgress) -> None:
        say(f"sim {d}: {p.seconds:.0f} s, cycle {p.cycle:,} reached, {p.finished} of "
             f"{p.started} tasks finished")

    res = run_timed_sim(d, timeout_s=args.timeout, interruptible=True, progress=said,
                        trace=args.trace is not None)
    say.clear()
    if res.status == "interrupted":
        return _sim_interrupted(d, res, args.json)
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
        from odyssey.codegen.descriptor import load_descriptor
        from odyssey.model import model_from_descriptor

        desc = load_descriptor(d / "descriptor.json")
        model = model_from_descriptor(desc, _design_platform(d, args.platform))
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
    if res.traces:
        from odyssey.codegen.sim_trace import chrome_trace, timeline

        record["timeline"] = timeline(res.traces)
        emit_json(args.trace, chrome_trace(res.traces, _descriptor_clock(d), design=d.name), option="--trace")
    emit_json(args.json, record)
    _keep_in_design(d, record)
    cycles = "unknown" if res.cycles is None else f"{res.cycles}"
    print(f"{d}: {res.status}: {res.message} (compile {res.compile_seconds:.1f} s, run {res.run_seconds:.2f} s)")
    print(f"simulated latency: {cycles} cycles")
    if "model_cycles" in record:
        print(f"model latency:     {record['model_cycles']:.0f} cycles (error {record['error_percent']:+.2f}%)")
    if res.modules:
        rows = [["module", "end cycle", "stall cycles"]]
        rows += [[n, str(e), str(s)] for n, e, s in res.modules]
        print(table(rows))
    if not res.passed and res.status != "timeout":
        for line in (res.stderr or res.stdout).strip().splitlines()[-20:]:
            print("  " + line)
    return 0 if res.passed else 2


def _descriptor_clock(d: Path) -> float:
    """The kernel clock the design in ``d`` was generated for (MHz)."""
    from odyssey.codegen.descriptor import load_descriptor

    return float(load_descriptor(d / "descriptor.json")["clock_mhz"])


def _keep_in_design(d: Path, record: dict[str, object]) -> None:
    """The timed simulation's record beside the design (``sim.json``), for `odyssey report`;
    a design folder that cannot take it only loses that page section (a note says so)."""
    try:
        (d / "sim.json").write_text(json.dumps(record, indent=1, allow_nan=False, default=str) + "\n")
    except OSError as exc:
        print(f"note: cannot keep the simulation's record in {d / 'sim.json'} ({exc.strerror}); "
              "`odyssey report` of this design will not show it", file=sys.stderr)


def _sim_interrupted(d: Path, res: Any, json_target: str | None) -> int:
    """Ctrl-C during `odyssey sim`: how far the simulation got (never a latency), exit 130."""
    reached, tasks = res.reached, res.tasks
    emit_json(json_target, {
        "design_dir": str(d), "status": "interrupted", "message": res.message,
        "simulated_cycles": None,
        "cycle_reached": None if reached is None else reached.cycle,
        "tasks_finished": None if reached is None else reached.finished,
        "tasks_started": None if reached is None else reached.started,
        "tasks": [{"name": t.name, "done": t.done, "cycle": t.clock, "stall_cycles": t.stall}
                  for t in tasks],
        "compile_seconds": round(res.compile_seconds, 3), "run_seconds": round(res.run_seconds, 3)})
    print(f"{d}: interrupted: {res.message} (compile {res.compile_seconds:.1f} s, "
          f"run {res.run_seconds:.2f} s)")
    if reached is None:
        print("simulated so far: nothing the program could report (the kernel had not started, "
              "or it was stopped before it could print its state)")
    else:
        print(f"simulated so far (interrupted, not a final latency): cycle {reached.cycle:,} "
              f"reached, a lower bound of the latency; {reached.finished} of the {reached.started} "
              "tasks started had finished")
        rows = [["task", "state", "cycle", "stall cycles"]]
        rows += [[t.name, "done" if t.done else "running", "?" if t.clock is None else str(t.clock),
                  "?" if t.stall is None else str(t.stall)] for t in tasks]
        print(table(rows))
    print("odyssey: interrupted; the simulation's state at Ctrl-C is above", file=sys.stderr)
    return 130


def _cmd_model(args: argparse.Namespace) -> int:
    from odyssey.codegen.tiling import make_tiling
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.model.report import model_record

    ks = analyse(load_scop(args.kernel, defines(args.define)))
    design = ks.design(args.design)
    tiling = make_tiling(design, full_tiling(design, args.tiling)).as_dict
    model = build_model(ks, design, platform=at_clock(load_platform(args.platform), args.clock),
                        variant=args.variant, layouts=layouts(args.layout))
    rec = model_record(model, tiling)
    b = rec["budget"]
    device = model.platform.resources
    print(f"design {design.id} ({design.dataflow} {design.ordering}) on {rec['platform']}, {args.variant} model")
    print(f"tiling: {', '.join(f'{k}={v}' for k, v in tiling.items())}")
    print(f"latency: {rec['latency_cycles']:,.0f} cycles = {rec['latency_seconds'] * 1e3:.3f} ms; "
          f"throughput {rec['throughput_gops']:.1f} GOP/s; PE II {rec['pe_ii']:.0f}; "
          f"padding x{rec['padding_ratio']:.3f}")
    print(f"bound by: {rec['bottleneck']} (compute {rec['compute_cycles']:,.0f} cycles, "
          f"communication {rec['comm_cycles']:,.0f}, prologue {rec['prologue_cycles']:,.0f}, "
          f"drain {rec['drain_cycles']:,.0f})")
    for res in ("dsp", "lut", "ff", "bram18k", "uram"):
        print(f"{res:8s} {rec[res]:10,.0f}: {share(rec[res], b[res], 'usable')} "
              f"({b[res]:,.0f}), {share(rec[res], getattr(device, res), 'device')}")
    print("feasible" if rec["feasible"] else f"INFEASIBLE: {rec['reason']}")
    rows = [["module", "latency (cycles)", "DSP", "LUT", "FF", "BRAM18K", "URAM", ""]]
    for mod in sorted(rec["modules"], key=lambda x: -x["latency_cycles"]):
        rows.append([mod["name"], f"{mod['latency_cycles']:,.0f}", *(f"{mod[r]:,.0f}" for r in
                                                                      ("dsp", "lut", "ff", "bram18k", "uram")),
                     "<- bottleneck" if mod["bottleneck"] else ""])
    ifc = rec["interfaces"]
    rows.append(["m_axi adapters, control", "", "0", f"{ifc['lut']:,.0f}", f"{ifc['ff']:,.0f}",
                 f"{ifc['bram18k']:,.0f}", "0", ""])
    rows.append(["total", "", *(f"{rec[r]:,.0f}" for r in ("dsp", "lut", "ff", "bram18k", "uram")), ""])
    print(table(rows))
    rows = [["array", "off-chip bytes"]]
    rows += [[k, f"{v:,.0f}"] for k, v in rec["offchip_bytes"].items()]
    rows.append(["total", f"{rec['offchip_bytes_total']:,.0f}"])
    print(table(rows))
    rows = [["DRAM port", "memory", "channel", "cycles per word at its share"]]
    rows += [[p["name"], p["memory"], p["connectivity"], f"{p['pace_cycles_per_word']:.3f}"] for p in rec["dram_ports"]]
    print(table(rows))
    emit_json(args.json, rec)
    emit_report(args.report, rec)
    return 0


LAYOUT_HELP = ("DRAM layout of an array: serialized (default: the host writes each tile in the "
               "order the kernel reads it, one burst per tile) or row_major (the array as it is, "
               "zero-padded; one burst per box row); repeatable, e.g. --layout A=row_major")


def _kernel_args(parser: Any) -> None:
    parser.add_argument("kernel", type=kernel_file, help=KERNEL_HELP)
    parser.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE",
                        help=DEFINE_HELP)


def register(sub: Any) -> None:
    """Add this module's subcommands to the `odyssey` parser."""
    d = sub.add_parser("designs", help="list the space-time mappings and pruned loop orderings of a kernel")
    _kernel_args(d)
    d.add_argument("--max-dim", type=int, choices=(1, 2, 3), default=2,
                   help="largest systolic array dimension (default 2)")
    add_json(d, "the list of designs with their tiling parameters and ranges")
    d.set_defaults(func=_cmd_designs, outputs=outputs(("json", "file")))

    g = sub.add_parser("generate", help="generate the HLS C++ design of one design and tiling")
    _kernel_args(g)
    g.add_argument("--design", required=True, help="design id or index from `odyssey designs`; ID@LOOP puts "
                   "its SIMD lanes along reduction loop LOOP instead of the default one; ID+lutP "
                   "builds P%% of its multipliers in LUTs; ID+wd gives it PE drains that move a word "
                   "per cycle")
    g.add_argument("--tiling", required=True, metavar="T_i1=16,...",
                   help="every tiling factor of the design by name (`odyssey designs KERNEL "
                        "--json -` lists them and their ranges; 1 = no tiling at that level)")
    g.add_argument("--out", required=True, metavar="DIR",
                   help="output folder (created; replaced only if it holds an earlier odyssey "
                        "design)")
    g.add_argument("--seed", type=seed, default=1,
                   help="seed of the testbench's random inputs (default 1)")
    g.add_argument("--layout", action="append", default=[], metavar="ARRAY=LAYOUT", help=LAYOUT_HELP)
    g.add_argument("--platform", default=DEFAULT_PLATFORM,
                   help="its clock, part and DRAM channels: " + PLATFORM_HELP)
    add_clock(g)
    add_json(g, "what was written (folder, files, design, tiling, array)")
    g.set_defaults(func=_cmd_generate, outputs=outputs(("out", "design"), ("json", "file")))

    c = sub.add_parser("csim", help="build and run a generated design's C simulation with g++ "
                       "(Vitis semantics against Xilinx's own headers by default)")
    c.add_argument("dir", help="design directory written by `odyssey generate`")
    c.add_argument("--timeout", type=positive_float, default=120.0, metavar="SECONDS",
                   help="seconds before a run counts as hung (default 120)")
    c.add_argument("--compile-timeout", type=positive_float, default=None, metavar="SECONDS",
                   help="seconds the compiler may take (default 600, and 60 more per MB of source "
                        "beyond the first)")
    c.add_argument("--concurrent", action="store_true",
                   help="one thread per process over FIFOs of their declared depths (deadlock "
                        "check) with odyssey's stand-in headers, instead of Vitis's sequential semantics")
    add_json(c, "one object (mode, headers, status, message, times)")
    c.set_defaults(func=_cmd_csim, outputs=outputs(("json", "file")))

    k = sub.add_parser("check", help="static checks of a generated design's printed C++ (dataflow "
                       "channels and call order, pragma targets, m_axi depths, clock)")
    k.add_argument("dir", help="design directory written by `odyssey generate`")
    k.add_argument("--platform", default=None,
                   help="platform whose clock hls.tcl must use (default: the one the design was generated "
                        "for): " + PLATFORM_HELP)
    add_json(k, "one object (ok, loops, problems)")
    k.set_defaults(func=_cmd_check, outputs=outputs(("json", "file")))

    s = sub.add_parser("sim", help="timed C simulation: simulated latency in cycles, per module")
    s.add_argument("dir", help="design directory written by `odyssey generate`")
    s.add_argument("--timeout", type=positive_float, default=300.0, metavar="SECONDS",
                   help="seconds before a run counts as hung (default 300)")
    add_json(s, "one object with simulated_cycles and modules")
    s.add_argument("--compare", action="store_true",
                   help="also print the analytic model's latency and its error")
    s.add_argument("--platform", default=None,
                   help="platform of the model (with --compare; default: the one the design was generated "
                        "for): " + PLATFORM_HELP)
    s.add_argument("--trace", metavar="FILE",
                   help="also write each process's timeline (running, stalled on an empty or a full FIFO, a "
                        "block or the DRAM channel) as a Chrome/Perfetto trace (JSON) to FILE; open it in "
                        "ui.perfetto.dev or chrome://tracing")
    s.set_defaults(func=_cmd_sim, outputs=outputs(("json", "file"), ("trace", "file")))

    m = sub.add_parser("model", help="latency, resources and off-chip traffic of a design and tiling")
    _kernel_args(m)
    m.add_argument("--design", required=True, help="design id or index from `odyssey designs`; ID@LOOP puts "
                   "its SIMD lanes along reduction loop LOOP instead of the default one; ID+lutP "
                   "builds P%% of its multipliers in LUTs; ID+wd gives it PE drains that move a word "
                   "per cycle")
    m.add_argument("--tiling", required=True, metavar="T_i1=16,...",
                   help="every tiling factor of the design by name (`odyssey designs KERNEL "
                        "--json -` lists them and their ranges; 1 = no tiling at that level)")
    m.add_argument("--platform", default=DEFAULT_PLATFORM, help=PLATFORM_HELP)
    add_clock(m)
    m.add_argument("--variant", default="accurate", choices=("accurate", "max"),
                   help="accurate (default) or the max(compute, communication) simplification")
    m.add_argument("--layout", action="append", default=[], metavar="ARRAY=LAYOUT", help=LAYOUT_HELP)
    add_json(m, "the model's record (latency, resources, modules, off-chip bytes)")
    add_report(m, "the design at this tiling (headline, array, resources, roofline, modules)")
    m.set_defaults(func=_cmd_model, outputs=outputs(("json", "file"), ("report", "report")))
