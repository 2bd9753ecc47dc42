"""The registry of tuners: :data:`TUNERS`, :func:`make_tuner` and :func:`tuner_options`.

Every tuner is constructed as ``cls(model, rng=..., **options)``; its options are the
keyword-only parameters of its ``__init__`` (plus, for a tuner that forwards its
``**options`` to another one, that one's). ``docs/tuners.md`` describes each method.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel
from odyssey.tune.base import Tuner
from odyssey.tune.baselines.a2c import NeighbourhoodA2C
from odyssey.tune.baselines.annealing import SimulatedAnnealing
from odyssey.tune.baselines.bayesian import BayesianOptimization
from odyssey.tune.baselines.ensemble import OpenTunerEnsemble
from odyssey.tune.baselines.exhaustive import ExhaustiveSearch
from odyssey.tune.baselines.gbfs import GreedyBestFirst
from odyssey.tune.baselines.mind_mappings import MindMappings
from odyssey.tune.baselines.opentuner_search import OpenTunerSearch
from odyssey.tune.baselines.rl import ReinforcementLearning
from odyssey.tune.baselines.sunstone import Sunstone
from odyssey.tune.fidelity.mfbo_tuner import MFBOTuner
from odyssey.tune.search.evolutionary import Evolutionary
from odyssey.tune.search.odyssey_tuner import OdysseyTuner
from odyssey.tune.search.random_search import RandomSearch

#: tuners by name, each constructed as ``cls(model, rng=..., **options)``
TUNERS: dict[str, type[Tuner]] = {
    "odyssey": OdysseyTuner,
    "evolutionary": Evolutionary,
    "random": RandomSearch,
    "exhaustive": ExhaustiveSearch,
    "annealing": SimulatedAnnealing,
    "bayesian": BayesianOptimization,
    "opentuner": OpenTunerSearch,
    "ensemble": OpenTunerEnsemble,
    "rl": ReinforcementLearning,
    "mind_mappings": MindMappings,
    "gbfs": GreedyBestFirst,
    "a2c": NeighbourhoodA2C,
    "sunstone": Sunstone,
    "mfbo": MFBOTuner,
}

#: tuners whose ``**options`` go on to another tuner's constructor
_FORWARDS: dict[type[Tuner], type[Tuner]] = {OdysseyTuner: Evolutionary}


def _keyword_options(cls: type[Tuner]) -> frozenset[str]:
    params = inspect.signature(cls.__init__).parameters
    return frozenset(n for n, p in params.items()
                     if p.kind is inspect.Parameter.KEYWORD_ONLY and n != "rng")


def tuner_options(name: str) -> frozenset[str]:
    """The keyword options tuner ``name`` accepts (besides ``rng``)."""
    if name not in TUNERS:
        raise TunerError(f"unknown tuner {name!r}; choose one of {', '.join(TUNERS)}")
    cls = TUNERS[name]
    options = _keyword_options(cls)
    if cls in _FORWARDS:
        options |= _keyword_options(_FORWARDS[cls])
    return options


def make_tuner(
    name: str, model: DesignModel, *, seed: int | np.random.Generator, **options: Any
) -> Tuner:
    """Tuner ``name`` of :data:`TUNERS` for ``model``, seeded with ``seed`` (an int or a Generator).

    Unknown names and options raise TunerError naming them; option values are
    validated by the tuner.
    """
    allowed = tuner_options(name)
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise TunerError(f"unknown option(s) {', '.join(unknown)} for tuner {name!r}; its options "
                         f"are {', '.join(sorted(allowed))}.")
    if isinstance(seed, np.random.Generator):
        rng = seed
    elif isinstance(seed, int | np.integer) and not isinstance(seed, bool) and seed >= 0:
        rng = np.random.default_rng(int(seed))
    else:
        raise TunerError(f"`seed` must be a non-negative integer or a numpy Generator, got {seed!r}.")
    return TUNERS[name](model, rng=rng, **options)  # type: ignore[call-arg]
