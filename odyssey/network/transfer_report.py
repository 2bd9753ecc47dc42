"""Time to the same per-layer quality with and without transfer (:mod:`.transfer`).

For each unique shape, the from-scratch run's best throughput ``Q`` sets the target
``quality * Q`` (``quality = 0.99`` by default). Each run's *time to target* is read off
its traces: every stretch of search counted in the order it ran (the designs one after
another from scratch; probes and halving first with racing), the samples and seconds until
the shape's best first reached the target (:meth:`ShapeRun.time_to`). The
from-scratch run always reaches it; a transfer run that never does is charged its whole
search of the shape and flagged. Totals sum over the unique shapes (a shape shared by
several layers is tuned once).
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odyssey.errors import NetworkError
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.network.network_tuning import (
    ALL_MAX_DIM,
    DesignOutcome,
    LayerResult,
    NetworkResult,
    ShapeResult,
    dsp_efficiency,
    mac_lanes,
)
from odyssey.network.networks import ShapeKey, kernel_for, unique_shapes
from odyssey.network.transfer import ShapeRun, TransferRun
from odyssey.platforms import Platform
from odyssey.plots import Bars, Curve, Lines, Panel, Plot, Series

#: the per-layer quality both runs must reach, as a fraction of the from-scratch result
QUALITY = 0.99


@dataclass(frozen=True, slots=True)
class ShapeComparison:
    """One unique shape: both runs' results and their samples/seconds to the target."""

    layers: tuple[str, ...]
    kind: str
    sizes: tuple[tuple[str, int], ...]
    sources: tuple[str, ...]  # first layer of each source shape
    scratch_gops: float
    transfer_gops: float
    target_gops: float
    scratch_samples: int
    scratch_seconds: float
    transfer_samples: int
    transfer_seconds: float
    reached: bool  # the transfer run reached the target (else: charged its whole search)
    seeded_designs: int
    scratch_design: str  # the design that first reached the target from scratch
    scratch_rank: int  # its position in the from-scratch order (1-based)
    transfer_design: str | None  # ... with transfer (None if none did)
    transfer_rank: int | None  # its position in the predicted order (1-based)


@dataclass(frozen=True, slots=True)
class TransferComparison:
    quality: float
    shapes: tuple[ShapeComparison, ...]

    @property
    def scratch_samples(self) -> int:
        return sum(s.scratch_samples for s in self.shapes)

    @property
    def transfer_samples(self) -> int:
        return sum(s.transfer_samples for s in self.shapes)

    @property
    def scratch_seconds(self) -> float:
        return sum(s.scratch_seconds for s in self.shapes)

    @property
    def transfer_seconds(self) -> float:
        return sum(s.transfer_seconds for s in self.shapes)

    @property
    def speedup_samples(self) -> float:
        return self.scratch_samples / max(self.transfer_samples, 1)

    @property
    def speedup_seconds(self) -> float:
        return self.scratch_seconds / max(self.transfer_seconds, 1e-9)

    @property
    def unreached(self) -> tuple[str, ...]:
        return tuple(s.layers[0] for s in self.shapes if not s.reached)


def compare(scratch: TransferRun, transfer: TransferRun, *, quality: float = QUALITY
            ) -> TransferComparison:
    """Per shape tuned in both runs, the time each took to ``quality`` x the scratch result."""
    if not 0 < quality <= 1:
        raise NetworkError(f"`quality` must be in (0, 1], got {quality!r}.")
    mine = {s.index: s for s in transfer.shapes}
    names = {s.index: s.group.names[0] for s in (*transfer.history, *transfer.shapes)}
    out: list[ShapeComparison] = []
    for s in scratch.shapes:
        t = mine.get(s.index)
        if t is None or s.best_gops <= 0:
            continue
        target = quality * s.best_gops
        hit_s = s.time_to(target)
        assert hit_s is not None  # the scratch run reaches its own result
        hit_t = t.time_to(target)
        first_s, first_t = s.first_to(target), t.first_to(target)
        assert first_s is not None
        out.append(ShapeComparison(
            layers=s.group.names, kind=s.group.kind, sizes=s.group.sizes,
            sources=tuple(names[j] for j in t.sources if j in names),
            scratch_gops=s.best_gops, transfer_gops=t.best_gops, target_gops=target,
            scratch_samples=hit_s[0], scratch_seconds=hit_s[1],
            transfer_samples=hit_t[0] if hit_t else t.samples,
            transfer_seconds=hit_t[1] if hit_t else t.seconds,
            reached=hit_t is not None, seeded_designs=sum(1 for d in t.designs if d.seeds),
            scratch_design=first_s.design, scratch_rank=s.designs.index(first_s) + 1,
            transfer_design=first_t.design if first_t else None,
            transfer_rank=t.designs.index(first_t) + 1 if first_t else None))
    return TransferComparison(quality, tuple(out))


