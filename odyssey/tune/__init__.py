"""odyssey.tune: ask/tell tuners over a design's tilings, and the search driver.

* :mod:`.base`: the :class:`Tuner` interface, :class:`Trial` / :class:`TuneResult`
  records, :func:`fitness` and the driver :func:`run_tuner`;
* :mod:`.space`: legal sampling and repair of tilings (:class:`SearchSpace`);
* :mod:`.operators`: :class:`HybridMutation`, :class:`PerLoopCrossover`, ...;
* :mod:`.evolutionary`, :mod:`.random_search`: the searches;
* :mod:`.mp_seed`: the mathematical-programming seed (Pyomo, through :mod:`.nlsolve`);
* :mod:`.odyssey_tuner`: MP seed + evolutionary search;
* baselines (``docs/tuners.md``): :mod:`.exhaustive`, :mod:`.annealing`, :mod:`.bayesian`
  (Optuna TPE), :mod:`.ensemble` (OpenTuner-style), :mod:`.rl` (ConfuciuX-style),
  :mod:`.mind_mappings`, :mod:`.gbfs` and :mod:`.a2c` (over the moves of :mod:`.moves`),
  :mod:`.sunstone`;
* :mod:`.registry`: :data:`TUNERS`, :func:`make_tuner`, :func:`tuner_options`.

Typical use::

    tuner = make_tuner("odyssey", model, seed=0)
    result = run_tuner(tuner, model, time_s=5)
    result.best.tiling, result.best.throughput_gops
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from odyssey.tune.base import (
    Point,
    Progress,
    StopReason,
    TracePoint,
    Trial,
    Tuner,
    TuneResult,
    fitness,
    run_tuner,
)
from odyssey.tune.registry import TUNERS, make_tuner, tuner_options
from odyssey.tune.search.evolutionary import Evolutionary
from odyssey.tune.search.operators import (
    BaseCrossover,
    BaseMutation,
    FactorizationMutation,
    HybridMutation,
    PerLoopCrossover,
    RandomMutation,
)
from odyssey.tune.search.random_search import RandomSearch
from odyssey.tune.space import Chain, SearchSpace, divisors

if TYPE_CHECKING:
    from odyssey.tune.baselines.a2c import NeighbourhoodA2C
    from odyssey.tune.baselines.annealing import SimulatedAnnealing
    from odyssey.tune.baselines.bayesian import BayesianOptimization
    from odyssey.tune.baselines.ensemble import OpenTunerEnsemble
    from odyssey.tune.baselines.exhaustive import ExhaustiveSearch
    from odyssey.tune.baselines.gbfs import GreedyBestFirst
    from odyssey.tune.baselines.mind_mappings import MindMappings
    from odyssey.tune.baselines.rl import ReinforcementLearning
    from odyssey.tune.baselines.sunstone import Sunstone
    from odyssey.tune.search.odyssey_tuner import OdysseyTuner
    from odyssey.tune.seed.mp_seed import (
        OBJECTIVES,
        SOLVERS,
        MPSeedResult,
        build_mp_model,
        mp_seed,
        round_candidates,
    )
    from odyssey.tune.seed.nlsolve import NLSolveResult, solve_nl

#: names imported on first use (Pyomo, CasADi, Optuna and the baselines' own modules stay
#: out of commands that do not need them)
_LAZY = {
    "NeighbourhoodA2C": "baselines.a2c", "SimulatedAnnealing": "baselines.annealing",
    "BayesianOptimization": "baselines.bayesian", "OpenTunerEnsemble": "baselines.ensemble",
    "ExhaustiveSearch": "baselines.exhaustive", "GreedyBestFirst": "baselines.gbfs",
    "MindMappings": "baselines.mind_mappings", "ReinforcementLearning": "baselines.rl",
    "Sunstone": "baselines.sunstone", "OdysseyTuner": "search.odyssey_tuner",
    "OBJECTIVES": "seed.mp_seed", "SOLVERS": "seed.mp_seed", "MPSeedResult": "seed.mp_seed",
    "build_mp_model": "seed.mp_seed", "mp_seed": "seed.mp_seed",
    "round_candidates": "seed.mp_seed", "NLSolveResult": "seed.nlsolve",
    "solve_nl": "seed.nlsolve",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"odyssey.tune.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'odyssey.tune' has no attribute {name!r}")


__all__ = [
    "OBJECTIVES", "SOLVERS", "TUNERS", "BaseCrossover", "BaseMutation", "BayesianOptimization",
    "Chain", "Evolutionary", "ExhaustiveSearch", "FactorizationMutation", "GreedyBestFirst",
    "HybridMutation", "MPSeedResult", "MindMappings", "NLSolveResult", "NeighbourhoodA2C",
    "OdysseyTuner", "OpenTunerEnsemble", "PerLoopCrossover", "Point", "Progress",
    "RandomMutation", "RandomSearch", "ReinforcementLearning", "SearchSpace",
    "SimulatedAnnealing", "StopReason", "Sunstone", "TracePoint", "Trial", "TuneResult", "Tuner",
    "build_mp_model", "divisors", "fitness", "make_tuner", "mp_seed", "round_candidates",
    "run_tuner", "solve_nl", "tuner_options",
]
