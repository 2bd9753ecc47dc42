"""`odyssey network`: per-layer tuning of a CNN."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from odyssey.cli._common import (
    PLATFORM_HELP,
    SEED_HELP,
    ProgressLine,
    add_clock,
    kernel_file,
    positive_float,
    positive_int,
    seed,
    table,
)
from odyssey.cli._engine import TaskProgress, add_engine_options, engine_from
from odyssey.cli._network_input import INPUT_SHAPE_HELP, input_shape, load_network_arg
from odyssey.cli._output import add_json, add_report, emit_json, emit_report, outputs
from odyssey.errors import OdysseyError
from odyssey.platforms import DEFAULT_PLATFORM


def _cmd_network(args: argparse.Namespace) -> int:
    from odyssey.network.network_tuning import NetworkProgress, tune_network
    from odyssey.network.networks import network_document
    from odyssey.platforms import at_clock, load_platform

    engine = engine_from(args)
    if args.dtype != "fp32":
        from odyssey.frontend.bundled import bundled_kernel

        if args.kernel != str(bundled_kernel("cnn")) or args.dw_kernel or args.mm_kernel:
            raise OdysseyError(f"--dtype {args.dtype} chooses the bundled {args.dtype} kernels "
                               f"(kernels/{args.dtype}/: cnn.c, dwconv.c, mm.c and the stride-2 ones); "
                               "give either it or --kernel/--dw-kernel/--mm-kernel")
        args.kernel = str(bundled_kernel(f"{args.dtype}/cnn"))
    if args.mm_kernel is not None and (args.shared_array or args.transfer):
        raise OdysseyError("--mm-kernel applies to the per-layer tuning, not to --shared-array "
                           "or --transfer (they take matmul layers' kernel as mm.c next to "
                           "--kernel)")
    if (args.table or args.dry_run) and (args.shared_array or args.transfer):
        raise OdysseyError("--table and --dry-run apply to the per-layer tuning, not to "
                           "--shared-array or --transfer")
    if args.dry_run and args.json:
        raise OdysseyError("--dry-run tunes nothing, so there is no --json result; write the "
                           "layer table with --table FILE")
    if engine.distributed and (args.shared_array or args.transfer):
        raise OdysseyError("--workers and --scheduler apply to the per-layer tuning, not to "
                           "--shared-array or --transfer")
    if args.shared_array:
        from odyssey.cli._shared_array import run_shared_array

        return run_shared_array(args)
    if (args.no_compare or args.history) and not args.transfer:
        raise OdysseyError("--no-compare and --history apply to --transfer only")
    if args.method is None:  # the transfer race was measured with the evolutionary search
        args.method = "evolutionary" if args.transfer else "odyssey"
    if args.transfer:
        from odyssey.cli._transfer import run_transfer

        return run_transfer(args)
    network = load_network_arg(args.network, args.input_shape)
    if args.table:
        emit_json(args.table, network_document(network), option="--table")
    if args.dry_run:
        return _print_layers(network, kernel=args.kernel, dw_kernel=args.dw_kernel,
                             mm_kernel=args.mm_kernel)
    platform = at_clock(load_platform(args.platform), args.clock)
    time_s = args.time if args.time is not None or args.samples is not None else 2.0
    line = ProgressLine()

    def report(p: NetworkProgress) -> None:
        t = p.tuner
        best = max(p.best_gops, t.best_throughput_gops if t else 0.0)
        phase = f"{p.phase} " if p.phase != "full" else ""
        line(f"[shape {p.shape}/{p.shapes}: {','.join(p.layers)}] {phase}design "
             f"{p.design}/{p.designs} {p.design_id}: best {best:.1f} GOP/s, {p.seconds:.0f} s")

    tasks = TaskProgress(engine, None, _task_gops, "task",
                         group=lambda key: " ".join(key.split(" ")[:2])) \
        if engine.distributed else None
    try:
        result = tune_network(network, kernel=args.kernel, dw_kernel=args.dw_kernel,
                              mm_kernel=args.mm_kernel, platform=platform, design=args.design, time_s=time_s,
                              samples=args.samples, seed=args.seed, method=args.method,
                              progress=report, engine=engine, schedule=args.schedule,
                              on_task=tasks.done if tasks else None,
                              on_notice=tasks.notice if tasks else None)
    finally:
        line.clear()
    return print_network(result, platform=platform.name, clock_mhz=platform.clock_mhz,
                         design=args.design, json_out=args.json, report_out=args.report)


def _task_gops(value: Any) -> float | None:
    """The best GOP/s of a finished task's designs (None: no feasible tiling)."""
    gops = [r.trial.throughput_gops for r in value if r.trial is not None]
    return max(gops) if gops else None


