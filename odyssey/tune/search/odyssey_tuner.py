"""The Odyssey tuner (MP seed + evolutionary search + bound-guided search); re-exports
the registry of tuners.

:class:`OdysseyTuner` solves the MP problem of :mod:`odyssey.tune.seed.mp_seed` on its
first ``ask`` (so the solve counts against the run's time) and hands the rounded
seeds to an :class:`~odyssey.tune.search.evolutionary.Evolutionary` search, which
proposes them first. The seeds' screening evaluations (``mp_result.evaluations``)
count against the run's sample budget as :attr:`~odyssey.tune.base.Tuner.own_evaluations`.

Beside the evolutionary search runs a :class:`~odyssey.tune.search.bound_search.BoundSearch`
(branch and bound on the model's interval bounds, its tilings asked and told like any
other). The two share what they find: every evaluated tiling is offered to the bound
search as an incumbent (which prunes boxes) and every tiling of the bound search joins
the evolutionary population (a new best is polished by the local search). They share
the budget by what the run is given:

* a sample budget: evaluations are what is scarce, so the bound search, which needs
  few of them, goes first: it advances until it wants tilings evaluated, and the
  evolutionary search gets a small batch (:data:`IDLE_BATCH`) only when the bound
  search has expanded boxes :data:`IDLE_PAUSES` times without asking for any (counted
  in expansions, not seconds, so a run is reproducible from its seed). Where the bounds
  are too weak to finish soon, the bound search stops for good once it has had
  :data:`BOUND_SAMPLE_SHARE` of the samples or bounded :data:`BOUND_WORK_PER_SAMPLE`
  boxes per sample of the budget (at most :data:`BOUND_WORK_MAX`), and the
  evolutionary search has the rest;
* a time budget alone: time is what is scarce, so the evolutionary search's first batch (its
  random population) is asked before the MP seed is solved, and a run stopped during the
  solve keeps the best of it; the evolutionary search finds good tilings fastest, so it runs
  alone for its first :data:`SOLO_S` seconds; from then on
  each gets its share of the time after the MP seed (``bound_share`` to the bound search,
  0.5, its set-up included), in slices of :data:`TIME_SLICE_S`.

When the bound search has no box left, the best tiling is proven optimal and the tuner
reports ``converged``. Under a sample budget a run is reproducible from its seed; under a
time budget, as with any tuner, what fits in the time depends on the machine.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng, check_unit
from odyssey.tune.search.bound_search import BoundSearch
from odyssey.tune.search.evolutionary import Evolutionary
from odyssey.tune.seed.mp_seed import N_SEEDS, OBJECTIVES, SOLVERS, MPSeedResult, mp_seed

#: defaults of the MP seed inside the Odyssey tuner
MP_OBJECTIVE = "comm-comp"
MP_SOLVER = "ipopt"
MP_TIME_LIMIT_S = 10.0
MP_FRACTION = 0.25
#: share of the clock of the bound search under a time budget
BOUND_SHARE = 0.5
#: under a time budget: the longest stretch of one search before the other's turn
TIME_SLICE_S = 0.05
#: under a time budget: seconds of the evolutionary search alone before the bound search
SOLO_S = 0.5
#: under a sample budget: the bound search expands boxes this many times without asking
#: for tilings before the evolutionary search gets a batch of at most IDLE_BATCH points
IDLE_PAUSES = 32
IDLE_BATCH = 16
#: under a sample budget: the bound search's share of the samples, and of the work
BOUND_SAMPLE_SHARE = 0.75
BOUND_WORK_PER_SAMPLE = 1000
BOUND_WORK_MAX = 250_000

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
    candidates (they count as samples), and keeps ``n_seeds`` seeds (8).
    ``bound_search`` (True) runs the bound-guided search beside the evolutionary one,
    with ``bound_share`` of the clock under a time budget (see the module). Every
    other keyword option goes to :class:`Evolutionary` (``population_size``,
    ``n_parents``, ``alpha``, ...).
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
        bound_search: bool = True,
        bound_share: float = BOUND_SHARE,
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
        if not isinstance(bound_search, bool):
            raise TunerError(f"`bound_search` must be True or False, got {bound_search!r}.")
        self.bound_share = check_unit("bound_share", bound_share)
        self.search = Evolutionary(model, rng=check_rng(rng), **search_options)
        self.mp_result: MPSeedResult | None = None
        self.bound: BoundSearch | None = None
        self._bound_wanted = bound_search
        self._time_limit = self.mp_time_limit_s
        self._max_evaluations: int | None = None
        self._seeded = mp_solver is None
        self._first_batch = False  # under a time budget: the search's first batch is asked before the seed
        self._by_samples = False
        self._bound_points = self._bound_work = 1 << 62  # caps under a sample budget
        self._search_s = 0.0  # seconds of the evolutionary search: ask to tell, evaluation included
        self._bound_s = 0.0  # ... of the bound search: set-up, steps, ask to tell
        self._asked_at = 0.0
        self._last_asked: str | None = None  # "bound" or "search": who the told points are for

    @property
    def batch_size(self) -> int:  # type: ignore[override]
        if self.bound is not None and self.bound.wants:
            return self.bound.wants
        return self.search.batch_size

    def begin(self, *, time_s: float | None, samples: int | None) -> None:
        self.search.begin(time_s=time_s, samples=samples)
        self._by_samples = samples is not None
        if time_s is not None:
            self._time_limit = max(1e-3, min(self.mp_time_limit_s, self.mp_fraction * time_s))
        if samples is not None:
            self._max_evaluations = max(1, int(self.mp_fraction * samples))
            self._bound_points = int(BOUND_SAMPLE_SHARE * samples)
            self._bound_work = min(BOUND_WORK_PER_SAMPLE * samples, BOUND_WORK_MAX)

    def seed_points(self, points: Sequence[Point]) -> None:
        self.search.seed_points(points)

    def ask(self, n: int) -> list[Point]:
        if not self._seeded and not self._by_samples and not self._first_batch:
            self._first_batch = True
            # a time budget: the search's first batch (its random population, milliseconds)
            # before the MP seed, whose solve can take most of a short budget, so that a run
            # stopped meanwhile still has its best of those (the seeds join the search after)
            self._last_asked, self._asked_at = "search", time.perf_counter()
            return self.search.ask(n)
        if not self._seeded:
            self._seeded = True
            assert self.mp_solver is not None
            self.mp_result = mp_seed(
                self.model, rng=self.search.rng, objective=self.mp_objective,  # type: ignore[arg-type]
                solver=self.mp_solver, time_limit_s=self._time_limit,  # type: ignore[arg-type]
                n_seeds=self.n_seeds, max_evaluations=self._max_evaluations,
            )
            self.search.seed_points(self.mp_result.seeds)
        if self._bound_turn():
            start = time.perf_counter()
            bound = self._bound()
            if self._by_samples:
                bound.step(max_pauses=IDLE_PAUSES)
            else:
                bound.step(time_slice_s=TIME_SLICE_S)
            self._bound_s += time.perf_counter() - start
            if bound.wants:
                self._last_asked, self._asked_at = "bound", time.perf_counter()
                return bound.ask(min(n, self._bound_points - bound.asked))
            if self._by_samples:
                n = min(n, IDLE_BATCH)
        self._last_asked, self._asked_at = "search", time.perf_counter()
        return self.search.ask(n)

    def _bound(self) -> BoundSearch:
        if self.bound is None:
            self.bound = BoundSearch(self.model, seed=int(self.search.rng.integers(1 << 31)))
        return self.bound

    def _bound_turn(self) -> bool:
        """Whether the bound search may work now (see the module docstring)."""
        if not self._bound_wanted or self.search.pending:
            return False
        if self.bound is not None and self.bound.finished:
            return False
        if self._by_samples and self.bound is not None and (
                self.bound.asked >= self._bound_points
                or self.bound.bb.bound_evaluations >= self._bound_work):
            self._bound_wanted = False  # its share is spent: it stops for good
            return False
        if self._by_samples or self.search.converged:
            return True
        if self._search_s < SOLO_S:
            return False
        share = self.bound_share
        return self._bound_s * (1 - share) <= share * (self._search_s - SOLO_S)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        """Route the tiling to the search that asked; the time from its ask to the end of
        this tell (evaluation included) is that search's."""
        if self._last_asked == "bound":
            assert self.bound is not None
            self.bound.tell(evaluation)
            self.search.absorb(points, evaluation)
            self._bound_s += time.perf_counter() - self._asked_at
            return
        self.search.tell(points, evaluation)
        if self.bound is not None:
            self.bound.offer(points, evaluation)
        self._search_s += time.perf_counter() - self._asked_at

    @property
    def converged(self) -> bool:
        """The bound search proved the best tiling optimal, or (without one) the
        evolutionary search converged."""
        if self.bound is not None and self.bound.proven:
            return True
        # the bound search still has work while it is wanted and unfinished (even if not
        # built yet: under a time budget it starts after SOLO_S, or at once on convergence)
        bound_left = self._bound_wanted and (self.bound is None or not self.bound.finished)
        return self.search.converged and not bound_left

    @property
    def proven_optimal(self) -> bool:
        """The best tiling told is proven optimal under the model (no box is left)."""
        return self.bound is not None and self.bound.proven

    @property
    def own_evaluations(self) -> int:
        return self.mp_result.evaluations if self.mp_result is not None else 0


_OWN_OPTIONS = frozenset(
    name for name, p in inspect.signature(OdysseyTuner.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "rng"
)

__all__ = ["OdysseyTuner"]
