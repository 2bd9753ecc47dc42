"""`odyssey network NET --transfer`: tune every layer from scratch and with transfer from
similar layers, and report the time each needed to reach the same per-layer quality."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from odyssey.cli._common import ProgressLine, table
from odyssey.cli._output import emit_json, emit_text


def run_transfer(args: argparse.Namespace) -> int:
    from odyssey.cli._network_input import load_network_arg
    from odyssey.network.transfer import Mode, ProgressFn, TransferProgress, tune_together
    from odyssey.network.transfer_report import QUALITY, compare, comparison_record
    from odyssey.platforms import load_platform

    network = load_network_arg(args.network, args.input_shape)
    platform = load_platform(args.platform)
    history_doc, history = _load_history(args.history)
    time_s = args.time if args.time is not None or args.samples is not None else 2.0
    line = ProgressLine()

    def report(label: str) -> ProgressFn | None:
        def show(p: TransferProgress) -> None:
            line(f"{label}: shape {p.shape}/{p.shapes} [{p.layers}] design "
                 f"{p.design}/{p.designs} {p.design_id}: best {p.best_gops:.1f} GOP/s, "
                 f"{p.seconds:.0f} s")
        return show

    if args.no_compare:
        return _transfer_only(args, network, platform, time_s, history_doc, history,
                              report("with transfer"), line)
    try:
        runs = tune_together(
            network, [Mode(transfer=False, seed=args.seed), Mode(seed=args.seed)],
            kernel=args.kernel, dw_kernel=args.dw_kernel, platform=platform, design=args.design,
            samples=args.samples, time_s=time_s, method=args.method, history=history,
            progress=[report("from scratch"), report("with transfer")])
    finally:
        line.clear()
    scratch, transfer = runs
    c = compare(scratch, transfer, quality=QUALITY)  # the shapes both runs finished
    rows = [["layers", "kind", "sizes", "from", "scratch GOP/s", "transfer GOP/s",
             "scratch samples", "transfer samples", "scratch s", "transfer s"]]
    for s in c.shapes:
        rows.append([",".join(s.layers), s.kind, " ".join(f"{k}{v}" for k, v in s.sizes),
                     ",".join(s.sources) or "-", f"{s.scratch_gops:.1f}",
                     f"{s.transfer_gops:.1f}", f"{s.scratch_samples:,}",
                     f"{s.transfer_samples:,}" + ("" if s.reached else " (not reached)"),
                     f"{s.scratch_seconds:.1f}", f"{s.transfer_seconds:.1f}"])
    budget = (f"{args.samples} samples" if args.samples else f"{time_s:g} s") + " per design"
    print(f"{network.title}: {len(c.shapes)} unique shapes, design {args.design}, method "
          f"{args.method}, {budget}, seed {args.seed}")
    print(f"time to reach {QUALITY:.0%} of the from-scratch result of each shape (from "
          "scratch: the designs searched one after another; transfer: seeds from, and design "
          "order of, the nearest tuned shapes, then a race of the designs)")
    if not c.shapes:
        print("no shape was finished by both runs: nothing to compare")
    else:
        _print_comparison(c, rows)
    print(f"whole runs: {scratch.seconds:.1f} s from scratch, {transfer.seconds:.1f} s with "
          "transfer")
    emit_json(args.json, comparison_record(c, scratch, transfer))
    _save_history(args.history, history_doc, transfer, also=scratch)
    interrupted = scratch.interrupted or transfer.interrupted
    if interrupted:
        print(f"odyssey: interrupted; shapes finished: {len(scratch.shapes)} from scratch, "
              f"{len(transfer.shapes)} with transfer; the {len(c.shapes)} finished in both are "
              "compared", file=sys.stderr)
    return 130 if interrupted else 0


def _print_comparison(c: Any, rows: list[list[str]]) -> None:
    from odyssey.network.transfer_report import QUALITY

    print(table(rows))
    print(f"total to {QUALITY:.0%}: {c.scratch_samples:,} samples / {c.scratch_seconds:.1f} s "
          f"from scratch, {c.transfer_samples:,} samples / {c.transfer_seconds:.1f} s with "
          f"transfer: {c.speedup_samples:.2f}x fewer samples, {c.speedup_seconds:.2f}x less "
          "time")
    if c.unreached:
        print(f"not reached with transfer (charged the whole search): {', '.join(c.unreached)}")


def _transfer_only(args: argparse.Namespace, network: Any, platform: Any, time_s: float | None,
                   history_doc: Any, history: Any, progress: Any, line: ProgressLine) -> int:
    """``--no-compare``: the transfer run alone, printed as ``odyssey network`` prints."""
    from odyssey.cli.network_cmd import print_network
    from odyssey.network.transfer import tune_layers
    from odyssey.network.transfer_report import network_result

    try:
        run = tune_layers(network, kernel=args.kernel, dw_kernel=args.dw_kernel,
                          platform=platform, design=args.design, samples=args.samples,
                          time_s=time_s, seed=args.seed, method=args.method, history=history,
                          progress=progress)
    finally:
        line.clear()
    result = network_result(run, kernel=args.kernel, platform=platform,
                            dw_kernel=args.dw_kernel)
    print(f"tuned with transfer ({args.method}, "
          + (f"{args.samples} samples" if args.samples else f"{time_s:g} s")
          + f" per design and shape, seed {args.seed}) in {run.seconds:.1f} s")
    code = print_network(result, platform=platform.name, clock_mhz=platform.clock_mhz,
                         design=args.design, json_out=args.json)
    _save_history(args.history, history_doc, run)
    return code


def _load_history(path: str | None) -> tuple[Any, Any]:
    """The record in ``--history`` and its source shapes (None and none if it is not given
    or does not exist yet)."""
    from odyssey.errors import NetworkError
    from odyssey.network.transfer_history import history_sources

    if path is None or not Path(path).exists():
        return None, ()
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise NetworkError(f"{path}: cannot read the transfer history ({exc})") from exc
    return doc, history_sources(doc, origin=path)


def _save_history(path: str | None, old: Any, run: Any, *, also: Any = None) -> None:
    """Add ``run``'s shapes to ``old``, the record read from ``--history`` at the start, and
    write it there (whole, then renamed into place). The shapes of ``also`` (the from-scratch
    run) that ``run`` did not finish (it was interrupted) are added too: they were tuned."""
    from odyssey.network.transfer_history import merge_history

    if path is None:
        return
    mine = {s.index for s in run.shapes}
    extra = [s for s in (also.shapes if also is not None else ()) if s.index not in mine]
    doc = merge_history(old, also) if extra else old
    emit_text(path, json.dumps(merge_history(doc, run)) + "\n", "--history")
    print(f"history: {len(run.shapes) + len(extra)} shapes added to {path}")
