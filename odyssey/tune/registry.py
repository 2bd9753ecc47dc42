"""The registry of tuners: :data:`TUNERS`, :func:`make_tuner` and :func:`tuner_options`.

Every tuner is constructed as ``cls(model, rng=..., **options)``; its options are the
keyword-only parameters of its ``__init__`` (plus, for a tuner that forwards its
``**options`` to another one, that one's). ``docs/tuners.md`` describes each method.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel
from odyssey.tune.base import Tuner


class _Registry(Mapping[str, type[Tuner]]):
    """Tuner classes by name, each imported when first looked up: a heavy library that
    serves one method (scikit-learn for ``mfbo``, Optuna for ``bayesian``) is not loaded
    by every command that tunes."""

    def __init__(self, paths: dict[str, str]) -> None:
        self._paths = paths
        self._classes: dict[str, type[Tuner]] = {}

    def __getitem__(self, name: str) -> type[Tuner]:
        if name not in self._classes:
            module, _, cls = self._paths[name].rpartition(".")
            self._classes[name] = getattr(importlib.import_module(module), cls)
        return self._classes[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, name: object) -> bool:
        return name in self._paths

    def module(self, name: str) -> str:
        """The module that defines tuner ``name`` (not imported)."""
        return self._paths[name].rpartition(".")[0]


_REGISTRY = _Registry({
    "odyssey": "odyssey.tune.search.odyssey_tuner.OdysseyTuner",
    "evolutionary": "odyssey.tune.search.evolutionary.Evolutionary",
    "random": "odyssey.tune.search.random_search.RandomSearch",
    "exhaustive": "odyssey.tune.baselines.exhaustive.ExhaustiveSearch",
    "annealing": "odyssey.tune.baselines.annealing.SimulatedAnnealing",
    "bayesian": "odyssey.tune.baselines.bayesian.BayesianOptimization",
    "opentuner": "odyssey.tune.baselines.opentuner_search.OpenTunerSearch",
    "ensemble": "odyssey.tune.baselines.ensemble.OpenTunerEnsemble",
    "rl": "odyssey.tune.baselines.rl.ReinforcementLearning",
    "mind_mappings": "odyssey.tune.baselines.mind_mappings.MindMappings",
    "gbfs": "odyssey.tune.baselines.gbfs.GreedyBestFirst",
    "a2c": "odyssey.tune.baselines.a2c.NeighbourhoodA2C",
    "sunstone": "odyssey.tune.baselines.sunstone.Sunstone",
    "mfbo": "odyssey.tune.fidelity.mfbo_tuner.MFBOTuner",
})
#: tuners by name, each constructed as ``cls(model, rng=..., **options)``
TUNERS: Mapping[str, type[Tuner]] = _REGISTRY

#: tuners whose ``**options`` go on to another tuner's constructor
_FORWARDS: dict[str, str] = {"odyssey": "evolutionary"}


def _keyword_options(cls: type[Tuner]) -> frozenset[str]:
    params = inspect.signature(cls.__init__).parameters
    return frozenset(n for n, p in params.items()
                     if p.kind is inspect.Parameter.KEYWORD_ONLY and n != "rng")


def _check_name(name: str) -> None:
    if name not in TUNERS:
        raise TunerError(f"unknown tuner {name!r}; choose one of {', '.join(TUNERS)}")


def tuner_module(name: str) -> str:
    """The module of tuner ``name``, by name (for a worker to import as it starts)."""
    _check_name(name)
    return _REGISTRY.module(name)


def tuner_options(name: str) -> frozenset[str]:
    """The keyword options tuner ``name`` accepts (besides ``rng``)."""
    _check_name(name)
    options = _keyword_options(TUNERS[name])
    if name in _FORWARDS:
        options |= _keyword_options(TUNERS[_FORWARDS[name]])
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
