"""What :func:`odyssey.tune.exact.optimum.find_optimum` reports: its progress and its
result (with the status the branch and bound ended in)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["optimal", "time_limit", "infeasible", "interrupted"]


@dataclass(frozen=True, slots=True)
class OptimumProgress:
    """What :func:`find_optimum` reports to its ``progress`` callback: the phase
    (``"seed"``, ``"polish"``, ``"bound"``), seconds since the start, the incumbent's
    latency and the proven lower bound in cycles (``inf`` / 0 while there is none), the
    tilings evaluated and the boxes bounded."""

    phase: str
    seconds: float
    best_latency: float
    lower_bound: float
    points: int
    regions: int


@dataclass(frozen=True)
class OptimumResult:
    """Outcome of :func:`find_optimum`.

    ``status`` is ``"optimal"`` (``tiling`` is a global optimum, ``lower_bound_cycles ==
    latency_cycles``), ``"time_limit"`` (``tiling`` is the best found, possibly None; no
    tiling within the budget is faster than ``lower_bound_cycles``; ``gap`` is the relative
    distance), ``"interrupted"`` (the same, at a Ctrl-C: see :func:`find_optimum`'s
    ``interruptible``) or ``"infeasible"`` (no legal tiling fits the budget). Region counters: every
    box whose bounds were computed is *explored*; it is then *pruned* by its latency bound,
    by a resource bound (or the budget cut), or as *empty* (no legal tiling), *enumerated*,
    or split.
    """

    design_id: str
    status: Status
    tiling: Mapping[str, int] | None
    latency_cycles: float
    throughput_gops: float
    dsp: float
    bram18k: float
    uram: float
    lower_bound_cycles: float
    gap: float
    seconds: float
    points_evaluated: int
    regions_explored: int
    regions_pruned_bound: int
    regions_pruned_resources: int
    regions_empty: int
    regions_enumerated: int
    bound_evaluations: int  # boxes bounded, including the trial splits of strong branching
    proof: str
    lut: float = math.nan
    ff: float = math.nan

    @property
    def regions_pruned(self) -> dict[str, int]:
        return {"bound": self.regions_pruned_bound, "resources": self.regions_pruned_resources,
                "empty": self.regions_empty}

    def to_json(self) -> dict[str, Any]:
        """Plain-data record (what ``odyssey optimum --json`` writes)."""
        return {
            "design": self.design_id, "status": self.status,
            "tiling": dict(self.tiling) if self.tiling is not None else None,
            "latency_cycles": _finite(self.latency_cycles), "throughput_gops": self.throughput_gops,
            "dsp": self.dsp, "lut": self.lut, "ff": self.ff, "bram18k": self.bram18k, "uram": self.uram,
            "lower_bound_cycles": _finite(self.lower_bound_cycles), "gap": _finite(self.gap),
            "seconds": self.seconds, "points_evaluated": self.points_evaluated,
            "regions_explored": self.regions_explored, "regions_pruned": self.regions_pruned,
            "regions_enumerated": self.regions_enumerated,
            "bound_evaluations": self.bound_evaluations, "proof": self.proof,
        }


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None

