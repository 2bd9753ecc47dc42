"""Study `shared-array`: one fixed array for every layer of VGG16 and ResNet-50.

Not a figure of the paper: its section 5.4 tunes every layer on its own array (one
dataflow, per-layer tiling and PE count) and concludes that a single array
underuses the FPGA (77% and 57% of the layer-wise peak). This study fixes the hardware
once per network (:mod:`odyssey.network.shared_array`: PE grid, SIMD lanes,
latency-hiding factors and buffer capacities) and lets only the run-time tiles vary
per layer, and reports the gap to the per-layer optimum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from odyssey.network.networks import load_network, parse_network
from odyssey.network.shared_array import SharedArray, shared_array
from odyssey.plots import Bars, Plot, RefLine, Series
from odyssey.studies._common import geomean, ratio
from odyssey.studies.study import (
    Cell,
    Headline,
    Preset,
    Study,
    StudyContext,
    StudyResult,
    Table,
    result,
)

NAME = "shared-array"


def layer_peaks(arrays: Sequence[SharedArray]) -> dict[str, float]:
    """Per layer shape, the least latency of its own optimum over the designs searched."""
    out: dict[str, float] = {}
    for a in arrays:
        for lay in a.layers:
            out[lay.label] = min(out.get(lay.label, math.inf), lay.own_latency_cycles)
    return out


def shared_array_record(network: str, arrays: Sequence[SharedArray]) -> dict[str, Any]:
    """JSON-ready record of :func:`~odyssey.network.shared_array.shared_array`'s result."""
    peaks = layer_peaks(arrays)
    ideal = sum(lay.count * peaks[lay.label] for lay in arrays[0].layers) if arrays else math.nan
    return {
        "network": network,
        "per_layer_optimum_cycles": ideal,
        "arrays": [{
            "design": a.design, "dataflow": a.dataflow, "hardware": dict(a.hardware),
            "dsp": a.dsp, "bram18k": a.bram18k, "latency_cycles": a.latency_cycles,
            "throughput_gops": a.throughput_gops, "own_throughput_gops": a.own_throughput_gops,
            "vs_per_layer_optimum": ratio(ideal, a.latency_cycles),
            "arrays_evaluated": a.configs_evaluated, "seconds": a.seconds,
            "layers": [{"label": lay.label, "sizes": dict(lay.sizes), "count": lay.count,
                        "padded": dict(lay.padded), "tiling": dict(lay.tiling) if lay.tiling else None,
                        "latency_cycles": lay.latency_cycles,
                        "own_latency_cycles": lay.own_latency_cycles,
                        "best_design_latency_cycles": peaks[lay.label],
                        "status": lay.status, "own_status": lay.own_status}
                       for lay in a.layers],
        } for a in arrays],
    }


