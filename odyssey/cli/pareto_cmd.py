"""`odyssey pareto`: the non-dominated designs and tilings under the accurate model."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from odyssey.cli._common import (
    DEFINE_HELP,
    KERNEL_HELP,
    PLATFORM_HELP,
    ProgressLine,
    defines,
    kernel_file,
    positive_float,
    positive_int,
    seed,
    table,
)
from odyssey.cli._engine import TaskProgress, add_engine_options, engine_from
from odyssey.cli._output import add_json, add_report, emit_dir, emit_json, emit_report, outputs
from odyssey.errors import OdysseyError
from odyssey.platforms import DEFAULT_PLATFORM

_DEFAULT_TIME_S = 60.0


def _reference(text: str | None, objectives: tuple[str, ...]) -> dict[str, float]:
    """``--reference latency=2e6,dsp=4000`` as a mapping; every name an objective, every
    value a positive number."""
    out: dict[str, float] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in objectives:
            raise OdysseyError(f"--reference {item}: expected OBJECTIVE=VALUE with OBJECTIVE one of "
                               f"{', '.join(objectives)}, e.g. --reference latency=2e6")
        try:
            out[name] = float(value)
        except ValueError:
            raise OdysseyError(f"--reference {item}: {value!r} is not a number") from None
        if not (out[name] > 0 and math.isfinite(out[name])):
            raise OdysseyError(f"--reference {item}: the value must be a positive number")
    return out


def _summary(result: Any, adrs: dict[str, Any] | None) -> str:
    lines = [f"front: {len(result.points)} points over {', '.join(result.objectives)} "
             f"({'exact: every legal tiling evaluated' if result.exact else 'not proven exact'}; "
             f"{result.method}, {result.status}, {result.evaluations:,} evaluations in "
             f"{result.seconds:.1f} s)"]
    ref = ", ".join(f"{o}={r:,.0f}" for o, r in zip(result.objectives, result.reference, strict=True))
    lines.append(f"hypervolume {result.hypervolume:.6f} (objectives divided by the reference point "
                 f"{ref})")
    if adrs is not None:
        lines.append(f"ADRS to the exact front ({adrs['true_front_size']} points): {adrs['value']:.6g}; "
                     f"hypervolume at its reference: {adrs['found_hypervolume']:.6f} found vs "
                     f"{adrs['true_hypervolume']:.6f} exact")
    rows = [["design", "dataflow", "ordering", "legal tilings", "evaluated", "on front"]]
    for d in result.designs:
        if d.on_front:
            rows.append([d.design_id, d.dataflow, d.ordering, f"{d.legal_tilings:.3g}",
                         f"{d.evaluated:,}", str(d.on_front)])
    if len(rows) > 1:
        lines.append(table(rows))
    if result.points:
        best = min(result.points, key=lambda p: p.latency_cycles)
        lines.append(f"fastest: {best.design_id} {', '.join(f'{k}={v}' for k, v in best.tiling.items())}"
                     f": {best.latency_cycles:,.0f} cycles ({best.throughput_gops:.1f} GOP/s), "
                     f"{best.dsp:,.0f} DSP, {best.bram18k:,.0f} BRAM18K")
    return "\n".join(lines)


def _cmd_pareto(args: argparse.Namespace) -> int:
    import dataclasses
    import json

    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.platforms import load_platform
    from odyssey.studies.pareto_report import (
        figure_png,
        front_csv,
        front_json,
        front_title,
        plot_front,
    )
    from odyssey.tune.pareto import ParetoProgress, adrs, pareto_front, parse_objectives

    objectives = parse_objectives(args.objectives)
    reference = _reference(args.reference, objectives)
    out = Path(args.out) if args.out else None
    sizes = defines(args.define)
    ks = analyse(load_scop(args.kernel, sizes), max_dim=2 if args.design == "all" else 3)
    designs = ks.designs if args.design == "all" else (ks.design(args.design),)
    platform = load_platform(args.platform)
    models = [build_model(ks, d, platform=platform, variant="accurate") for d in designs]
    time_s = args.time
    if time_s is None and args.samples is None and args.method != "exact":
        time_s = _DEFAULT_TIME_S
    line = ProgressLine()
    interrupted = False

    def report(p: ParetoProgress) -> None:
        rate = p.evaluations / p.seconds if p.seconds > 0 else 0.0
        if time_s is not None and p.method != "exact":
            left = f"{max(0.0, time_s - p.seconds):.0f} s left"
        elif p.fraction > 0:
            left = f"about {p.seconds * (1 - p.fraction) / p.fraction:.0f} s left"
        else:
            left = "time left unknown"
        line(f"{p.method}: {p.design_id}, front {p.front_size} points, {p.evaluations:,} "
             f"evaluations ({rate:,.0f}/s), {p.seconds:.0f} s, {100 * p.fraction:.0f}% done, "
             f"{left}")

    print(f"pareto: {len(models)} design(s) on {platform.name}, objectives {','.join(objectives)}",
          file=sys.stderr)
    engine = engine_from(args)
    on_engine: dict[str, Any] = {}
    if engine.distributed and (args.method != "exact" or time_s is not None
                               or args.samples is not None):
        raise OdysseyError("--workers and --scheduler apply to --method exact without --time "
                           "or --samples: each design's exact front is then a task")
    if engine.distributed:  # each design's exact front as a task (docs/cluster.md)
        from odyssey.tune.tasks import KernelSource

        tasks = TaskProgress(engine, len(models), lambda v: None, "design front",
                             describe=lambda v: f"{len(v[0])} points of {v[2]:,} tilings")
        on_engine = {"engine": engine, "on_done": tasks.done, "on_notice": tasks.notice,
                     "source": KernelSource.read(args.kernel, sizes,
                                                 max_dim=2 if args.design == "all" else 3)}
    try:
        result = pareto_front(models, objectives, method=args.method, time_s=time_s,
                              samples=args.samples, seed=args.seed, progress=report, **on_engine)
        if reference:
            ref = tuple(reference.get(o, r) for o, r in zip(objectives, result.reference, strict=True))
            result = dataclasses.replace(result, reference=ref, hypervolume=result.hypervolume_at(ref))
        adrs_doc: dict[str, Any] | None = None
        if args.adrs:
            if result.exact:
                adrs_doc = {"value": 0.0, "true_front_size": len(result.points),
                            "true_hypervolume": result.hypervolume,
                            "found_hypervolume": result.hypervolume, "seconds": 0.0}
            else:
                line("pareto: enumerating the exact front for ADRS", force=True)
                true = pareto_front(models, objectives, method="exact", progress=report, **on_engine)
                if true.status != "complete":
                    line("pareto: ADRS skipped: the exact enumeration was interrupted", force=True)
                    interrupted = True
                else:
                    adrs_doc = {"value": adrs(true.matrix(), result.matrix()),
                                "true_front_size": len(true.points),
                                "true_hypervolume": true.hypervolume,
                                "found_hypervolume": result.hypervolume_at(true.reference),
                                "true_reference": dict(zip(objectives, true.reference, strict=True)),
                                "seconds": true.seconds}
    finally:
        line.clear()
    print(_summary(result, adrs_doc))
    meta = {"kernel": str(args.kernel), "sizes": sizes, "designs": [d.id for d in designs],
            "command": _command(args), "time_s": time_s, "samples": args.samples, "adrs": adrs_doc}
    doc = _finite(front_json(result, meta))
    emit_json(args.json, doc)
    emit_report(args.report, doc)
    if out is not None:
        from odyssey.fsutil import write_bytes_atomically, write_text_atomically

        text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
        png = figure_png(plot_front(result, title=front_title(result, meta)))

        def write(folder: Path) -> Path:
            folder.mkdir(parents=True, exist_ok=True)
            write_text_atomically(folder / "front.json", text)
            write_text_atomically(folder / "front.csv", front_csv(result))
            write_bytes_atomically(folder / "front.png", png)
            return folder

        written = emit_dir(out, write)
        print(f"wrote {written}/front.json, front.csv, front.png")
    if interrupted or result.status == "interrupted":
        print("odyssey: interrupted; wrote the front found so far" if out else
              "odyssey: interrupted", file=sys.stderr)
        return 130
    return 0


def _command(args: argparse.Namespace) -> str:
    """The command line that reproduces this run (options in canonical order)."""
    words = ["odyssey", "pareto", str(args.kernel)]
    for d in args.define:
        words += ["-D", d]
    words += ["--platform", args.platform, "--design", args.design, "--objectives",
              args.objectives, "--method", args.method]
    if args.time is not None:
        words += ["--time", f"{args.time:g}"]
    if args.samples is not None:
        words += ["--samples", str(args.samples)]
    words += ["--seed", str(args.seed)]
    if args.reference:
        words += ["--reference", args.reference]
    if args.adrs:
        words.append("--adrs")
    if args.out:
        words += ["--out", str(args.out)]
    return " ".join(words)


def _finite(x: Any) -> Any:
    """``x`` with every non-finite float (an ADRS with nothing found) replaced by None."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def register(sub: Any) -> None:
    """Add `odyssey pareto` to the `odyssey` parser."""
    p = sub.add_parser("pareto", help="non-dominated designs and tilings (latency vs resources)")
    p.add_argument("kernel", type=kernel_file, help=KERNEL_HELP)
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE",
                   help=DEFINE_HELP)
    p.add_argument("--platform", default=DEFAULT_PLATFORM, help=PLATFORM_HELP)
    p.add_argument("--design", default="all",
                   help="design id or index, or `all` (default): every dataflow and ordering together")
    p.add_argument("--objectives", default="latency,dsp,bram18k", metavar="A,B,...",
                   help="objectives to minimise, from latency, dsp, bram18k, uram, offchip "
                        "(default latency,dsp,bram18k)")
    p.add_argument("--method", choices=("auto", "exact", "nsga2"), default="auto",
                   help="exact enumeration, NSGA-II, or auto: exact when the legal tilings are few "
                        "enough (default)")
    p.add_argument("--time", type=positive_float, metavar="SECONDS",
                   help=f"search time (default {_DEFAULT_TIME_S:g} s for nsga2 when --samples is not "
                        "given; exact runs to completion unless given)")
    p.add_argument("--samples", type=positive_int, metavar="N", help="model evaluations at most")
    p.add_argument("--seed", type=seed, default=0,
                   help="random seed of nsga2, a non-negative integer (default 0)")
    p.add_argument("--reference", metavar="OBJ=VALUE,...",
                   help="reference point of the hypervolume (default: the usable budget of each "
                        "resource, the front's largest value of any other objective)")
    p.add_argument("--adrs", action="store_true",
                   help="also enumerate the exact front and report the ADRS of the found one")
    add_json(p, "the front (the same record as front.json)")
    p.add_argument("--out", metavar="DIR",
                   help="write front.json, front.csv and front.png into DIR (created if missing)")
    add_engine_options(p, "designs' exact fronts (with --method exact, no --time/--samples)")
    add_report(p, "the front (its points against DSP and BRAM, each design's share)")
    p.set_defaults(func=_cmd_pareto, outputs=outputs(("json", "file"), ("out", "folder"), ("report", "report")))
