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
from odyssey.tune.baselines.a2c import NeighbourhoodA2C
from odyssey.tune.baselines.annealing import SimulatedAnnealing
from odyssey.tune.baselines.bayesian import BayesianOptimization
from odyssey.tune.baselines.ensemble import OpenTunerEnsemble
from odyssey.tune.baselines.exhaustive import ExhaustiveSearch
from odyssey.tune.baselines.gbfs import GreedyBestFirst
from odyssey.tune.baselines.mind_mappings import MindMappings
from odyssey.tune.baselines.rl import ReinforcementLearning
from odyssey.tune.baselines.sunstone import Sunstone
from odyssey.tune.registry import TUNERS, make_tuner, tuner_options
from odyssey.tune.search.evolutionary import Evolutionary
from odyssey.tune.search.odyssey_tuner import OdysseyTuner
from odyssey.tune.search.operators import (
    BaseCrossover,
    BaseMutation,
    FactorizationMutation,
    HybridMutation,
    PerLoopCrossover,
    RandomMutation,
)
from odyssey.tune.search.random_search import RandomSearch
from odyssey.tune.seed.mp_seed import (
    OBJECTIVES,
    SOLVERS,
    MPSeedResult,
    build_mp_model,
    mp_seed,
    round_candidates,
)
from odyssey.tune.seed.nlsolve import NLSolveResult, solve_nl
from odyssey.tune.space import Chain, SearchSpace, divisors

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
