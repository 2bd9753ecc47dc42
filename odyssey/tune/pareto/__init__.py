"""odyssey.tune.pareto: multi-objective search over designs and tilings.

* :mod:`.dominance`: non-dominated filtering, NSGA-II ranks and crowding distance;
* :mod:`.indicators`: exact hypervolume and ADRS;
* :mod:`.enumeration`: every legal tiling of a design, in vectorized chunks;
* :mod:`.nsga2`: the evolutionary search (:class:`NSGA2`, ask/tell);
* :mod:`.result`: objectives, :class:`ParetoPoint`, :class:`ParetoResult`;
* :mod:`.search`: :func:`pareto_front`, the exact and evolutionary drivers.

Typical use::

    r = pareto_front(models, "latency,dsp,bram18k", method="auto", time_s=60, seed=0)
    r.points, r.hypervolume, r.exact
"""

from __future__ import annotations

from odyssey.tune.pareto.dominance import crowding_distance, dominance_ranks, nondominated
from odyssey.tune.pareto.enumeration import TilingGrid, chain_tuples
from odyssey.tune.pareto.indicators import adrs, hypervolume
from odyssey.tune.pareto.nsga2 import NSGA2
from odyssey.tune.pareto.result import (
    OBJECTIVES,
    DesignStats,
    ParetoPoint,
    ParetoResult,
    load_front,
    normalised_hypervolume,
    parse_objectives,
    reference_point,
)
from odyssey.tune.pareto.search import EXACT_LIMIT, ParetoProgress, pareto_front

__all__ = [
    "EXACT_LIMIT", "NSGA2", "OBJECTIVES", "DesignStats", "ParetoPoint", "ParetoProgress",
    "ParetoResult", "TilingGrid", "adrs", "chain_tuples", "crowding_distance", "dominance_ranks",
    "hypervolume", "load_front", "nondominated", "normalised_hypervolume", "parse_objectives",
    "pareto_front", "reference_point",
]
