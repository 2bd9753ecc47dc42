"""`odyssey designs|generate|csim|sim|model`: the front end, the generator and the models."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from odyssey.cli._common import defines, layouts, table
from odyssey.errors import OdysseyError


def _cmd_designs(args: argparse.Namespace) -> int:
    from odyssey.frontend import load_scop
    from odyssey.mapping.report import design_record, design_table
    from odyssey.mapping.space import analyse

    scop = load_scop(args.kernel, defines(args.define))
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
    print(table(design_table(ks)))
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from odyssey.codegen.generate import generate
    from odyssey.codegen.tiling import parse_tiling_text
    from odyssey.codegen.writer import write_design
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse

    scop = load_scop(args.kernel, defines(args.define))
    ks = analyse(scop, max_dim=3)
    design = ks.design(args.design)
    values = parse_tiling_text(args.tiling)
    gen = generate(ks, design, values, seed=args.seed, command=["odyssey", *sys.argv[1:]],
                   layouts=layouts(args.layout))
    out = write_design(gen, Path(args.out))
    t = gen.tiling
    dims = " x ".join(str(g.outer) for g in t.space)
    print(f"wrote {out}/ (kernel.cpp, kernel.h, host.cpp, hls.tcl, csynth.tcl, Makefile, descriptor.json)")
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
    from odyssey.codegen.descriptor import load_descriptor

    desc = load_descriptor(desc_path)
    reason = desc["design"]["model_only"]
    return f"design {desc['design']['id']} is model-only ({reason})" if reason else None


def _cmd_csim(args: argparse.Namespace) -> int:
    from odyssey.codegen.csim import run_csim

    d = Path(args.dir)
    reason = _model_only(d)
    if reason:
        print(f"{d}: {reason}; nothing to simulate")
        return 3
    if args.timeout <= 0:
        raise OdysseyError(f"--timeout {args.timeout}: must be a positive number of seconds")
    res = run_csim(d, mode="concurrent" if args.concurrent else "sequential", timeout_s=args.timeout)
    if args.json:
        print(json.dumps({"design_dir": str(d), "mode": res.mode, "headers": res.headers,
                          "status": res.status, "message": res.message,
                          "compile_seconds": round(res.compile_seconds, 3),
                          "run_seconds": round(res.run_seconds, 3)}, indent=1))
        return 0 if res.passed else 1
    print(f"{d}: {res.status}: {res.message} ({res.mode}; compile {res.compile_seconds:.1f} s, "
          f"run {res.run_seconds:.2f} s; headers {res.headers})")
    if not res.passed and res.status not in ("pass", "timeout"):
        tail = (res.stderr or res.stdout).strip().splitlines()[-20:]
        for line in tail:
            print("  " + line)
    return 0 if res.passed else 1


def _cmd_check(args: argparse.Namespace) -> int:
    from odyssey.codegen.static_check import check_design
    from odyssey.platforms import load_platform

    d = Path(args.dir)
    report = check_design(d, clock_mhz=load_platform(args.platform).clock_mhz)
    if args.json:
        print(json.dumps(report.as_json(), indent=1))
        return 0 if report.ok else 1
    print(f"{d}: {len(report.processes)} processes, {report.channels} channels: "
          + ("ok" if report.ok else f"{len(report.problems)} problem(s)"))
    for p in report.problems:
        print(f"  {p.where}: {p.what}\n      ({p.why})")
    return 0 if report.ok else 1


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
        from odyssey.codegen.descriptor import load_descriptor
        from odyssey.model import model_from_descriptor
        from odyssey.platforms import load_platform

        desc = load_descriptor(d / "descriptor.json")
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
        print(table(rows))
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

    ks = analyse(load_scop(args.kernel, defines(args.define)))
    design = ks.design(args.design)
    tiling = make_tiling(design, parse_tiling_text(args.tiling)).as_dict
    model = build_model(ks, design, platform=load_platform(args.platform), variant=args.variant,
                        layouts=layouts(args.layout))
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
    print(table(rows))
    rows = [["array", "off-chip bytes"]]
    rows += [[k, f"{v:,.0f}"] for k, v in rec["offchip_bytes"].items()]
    print(table(rows))
    return 0


LAYOUT_HELP = ("DRAM layout of an array: serialized (default: the host writes each tile in the "
               "order the kernel reads it, one burst per tile) or row_major (the array as it is, "
               "zero-padded; one burst per box row); repeatable, e.g. --layout A=row_major")


def register(sub: Any) -> None:
    """Add this module's subcommands to the `odyssey` parser."""
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
    g.add_argument("--layout", action="append", default=[], metavar="ARRAY=LAYOUT", help=LAYOUT_HELP)
    g.set_defaults(func=_cmd_generate)

    c = sub.add_parser("csim", help="build and run a generated design's C simulation with g++ "
                       "(Vitis semantics against Xilinx's own headers by default)")
    c.add_argument("dir", help="design directory written by `odyssey generate`")
    c.add_argument("--timeout", type=float, default=120.0, help="seconds before a run counts as hung")
    c.add_argument("--concurrent", action="store_true",
                   help="one thread per process over FIFOs of their declared depths (deadlock "
                        "check) with odyssey's stand-in headers, instead of Vitis's sequential semantics")
    c.add_argument("--json", action="store_true",
                   help="print one JSON object (mode, headers, status, message, times)")
    c.set_defaults(func=_cmd_csim)

    k = sub.add_parser("check", help="static checks of a generated design's printed C++ (dataflow "
                       "channels and call order, pragma targets, m_axi depths, clock)")
    k.add_argument("dir", help="design directory written by `odyssey generate`")
    k.add_argument("--platform", default="u250", help="platform whose clock hls.tcl must use")
    k.add_argument("--json", action="store_true", help="print one JSON object (ok, loops, problems)")
    k.set_defaults(func=_cmd_check)

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
    m.add_argument("--layout", action="append", default=[], metavar="ARRAY=LAYOUT", help=LAYOUT_HELP)
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=_cmd_model)