def shape_record(run: ShapeRun) -> dict[str, Any]:
    """A shape's run: its best design and tiling, and each design's result (``designs``:
    ``[id, best GOP/s, samples, seeds]`` in the order they were first searched)."""
    best = run.best_design
    return {"layers": list(run.group.names), "kind": run.group.kind,
            "sizes": dict(run.group.sizes), "best_gops": run.best_gops,
            "design": best.design if best else None,
            "tiling": dict(best.top_tilings[0]) if best and best.top_tilings else None,
            "samples": run.samples, "seconds": round(run.seconds, 3),
            "designs": [[d.design, d.best_gops, d.samples, d.seeds] for d in run.designs]}


def comparison_record(c: TransferComparison, scratch: TransferRun, transfer: TransferRun, *,
                      runs: bool = True) -> dict[str, Any]:
    """JSON-ready record of the comparison (totals, one row per shape) and, with ``runs``,
    of both runs (:func:`shape_record`)."""
    rec: dict[str, Any] = {
        "network": scratch.network.name, "method": scratch.method, "seed": scratch.seed,
        "samples": scratch.samples, "time_s": scratch.time_s, "quality": c.quality,
        "order_designs": transfer.order_designs, "racing": transfer.racing,
        "totals": {"scratch_samples": c.scratch_samples, "transfer_samples": c.transfer_samples,
                   "scratch_seconds": round(c.scratch_seconds, 3),
                   "transfer_seconds": round(c.transfer_seconds, 3),
                   "speedup_samples": c.speedup_samples, "speedup_seconds": c.speedup_seconds,
                   "unreached": list(c.unreached),
                   "scratch_run_seconds": round(scratch.seconds, 1),
                   "transfer_run_seconds": round(transfer.seconds, 1)},
        "shapes": [{"layers": list(s.layers), "kind": s.kind, "sizes": dict(s.sizes),
                    "sources": list(s.sources), "scratch_gops": round(s.scratch_gops, 4),
                    "transfer_gops": round(s.transfer_gops, 4),
                    "target_gops": round(s.target_gops, 4),
                    "scratch_samples": s.scratch_samples,
                    "scratch_seconds": round(s.scratch_seconds, 3),
                    "transfer_samples": s.transfer_samples,
                    "transfer_seconds": round(s.transfer_seconds, 3), "reached": s.reached,
                    "seeded_designs": s.seeded_designs,
                    "scratch_design": [s.scratch_design, s.scratch_rank],
                    "transfer_design": [s.transfer_design, s.transfer_rank]} for s in c.shapes],
    }
    if runs:
        rec["scratch"] = [shape_record(s) for s in scratch.shapes]
        rec["transfer"] = [shape_record(s) for s in transfer.shapes]
    return rec


def transfer_plot(records: Sequence[Mapping[str, Any]], filename: str = "transfer.png") -> Plot:
    """The figure of the benchmark's records (``comparison_record`` without runs, one per
    network and seed, with the transfer mode's record under ``modes["transfer"]``): per
    network, the seconds to the target of every shape in the tuning order (median over the
    seeds, from scratch and with transfer), and the running total over the shapes (median,
    the band from the fastest to the slowest seed)."""
    panels: list[Panel] = []
    nets = list(dict.fromkeys(str(r["network"]) for r in records))
    for net in nets:
        runs = [r for r in records if r["network"] == net]
        shapes = runs[0]["modes"]["transfer"]["shapes"]
        cats = tuple(str(s["layers"][0]) for s in shapes)
        seeds = ", ".join(str(r["seed"]) for r in runs)
        series: list[Series] = []
        curves: list[Curve] = []
        for arm, name, style in (("scratch", "from scratch", "--"), ("transfer", "with transfer", "-")):
            per_seed = [[float(s[f"{arm}_seconds"]) for s in r["modes"]["transfer"]["shapes"]]
                        for r in runs]
            median = [statistics.median(col) for col in zip(*per_seed, strict=True)]
            series.append(Series(f"{name} (median of seeds {seeds})", tuple(median)))
            totals = [list(itertools.accumulate(secs)) for secs in per_seed]
            cols = list(zip(*totals, strict=True))
            mid = tuple(statistics.median(c) for c in cols)
            ends = sorted(t[-1] for t in totals)
            curves.append(Curve(f"{name}: {mid[-1]:.1f} s (seeds {ends[0]:.1f}-{ends[-1]:.1f} s)",
                                tuple(range(1, len(mid) + 1)), mid,
                                lo=tuple(min(c) for c in cols), hi=tuple(max(c) for c in cols),
                                style=style))
        title = str(runs[0].get("title", net))
        panels.append(Bars(cats, tuple(series), "seconds to 99% (log)", ylog=True,
                           title=f"{title}: each unique shape, in the tuning order"))
        panels.append(Lines(tuple(curves), "shapes tuned (tuning order)",
                            "seconds to 99%, running total", title=f"{title}: total"))
    return Plot(filename, "Time to 99% of the from-scratch result per layer shape",
                tuple(panels), width=12.0)


