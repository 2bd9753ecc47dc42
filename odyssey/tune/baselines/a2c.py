"""Neighbourhood advantage actor-critic (N-A2C, seed 002), as an ask/tell tuner.

The paper's Algorithm 2 over the tiling graph of :mod:`odyssey.tune.baselines.moves`:

* each episode starts at the *center*, the best tiling visited so far (a random one
  at first), and takes ``steps`` moves (the paper's ``T = 3``): with probability
  ``tau`` the move the actor's policy samples, else a uniformly random move. A move
  that does not apply leaves the state; every new tiling reached is collected;
* when ``batch_size`` new tilings are collected they are evaluated, and every
  transition ``(s, a, r, s')`` goes to a replay memory of ``memory`` entries, with the
  reward ``r = throughput(s') / best throughput seen`` (``-1`` over budget);
* after each batch the networks train on ``train_steps`` random minibatches of the
  memory: the critic ``V`` regresses on ``y = r + gamma V(s')``, the actor follows
  ``A log pi(a|s)`` with the advantage ``A = y - V(s)``, plus an entropy bonus;
* the exploration depth adapts as the paper suggests: after ``patience`` batches
  without a better center it grows by one (up to ``4 * steps``); an improvement
  resets it to ``steps``.

States are the log-scaled unit-cube coordinates (:mod:`odyssey.tune.baselines.unit_cube`);
actor and critic are two-hidden-layer tanh MLPs (:mod:`odyssey.tune.baselines.nn`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng, check_unit, fitness
from odyssey.tune.baselines.moves import all_moves, apply_move
from odyssey.tune.baselines.nn import MLP, Adam, masked_softmax, sample_categorical
from odyssey.tune.baselines.unit_cube import UnitCube
from odyssey.tune.space import Genome, SearchSpace

STEPS = 3
TAU = 0.7
BATCH_SIZE = 64
MEMORY = 4096
GAMMA = 0.9
HIDDEN = 64
TRAIN_STEPS = 4
PATIENCE = 8
_MINIBATCH = 128
_ENTROPY = 0.01


class NeighbourhoodA2C(Tuner):
    """N-A2C; see the module docstring.

    Options: ``steps >= 1`` (3), ``tau`` in ``[0, 1]`` (0.7), ``batch_size >= 1`` (64),
    ``memory >= 1`` (4096), ``gamma`` in ``[0, 1]`` (0.9), ``hidden >= 1`` (64),
    ``train_steps >= 0`` (4), ``patience >= 1`` (8).
    """

    name = "a2c"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        steps: int = STEPS,
        tau: float = TAU,
        batch_size: int = BATCH_SIZE,
        memory: int = MEMORY,
        gamma: float = GAMMA,
        hidden: int = HIDDEN,
        train_steps: int = TRAIN_STEPS,
        patience: int = PATIENCE,
    ) -> None:
        self.rng = check_rng(rng)
        self.steps = check_int("steps", steps, minimum=1)
        self.tau = check_unit("tau", tau)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.memory: deque[tuple[np.ndarray, int, Genome, np.ndarray]] = deque(
            maxlen=check_int("memory", memory, minimum=1))
        self.gamma = check_unit("gamma", gamma)
        hidden = check_int("hidden", hidden, minimum=1)
        self.train_steps = check_int("train_steps", train_steps, minimum=0)
        self.patience = check_int("patience", patience, minimum=1)
        self.space = SearchSpace(model.params)
        self.cube = UnitCube(self.space)
        self.budget = dict(model.budget)
        self.moves = all_moves(self.space)
        dim, n_moves = self.space.dim, len(self.moves)
        self.actor = MLP((dim, hidden, hidden, n_moves), self.rng, output_scale=0.1)
        self.critic = MLP((dim, hidden, hidden, 1), self.rng)
        self._actor_opt = Adam(self.actor.params, lr=1e-3)
        self._critic_opt = Adam(self.critic.params, lr=1e-3)
        self.center: Genome | None = None
        self.center_fitness = -np.inf
        self.depth = self.steps
        self._stale = 0
        self.best_gops = 0.0
        self._known: dict[Genome, float] = {}
        self._waiting: list[tuple[np.ndarray, int, Genome]] = []  # (s, a, s') to reward
        self._seeds: list[Genome] = []

    def seed_points(self, points: Sequence[Point]) -> None:
        self._seeds.extend(self.space.repair_genome(self.space.genome(p)) for p in points)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        batch: list[Genome] = []
        taken: set[Genome] = set()

        def take(g: Genome) -> None:
            if g not in self._known and g not in taken and len(batch) < n:
                taken.add(g)
                batch.append(g)

        while self._seeds and len(batch) < n:
            take(self._seeds.pop(0))
        if self.center is None:
            for row in self.space.sample(self.rng, n - len(batch)).tolist():
                take(tuple(row))
            return self.space.to_points(batch)
        for _ in range(8):
            if len(batch) >= n:
                break
            self._episodes(max(1, (n - len(batch)) // self.depth + 1), take)
        for row in self.space.sample(self.rng, 4 * (n - len(batch))).tolist():
            take(tuple(row))  # the neighbourhood is exhausted: random tilings
        return self.space.to_points(batch)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        fit = fitness(evaluation, self.budget)
        improved = False
        for g, f in zip((tuple(r) for r in self.space.matrix(points).tolist()), fit.tolist(),
                        strict=True):
            self._known[g] = f
            self.best_gops = max(self.best_gops, f)
            if np.isfinite(f) and f > self.center_fitness:
                self.center, self.center_fitness, improved = g, f, True
        self._stale = 0 if improved else self._stale + 1
        if improved:
            self.depth = self.steps
        elif self._stale >= self.patience:
            self._stale, self.depth = 0, min(4 * self.steps, self.depth + 1)
        still: list[tuple[np.ndarray, int, Genome]] = []
        for s, a, g in self._waiting:
            if g in self._known:
                self.memory.append((s, a, g, self.cube.encode(g)))
            else:
                still.append((s, a, g))
        self._waiting = still[-self.batch_size * 4 * self.depth:]
        for _ in range(self.train_steps if self.memory else 0):
            self._train()

    # ------------------------------------------------------------------ internals

    def _episodes(self, count: int, take: Callable[[Genome], None]) -> None:
        """``count`` episodes from the center, stepped together (one actor pass per step)."""
        assert self.center is not None
        states = [self.center] * count
        for _ in range(self.depth):
            x = self.cube.encode(states)
            logits = self.actor(x)
            probs = masked_softmax(logits, np.ones(logits.shape, dtype=bool))
            actions = sample_categorical(probs, self.rng)
            explore = self.rng.random(count) >= self.tau
            actions[explore] = self.rng.integers(len(self.moves), size=int(explore.sum()))
            for e, a in enumerate(actions.tolist()):
                nxt = apply_move(self.space, states[e], self.moves[a])
                if nxt is None:
                    continue  # the move does not apply: the agent stays
                self._waiting.append((x[e], a, nxt))
                take(nxt)
                states[e] = nxt

    def _reward(self, f: float) -> float:
        if f < 0:
            return -1.0
        return f / self.best_gops if self.best_gops > 0 else 0.0

    def _train(self) -> None:
        """One actor-critic step on a random minibatch of the memory."""
        idx = self.rng.integers(0, len(self.memory), size=min(_MINIBATCH, len(self.memory)))
        batch = [self.memory[int(k)] for k in idx]
        s = np.stack([b[0] for b in batch])
        a = np.array([b[1] for b in batch])
        r = np.array([self._reward(self._known[b[2]]) for b in batch])
        s2 = np.stack([b[3] for b in batch])
        y = r + self.gamma * self.critic(s2)[:, 0]
        fwd_v = self.critic.forward(s)
        adv = y - fwd_v.output[:, 0]
        grads_v, _ = self.critic.backward(fwd_v, (-2.0 * adv / len(batch))[:, None])
        self._critic_opt.step(grads_v)
        fwd_pi = self.actor.forward(s)
        p = masked_softmax(fwd_pi.output, np.ones(fwd_pi.output.shape, dtype=bool))
        onehot = np.zeros_like(p)
        onehot[np.arange(len(a)), a] = 1.0
        logp = np.log(np.maximum(p, 1e-300))
        ent = -(p * logp).sum(axis=1, keepdims=True)
        grad = -(adv / len(batch))[:, None] * (onehot - p)
        grad += _ENTROPY / len(batch) * p * (logp + ent)
        grads_pi, _ = self.actor.backward(fwd_pi, grad)
        self._actor_opt.step(grads_pi)