def print_network(result: Any, *, platform: str, clock_mhz: float, design: str,
                  json_out: str | None, report_out: str | None = None) -> int:
    """Print the per-layer table and totals of a :class:`NetworkResult`, write its JSON to
    ``json_out``; the exit status."""
    from odyssey.network.network_tuning import network_record
    from odyssey.network.networks import unique_shapes

    network = result.network
    n_shapes = len(unique_shapes(network))
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
        cycles = r.layer.batch * s.latency_cycles
        rows.append([*head, s.design, f"{s.throughput_gops:.1f}", f"{cycles:,.0f}",
                     f"{cycles / (result.clock_mhz * 1e3):.3f}",
                     f"{s.dsp_efficiency:.0%}", str(s.mac_lanes), f"{s.dsp:,.0f}",
                     f"= {r.duplicate_of}" if r.duplicate_of else
                     ",".join(f"{k}={v}" for k, v in s.tiling)])
    print(f"{network.title} on {platform} at {clock_mhz:g} MHz: "
          f"{len(network.layers)} layers, {n_shapes} unique shapes, design {design}")
    print(table(rows))
    for s in result.shapes:
        if s.note:
            print(f"note: {', '.join(s.layers)}: {s.note}")
        for d in s.designs:
            if d.error:
                print(f"note: {', '.join(s.layers)}: design {d.design} failed: {d.error}")
    kinds = " + ".join(f"{n} {kind}" for kind, n in result.tuned_kinds.items())
    print(f"total: {result.latency_cycles:,.0f} cycles = {result.latency_ms:.3f} ms, "
          f"{result.ops / 1e9:.3f} GOP, {result.throughput_gops:.1f} GOP/s overall "
          f"({kinds or 'no'} layers, {len(result.layers) - len(result.missing)} of "
          f"{len(result.layers)}; tuned in {result.seconds:.1f} s)")
    print("DSP eff = throughput / (2 * MAC lanes * clock); lanes = #PE * SIMD; a layer "
          "xB runs its shape B times (cycles, ms: all B)")
    if network.nodes:
        print(_node_summary(network.nodes))
    elif network.unmapped:
        print("not mapped: " + "; ".join(f"{u.name} ({u.op})" for u in network.unmapped))
    if result.missing and not result.interrupted:
        print(f"odyssey: no feasible design for {', '.join(result.missing)}; the total leaves "
              "them out", file=sys.stderr)
    if result.interrupted:
        print(f"odyssey: interrupted; results of {len(result.shapes)} of {n_shapes} shapes",
              file=sys.stderr)
    record = network_record(result)
    emit_json(json_out, record)
    if result.shapes:
        emit_report(report_out, record)
    if result.interrupted:
        return 130
    return 2 if result.missing else 0


def _print_layers(network: Any, *, kernel: str, dw_kernel: str | None,
                  mm_kernel: str | None) -> int:
    """``--dry-run``: the layers of ``network``, the kernel each would be tuned with, and
    what is not mapped; exit status 0."""
    from pathlib import Path

    from odyssey.network.networks import kernel_for, stride_note, unique_shapes

    rows = [["layer", "kind", "shape", "kernel", "note"]]
    for layer in network.layers:
        path = kernel_for(layer.kind, kernel, dw_kernel=dw_kernel, mm_kernel=mm_kernel,
                          stride=layer.stride)
        rows.append([layer.name, layer.kind, layer.describe(), Path(path).name,
                     "stride modelled as 1" if stride_note(path, layer.stride) else ""])
    kinds = " + ".join(f"{n} {kind}" for kind, n in network.kinds().items())
    print(f"{network.title}: {len(network.layers)} layers ({kinds}), "
          f"{len(unique_shapes(network))} unique shapes, {network.macs:,} MACs; "
          "not tuned (--dry-run)")
    print(table(rows))
    if network.nodes:
        print(_node_summary(network.nodes))
    elif network.unmapped:
        print("not mapped: " + "; ".join(f"{u.name} ({u.op})" for u in network.unmapped))
    return 0


def _node_summary(nodes: Any) -> str:
    """Every node of an imported graph by outcome and operator: ``175 graph nodes: 54 ->
    layers (Conv 53, Gemm 1); 53 fused into layers (BatchNormalization 53); 68 no systolic
    work (Relu 49, ...); 1 not supported (LSTM: lstm_1)``; the JSON lists them one by one."""
    parts = []
    for outcome in ("layer", "fused", "no systolic work", "not supported"):
        ops: dict[str, list[str]] = {}
        for n in nodes:
            if n.outcome == outcome:
                ops.setdefault(n.op, []).append(n.name)
        if not ops:
            continue
        total = sum(len(v) for v in ops.values())
        if outcome == "not supported":
            inner = ", ".join(f"{op}: {', '.join(names)}" for op, names in ops.items())
        else:
            inner = ", ".join(f"{op} {len(names)}" for op, names in ops.items())
        head = {"layer": "-> layers", "fused": "fused into layers"}.get(outcome, outcome)
        parts.append(f"{total} {head} ({inner})")
    return f"{len(nodes)} graph nodes: " + "; ".join(parts)


