"""Mind Mappings (Hegde et al., ASPLOS 2021; seed 000): gradient search on a surrogate.

The paper trains a differentiable MLP surrogate of the cost model offline, on millions
of mappings of many problems, then runs projected gradient descent on it with random
injections. We have one problem and a budget, so the surrogate is trained online:

* phase 1: ``n_train`` random legal tilings are evaluated; an MLP
  (:mod:`odyssey.tune.baselines.nn`, ``hidden`` tanh units twice) learns *meta-statistics* of
  the model from the log-scaled unit-cube coordinates (:mod:`odyssey.tune.baselines.unit_cube`):
  ``log latency`` and ``log(1 + r)`` for each resource ``r`` (the paper found
  meta-statistics train better than the final metric). It is retrained on every
  evaluation so far (the latest ``max_data``) every ``retrain_every`` batches;
* phase 2: ``batch_size`` walkers descend the surrogate cost
  ``J(u) = log latency + penalty * sum_r max(0, log(1 + r) - log(1 + budget_r))`` with
  normalised gradient steps ``u <- u - step * grad / |grad|``; each position is
  projected to the nearest legal tiling (rounding, then repair), which is evaluated
  if it is new. The walker keeps its continuous position (projection is for
  evaluation) so small steps are not undone by rounding;
* random injections: every ``inject_every`` steps each walker draws a random point
  and moves there if the surrogate prefers it, or else with probability
  ``exp(-(J_new - J_cur) / t)``, ``t`` decaying from 1 to 0.01 over the budget
  (the paper's simulated-annealing-like acceptance).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import RESOURCES, DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_number, check_rng
from odyssey.tune.baselines.nn import MLP, Adam
from odyssey.tune.baselines.unit_cube import UnitCube
from odyssey.tune.progress import BudgetProgress
from odyssey.tune.space import Genome, SearchSpace

N_TRAIN = 512
BATCH_SIZE = 64
HIDDEN = 64
STEP = 0.05
PENALTY = 10.0
INJECT_EVERY = 10
RETRAIN_EVERY = 20
MAX_DATA = 20_000
_TRAIN_STEPS = 300
_MINIBATCH = 256
_INNER = 16


class Surrogate:
    """An MLP from unit-cube coordinates to standardised meta-statistics (see above)."""

    def __init__(self, dim: int, outputs: int, hidden: int, rng: np.random.Generator) -> None:
        self.net = MLP((dim, hidden, hidden, outputs), rng)
        self.optimizer = Adam(self.net.params, lr=3e-3)
        self.rng = rng
        self.mean = np.zeros(outputs)
        self.std = np.ones(outputs)

    def fit(self, x: np.ndarray, y: np.ndarray, steps: int = _TRAIN_STEPS) -> float:
        """Minibatch Adam on the mean squared error; returns the final batch's loss."""
        self.mean, self.std = y.mean(axis=0), np.maximum(y.std(axis=0), 1e-6)
        z = (y - self.mean) / self.std
        loss = 0.0
        for _ in range(steps):
            idx = self.rng.integers(0, len(x), size=min(_MINIBATCH, len(x)))
            fwd = self.net.forward(x[idx])
            err = fwd.output - z[idx]
            loss = float((err**2).mean())
            grads, _ = self.net.backward(fwd, 2.0 * err / err.size)
            self.optimizer.step(grads)
        return loss

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.net(x) * self.std + self.mean

    def cost_and_gradient(self, x: np.ndarray, limits: np.ndarray,
                          penalty: float) -> tuple[np.ndarray, np.ndarray]:
        """``J(x)`` (see the module docstring) and ``dJ/dx`` for every row of ``x``."""
        fwd = self.net.forward(x)
        pred = fwd.output * self.std + self.mean
        over = pred[:, 1:] - limits
        cost = pred[:, 0] + penalty * np.maximum(over, 0.0).sum(axis=1)
        d_pred = np.concatenate([np.ones((len(x), 1)), penalty * (over > 0)], axis=1)
        _, grad = self.net.backward(fwd, d_pred * self.std)
        return cost, grad


