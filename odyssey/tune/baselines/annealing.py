"""Simulated annealing over tilings, the baseline of Odyssey section 5.2, as an ask/tell tuner.

The paper runs SciPy's basin hopping (a Metropolis walk) at temperature ``T = 200`` with
a step function made of the hybrid mutation. Here the same walk is written out so it
fits ask/tell and a time budget:

* ``n_chains`` independent chains (one batch = one step of every chain), each started
  at a random legal tiling (seeded points first);
* a step proposes ``HybridMutation(alpha)`` of the chain's current tiling, repaired to
  the nearest legal one (a proposal equal to the current tiling is mutated again);
* Metropolis acceptance on the fitness ``f`` of :func:`odyssey.tune.base.fitness`
  (throughput in GOP/s when feasible, ``-over`` when over budget): a better or equal
  proposal is accepted, a worse one with probability ``exp((f_new - f_cur) / T)``;
* geometric cooling over the budget: ``T = T0 * (T_end / T0) ** progress`` with
  ``progress`` the fraction of the sample budget (or, without one, of the time budget)
  spent, from ``temperature`` (``T0 = 200`` GOP/s, the paper's grid-searched value) to
  ``final_temperature`` (1 GOP/s);
* a proposal that was already evaluated is judged from a cache, without asking again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import (
    Point,
    Tuner,
    check_int,
    check_number,
    check_rng,
    check_unit,
    fitness,
)
from odyssey.tune.progress import BudgetProgress
from odyssey.tune.search.operators import HybridMutation
from odyssey.tune.space import Genome, SearchSpace

N_CHAINS = 32
TEMPERATURE = 200.0
FINAL_TEMPERATURE = 1.0
ALPHA = 0.4
MAX_CACHE = 1_000_000
_RETRIES = 8


class SimulatedAnnealing(Tuner):
    """Metropolis chains with geometric cooling; see the module docstring.

    Options: ``n_chains >= 1`` (32), ``temperature`` (200.0) and ``final_temperature``
    (1.0) in GOP/s, positive, ``alpha`` in ``[0, 1]`` (0.4, the hybrid mutation's
    probability of a factorization move).
    """

    name = "annealing"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        n_chains: int = N_CHAINS,
        temperature: float = TEMPERATURE,
        final_temperature: float = FINAL_TEMPERATURE,
        alpha: float = ALPHA,
    ) -> None:
        self.rng = check_rng(rng)
        self.n_chains = check_int("n_chains", n_chains, minimum=1)
        self.temperature = check_number("temperature", temperature, positive=True)
        self.final_temperature = check_number("final_temperature", final_temperature,
                                              positive=True)
        self.mutation = HybridMutation(check_unit("alpha", alpha))
        self.space = SearchSpace(model.params)
        self.budget = dict(model.budget)
        self.batch_size = self.n_chains
        self._current: list[Genome | None] = [None] * self.n_chains
        self._score = np.full(self.n_chains, -np.inf)
        self._asked: dict[Genome, list[int]] = {}  # proposal -> chains waiting for it
        self._cache: dict[Genome, float] = {}
        self._seeds: list[Genome] = []
        self._next_chain = 0
        self.progress = BudgetProgress()

    # ------------------------------------------------------------------ schedule

    def begin(self, *, time_s: float | None, samples: int | None) -> None:
        self.progress.begin(time_s=time_s, samples=samples)

    @property
    def current_temperature(self) -> float:
        ratio = self.final_temperature / self.temperature
        return self.temperature * ratio**self.progress.fraction

    def accept(self, new: float, old: float, temperature: float) -> bool:
        """Metropolis: always for ``new >= old``, else with probability ``exp((new-old)/T)``."""
        if new >= old:
            return True
        return bool(self.rng.random() < math.exp(max((new - old) / temperature, -700.0)))

    # ------------------------------------------------------------------ ask/tell

    def seed_points(self, points: Sequence[Point]) -> None:
        self._seeds.extend(self.space.repair_genome(self.space.genome(p)) for p in points)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        batch: list[Genome] = []
        temperature = self.current_temperature
        for _ in range(n * _RETRIES):
            if len(batch) >= n:
                break
            chain = self._next_chain
            self._next_chain = (chain + 1) % self.n_chains
            g = self._propose(chain)
            if g in self._cache and self._current[chain] is not None:
                self._judge(chain, g, self._cache[g], temperature)  # known: no sample spent
                continue
            self._asked.setdefault(g, []).append(chain)
            batch.append(g)
        while len(batch) < n:  # every chain is stuck among known tilings: random proposals
            g = tuple(int(v) for v in self.space.sample(self.rng, 1)[0])
            self._asked.setdefault(g, []).append(self._next_chain)
            self._next_chain = (self._next_chain + 1) % self.n_chains
            batch.append(g)
        return self.space.to_points(batch)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        fit = fitness(evaluation, self.budget)
        temperature = self.current_temperature
        if len(self._cache) + len(points) > MAX_CACHE:
            self._cache.clear()
        for g, f in zip((tuple(r) for r in self.space.matrix(points).tolist()), fit.tolist(),
                        strict=True):
            self._cache[g] = f
            for chain in self._asked.pop(g, []):
                self._judge(chain, g, f, temperature)
        self.progress.add(len(points))

    # ------------------------------------------------------------------ internals

    def _propose(self, chain: int) -> Genome:
        cur = self._current[chain]
        if cur is None:  # the chain's start: a seed, else a random legal tiling
            if self._seeds:
                return self._seeds.pop(0)
            return tuple(int(v) for v in self.space.sample(self.rng, 1)[0])
        g = cur
        for _ in range(_RETRIES):
            g = self.space.repair_genome(self.mutation.mutate(list(cur), self.space, self.rng))
            if g != cur:
                break
        return g

    def _judge(self, chain: int, g: Genome, f: float, temperature: float) -> None:
        if self._current[chain] is None or self.accept(f, float(self._score[chain]), temperature):
            self._current[chain], self._score[chain] = g, f