def register(sub: Any) -> None:
    """Add this module's subcommands to the `odyssey` parser."""
    nw = sub.add_parser("network", help="tune every layer of a network (identical shapes once)")
    nw.add_argument("network", help="bundled network (vgg16, resnet50, mobilenetv2, bert-base, "
                    "vit-b16), a network JSON file (odyssey-network/1) or an ONNX model (.onnx; "
                    "docs/networks.md)")
    nw.add_argument("--kernel", default="cnn", type=kernel_file,
                    help="kernel of the conv and pointwise layers: a C file or a bundled kernel "
                         "name (default cnn, the bundled cnn.c)")
    nw.add_argument("--dtype", choices=("fp32", "int8", "int16"), default="fp32",
                    help="datapath of every layer: fp32 (default: the bundled cnn.c, dwconv.c, mm.c), "
                         "int8 or int16 (inputs and weights of that width, int32 accumulation: "
                         "kernels/int8/, kernels/int16/)")
    nw.add_argument("--dw-kernel", metavar="KERNEL", type=kernel_file,
                    help="kernel of the depthwise layers (default dwconv.c next to --kernel)")
    nw.add_argument("--input-shape", type=input_shape, action="append", metavar="NAME=DIMS",
                    help=INPUT_SHAPE_HELP)
    nw.add_argument("--table", metavar="FILE",
                    help="write the network's layer table (odyssey-network/1, docs/networks.md: "
                         "what odyssey understood of an ONNX model, every node accounted for) to "
                         "FILE before tuning")
    nw.add_argument("--dry-run", action="store_true",
                    help="read the network, print its layers (the kernel each would be tuned "
                         "with) and what is not mapped, write --table, and stop without tuning")
    nw.add_argument("--mm-kernel", metavar="KERNEL", type=kernel_file,
                    help="kernel of the matmul layers (fully connected, projections, attention; "
                         "default mm.c next to --kernel)")
    nw.add_argument("--design", default="all",
                    help="design id or index of --kernel on every layer, or `all`: each layer's "
                         "best (default)")
    nw.add_argument("--time", type=positive_float, metavar="SECONDS",
                    help="search time per design and shape (default 2 when --samples is not given)")
    nw.add_argument("--samples", type=positive_int, metavar="N",
                    help="evaluations per design and shape (with --time, whichever ends first)")
    nw.add_argument("--schedule", choices=("screen", "full"), default="screen",
                    help="how --samples is spent on a shape's designs: screen (default) searches "
                         "every design with 30%% of N (at least 200), then only the 5 best "
                         "screened go on with the rest of N, from their best tilings (the others "
                         "keep their screening result; the odyssey method runs without its bound "
                         "search); full gives every design all N samples in one search (the "
                         "tuner's defaults). With --time alone: full. docs/cluster.md")
    nw.add_argument("--seed", type=seed, default=0, help=SEED_HELP)
    nw.add_argument("--platform", default=DEFAULT_PLATFORM, help=PLATFORM_HELP)
    add_clock(nw)
    nw.add_argument("--method", metavar="NAME",
                    help="search method, a name of odyssey.tune.TUNERS (default odyssey: MP seed + "
                         "evolutionary search; with --transfer, evolutionary); an unknown name "
                         "lists them")
    add_json(nw, "per-layer results and totals")
    add_report(nw, "the network (each layer's design, GOP/s, utilization, share of the time)")
    nw.add_argument("--shared-array", action="store_true",
                    help="one array for every layer: search the PE grid, SIMD, latency hiding and "
                         "buffer capacities once, tiles per layer (--time: per-layer optimum limit, "
                         "default 3; --samples: arrays tried per design, default 40; --design all: "
                         "the dataflows with ordering <[o,h,w],[i,p,q]>)")
    nw.add_argument("--transfer", action="store_true",
                    help="tune the layers from scratch and with transfer from similar layers "
                         "(their best tilings rescaled as seeds, their design ranking), and report "
                         "the time each needs to reach 99%% of the from-scratch result per layer "
                         "(docs/mfbo.md)")
    nw.add_argument("--history", metavar="FILE",
                    help="with --transfer: also take sources from the shapes in FILE (earlier "
                         "runs, any network) and add this run's shapes to it")
    nw.add_argument("--no-compare", action="store_true",
                    help="with --transfer: tune with transfer only (no from-scratch run) and "
                         "print the per-layer results as without --transfer")
    add_engine_options(nw, "(layer shape, design) searches")
    nw.set_defaults(func=_cmd_network, outputs=outputs(("json", "file"), ("history", "history"),
                                                     ("table", "file"), ("report", "report")))
