"""Validate the latency model against the timed simulation of the generated designs.

Usage: python scripts/validate_model.py [--tilings 5] [--jobs 2] [--seed 0] [--kernels mm,cnn]

For every design of MM 64x64x64 and CNN [I,O,H,W,P,Q] = [16,16,16,16,3,3] (the paper's
Table 5 validation sizes), draws random tilings (at least one with non-divisor array
partitioning and one with SIMD > 1 per design; arrays of at most 4 PEs per dimension so the
simulation stays quick), generates each design, runs its timed simulation and evaluates the
model at the same tiling. Writes docs/results/validation.csv, docs/results/validation.png
(model vs simulation) and docs/validation.md (method, summary and the per-design table).
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"mm": {"I": "64", "J": "64", "K": "64"},
         "cnn": {"I": "16", "O": "16", "H": "16", "W": "16", "P": "3", "Q": "3"}}


def random_tilings(design, rng: np.random.Generator, count: int) -> list[dict[str, int]]:  # type: ignore[no-untyped-def]
    """``count`` legal tilings: #0 non-divisor array partitioning, #1 SIMD > 1, the rest mixed."""
    out: list[dict[str, int]] = []
    for k in range(count):
        t: dict[str, int] = {}
        lv2 = {p.loop: p for p in design.params if p.level != "array_part"}
        for b in design.band:
            e = b.extent
            p2 = lv2.get(b.name)
            if b.name in design.space_loops:
                t2 = int(rng.choice([d for d in (1, 2, 3, 4) if d <= e])) if p2 else 1
                pes = int(rng.integers(1, min(4, max(1, e // t2)) + 1))
                t1 = min(e, pes * t2)
                t1 -= t1 % t2
                t1 = max(t1, t2)
            else:
                t1 = int(rng.integers(1, e + 1))
                if k == 0 and e > 2:  # a non-divisor
                    cands = [x for x in range(2, e) if e % x]
                    t1 = int(rng.choice(cands)) if cands else t1
                t2 = 1
                if p2 is not None:
                    divs = [d for d in (1, 2, 4, 8) if t1 % d == 0 and d <= p2.upper]
                    t2 = int(rng.choice(divs))
            if p2 is not None and p2.level == "simd" and k == 1 and b.name not in design.space_loops:
                if t1 % 2:
                    t1 = min(e, t1 + 1) if (t1 + 1) <= e else max(2, t1 - 1)
                t2 = 4 if t1 % 4 == 0 else (2 if t1 % 2 == 0 else 1)
            t[f"T_{b.name}1"] = t1
            if p2 is not None:
                t[p2.name] = t2
        out.append(t)
    return out


def run_one(job: tuple[str, str, dict[str, int]]) -> dict[str, object]:
    from odyssey.codegen.generate import generate
    from odyssey.codegen.timedsim import run_timed_sim
    from odyssey.codegen.writer import write_design
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import model_from_descriptor
    from odyssey.platforms import load_platform

    kernel, design_id, tiling = job
    ks = analyse(load_scop(ROOT / "kernels" / f"{kernel}.c", SIZES[kernel]))
    d = ks.design(design_id)
    gen = generate(ks, d, tiling)
    model = model_from_descriptor(gen.descriptor, load_platform("u250"))
    pred = model.evaluate_one(gen.descriptor["tiling"])
    with tempfile.TemporaryDirectory() as tmp:
        res = run_timed_sim(write_design(gen, Path(tmp) / "d"), timeout_s=600)
    bounds = {k: v for k, v in pred.items() if k.startswith("bound:")}
    return {"kernel": kernel, "design": design_id, "tiling": ",".join(f"{k}={v}" for k, v in tiling.items()),
            "status": res.status, "simulated": res.cycles, "model": float(pred["latency_cycles"]),
            "error_pct": (100.0 * (float(pred["latency_cycles"]) - res.cycles) / res.cycles) if res.cycles else None,
            "bottleneck": max(bounds, key=lambda k: bounds[k])[len("bound:"):] if bounds else "",
            "padded": float(pred["padding_ratio"]) > 1.0, "simd": gen.descriptor["compute"]["simd_lanes"]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilings", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kernels", default="mm,cnn")
    ap.add_argument("--out", default=str(ROOT / "docs"))
    ap.add_argument("--remodel", action="store_true",
                    help="re-evaluate the model on docs/results/validation.csv without simulating again")
    args = ap.parse_args()
    if args.remodel:
        return remodel(Path(args.out), seed=args.seed, tilings=args.tilings)
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse

    rng = np.random.default_rng(args.seed)
    jobs = []
    for kernel in args.kernels.split(","):
        ks = analyse(load_scop(ROOT / "kernels" / f"{kernel}.c", SIZES[kernel]))
        for d in ks.designs:
            for t in random_tilings(d, rng, args.tilings):
                jobs.append((kernel, d.id, t))
    t0 = time.perf_counter()
    rows = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for r in pool.map(run_one, jobs):
            rows.append(r)
            err = f"{r['error_pct']:+6.2f}%" if r["error_pct"] is not None else "  n/a"
            print(f"{r['kernel']:4s} {r['design']:14s} {r['status']:6s} sim={r['simulated']} model={r['model']:.0f} "
                  f"{err} [{r['bottleneck']}] {r['tiling']}", flush=True)
    ok = [r for r in rows if r["status"] == "pass" and r["error_pct"] is not None]
    errs = np.array([abs(float(r["error_pct"])) for r in ok])  # type: ignore[arg-type]
    print(f"{len(ok)} of {len(rows)} simulated; mean |error| {errs.mean():.2f}%, max {errs.max():.2f}% "
          f"({time.perf_counter() - t0:.0f} s)")
    write_outputs(rows, Path(args.out), seed=args.seed, tilings=args.tilings)
    return 0 if len(ok) == len(rows) else 1


def model_only(row: dict[str, object]) -> dict[str, object]:
    """The model's prediction for a row of a previous run (its simulation is kept)."""
    from odyssey.codegen.generate import generate
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import model_from_descriptor
    from odyssey.platforms import load_platform

    kernel = str(row["kernel"])
    tiling = {k: int(v) for k, v in (x.split("=") for x in str(row["tiling"]).split(","))}
    ks = analyse(load_scop(ROOT / "kernels" / f"{kernel}.c", SIZES[kernel]))
    gen = generate(ks, ks.design(str(row["design"])), tiling)
    pred = model_from_descriptor(gen.descriptor, load_platform("u250")).evaluate_one(gen.descriptor["tiling"])
    bounds = {k: v for k, v in pred.items() if k.startswith("bound:")}
    sim = int(str(row["simulated"])) if row["simulated"] not in ("", None, "None") else None
    out = dict(row)
    out["simulated"] = sim
    out["model"] = float(pred["latency_cycles"])
    out["error_pct"] = 100.0 * (out["model"] - sim) / sim if sim else None  # type: ignore[operator]
    out["bottleneck"] = max(bounds, key=lambda k: bounds[k])[len("bound:"):] if bounds else ""
    return out


def remodel(docs: Path, *, seed: int, tilings: int) -> int:
    with (docs / "results" / "validation.csv").open() as f:
        rows = [model_only(r) for r in csv.DictReader(f)]
    ok = [r for r in rows if r["error_pct"] is not None]
    errs = np.array([abs(float(r["error_pct"])) for r in ok])  # type: ignore[arg-type]
    print(f"re-modelled {len(ok)} points: mean |error| {errs.mean():.2f}%, max {errs.max():.2f}%")
    write_outputs(rows, docs, seed=seed, tilings=tilings)
    return 0


def write_outputs(rows: list[dict[str, object]], docs: Path, *, seed: int, tilings: int) -> None:
    res = docs / "results"
    res.mkdir(parents=True, exist_ok=True)
    with (res / "validation.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    ok = [r for r in rows if r["status"] == "pass" and r["error_pct"] is not None]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 6))
    for kernel, color in (("mm", "tab:blue"), ("cnn", "tab:orange")):
        pts = [r for r in ok if r["kernel"] == kernel]
        if pts:
            ax.scatter([r["simulated"] for r in pts], [r["model"] for r in pts], s=14, c=color,
                       label=f"{kernel.upper()} ({len(pts)} points)", alpha=0.7)
    lo = min(float(r["simulated"]) for r in ok)  # type: ignore[arg-type]
    hi = max(float(r["simulated"]) for r in ok)  # type: ignore[arg-type]
    ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="model = simulation")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("timed simulation latency (cycles)")
    ax.set_ylabel("model latency (cycles)")
    errs = [abs(float(r["error_pct"])) for r in ok]  # type: ignore[arg-type]
    ax.set_title(f"Latency model vs timed simulation\nmean |error| {np.mean(errs):.2f}%, max {np.max(errs):.2f}%")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(res / "validation.png", dpi=120)
    per: dict[tuple[str, str], list[float]] = {}
    for r in ok:
        per.setdefault((str(r["kernel"]), str(r["design"])), []).append(abs(float(r["error_pct"])))  # type: ignore[arg-type]
    lines = [
        "# Latency model validation", "",
        "Regenerate with `python scripts/validate_model.py` (seed "
        f"{seed}, {tilings} random tilings per design, about 17 minutes on 2 cores).", "",
        "## Method", "",
        "The Odyssey paper validates its model against RTL simulation. Without vendor tools, odyssey",
        "validates against a cycle-level simulation of the very C++ it generates (`odyssey sim`): the",
        "same sources, built with `-DODYSSEY_TIMED`, give every module thread a clock; pipelined loops",
        "issue one iteration per II after their depth, FIFO items carry the cycle they were written,",
        "a full FIFO holds its writer until the reader frees a slot, ping-pong blocks are handed over",
        "at the cycle their lock is released, and DRAM accesses pay the platform's per-burst overhead.",
        "The model (`odyssey.model`) is built from the descriptor only and evaluated at the same tiling.",
        "Workloads are the paper's Table 5 sizes: MM 64x64x64 and CNN [I,O,H,W,P,Q] = [16,16,16,16,3,3];",
        "every design gets random tilings including non-divisor array partitioning and SIMD > 1.", "",
        "## Summary", "",
        f"- points simulated: {len(ok)} of {len(rows)}",
        f"- mean absolute latency error: {np.mean(errs):.2f}%",
        f"- largest error: {np.max(errs):.2f}%",
        f"- designs whose largest error exceeds 5%: {sum(1 for v in per.values() if max(v) > 5)} of {len(per)}", "",
        "![model vs simulation](results/validation.png)", "",
        "## Per design", "",
        "| kernel | design | points | mean abs. error | max abs. error |",
        "| --- | --- | --- | --- | --- |",
    ]
    for (k, d), v in sorted(per.items()):
        lines.append(f"| {k} | {d} | {len(v)} | {np.mean(v):.2f}% | {np.max(v):.2f}% |")
    lines += ["", "Every point (tiling, bottleneck, both latencies) is in `results/validation.csv`.", "",
              "## What the first models missed", "",
              "The model was improved (never the simulation) until it met the target:", "",
              "1. The first generated PEs drained their accumulators themselves, stalling compute while",
              "   the shared drain chain emptied (MM 64^3 `ij-ij.k`: model -34% off). That was a hardware",
              "   weakness: the accumulator is now double-buffered between a PE's compute and drain",
              "   processes (the design got 31% faster) and the model's PE term became exact.",
              "2. With that, the first full run had a mean error of 0.64% but a maximum of 11.3%, all on",
              "   orderings whose partial sums leave the array: the L3 module reads them back on only",
              "   some visits, so visits alternate between a write phase and a slower read+write phase.",
              "   The model's max-of-sums missed that each phase runs at its own slowest stage; the",
              "   `phases` term (sum of per-phase maxima, less the two-deep buffers' slack) fixed it.",
              "3. The epilogue counted the drained elements but not the L3 writer's burst overheads.",
              "4. The phase term added the whole prologue even when an input reader, already counted in",
              "   its steady state, was the slowest stage; it now starts after min(first load, one tile).",
              "5. (2026-11-25) Those orderings now run one dataflow region per pass (`docs/vitis.md`): no",
              "   process reads back what its own region writes, and the `phases` term went with the",
              "   read-and-write L3 module. The first model of the passes (every pass at the average",
              "   pace) was 1.75% off on average and 34% at worst; passes that read partial sums back",
              "   and passes that do not are now modelled at their own pace, and the partial-sum reader",
              "   is a reader that starts with the region (not a chain module after the prologue).",
              "   The largest errors left are on those designs, where the reader of partial sums and",
              "   the writer overlap within a pass in ways the max of per-module bounds approximates.",
              "",
              "## What model-vs-simulation does and does not test",
              "",
              "Both take the same assumptions from `platforms/` (`assumptions.json`, the platform's",
              "`burst_overhead_cycles`): the I/O pipeline depth, the FIFO depth, the per-burst DRAM",
              "overhead and the restart between passes. The comparison checks how module latencies",
              "combine into the design's latency (fill, drain, stalls, passes), not those values.",
              "The operator latencies (`optable.json`) are shared too; `odyssey check` recomputes the",
              "PE's II from the printed code with them.",
              "",
              "## Where it is still off: larger arrays",
              "",
              "The validation's arrays have at most 4 PEs per dimension. On the model's own best points,",
              "with larger arrays and SIMD factors, it was optimistic by 7% (MM 64^3) to 15% (CNN) on",
              "average (`docs/results/mfbo.md`, before the passes). One point, looked at module by module",
              "(`odyssey sim DIR --compare` against `odyssey model`): MM 64^3 `i-ij.k` at",
              "`T_i1=22,T_i2=2,T_j1=64,T_j2=1,T_k1=32,T_k2=32` (11 PEs in a row): the drain of the last",
              "tile takes 2,530 simulated cycles where the model's drain term is 1,849; each PE's drain",
              "ends 169 cycles after the previous one's, so the drain chain's per-module overheads grow",
              "with the number of PEs, which the model's epilogue undercounts. This is where the next",
              "model correction goes.",
              "",
              "Re-evaluate the model on the stored simulations with `python scripts/validate_model.py",
              "--remodel` (seconds); a full run re-simulates every point (about 17 minutes on 2 cores).", ""]
    (docs / "validation.md").write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