class MindMappings(Tuner):
    """Projected gradient descent on an online MLP surrogate; see the module docstring.

    Options: ``n_train >= 1`` (512), ``batch_size >= 1`` walkers (64), ``hidden >= 1``
    (64), ``step`` (0.05) and ``penalty`` (10.0) positive, ``inject_every >= 1`` (10),
    ``retrain_every >= 1`` (20).
    """

    name = "mind_mappings"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        n_train: int = N_TRAIN,
        batch_size: int = BATCH_SIZE,
        hidden: int = HIDDEN,
        step: float = STEP,
        penalty: float = PENALTY,
        inject_every: int = INJECT_EVERY,
        retrain_every: int = RETRAIN_EVERY,
    ) -> None:
        self.rng = check_rng(rng)
        self.n_train = check_int("n_train", n_train, minimum=1)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.step = check_number("step", step, positive=True)
        self.penalty = check_number("penalty", penalty, positive=True)
        self.inject_every = check_int("inject_every", inject_every, minimum=1)
        self.retrain_every = check_int("retrain_every", retrain_every, minimum=1)
        self.space = SearchSpace(model.params)
        self.cube = UnitCube(self.space)
        self.surrogate = Surrogate(self.space.dim, 1 + len(RESOURCES),
                                   check_int("hidden", hidden, minimum=1), self.rng)
        self.limits = np.log1p(np.array([model.budget[r] for r in RESOURCES], dtype=np.float64))
        self.progress = BudgetProgress()
        self.walkers = np.empty((0, self.space.dim))
        self.steps_taken = 0
        self.trainings = 0
        self._x: list[np.ndarray] = []
        self._y: list[np.ndarray] = []
        self._known: set[Genome] = set()
        self._asked: set[Genome] = set()
        self._seeds: list[Genome] = []
        self._tells = 0

    def begin(self, *, time_s: float | None, samples: int | None) -> None:
        self.progress.begin(time_s=time_s, samples=samples)

    def seed_points(self, points: Sequence[Point]) -> None:
        self._seeds.extend(self.space.repair_genome(self.space.genome(p)) for p in points)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        batch: list[Genome] = []
        while self._seeds and len(batch) < n:
            self._take(self._seeds.pop(0), batch)
        if self.trainings:
            for _ in range(_INNER):
                if len(batch) >= n:
                    break
                for row in self._descend():
                    if len(batch) < n:
                        self._take(self.cube.decode(row), batch)
        for row in self.space.sample(self.rng, 4 * (n - len(batch))).tolist():
            if len(batch) >= n:  # phase 1, or every walker is among known tilings
                break
            self._take(tuple(row), batch)
        return self.space.to_points(batch)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        self.progress.add(len(points))
        genomes = self.space.matrix(points)
        legal = np.asarray(evaluation.legal, dtype=bool)
        self._known.update(tuple(r) for r in genomes.tolist())
        if legal.any():
            stats = [np.log(evaluation.latency_cycles[legal])] + [
                np.log1p(np.asarray(getattr(evaluation, r), dtype=np.float64)[legal])
                for r in RESOURCES]
            self._x.append(self.cube.encode(genomes[legal]))
            self._y.append(np.stack(stats, axis=1))
        self._tells += 1
        data = sum(len(x) for x in self._x)
        first = not self.trainings and data >= self.n_train
        if first or (self.trainings and self._tells % self.retrain_every == 0):
            x = np.concatenate(self._x)[-MAX_DATA:]
            y = np.concatenate(self._y)[-MAX_DATA:]
            self._x, self._y = [x], [y]
            self.surrogate.fit(x, y)
            self.trainings += 1
            if first:
                self.walkers = x[self.rng.choice(len(x), size=self.batch_size)].copy()

    # ------------------------------------------------------------------ internals

    def _descend(self) -> np.ndarray:
        """One gradient step of every walker (with injections when due); new positions."""
        self.steps_taken += 1
        if self.steps_taken % self.inject_every == 0:
            self._inject()
        _, grad = self.surrogate.cost_and_gradient(self.walkers, self.limits, self.penalty)
        norm = np.linalg.norm(grad, axis=1, keepdims=True)
        self.walkers = np.clip(self.walkers - self.step * grad / np.maximum(norm, 1e-12), 0, 1)
        return self.walkers

    def _inject(self) -> None:
        fresh = self.rng.random(self.walkers.shape)
        cur, _ = self.surrogate.cost_and_gradient(self.walkers, self.limits, self.penalty)
        new, _ = self.surrogate.cost_and_gradient(fresh, self.limits, self.penalty)
        t = max(0.01, 1.0 - self.progress.fraction)
        accept = (new <= cur) | (self.rng.random(len(cur)) < np.exp(-np.maximum(new - cur, 0) / t))
        self.walkers[accept] = fresh[accept]

    def _take(self, g: Genome, batch: list[Genome]) -> None:
        if g not in self._known and g not in self._asked:
            self._asked.add(g)
            batch.append(g)
