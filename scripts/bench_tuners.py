"""Benchmark every tuner on every MM design (Odyssey section 5.2, Figures 7-9).

    .venv/bin/python scripts/bench_tuners.py                      # 13 methods x 18 designs x 5 seeds x 5 s
    .venv/bin/python scripts/bench_tuners.py --seeds 3 --methods odyssey,annealing
    .venv/bin/python scripts/bench_tuners.py --quick              # MM 256^3, 3 designs, 2 seeds, 0.5 s
    .venv/bin/python scripts/bench_tuners.py --plot-only          # redraw from runs.json

Writes to ``--out`` (docs/results/tuners; docs/results/tuners-quick with --quick):
``tuners.csv`` (method, design, seed, budget point, best GOP/s, fraction of the optimum),
``summary.csv`` (median fraction per method and budget point), ``runs.json`` (every
run's trace), the figures ``quality_<budget>.png`` (Figure 7), ``convergence_samples.png``
(Figure 8), ``convergence_seconds.png`` and ``odyssey_time.png`` (Figure 9). Optima are
cached in docs/results/tuners/optimum.json, keyed by kernel, sizes, platform and design.
Single-threaded like the paper: BLAS threads are pinned to one before numpy loads.
``--workers N`` (or ``--scheduler ADDRESS``) runs the optima and the runs as tasks on Dask
workers (docs/cluster.md); the sample-budgeted runs give the same results, the time runs
want one idle core per worker.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import dataclasses  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from odyssey.studies.tuner_bench import (  # noqa: E402
    FULL,
    QUICK,
    BenchConfig,
    BenchProgress,
    BenchResult,
    Run,
    design_models,
    optima_for,
    run_bench,
)
from odyssey.studies.tuner_bench_plots import (  # noqa: E402
    convergence_figure,
    quality_figure,
    time_figure,
)
from odyssey.tune import TracePoint  # noqa: E402
from odyssey.tune.engine import Engine  # noqa: E402

CACHE = Path("docs/results/tuners/optimum.json")


def _write(path: Path, text: str | bytes) -> None:
    """Write atomically: a temporary sibling renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
    os.replace(tmp, path)


