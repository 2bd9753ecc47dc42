"""Time to the same per-layer quality with and without transfer (:mod:`.transfer`).

For each unique shape, the from-scratch run's best throughput ``Q`` sets the target
``quality * Q`` (``quality = 0.99`` by default). Each run's *time to target* is read off
its traces: the designs searched one after another in that run's order, the samples and
seconds until the shape's best first reached the target (:meth:`ShapeRun.time_to`). The
from-scratch run always reaches it; a transfer run that never does is charged its whole
search of the shape and flagged. Totals sum over the unique shapes (a shape shared by
several layers is tuned once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from odyssey.errors import NetworkError
from odyssey.studies.transfer import ShapeRun, TransferRun

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
    names = {s.index: s.group.names[0] for s in transfer.shapes}
    out: list[ShapeComparison] = []
    for s in scratch.shapes:
        t = mine.get(s.index)
        if t is None or s.best_gops <= 0:
            continue
        target = quality * s.best_gops
        hit_s = s.time_to(target)
        assert hit_s is not None  # the scratch run reaches its own result
        hit_t = t.time_to(target)
        out.append(ShapeComparison(
            layers=s.group.names, kind=s.group.kind, sizes=s.group.sizes,
            sources=tuple(names[j] for j in t.sources if j in names),
            scratch_gops=s.best_gops, transfer_gops=t.best_gops, target_gops=target,
            scratch_samples=hit_s[0], scratch_seconds=hit_s[1],
            transfer_samples=hit_t[0] if hit_t else t.samples,
            transfer_seconds=hit_t[1] if hit_t else t.seconds,
            reached=hit_t is not None, seeded_designs=sum(1 for d in t.designs if d.seeds)))
    return TransferComparison(quality, tuple(out))


def shape_record(run: ShapeRun) -> dict[str, Any]:
    best = run.best_design
    return {"layers": list(run.group.names), "kind": run.group.kind,
            "sizes": dict(run.group.sizes), "best_gops": run.best_gops,
            "design": best.design if best else None,
            "tiling": dict(best.top_tilings[0]) if best and best.top_tilings else None,
            "samples": run.samples, "seconds": run.seconds,
            "designs": [{"design": d.design, "best_gops": d.best_gops, "samples": d.samples,
                         "seconds": d.seconds, "seeds": d.seeds} for d in run.designs]}


def comparison_record(c: TransferComparison, scratch: TransferRun, transfer: TransferRun
                      ) -> dict[str, Any]:
    """JSON-ready record of both runs and their comparison."""
    return {
        "network": scratch.network.name, "method": scratch.method, "seed": scratch.seed,
        "samples": scratch.samples, "time_s": scratch.time_s, "quality": c.quality,
        "order_designs": transfer.order_designs,
        "totals": {"scratch_samples": c.scratch_samples, "transfer_samples": c.transfer_samples,
                   "scratch_seconds": c.scratch_seconds, "transfer_seconds": c.transfer_seconds,
                   "speedup_samples": c.speedup_samples, "speedup_seconds": c.speedup_seconds,
                   "unreached": list(c.unreached),
                   "scratch_run_seconds": scratch.seconds,
                   "transfer_run_seconds": transfer.seconds},
        "shapes": [{"layers": list(s.layers), "kind": s.kind, "sizes": dict(s.sizes),
                    "sources": list(s.sources), "scratch_gops": s.scratch_gops,
                    "transfer_gops": s.transfer_gops, "target_gops": s.target_gops,
                    "scratch_samples": s.scratch_samples, "scratch_seconds": s.scratch_seconds,
                    "transfer_samples": s.transfer_samples,
                    "transfer_seconds": s.transfer_seconds, "reached": s.reached,
                    "seeded_designs": s.seeded_designs} for s in c.shapes],
        "scratch": [shape_record(s) for s in scratch.shapes],
        "transfer": [shape_record(s) for s in transfer.shapes],
    }
