"""The techniques of the OpenTuner-style ensemble (:mod:`odyssey.tune.baselines.ensemble`).

Each works in the unit cube ``[0, 1]^dim`` and talks to the ensemble through
:meth:`Technique.propose` (a point, or None while it waits for results) and
:meth:`Technique.told` (the fitness of one of its proposals, larger is better). The
shared :class:`Context` carries the generator and the global best, which the greedy
techniques mutate and differential evolution mixes into its population.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np


@dataclass
class Context:
    """What the techniques share: the generator and the global best (unit cube)."""

    dim: int
    rng: np.random.Generator
    best: np.ndarray | None = None
    best_fitness: float = -np.inf

    def best_or_random(self) -> np.ndarray:
        return self.best.copy() if self.best is not None else self.rng.random(self.dim)


class Technique(abc.ABC):
    name: str

    @abc.abstractmethod
    def propose(self, ctx: Context, serial: int) -> np.ndarray | None:
        """A point to evaluate (``serial`` identifies it in :meth:`told`), or None."""

    def told(self, ctx: Context, serial: int, u: np.ndarray, f: float) -> None:  # noqa: B027
        """The fitness ``f`` of proposal ``serial`` (by default ignored)."""


class RandomTechnique(Technique):
    name = "random"

    def propose(self, ctx: Context, serial: int) -> np.ndarray | None:
        return ctx.rng.random(ctx.dim)


class UniformGreedyMutation(Technique):
    """The global best with each coordinate redrawn uniformly with probability ``rate``
    (at least one coordinate)."""

    name = "uniform_greedy_mutation"

    def __init__(self, rate: float = 0.1) -> None:
        self.rate = rate

    def _mask(self, ctx: Context) -> np.ndarray:
        mask = ctx.rng.random(ctx.dim) < self.rate
        mask[int(ctx.rng.integers(ctx.dim))] = True
        return mask

    def propose(self, ctx: Context, serial: int) -> np.ndarray | None:
        u = ctx.best_or_random()
        mask = self._mask(ctx)
        u[mask] = ctx.rng.random(int(mask.sum()))
        return u


class NormalGreedyMutation(UniformGreedyMutation):
    """The global best with Gaussian steps (``sigma``) on coordinates chosen with
    probability ``rate`` (at least one), clipped to the cube."""

    name = "normal_greedy_mutation"

    def __init__(self, rate: float = 0.3, sigma: float = 0.1) -> None:
        super().__init__(rate)
        self.sigma = sigma

    def propose(self, ctx: Context, serial: int) -> np.ndarray | None:
        u = ctx.best_or_random()
        mask = self._mask(ctx)
        u[mask] += ctx.rng.normal(0.0, self.sigma, int(mask.sum()))
        return np.clip(u, 0.0, 1.0)


class DifferentialEvolution(Technique):
    """DE/rand/1/bin with OpenTuner's defaults: the oldest member without a pending
    replacement is the target; ``trial = x1 + F (x2 - x3)`` on coordinates chosen with
    probability ``cr`` (at least one), ``F`` uniform in ``[0.5, 1)``; the global best
    joins the donor pool; a trial replaces its target when it is at least as fit."""

    name = "differential_evolution"

    def __init__(self, population_size: int = 30, cr: float = 0.2) -> None:
        self.size = population_size
        self.cr = cr
        self.pop: list[np.ndarray] = []
        self.fit: list[float] = []
        self.age: list[int] = []
        self._pending: dict[int, int] = {}  # serial -> member (or -1 while filling)
        self._busy: set[int] = set()
        self._clock = 0

    def propose(self, ctx: Context, serial: int) -> np.ndarray | None:
        if len(self.pop) + sum(1 for m in self._pending.values() if m < 0) < self.size:
            self._pending[serial] = -1  # initial population: random members
            return ctx.rng.random(ctx.dim)
        free = [k for k in range(len(self.pop)) if k not in self._busy]
        if len(self.pop) < self.size or not free:
            return None
        target = min(free, key=lambda k: self.age[k])
        donors = [self.pop[k] for k in range(len(self.pop)) if k != target]
        if ctx.best is not None:
            donors.append(ctx.best)
        pick = ctx.rng.choice(len(donors), size=3, replace=False)
        x1, x2, x3 = (donors[int(k)] for k in pick)
        f = 0.5 + 0.5 * ctx.rng.random()
        u = self.pop[target].copy()
        mask = ctx.rng.random(ctx.dim) < self.cr
        mask[int(ctx.rng.integers(ctx.dim))] = True
        u[mask] = (x1 + f * (x2 - x3))[mask]
        self._clock += 1
        self.age[target] = self._clock  # to the back of the queue
        self._busy.add(target)
        self._pending[serial] = target
        return np.clip(u, 0.0, 1.0)

    def told(self, ctx: Context, serial: int, u: np.ndarray, f: float) -> None:
        member = self._pending.pop(serial, None)
        if member is None:
            return
        if member < 0:
            self.pop.append(u.copy())
            self.fit.append(f)
            self.age.append(0)
            return
        self._busy.discard(member)
        if f >= self.fit[member]:
            self.pop[member], self.fit[member] = u.copy(), f


class PatternSearch(Technique):
    """Compass search around the global best: a round proposes ``center +- step`` along
    every coordinate; after the round the center moves to the (new) best, or the step
    halves; below ``min_step`` it restarts at ``initial_step``."""

    name = "pattern_search"

    def __init__(self, initial_step: float = 0.25, min_step: float = 1.0 / 512) -> None:
        self.initial_step = initial_step
        self.min_step = min_step
        self.step = initial_step
        self.center: np.ndarray | None = None
        self.center_fitness = -np.inf
        self._queue: list[np.ndarray] = []
        self._outstanding: set[int] = set()

    def propose(self, ctx: Context, serial: int) -> np.ndarray | None:
        if not self._queue and not self._outstanding:
            self._new_round(ctx)
        if not self._queue:
            return None
        self._outstanding.add(serial)
        return self._queue.pop()

    def told(self, ctx: Context, serial: int, u: np.ndarray, f: float) -> None:
        self._outstanding.discard(serial)

    def _new_round(self, ctx: Context) -> None:
        if self.center is not None and ctx.best_fitness <= self.center_fitness:
            self.step /= 2.0
            if self.step < self.min_step:
                self.step = self.initial_step
        self.center = ctx.best_or_random()
        self.center_fitness = ctx.best_fitness
        for d in range(ctx.dim):
            for sign in (-1.0, 1.0):
                u = self.center.copy()
                u[d] = min(1.0, max(0.0, u[d] + sign * self.step))
                if u[d] != self.center[d]:
                    self._queue.append(u)
