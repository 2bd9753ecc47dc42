"""Transfer across CNN layers: time to the same per-layer quality with and without transfer.

Usage: python scripts/bench_transfer.py [--networks vgg16,resnet50] [--samples 10000]
       [--seeds 0,1] [--control-seeds 0] [--method evolutionary] [--ablations vgg16]
       [--report-only]

Per network and seed, tunes every unique layer shape (all 30 designs of kernels/cnn.c, 1D
and 2D arrays, ``--samples`` evaluations per design and shape, U250) from scratch and with
transfer (:func:`odyssey.network.transfer.tune_layers`: seeds, predicted design order and a
race of the designs), then compares the samples and seconds each needed to reach 99% of the
from-scratch result of every shape (:func:`odyssey.network.transfer_report.compare`). The
*control* (seeds in ``--control-seeds``) is the from-scratch run with the next seed, held
to the same threshold: it measures how often an equally good search misses 99% of another
run's best by chance (it is also the next seed's from-scratch run, run once). The ablations
(networks in ``--ablations``, first seed) run transfer without the race (seeds and predicted
order, the designs one after another: the first method), transfer with every design in the
race (no field) and the race without transfer (the design space's order, no seeds). All runs of a network take turns shape by shape
(:func:`odyssey.network.transfer.tune_together`), so their wall times see about the same
load. Writes docs/results/transfer.md and
docs/results/transfer/<network>_seed<k>.json (the comparisons only: totals and one row per
shape; ``odyssey network NET --transfer --json`` keeps every design's result).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "results"
#: mode -> (seed tilings, predicted design order, race, field)
MODES = {"transfer": (True, True, True, True), "no race (seeds, order)": (True, True, False, True),
         "no field (every design races)": (True, True, True, False),
         "race only (no transfer)": (False, False, True, True)}
CONTROL = "control (scratch, next seed)"


def run(network: str, seeds: list[int], args: argparse.Namespace) -> None:
    """Every run of ``network`` in one :func:`tune_together`: the runs take turns shape by
    shape, so their wall times are measured under about the same load."""
    from odyssey.network.networks import load_network
    from odyssey.network.transfer import Mode, tune_together
    from odyssey.network.transfer_report import compare, comparison_record
    from odyssey.platforms import load_platform

    net = load_network(network)
    controls = [s for s in seeds if s in args.control_seeds]
    scratch_seeds = sorted({*seeds, *(s + 1 for s in controls)})
    plan: list[tuple[str, int, Mode]] = [("scratch", s, Mode(transfer=False, seed=s))
                                         for s in scratch_seeds]
    for s in seeds:
        ablate = network in args.ablations.split(",") and s == seeds[0]
        for mode, (tilings, order, racing, field) in MODES.items():
            if mode == "transfer" or ablate:
                plan.append((mode, s, Mode(seed_tilings=tilings, order_designs=order,
                                           racing=racing, seed=s, field=field)))
    runs = tune_together(net, [m for _, _, m in plan], kernel=ROOT / "kernels" / "cnn.c",
                         platform=load_platform("u250"), samples=args.samples,
                         method=args.method)
    got = {(name, s): r for (name, s, _), r in zip(plan, runs, strict=True)}
    for s in seeds:
        base = got["scratch", s]
        out: dict[str, Any] = {"network": network, "title": net.title, "seed": s, "modes": {}}
        todo = [(name, r) for (name, seed), r in got.items() if seed == s and name != "scratch"]
        if s in controls:
            todo.append((CONTROL, got["scratch", s + 1]))
        for mode, t in todo:
            c = compare(base, t)
            out["modes"][mode] = comparison_record(c, base, t, runs=False)
            print(f"{network} seed {s} {mode}: {c.speedup_samples:.2f}x samples, "
                  f"{c.speedup_seconds:.2f}x seconds, unreached {list(c.unreached)} "
                  f"({t.seconds:.0f} s, from scratch {base.seconds:.0f} s)", flush=True)
        (OUT / "transfer").mkdir(parents=True, exist_ok=True)
        (OUT / "transfer" / f"{network}_seed{s}.json").write_text(json.dumps(out) + "\n")


def _totals(rec: dict[str, Any]) -> dict[str, Any]:
    return dict(rec["totals"])


def _label(mode: str, rec: dict[str, Any]) -> str:
    """``mode``, and the code it was run with if that is not the current code (``code`` in a
    record carried over from an earlier commit)."""
    return f"{mode} (run with {rec['code']})" if rec.get("code") else mode


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def write_md(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    from odyssey.network.transfer import FIELD_SCORE
    from odyssey.network.transfer_race import KEEP, RUNGS
    from odyssey.network.transfer_report import transfer_plot
    from odyssey.plots import draw

    samples = results[0]["modes"]["transfer"]["samples"] if results else args.samples
    method = results[0]["modes"]["transfer"]["method"] if results else args.method
    rungs = [math.ceil(r * samples) for r in RUNGS]
    nets = list(dict.fromkeys(r["network"] for r in results))
    commands = []
    for net in nets:  # the command line that made each network's results
        runs = [r for r in results if r["network"] == net]
        seeds = ",".join(str(r["seed"]) for r in runs)
        controls = ",".join(str(r["seed"]) for r in runs if CONTROL in r["modes"])
        ablate = any(m not in ("transfer", CONTROL) for r in runs for m in r["modes"])
        commands.append(f"`python scripts/bench_transfer.py --networks {net} --samples "
                        f"{samples} --seeds {seeds} --control-seeds {controls or 'none'}"
                        f" --ablations {net if ablate else 'none'}`")
    lines = [
        "# Transfer across CNN layers",
        "",
        f"Regenerate with {' and '.join(commands)} (the networks can run at once, one process "
        "each; then `--report-only` rewrites this page from `transfer/*.json`). Method: "
        "`docs/mfbo.md`, section *Transfer across layers*.",
        "",
        f"Every unique layer shape, all 30 designs of `kernels/cnn.c` (1D and 2D arrays), "
        f"{samples:,} evaluations of the {method} search per design and shape, U250. "
        "**Quality threshold: 99%** of the from-scratch result of each shape. *Time to 99%*: "
        "the samples (model evaluations) and seconds (wall time, model building included) "
        "until the shape's best first reached the threshold, every stretch of search counted "
        "in the order it ran: from scratch, the designs one after another in the design "
        f"space's order; with transfer, the race (every design predicted at "
        f"{FIELD_SCORE:.0%} of the best or better from the source shapes probed for "
        f"{rungs[0]:,} samples, its transferred seeds first, in the predicted order"
        + "".join(f", then the best {KEEP:.0%} of {'them' if k == 0 else 'those'} to {n:,}"
                  for k, n in enumerate(rungs[1:]))
        + f", then every racing design to {samples:,}, in the order of the better of its "
        "rank in the race and its predicted rank, then the designs outside the race, in the "
        "predicted order; the rungs are sized on all the designs). Every design gets the same "
        f"{samples:,} samples in both runs. A "
        "run that never reaches the threshold is charged its whole search of the shape. A "
        "shape shared by several layers is tuned once and counted once. The runs of a "
        "network took turns shape by shape, so their seconds were measured under about the "
        "same load (the machine was shared with other jobs).",
        "",
        "## Totals",
        "",
        "| network | seed | mode | samples to 99%: scratch | with transfer | fewer samples | "
        "seconds to 99%: scratch | with transfer | less time | shapes not reached |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        for mode, rec in r["modes"].items():
            t = _totals(rec)
            lines.append(
                f"| {r['network']} | {r['seed']} | {_label(mode, rec)} | {t['scratch_samples']:,} | "
                f"{t['transfer_samples']:,} | {t['speedup_samples']:.2f}x | "
                f"{t['scratch_seconds']:.1f} | {t['transfer_seconds']:.1f} | "
                f"{t['speedup_seconds']:.2f}x | {', '.join(t['unreached']) or '-'} |")
    lines += ["", "## Mean over seeds", "",
              "| network | mode | seeds | fewer samples to 99% (each seed) | mean | less time "
              "(each seed) | mean |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for net in nets:
        runs = [r for r in results if r["network"] == net]
        for mode in dict.fromkeys(m for r in runs for m in r["modes"]):
            recs = [r["modes"][mode] for r in runs if mode in r["modes"]]
            got = [_totals(rec) for rec in recs]
            xs = [t["speedup_samples"] for t in got]
            ts = [t["speedup_seconds"] for t in got]
            codes = ", ".join(dict.fromkeys(rec["code"] for rec in recs if rec.get("code")))
            label = f"{mode} (run with {codes})" if codes else mode
            if codes and len(got) > 1 and not all(rec.get("code") for rec in recs):
                label = f"{mode} (some seeds run with {codes})"
            lines.append(f"| {net} | {label} | {len(got)} | "
                         f"{', '.join(f'{x:.2f}x' for x in xs)} | {_mean(xs):.2f}x | "
                         f"{', '.join(f'{x:.2f}x' for x in ts)} | {_mean(ts):.2f}x |")
    verdict = []
    for net in nets:
        got = [_totals(r["modes"]["transfer"]) for r in results if r["network"] == net]
        xs, ts = [t["speedup_samples"] for t in got], [t["speedup_seconds"] for t in got]
        ok = min(xs) >= 2 and min(ts) >= 2
        verdict.append(f"{net} {min(xs):.2f}x fewer samples and {min(ts):.2f}x less time at "
                       f"worst, {'met' if ok else 'not met'}")
    lines += ["", "Target, the same per-shape quality in at most half the total time, on every "
              "seed, in samples and in seconds: " + "; ".join(verdict) + ".", ""]
    if results:
        plot = transfer_plot(results)
        draw(plot).savefig(OUT / "transfer" / plot.filename, dpi=110)
        lines += [f"![seconds to 99% per shape and in total](transfer/{plot.filename})", ""]
    for r in results:
        rec = r["modes"]["transfer"]
        lines += [
            "",
            f"## {r['title']}, seed {r['seed']}: per shape (transfer)",
            "",
            "*First to 99%*: the design whose search first reached the threshold, and its "
            "position in the design space's order (scratch) or in the predicted order "
            "(transfer).",
            "",
            "| layers | sizes (O I H W P Q) | from | scratch GOP/s | transfer GOP/s | first to "
            "99%: scratch | transfer | samples to 99%: scratch | transfer | seconds: scratch "
            "| transfer |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for s in rec["shapes"]:
            reached = "" if s["reached"] else " (not reached)"
            first = [f"{d} ({k})" if d else "-" for d, k in (s["scratch_design"],
                                                            s["transfer_design"])]
            lines.append(
                f"| {', '.join(s['layers'])} | {' '.join(str(v) for v in s['sizes'].values())} "
                f"| {', '.join(s['sources']) or '-'} | {s['scratch_gops']:.1f} | "
                f"{s['transfer_gops']:.1f} | {first[0]} | {first[1]} | "
                f"{s['scratch_samples']:,} | {s['transfer_samples']:,}{reached} | "
                f"{s['scratch_seconds']:.2f} | {s['transfer_seconds']:.2f} |")
    (OUT / "transfer.md").write_text("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--networks", default="vgg16,resnet50")
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--seeds", default="0", help="comma-separated seeds")
    ap.add_argument("--method", default="evolutionary")
    ap.add_argument("--control-seeds", default="0",
                    type=lambda v: [int(x) for x in v.split(",") if x.isdigit()],
                    help="seeds whose control (a from-scratch run with the next seed) is run")
    ap.add_argument("--ablations", default="vgg16",
                    help="networks that also run the ablations (no race; no field; race only), first "
                         "seed")
    ap.add_argument("--report-only", action="store_true",
                    help="only rewrite transfer.md from results/transfer/*.json")
    args = ap.parse_args()
    if not args.report_only:
        for n in args.networks.split(","):
            run(n, [int(s) for s in args.seeds.split(",")], args)
    # every run so far (several invocations accumulate), networks in --networks order
    order = {n: k for k, n in enumerate(args.networks.split(","))}
    results = sorted((json.loads(p.read_text()) for p in (OUT / "transfer").glob("*.json")),
                     key=lambda r: (order.get(r["network"], len(order)), r["seed"]))
    write_md(results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
