"""The best tiling of a design: the exact optimum, with the Odyssey tuner as a fallback when
the branch and bound reaches its time limit."""

from __future__ import annotations

import math
from collections.abc import Callable

from odyssey.model import DesignModel
from odyssey.tune.base import run_tuner
from odyssey.tune.exact.optimum import OptimumProgress, OptimumResult, find_optimum
from odyssey.tune.registry import make_tuner

#: samples of the tuner run when the branch and bound stops at its time limit
FALLBACK_SAMPLES = 20_000


def best_tiling(model: DesignModel, *, time_limit_s: float | None, seed: int = 0,
                fallback_samples: int = FALLBACK_SAMPLES,
                progress: Callable[[OptimumProgress], None] | None = None,
                ) -> tuple[dict[str, int] | None, float, str, OptimumResult]:
    """The optimum's search: ``(tiling, latency, status, branch-and-bound result)``. Ctrl-C
    raises KeyboardInterrupt, also during the fallback tuner's run. ``progress`` hears of
    the branch and bound (:func:`find_optimum`)."""
    opt = find_optimum(model, time_limit_s=time_limit_s, seed=seed, progress=progress)
    tiling = dict(opt.tiling) if opt.tiling is not None else None
    status, latency = str(opt.status), opt.latency_cycles
    if opt.status == "time_limit" and fallback_samples > 0:
        res = run_tuner(make_tuner("odyssey", model, seed=seed), model, samples=fallback_samples)
        if res.stop_reason == "interrupted":  # run_tuner keeps its result; our caller stops
            raise KeyboardInterrupt
        if res.best is not None and res.best.latency_cycles < latency:
            tiling, latency = dict(res.best.tiling), res.best.latency_cycles
            status += "+tuner"
        if math.isfinite(latency) and latency > 0:
            status += f", gap {max(0.0, latency - opt.lower_bound_cycles) / latency:.0%}"
    return tiling, latency, status, opt
