"""An OpenTuner-style ensemble (registered as ``ensemble``): an AUC bandit over techniques.

OpenTuner itself is the ``opentuner`` tuner (:mod:`.opentuner_search`); every evaluation
there goes through its SQL results database (60 to 200 evaluations/s, against ~300,000/s
for our model). The search it runs by default (``AUCBanditMetaTechniqueA``) is written
out here, with numpy and without a database:

* parameters live in the unit cube, one log-scaled coordinate per tiling factor
  (``T = lower * (upper/lower) ** u``, rounded, repaired to the nearest legal tiling);
* techniques, as in OpenTuner: differential evolution (``DifferentialEvolutionAlt``:
  population 30, crossover rate 0.2, ``F`` uniform in ``[0.5, 1)``, the global best
  shared with the population), uniform greedy mutation of the best (each coordinate
  redrawn with probability 0.1, at least one), normal greedy mutation of the best
  (probability 0.3, ``sigma = 0.1``), pattern search around the best (steps ``+-s``
  per coordinate, ``s`` halved after a round without improvement; it stands for
  OpenTuner's Nelder-Mead member) and uniform random sampling;
* the meta-technique (Fialho et al.'s AUC bandit, ``C = 0.05``, a window of 500):
  each proposal comes from the technique of highest ``AUC + C * sqrt(2 log2 |H| / n_t)``
  where the AUC credits proposals that were a new global best, recent ones most;
* a tiling that was already evaluated is answered from a cache (no sample spent); when
  every technique keeps proposing known tilings, random ones fill the batch.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng, fitness
from odyssey.tune.baselines.ensemble_techniques import (
    Context,
    DifferentialEvolution,
    NormalGreedyMutation,
    PatternSearch,
    RandomTechnique,
    Technique,
    UniformGreedyMutation,
)
from odyssey.tune.baselines.unit_cube import UnitCube
from odyssey.tune.space import Genome, SearchSpace

BATCH_SIZE = 16
EXPLORATION = 0.05
WINDOW = 500
_RETRIES = 4


class AUCBandit:
    """Credit assignment by the area under the curve of recent successes (window ``W``).

    For technique ``t`` used ``n_t`` times in the window, its ``k``-th use scoring a
    success adds ``k`` (later uses weigh more); the AUC term is ``2 * sum / (n_t (n_t+1))``.
    """

    def __init__(self, names: Sequence[str], *, exploration: float = EXPLORATION,
                 window: int = WINDOW) -> None:
        self.names = tuple(names)
        self.exploration = exploration
        self.window = window
        self.history: deque[tuple[str, bool]] = deque()
        self.uses = dict.fromkeys(self.names, 0)
        self.auc = dict.fromkeys(self.names, 0)
        self.decay = dict.fromkeys(self.names, 0)

    def score(self, name: str) -> float:
        n = self.uses[name]
        if n == 0:
            return math.inf
        exploit = 2.0 * self.auc[name] / (n * (n + 1.0))
        explore = math.sqrt(2.0 * math.log2(max(len(self.history), 1)) / n)
        return exploit + self.exploration * explore

    def ordered(self, rng: np.random.Generator) -> list[str]:
        """Names by decreasing score, ties broken at random."""
        names = [self.names[k] for k in rng.permutation(len(self.names))]
        return sorted(names, key=self.score, reverse=True)

    def record(self, name: str, success: bool) -> None:
        self.history.append((name, success))
        self.uses[name] += 1
        if success:
            self.auc[name] += self.uses[name]
            self.decay[name] += 1
        if len(self.history) > self.window:
            old, old_success = self.history.popleft()
            self.uses[old] -= 1
            self.auc[old] -= self.decay[old]
            if old_success:
                self.decay[old] -= 1


class OpenTunerEnsemble(Tuner):
    """OpenTuner's default AUC-bandit ensemble; see the module docstring.

    Options: ``batch_size >= 1`` (16), ``population_size >= 4`` for differential
    evolution (30).
    """

    name = "ensemble"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        batch_size: int = BATCH_SIZE,
        population_size: int = 30,
    ) -> None:
        self.rng = check_rng(rng)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        population_size = check_int("population_size", population_size, minimum=4)
        self.space = SearchSpace(model.params)
        self.budget = dict(model.budget)
        self.cube = UnitCube(self.space)
        self.ctx = Context(dim=self.space.dim, rng=self.rng)
        self.techniques: dict[str, Technique] = {t.name: t for t in (
            DifferentialEvolution(population_size=population_size),
            UniformGreedyMutation(), NormalGreedyMutation(), PatternSearch(), RandomTechnique(),
        )}
        self.bandit = AUCBandit(list(self.techniques))
        self._serial = 0
        self._waiting: dict[Genome, list[tuple[int, str, np.ndarray]]] = {}
        self._known: dict[Genome, float] = {}
        self._seeds: list[Genome] = []

    # ------------------------------------------------------------------ ask/tell

    def seed_points(self, points: Sequence[Point]) -> None:
        self._seeds.extend(self.space.repair_genome(self.space.genome(p)) for p in points)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        batch: list[Genome] = []
        while self._seeds and len(batch) < n:
            g = self._seeds.pop(0)
            if g not in self._known and g not in self._waiting:
                self._wait(g, "random", self.cube.encode(g))
                batch.append(g)
        for _ in range(n * _RETRIES):
            if len(batch) >= n:
                break
            name, u = self._propose()
            g = self.cube.decode(u)
            if g in self._known:
                self._credit(name, self._serial, u, self._known[g], success=False)
                self._serial += 1
            elif g in self._waiting:
                self._wait(g, name, u)
            else:
                self._wait(g, name, u)
                batch.append(g)
        for row in self.space.sample(self.rng, 4 * (n - len(batch))).tolist():
            g = tuple(row)  # every technique proposed known tilings: random ones instead
            if len(batch) < n and g not in self._known and g not in self._waiting:
                self._wait(g, "random", self.cube.encode(g))
                batch.append(g)
        return self.space.to_points(batch)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        fit = fitness(evaluation, self.budget)
        for g, f in zip((tuple(r) for r in self.space.matrix(points).tolist()), fit.tolist(),
                        strict=True):
            self._known[g] = f
            success = f > self.ctx.best_fitness
            if success:
                self.ctx.best_fitness, self.ctx.best = f, self.cube.encode(g)
            for serial, name, u in self._waiting.pop(g, []):
                self._credit(name, serial, u, f, success=success)
                success = False  # only the first proposal of a tiling found it

    # ------------------------------------------------------------------ internals

    def _propose(self) -> tuple[str, np.ndarray]:
        for name in self.bandit.ordered(self.rng):
            u = self.techniques[name].propose(self.ctx, self._serial)
            if u is not None:
                return name, u
            self.bandit.record(name, False)  # no proposal counts as no success
        return "random", self.rng.random(self.space.dim)

    def _wait(self, g: Genome, name: str, u: np.ndarray) -> None:
        self._waiting.setdefault(g, []).append((self._serial, name, u))
        self._serial += 1

    def _credit(self, name: str, serial: int, u: np.ndarray, f: float, *, success: bool) -> None:
        self.bandit.record(name, success)
        self.techniques[name].told(self.ctx, serial, u, f)