def _csv(rows: list[list[object]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _config(args: argparse.Namespace) -> BenchConfig:
    base = QUICK if args.quick else FULL
    changes: dict[str, object] = {}
    if args.designs:
        changes["designs"] = tuple(args.designs.split(","))
    if args.methods:
        changes["methods"] = tuple(args.methods.split(","))
    if args.seeds:
        changes["seeds"] = tuple(range(args.seeds))
    if args.seed_list:
        changes["seeds"] = tuple(int(v) for v in args.seed_list.split(","))
    if args.time:
        changes["time_s"] = args.time
        changes["at_seconds"] = tuple(sorted({s for s in base.at_seconds if s < args.time}
                                             | {args.time}))
    if args.samples:
        changes["samples"] = args.samples
    if args.sample_runs_only:
        changes["time_runs"] = False
    if args.time_runs_only:
        changes["sample_runs"] = False
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def _save_runs(result: BenchResult, path: Path) -> None:
    runs = [{**{k: getattr(r, k) for k in ("method", "design", "seed", "samples", "seconds",
                                           "stop_reason", "own_evaluations", "budget")},
             "trace": [[p.samples, p.seconds, p.throughput_gops] for p in r.trace]}
            for r in result.runs]
    cfg = result.config
    meta = {"kernel": str(cfg.kernel), "sizes": dict(cfg.sizes), "platform": cfg.platform,
            "designs": cfg.designs, "methods": cfg.methods, "seeds": cfg.seeds,
            "time_s": cfg.time_s, "samples": cfg.samples, "at_seconds": cfg.at_seconds,
            "at_samples": cfg.at_samples, "sample_runs": cfg.sample_runs,
            "sample_time_s": cfg.sample_time_s}
    # compact: the traces are most of it (2.7 MB indented, 1.7 MB like this, same values)
    _write(path, json.dumps({"config": meta, "optima": result.optima, "runs": runs},
                            separators=(",", ":")))


def _load_runs(path: Path) -> BenchResult:
    data = json.loads(path.read_text())
    c = data["config"]
    cfg = BenchConfig(kernel=Path(c["kernel"]), sizes=c["sizes"], platform=c["platform"],
                      designs=tuple(c["designs"]) if c["designs"] else None,
                      methods=tuple(c["methods"]), seeds=tuple(c["seeds"]), time_s=c["time_s"],
                      samples=c["samples"], at_seconds=tuple(c["at_seconds"]),
                      at_samples=tuple(c["at_samples"]),
                      sample_runs=c.get("sample_runs", False),
                      sample_time_s=c.get("sample_time_s", 30.0))
    runs = tuple(Run(r["method"], r["design"], r["seed"],
                     tuple(TracePoint(int(s), float(t), float(g)) for s, t, g in r["trace"]),
                     r["samples"], r["seconds"], r["stop_reason"], r.get("own_evaluations", 0),
                     r.get("budget"))
                 for r in data["runs"])
    return BenchResult(cfg, data["optima"], runs)


def _merged(old: BenchResult, new: BenchResult) -> BenchResult:
    """``old`` with ``new``'s runs added; a run of ``new`` replaces ``old``'s run of the
    same method, design, seed and budget."""
    a, b = old.config, new.config
    if (a.sizes, a.designs, a.time_s, a.samples, a.at_samples) != (
            b.sizes, b.designs, b.time_s, b.samples, b.at_samples):
        raise SystemExit("--merge: the earlier runs had other sizes, designs or budgets")
    methods = a.methods + tuple(m for m in b.methods if m not in a.methods)
    seeds = tuple(sorted(set(a.seeds) | set(b.seeds)))
    redone = {(r.method, r.design, r.seed, r.budget) for r in new.runs}
    runs = [r for r in old.runs if (r.method, r.design, r.seed, r.budget) not in redone]
    runs += list(new.runs)
    order = {m: k for k, m in enumerate(methods)}
    designs = list(old.optima)
    runs.sort(key=lambda r: (designs.index(r.design), order[r.method], r.seed, r.budget or 0))
    cfg = dataclasses.replace(a, methods=methods, seeds=seeds,
                              sample_runs=a.sample_runs or b.sample_runs)
    return BenchResult(cfg, old.optima, tuple(runs))


def _outputs(result: BenchResult, out: Path) -> list[str]:
    cfg = result.config
    records = result.records()
    rows: list[list[object]] = [["method", "design", "seed", "budget", "best_gops", "fraction"]]
    rows += [[r.method, r.design, r.seed, r.budget,
              "" if r.best_gops is None else f"{r.best_gops:.3f}",
              "" if r.fraction is None else f"{r.fraction:.4f}"] for r in records]
    _write(out / "tuners.csv", _csv(rows))
    budgets = list(dict.fromkeys(r.budget for r in records))
    summary: list[list[object]] = [["method", "statistic", *budgets]]
    lines = []
    for stat, title in (("median", "median over designs"), ("worst", "worst design")):
        lines += [f"fraction of the optimum, median over seeds, {title}:",
                  "| method | " + " | ".join(budgets) + " |",
                  "| --- |" + " --- |" * len(budgets)]
        for m in cfg.methods:
            vals = [result.median_fraction(m, b) if stat == "median" else
                    result.worst_fraction(m, b) for b in budgets]
            summary.append([m, stat, *("" if v is None else f"{v:.4f}" for v in vals)])
            lines.append(f"| {m} | " + " | ".join("n/a" if v is None else f"{v:.3f}"
                                                  for v in vals) + " |")
    _write(out / "summary.csv", _csv(summary))
    if "odyssey" in cfg.methods:
        lines += ["", "designs where a method is ahead of odyssey (median over seeds, by more "
                  "than 0.1% of the optimum):", "| budget | " + " | ".join(
                      m for m in cfg.methods if m != "odyssey") + " |",
                  "| --- |" + " --- |" * (len(cfg.methods) - 1)]
        for b in budgets:
            ours = result.per_design("odyssey", b)
            cells = []
            for m in cfg.methods:
                if m == "odyssey":
                    continue
                theirs = result.per_design(m, b)
                ahead = [d for d, v in theirs.items() if d in ours and v > ours[d] + 1e-3]
                cells.append(str(len(ahead)) + (f" ({', '.join(ahead)})" if 0 < len(ahead) <= 3
                                                else ""))
            lines.append(f"| {b} | " + " | ".join(cells) + " |")
    top = max(result.optima, key=lambda d: result.optima[d])
    figures = {f"quality_{b}.png": quality_figure(result, b) for b in
               (f"{s:g}s" for s in cfg.at_seconds)}
    figures["convergence_samples.png"] = convergence_figure(result, top, "samples")
    figures["convergence_seconds.png"] = convergence_figure(result, top, "seconds")
    if "odyssey" in cfg.methods:
        figures["odyssey_time.png"] = time_figure(result, "odyssey")
    for name, fig in figures.items():
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        _write(out / name, buf.getvalue())
    lines.append(f"design with the highest optimum: {top} ({result.optima[top]:.1f} GOP/s)")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--designs", help="comma-separated design ids (default: all)")
    ap.add_argument("--methods", help="comma-separated tuner names (default: all 13)")
    ap.add_argument("--seeds", type=int, help="number of seeds 0..N-1 (default 5)")
    ap.add_argument("--seed-list", help="comma-separated seeds (instead of --seeds), e.g. 3,4")
    ap.add_argument("--time", type=float, help="seconds per run (default 5)")
    ap.add_argument("--samples", type=int, help="also stop each run after this many samples")
    ap.add_argument("--sample-runs-only", action="store_true",
                    help="only the sample-budgeted runs of the methods that adapt to their "
                         "budget (to --merge into earlier time runs)")
    ap.add_argument("--time-runs-only", action="store_true",
                    help="no sample-budgeted runs (the sample checkpoints are read from the time runs)")
    ap.add_argument("--merge-from", type=Path, nargs="+", metavar="RUNS_JSON",
                    help="merge these runs.json files into OUT/runs.json and redraw")
    ap.add_argument("--quick", action="store_true", help="MM 256^3, 3 designs, 2 seeds, 0.5 s")
    ap.add_argument("--out", type=Path, help="output directory")
    ap.add_argument("--plot-only", action="store_true", help="redraw from OUT/runs.json")
    ap.add_argument("--workers", type=int, default=1,
                    help="run the optima and the runs on a local Dask cluster of N processes "
                         "(docs/cluster.md; time runs want one idle core each)")
    ap.add_argument("--scheduler", metavar="ADDRESS", help="... or on the Dask cluster at ADDRESS")
    ap.add_argument("--merge", action="store_true",
                    help="replace the runs of --methods in OUT/runs.json (same designs, seeds "
                         "and budget) and keep the other methods' runs")
    args = ap.parse_args(argv)
    out = args.out or Path("docs/results/tuners-quick" if args.quick else "docs/results/tuners")
    if args.merge_from:
        result = _load_runs(out / "runs.json")
        for path in args.merge_from:
            result = _merged(result, _load_runs(path))
        _save_runs(result, out / "runs.json")
    elif args.plot_only:
        result = _load_runs(out / "runs.json")
    else:
        cfg = _config(args)
        cache = json.loads(CACHE.read_text()) if CACHE.is_file() else {}
        start = time.perf_counter()
        models = design_models(cfg)
        print(f"optima of {len(models)} designs ...", flush=True)
        engine = Engine(workers=args.workers, scheduler=args.scheduler)

        def notice(text: str) -> None:
            print(f"note: {text}", flush=True)

        optima = optima_for(cfg, models, cache, engine=engine, on_notice=notice)
        _write(CACHE, json.dumps(dict(sorted(cache.items())), indent=1))
        runs = len(models) * len(cfg.methods) * len(cfg.seeds)
        print(f"{runs} time runs of {cfg.time_s:g} s (about {runs * cfg.time_s / 60:.0f} min), "
              "plus sample-budgeted runs of the methods that adapt to their budget", flush=True)

        def report(p: BenchProgress) -> None:
            kind = f"{p.budget} samples" if p.budget is not None else f"{cfg.time_s:g} s"
            print(f"[{p.done}/{p.total}] {p.design:8s} {p.method:13s} seed {p.seed} {kind:>13s}: "
                  f"{p.fraction:6.1%} of optimum  ({time.perf_counter() - start:.0f} s)",
                  flush=True)

        result = run_bench(cfg, optima=optima, progress=report, engine=engine, on_notice=notice)
        if args.merge:
            result = _merged(_load_runs(out / "runs.json"), result)
        _save_runs(result, out / "runs.json")
    for line in _outputs(result, out):
        print(line)
    print(f"wrote {out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