def run(ctx: StudyContext) -> StudyResult:
    p = ctx.preset
    rows: list[tuple[Cell, ...]] = []
    layer_rows: list[tuple[Cell, ...]] = []
    heads: list[Headline] = []
    panels: list[Bars] = []
    spread: list[str] = []
    for entry in p.option("networks"):
        net = load_network(entry) if isinstance(entry, str) else parse_network(entry[1], source=entry[0])
        arrays = shared_array(net, kernel=ctx.kernel("cnn.c"), platform=ctx.platform,
                              designs=p.designs, layer_time_s=ctx.budget(p.option("layer_time_s")),
                              configs=int(p.option("configs")), seed=ctx.seed, say=ctx.say)
        peaks = layer_peaks(arrays)
        top = arrays[0]
        ideal = sum(lay.count * peaks[lay.label] for lay in top.layers)
        ideal_gops = top.gops(ideal)
        for a in arrays:
            rows.append((net.name, a.design, a.dataflow, a.throughput_gops, a.own_throughput_gops,
                         ideal_gops, ratio(a.own_latency_cycles, a.latency_cycles),
                         ratio(ideal, a.latency_cycles), a.dsp, a.bram18k,
                         ",".join(f"{k}={v}" for k, v in a.hardware), a.configs_evaluated,
                         round(a.seconds, 1)))
        shares = []
        for lay in top.layers:
            shares.append(ratio(peaks[lay.label], lay.latency_cycles))
            layer_rows.append((net.name, top.design, lay.label, lay.count,
                               ",".join(f"{k}={v}" for k, v in lay.sizes),
                               ",".join(f"{k}={v}" for k, v in lay.padded), lay.latency_cycles,
                               lay.own_latency_cycles, peaks[lay.label],
                               ratio(peaks[lay.label], lay.latency_cycles), lay.status,
                               lay.own_status,
                               ",".join(f"{k}={v}" for k, v in lay.tiling) if lay.tiling else "-"))
        total = top.latency_cycles
        close = sum(lay.count * lay.latency_cycles for lay, sh in zip(top.layers, shares, strict=True)
                    if sh >= 0.95)
        worst = min(zip(top.layers, shares, strict=True), key=lambda ls: ls[1])
        spread.append(f"{net.name}: {close / total:.0%} of the shared array's time is spent in "
                      f"layers within 5% of their own optimum; the layer that loses most is "
                      f"{worst[0].label} ({worst[1]:.0%} of its peak, {worst[0].count * worst[0].latency_cycles / total:.0%} "
                      "of the time).")
        heads += [
            Headline(f"gap_{net.name}", f"{net.name}: best shared array ({top.design}) / per-layer "
                     "optimum (every layer its own array and dataflow)", ratio(ideal, top.latency_cycles), "x"),
            Headline(f"same_{net.name}", f"{net.name}: best shared array / per-layer optimum of "
                     "the same dataflow", ratio(top.own_latency_cycles, top.latency_cycles), "x"),
            Headline(f"geo_{net.name}", f"{net.name}: geo. mean over layers of shared-array "
                     "throughput / layer peak",
                     geomean(shares, [lay.count for lay in top.layers]), "%"),
            Headline(f"gops_{net.name}", f"{net.name}: shared array throughput", top.throughput_gops,
                     "GOP/s"),
        ]
        labels = tuple(lay.label for lay in top.layers)
        panels.append(Bars(labels, (
            Series(f"own array, same dataflow {top.dataflow}",
                   tuple(ratio(peaks[lay.label], lay.own_latency_cycles) for lay in top.layers)),
            Series(f"shared array {top.design}", tuple(shares))),
            "throughput / layer's best design", ylim=(0, 1.35), xlabel="layer",
            refs=(RefLine(ratio(ideal, top.latency_cycles), "shared array, whole network"),),
            title=f"{net.name}: {top.design} array "
                  f"{','.join(f'{k}={v}' for k, v in top.hardware)}"))
    table = Table("", ("network", "design", "dataflow", "shared_gops", "per_layer_same_design_gops",
                       "per_layer_best_gops", "shared_vs_same_design", "shared_vs_per_layer_best",
                       "dsp", "bram18k", "hardware", "arrays_evaluated", "seconds"), tuple(rows))
    layers = Table("layers", ("network", "design", "layer", "count", "sizes", "runs_as",
                              "latency_cycles", "own_latency_cycles", "best_design_latency_cycles",
                              "vs_layer_best", "status", "own_status", "runtime_tiling"),
                   tuple(layer_rows))
    notes = [
        *spread,
        "Definition (docs/shared_array.md): the PE grid (T_s1, T_s2 of the space loops), the "
        "level-two factors of the time loops (latency hiding, SIMD lanes) and the buffer "
        "capacities (T_t1 of the time loops) are hardware; per layer only the time-loop tiles "
        "T_t1 change, up to the capacities and within the array's DSP and BRAM; smaller "
        "layers are zero-padded.",
        "Per-layer optimum: every layer on its own array, the best of the designs searched "
        "(the layer-wise reconfigurable ideal of the paper's section 5.4). The paper reports "
        "77% (VGG16) and 57% (ResNet-50) for one dataflow with per-layer arrays (Figure 14); "
        "a shared array is more constrained still.",
        "Own optima are exact or, where the per-layer time limit ran out, the best found "
        "(own_status); the run-time tiling on the shared array is the better of the "
        "enumeration and the branch and bound on the layer's model restricted to the array.",
    ]
    return result(ctx, NAME, table, heads,
                  plots=(Plot("shared_array.png", "One array for the whole network vs one array "
                              "per layer", tuple(panels), panel_height=4.0),),
                  tables=(layers,), notes=notes,
                  settings={"layer_time_s": ctx.budget(p.option("layer_time_s")),
                            "configs": p.option("configs")})


_TINY = """{"format": "odyssey-network/1", "name": "tiny", "title": "Tiny", "source": "test",
 "layers": [
  {"name": "c1", "kind": "conv", "sizes": {"O": 8, "I": 3, "H": 8, "W": 8, "P": 3, "Q": 3}},
  {"name": "c2", "kind": "conv", "sizes": {"O": 8, "I": 8, "H": 8, "W": 8, "P": 3, "Q": 3}},
  {"name": "p3", "kind": "pointwise", "sizes": {"O": 16, "I": 8, "H": 4, "W": 4, "P": 1, "Q": 1}}]}"""

STUDY = Study(
    name=NAME,
    title="One array for the whole network (PE grid fixed, tiles per layer)",
    paper="section 5.4's conclusion (single array vs layer-wise arrays); not a figure",
    kernel="kernels/cnn.c; the conv and pointwise layers of VGG16 and ResNet-50",
    designs="dataflows [o], [o,h], [o,i] with ordering <[o,h,w],[i,p,q]> (the best single "
            "dataflows of the cnn-dataflows study)",
    method="per layer: exact optimum (time limit per layer, the unit of --time); per design: "
           "evolutionary search over arrays seeded by the layers' optima",
    full=Preset("full", {}, ("o-ohw.ipq", "oh-ohw.ipq", "oi-ohw.ipq"),
                {"networks": ("vgg16", "resnet50"), "layer_time_s": 2.0, "configs": 30}),
    quick=Preset("quick", {}, ("oh-ohw.ipq",),
                 {"networks": (("tiny", _TINY),), "layer_time_s": 2.0, "configs": 8}),
    run=run,
)
