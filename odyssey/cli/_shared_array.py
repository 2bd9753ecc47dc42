"""`odyssey network NET --shared-array`: one array for every layer (printing only)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from odyssey.cli._common import table
from odyssey.cli._output import emit_json
from odyssey.errors import OdysseyError


def run_shared_array(args: argparse.Namespace) -> int:
    from odyssey.cli._network_input import load_network_arg
    from odyssey.network.shared_array import iter_shared_arrays
    from odyssey.platforms import load_platform

    network = load_network_arg(args.network, args.input_shape)
    platform = load_platform(args.platform)
    start = time.perf_counter()

    def say(msg: str) -> None:
        print(f"[shared array {time.perf_counter() - start:5.0f} s] {msg}", file=sys.stderr, flush=True)

    designs = None if args.design == "all" else [args.design]
    arrays = []
    interrupted = False
    try:  # Ctrl-C: the designs finished are reported
        for a in iter_shared_arrays(network, kernel=args.kernel, platform=platform,
                                    designs=designs,
                                    layer_time_s=args.time if args.time is not None else 3.0,
                                    configs=args.samples if args.samples is not None else 40,
                                    seed=args.seed, say=say):
            arrays.append(a)
    except KeyboardInterrupt:
        interrupted = True
    if not arrays:
        if not interrupted:
            raise OdysseyError(f"{network.name}: no design to build a shared array of")
        print("odyssey: interrupted before any design's shared array was found"
              + (f"; {args.json} records none" if args.json not in (None, "-") else ""),
              file=sys.stderr)
        emit_json(args.json, {"network": network.name, "per_layer_optimum_cycles": None,
                              "arrays": [], "interrupted": True})
        return 130
    arrays.sort(key=lambda r: -r.throughput_gops)
    code = _print_arrays(args, network, platform, arrays, interrupted=interrupted)
    if interrupted:
        print(f"odyssey: interrupted; the shared arrays of the {len(arrays)} design(s) finished "
              "are above", file=sys.stderr)
        return 130
    return code


def _print_arrays(args: argparse.Namespace, network: Any, platform: Any, arrays: list[Any], *,
                  interrupted: bool = False) -> int:
    from odyssey.studies.shared_array_study import layer_peaks, shared_array_record

    peaks = layer_peaks(arrays)
    top = arrays[0]
    ideal = sum(lay.count * peaks[lay.label] for lay in top.layers)
    print(f"{network.title} on {platform.name}: one array for every conv/pointwise layer "
          f"(depthwise layers are left out)")
    rows = [["design", "shared GOP/s", "per-layer same design", "ratio", "DSP", "BRAM18K", "array"]]
    for a in arrays:
        rows.append([a.design, f"{a.throughput_gops:.1f}", f"{a.own_throughput_gops:.1f}",
                     f"{a.own_latency_cycles / a.latency_cycles:.0%}", f"{a.dsp:,.0f}",
                     f"{a.bram18k:,.0f}", ",".join(f"{k}={v}" for k, v in a.hardware)])
    print(table(rows))
    print(f"\nlayers on the best array ({top.design}):")
    rows = [["layer", "x", "runs as", "cycles", "own optimum", "best design", "vs best", "tiling"]]
    for lay in top.layers:
        pad = ",".join(f"{k}={v}" for (k, v), (_, r) in zip(lay.padded, lay.sizes, strict=True) if v != r)
        rows.append([lay.label, str(lay.count), f"padded {pad}" if pad else "as is",
                     f"{lay.latency_cycles:,.0f}", f"{lay.own_latency_cycles:,.0f}",
                     f"{peaks[lay.label]:,.0f}", f"{peaks[lay.label] / lay.latency_cycles:.0%}",
                     ",".join(f"{k}={v}" for k, v in lay.tiling) if lay.tiling else "-"])
    print(table(rows))
    print(f"total: {top.latency_cycles:,.0f} cycles, {top.throughput_gops:.1f} GOP/s; per-layer "
          f"optimum (each layer its own array, best design searched) {top.gops(ideal):.1f} GOP/s: "
          f"the shared array reaches {ideal / top.latency_cycles:.0%} of it")
    print("hardware: PE grid, SIMD lanes, latency hiding and buffer capacities (T_t1 of time "
          "loops); per layer: time-loop tiles only (docs/shared_array.md)")
    emit_json(args.json, {**shared_array_record(network.name, arrays), "interrupted": interrupted})
    return 0
