"""The Odyssey tuner (MP seed + evolutionary search); re-exports the registry of tuners.

:class:`OdysseyTuner` solves the MP problem of :mod:`odyssey.tune.mp_seed` on its
first ``ask`` (so the solve counts against the run's time) and hands the rounded
seeds to an :class:`~odyssey.tune.evolutionary.Evolutionary` search, which
proposes them first; from then on it is that search. The seeds' screening
evaluations (``mp_result.evaluations``) count against the run's sample budget as
:attr:`~odyssey.tune.base.Tuner.own_evaluations`.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng, check_unit
from odyssey.tune.evolutionary import Evolutionary
from odyssey.tune.mp_seed import N_SEEDS, OBJECTIVES, SOLVERS, MPSeedResult, mp_seed

#: defaults of the MP seed inside the Odyssey tuner
MP_OBJECTIVE = "comm-comp"
MP_SOLVER = "ipopt"
MP_TIME_LIMIT_S = 10.0
MP_FRACTION = 0.25

_SEARCH_OPTIONS = frozenset(
    name for name, p in inspect.signature(Evolutionary.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "rng"
)


class OdysseyTuner(Tuner):
    """MP-seeded evolutionary search (Odyssey sections 4.1 and 4.2).

    ``mp_objective`` (``comm-comp``; or ``comp``, ``comm``) and ``mp_solver``
    (``ipopt``; or ``scip``, or ``None`` for no seed) configure the MP seed, which
    gets ``min(mp_time_limit_s, mp_fraction * time budget)`` seconds (10 s, 0.25),
    at most ``mp_fraction * sample budget`` model evaluations for screening its
    candidates (they count as samples), and keeps ``n_seeds`` seeds (8). Every other
    keyword option goes to :class:`Evolutionary` (``population_size``, ``n_parents``,
    ``alpha``, ...).
    """

    name = "odyssey"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        mp_objective: str = MP_OBJECTIVE,
        mp_solver: str | None = MP_SOLVER,
        mp_time_limit_s: float = MP_TIME_LIMIT_S,
        mp_fraction: float = MP_FRACTION,
        n_seeds: int = N_SEEDS,
        **search_options: Any,
    ) -> None:
        if mp_objective not in OBJECTIVES:
            raise TunerError(
                f"`mp_objective` must be one of {', '.join(OBJECTIVES)}, got {mp_objective!r}.")
        if mp_solver is not None and mp_solver not in SOLVERS:
            raise TunerError(
                f"`mp_solver` must be one of {', '.join(SOLVERS)} or None, got {mp_solver!r}.")
        if isinstance(mp_time_limit_s, bool) or not isinstance(mp_time_limit_s, int | float) \
                or not 0 < mp_time_limit_s < math.inf:
            raise TunerError(
                f"`mp_time_limit_s` must be a positive number, got {mp_time_limit_s!r}.")
        unknown = sorted(set(search_options) - _SEARCH_OPTIONS)
        if unknown:
            raise TunerError(
                f"unknown option(s) {', '.join(unknown)} for the odyssey tuner; its options are "
                f"{', '.join(sorted(_SEARCH_OPTIONS | _OWN_OPTIONS))}.")
        self.model = model
        self.mp_objective = mp_objective
        self.mp_solver = mp_solver
        self.mp_time_limit_s = float(mp_time_limit_s)
        self.mp_fraction = check_unit("mp_fraction", mp_fraction)
        self.n_seeds = check_int("n_seeds", n_seeds, minimum=1)
        self.search = Evolutionary(model, rng=check_rng(rng), **search_options)
        self.mp_result: MPSeedResult | None = None
        self._time_limit = self.mp_time_limit_s
        self._max_evaluations: int | None = None
        self._seeded = mp_solver is None

    @property
    def batch_size(self) -> int:  # type: ignore[override]
        return self.search.batch_size

    def begin(self, *, time_s: float | None, samples: int | None) -> None:
        self.search.begin(time_s=time_s, samples=samples)
        if time_s is not None:
            self._time_limit = max(1e-3, min(self.mp_time_limit_s, self.mp_fraction * time_s))
        if samples is not None:
            self._max_evaluations = max(1, int(self.mp_fraction * samples))

    def seed_points(self, points: Sequence[Point]) -> None:
        self.search.seed_points(points)

    def ask(self, n: int) -> list[Point]:
        if not self._seeded:
            self._seeded = True
            assert self.mp_solver is not None
            self.mp_result = mp_seed(
                self.model, rng=self.search.rng, objective=self.mp_objective,  # type: ignore[arg-type]
                solver=self.mp_solver, time_limit_s=self._time_limit,  # type: ignore[arg-type]
                n_seeds=self.n_seeds, max_evaluations=self._max_evaluations,
            )
            self.search.seed_points(self.mp_result.seeds)
        return self.search.ask(n)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        self.search.tell(points, evaluation)

    @property
    def converged(self) -> bool:
        return self.search.converged

    @property
    def own_evaluations(self) -> int:
        return self.mp_result.evaluations if self.mp_result is not None else 0


_OWN_OPTIONS = frozenset(
    name for name, p in inspect.signature(OdysseyTuner.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "rng"
)

# The registry moved to odyssey.tune.registry (which imports this module, so the names are
# re-exported last: by then OdysseyTuner exists for it); importing them from here still works.
from odyssey.tune.registry import TUNERS, make_tuner, tuner_options  # noqa: E402

__all__ = ["TUNERS", "OdysseyTuner", "make_tuner", "tuner_options"]
