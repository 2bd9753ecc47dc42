"""`odyssey tune --method mfbo`: multi-fidelity Bayesian optimization over the model's best
designs, confirmed by an expensive fidelity (``--fidelity sim``: the timed simulation;
``--fidelity hls``: the Vitis HLS synthesis report; ``--fidelity model``: the accurate model
above the ``max`` variant)."""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import Any

from odyssey.cli._common import ProgressLine, defines, table
from odyssey.cli._output import emit_dir, emit_json
from odyssey.errors import OdysseyError

DEFAULT_BUDGET = 20


def run_mfbo_command(args: argparse.Namespace) -> int:
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.platforms import load_platform
    from odyssey.tune.fidelity.mfbo import MFBOStep, run_mfbo
    from odyssey.tune.fidelity.mfbo_fidelity import (
        SCREEN_SAMPLES,
        SIMULATABLE_MAX_DIM,
        TOP_K,
        HlsFidelity,
        ModelFidelity,
        TimedSimFidelity,
        model_candidates,
    )

    if args.method != "mfbo":
        raise OdysseyError(f"--fidelity {args.fidelity} and --budget apply to --method mfbo only, "
                           f"not --method {args.method}")
    if args.mp_objective is not None or args.mp_solver is not None:
        raise OdysseyError("--mp-objective and --mp-solver apply to --method odyssey only, "
                           "not --method mfbo")
    from odyssey.codegen.hls_report import VITIS_HLS, vitis_hls

    sim = args.fidelity == "sim"
    hls = args.fidelity == "hls"
    if sim and shutil.which("g++") is None:
        raise OdysseyError("--fidelity sim runs the timed simulation with g++, which is not on "
                           "PATH; install it or use --fidelity model")
    if hls and vitis_hls() is None:
        raise OdysseyError(f"--fidelity hls runs Xilinx Vitis HLS (`{VITIS_HLS}`), which is not "
                           "on PATH: source Vitis's settings64.sh (or name the executable in "
                           "$ODYSSEY_VITIS_HLS), or use --fidelity sim")
    budget = args.budget or DEFAULT_BUDGET
    ks = analyse(load_scop(args.kernel, defines(args.define)), max_dim=SIMULATABLE_MAX_DIM)
    designs = ks.designs if args.design == "all" else (ks.design(args.design),)
    platform = load_platform(args.platform)
    low, high = ("accurate", args.fidelity) if sim or hls else ("max", "accurate")
    line = ProgressLine()
    line(f"screening {len(designs)} design(s) on the {low} model ...", force=True)
    pool = model_candidates(ks, platform=platform, designs=designs, top_k=TOP_K,
                            samples=args.samples or SCREEN_SAMPLES, seed=args.seed, variant=low)
    if not pool:
        print("no feasible design point found")
        return 2
    expensive = (TimedSimFidelity(ks, platform=args.platform) if sim
                 else HlsFidelity(ks, platform=args.platform) if hls
                 else ModelFidelity.build(ks, designs, platform=platform, variant="accurate"))

    def report(s: MFBOStep) -> None:
        m = s.measurement
        got = f"{m.cycles:,.0f}" if m.cycles else m.status
        line(f"[{s.index + 1}/{budget}] {s.candidate.design}: {high} {got} cycles "
             f"(model {s.candidate.model_cycles:,.0f})", force=True)

    try:
        result = run_mfbo(pool, expensive, budget=budget, seed=args.seed, progress=report)
    finally:
        line.clear()
    best, blind = result.best, result.blind
    rows = [["#", "", "design", f"{low} cycles", f"{high} cycles", "error", "DSP",
             "seconds", "tiling"]]
    for s in result.steps:
        m = s.measurement
        mark = ("*" if s is best else "") + ("m" if s.pool_index == 0 else "")
        rows.append([str(s.index + 1), mark, s.candidate.design, f"{s.candidate.model_cycles:,.0f}",
                     f"{m.cycles:,.0f}" if m.cycles else f"{m.status}",
                     f"{100 * s.model_error:+.2f}%" if s.model_error is not None else "-",
                     f"{s.candidate.dsp:,.0f}", f"{m.seconds:.1f}", s.candidate.describe()])
    print(f"MFBO over the {low} model's {len(pool)} best points of {len(designs)} design(s); "
          f"expensive fidelity: {high}, {len(result.steps)} of {budget} evaluations "
          f"({result.expensive_seconds:.1f} s)")
    print(table(rows))
    print(f"* confirmed best; m the {low} model's own best; error = ({low} - {high}) / {high}")
    if best is not None:
        assert best.measurement.cycles is not None
        print(f"confirmed best: design {best.candidate.design} at {best.measurement.cycles:,.0f} "
              f"{high} cycles ({low} model {best.candidate.model_cycles:,.0f}); tiling "
              f"{best.candidate.describe()}")
        if blind is not None and blind.measurement.cycles:
            gap = blind.measurement.cycles / best.measurement.cycles - 1
            print(f"the {low} model's own best ({blind.candidate.design}) measures "
                  f"{blind.measurement.cycles:,.0f} {high} cycles: {100 * gap:+.2f}% vs the "
                  "confirmed best")
    else:
        print(f"no evaluation succeeded with the {high} fidelity")
    emit_json(args.json, _record(args, result, low, high))
    if args.emit and best is not None:
        from odyssey.codegen.generate import generate
        from odyssey.codegen.writer import write_design

        gen = generate(ks, ks.design(best.candidate.design), dict(best.candidate.tiling),
                       seed=args.seed, command=["odyssey", *sys.argv[1:]], platform=args.platform)
        out = emit_dir(args.emit, lambda path: write_design(gen, path), "--emit")
        print(f"wrote {out}/ for design {best.candidate.design}")
    if result.interrupted:
        print("odyssey: interrupted; the evaluations so far are listed", file=sys.stderr)
        return 130
    return 0 if best is not None else 2


def _record(args: argparse.Namespace, result: Any, low: str, high: str) -> dict[str, Any]:
    def step(s: Any) -> dict[str, Any]:
        m = s.measurement
        return {"index": s.index, "design": s.candidate.design,
                "tiling": dict(s.candidate.tiling), "low_cycles": s.candidate.model_cycles,
                "high_cycles": m.cycles, "status": m.status, "message": m.message,
                "seconds": m.seconds, "dsp": s.candidate.dsp, "bram18k": s.candidate.bram18k,
                "model_rank": s.pool_index + 1, "predicted_cycles": s.predicted_cycles,
                "acquisition_per_s": s.acquisition}

    best, blind = result.best, result.blind
    return {"kernel": str(args.kernel), "method": "mfbo", "low_fidelity": low,
            "high_fidelity": high, "budget": result.budget, "pool": result.pool_size,
            "seed": args.seed, "seconds": result.seconds, "interrupted": result.interrupted,
            "best": step(best) if best else None, "model_best": step(blind) if blind else None,
            "evaluations": [step(s) for s in result.steps]}