def network_result(run: TransferRun, *, kernel: str | Path, platform: Platform,
                   dw_kernel: str | Path | None = None) -> NetworkResult:
    """``run`` as :func:`~odyssey.network.network_tuning.tune_network`'s result (the per-layer
    table and JSON of ``odyssey network``): each shape's best design, its best tiling
    re-evaluated on the design's model for the latency and resources, and every design's
    best throughput (its latency follows from it: ``ops * clock / throughput``; its stop
    reason is ``raced``: the race records each design's totals, not why it stopped)."""
    clock_hz = platform.clock_mhz * 1e6
    groups = unique_shapes(run.network)
    shapes: list[ShapeResult] = []
    for n, s in enumerate(run.shapes, 1):
        group = groups[s.index]
        path = kernel_for(group.kind, kernel, dw_kernel=dw_kernel, stride=group.stride)
        ks = analyse(load_scop(path, group.first.defines()), max_dim=ALL_MAX_DIM)
        ops = group.first.unit_ops
        outcomes: list[DesignOutcome] = []
        for d in s.designs:
            spec = ks.design(d.design)
            cycles = ops * clock_hz / (d.best_gops * 1e9) if d.best_gops else None
            outcomes.append(DesignOutcome(d.design, spec.dataflow, spec.ordering, d.best_gops,
                                          cycles, d.samples, d.seconds, "raced"))
        metrics: dict[str, Any] = dict.fromkeys(
            ("design", "dataflow", "ordering", "tiling", "latency_cycles", "throughput_gops",
             "dsp", "bram18k", "mac_lanes", "dsp_efficiency"))
        best = s.best_design
        if best is not None and best.top_tilings:
            design = ks.design(best.design)
            tiling = dict(best.top_tilings[0])
            point = build_model(ks, design, platform=platform).evaluate_one(tiling)
            lanes = mac_lanes(design, tiling)
            latency = float(point["latency_cycles"])
            metrics.update(
                design=design.id, dataflow=design.dataflow, ordering=design.ordering,
                tiling=tuple(tiling.items()), latency_cycles=latency,
                throughput_gops=float(point["throughput_gops"]), dsp=float(point["dsp"]),
                bram18k=float(point["bram18k"]), mac_lanes=lanes,
                dsp_efficiency=dsp_efficiency(group.first.unit_macs, lanes, latency))
        shapes.append(ShapeResult(index=n, kind=group.kind, sizes=group.sizes, stride=group.stride,
                                  layers=group.names, kernel=str(path), ops=ops,
                                  designs=tuple(outcomes), complete=True, seconds=s.seconds,
                                  **metrics))
    by_key = {x.key: x for x in shapes}
    layers: list[LayerResult] = []
    first: dict[ShapeKey, str] = {}
    for layer in run.network.layers:
        dup = first.setdefault(layer.shape_key, layer.name)
        layers.append(LayerResult(layer, by_key.get(layer.shape_key),
                                  None if dup == layer.name else dup))
    return NetworkResult(
        network=run.network, platform=platform.name, clock_mhz=platform.clock_mhz,
        design="all", method=f"{run.method} with transfer", seed=run.seed, time_s=run.time_s,
        samples=run.samples, kernel=str(kernel),
        dw_kernel=str(kernel_for("depthwise", kernel, dw_kernel=dw_kernel))
        if any(g.kind == "depthwise" for g in groups) else None,
        shapes=tuple(shapes), layers=tuple(layers), interrupted=run.interrupted,
        seconds=run.seconds)
