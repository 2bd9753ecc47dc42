"""ConfuciuX-style reinforcement learning, the RL baseline of Odyssey section 5.2.

ConfuciuX (Kao et al., MICRO 2020) searches in two stages: a policy network trained
with REINFORCE locates a good region, then a genetic algorithm fine-tunes. Here:

* an episode builds one tiling, one factor per step, parents before children
  (:attr:`SearchSpace.order`). A root factor is chosen among ``candidates``: the
  divisors of its extent and a geometric grid of its range (``n_grid`` values); an
  inner factor among the legal divisors of its (chosen) parent. Every legal tiling
  with grid roots is reachable, and every choice is legal;
* the policy is a 3-layer MLP (``hidden`` tanh units twice, :mod:`odyssey.tune.baselines.nn`)
  mapping the state (a one-hot of the step, the log-scaled factors chosen so far) to
  logits over the choices, masked to the legal ones;
* reward: ``throughput / best throughput seen`` for a feasible tiling, ``-1`` for one
  over budget; REINFORCE with a moving-average baseline (``b <- 0.9 b + 0.1 mean R``),
  advantages scaled by their standard deviation, an entropy bonus ``entropy``, Adam;
* an already evaluated tiling is rewarded from a cache (no sample spent);
* after ``rl_fraction`` of the budget (half; or earlier if the policy keeps producing
  known tilings) the :class:`Evolutionary` search takes over, seeded with the
  ``n_elite`` best tilings the policy found.
"""

from __future__ import annotations

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
from odyssey.tune.baselines.nn import MLP, Adam, masked_softmax, sample_categorical
from odyssey.tune.baselines.unit_cube import UnitCube
from odyssey.tune.progress import BudgetProgress
from odyssey.tune.search.evolutionary import Evolutionary
from odyssey.tune.space import Genome, SearchSpace, divisors

BATCH_SIZE = 64
HIDDEN = 64
LEARNING_RATE = 3e-3
ENTROPY = 0.01
RL_FRACTION = 0.5
N_GRID = 24
N_ELITE = 16
_BASELINE_DECAY = 0.9
_ROUNDS = 4


def root_candidates(lower: int, upper: int, extent: int, n_grid: int) -> np.ndarray:
    """Sorted distinct divisors of ``extent`` in range and a geometric grid of the range."""
    grid = np.rint(np.geomspace(lower, upper, n_grid)).astype(np.int64)
    divs = [d for d in divisors(extent) if lower <= d <= upper]
    return np.unique(np.concatenate([grid, np.array(divs, dtype=np.int64)]))


class ReinforcementLearning(Tuner):
    """REINFORCE policy, then genetic fine-tuning; see the module docstring.

    Options: ``batch_size >= 1`` episodes per update (64), ``hidden >= 1`` (64),
    ``learning_rate`` (3e-3) and ``entropy`` (0.01) non-negative, ``rl_fraction`` in
    ``[0, 1]`` (0.5), ``n_grid >= 2`` (24), ``n_elite >= 1`` (16).
    """

    name = "rl"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        batch_size: int = BATCH_SIZE,
        hidden: int = HIDDEN,
        learning_rate: float = LEARNING_RATE,
        entropy: float = ENTROPY,
        rl_fraction: float = RL_FRACTION,
        n_grid: int = N_GRID,
        n_elite: int = N_ELITE,
    ) -> None:
        self.rng = check_rng(rng)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        hidden = check_int("hidden", hidden, minimum=1)
        learning_rate = check_number("learning_rate", learning_rate)
        self.entropy = check_number("entropy", entropy)
        self.rl_fraction = check_unit("rl_fraction", rl_fraction)
        n_grid = check_int("n_grid", n_grid, minimum=2)
        self.n_elite = check_int("n_elite", n_elite, minimum=1)
        self.model = model
        self.space = SearchSpace(model.params)
        self.cube = UnitCube(self.space)
        self.budget = dict(model.budget)
        self.steps = self.space.order
        self.candidates = {
            c: root_candidates(self.space.lower[c], self.space.upper[c],
                               self.space.params[c].upper, n_grid)
            for c in self.steps if self.space.parent[c] is None
        }
        width = max([len(v) for v in self.candidates.values()] + [
            len(self.space.legal_divisors(c, int(v))) for c in self.steps
            if self.space.parent[c] is not None for v in self._parent_values(c)])
        dim = self.space.dim
        self.policy = MLP((2 * dim, hidden, hidden, width), self.rng, output_scale=0.1)
        self.optimizer = Adam(self.policy.params, lr=learning_rate)
        self.progress = BudgetProgress()
        self.baseline: float | None = None
        self.best_gops = 0.0
        self.updates = 0
        self.search: Evolutionary | None = None
        self._known: dict[Genome, float] = {}
        self._episodes: list[tuple[Genome, np.ndarray, np.ndarray, np.ndarray]] = []
        self._seeds: list[Genome] = []

    def _parent_values(self, col: int) -> list[int]:
        """The values the parent of ``col`` can take in an episode."""
        par = self.space.parent[col]
        assert par is not None
        if par in self.candidates:
            return [int(v) for v in self.candidates[par]]
        return sorted({d for v in self._parent_values(par) for d in divisors(v)})

    # ------------------------------------------------------------------ ask/tell

    def begin(self, *, time_s: float | None, samples: int | None) -> None:
        self.progress.begin(time_s=time_s, samples=samples)

    def seed_points(self, points: Sequence[Point]) -> None:
        self._seeds.extend(self.space.repair_genome(self.space.genome(p)) for p in points)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        if self.search is None and self.progress.fraction >= self.rl_fraction:
            self._hand_over()
        if self.search is not None:
            return self.search.ask(n)
        batch: list[Genome] = []
        while self._seeds and len(batch) < n:
            g = self._seeds.pop(0)
            if g not in self._known and g not in batch:
                batch.append(g)
        for _ in range(_ROUNDS):
            if len(batch) >= n:
                break
            for g, x, mask, act in self._sample(max(n - len(batch), 1)):
                self._episodes.append((g, x, mask, act))
                if g not in self._known and g not in batch and len(batch) < n:
                    batch.append(g)
        if not batch and n:  # the policy only produces known tilings: fine-tune instead
            self._hand_over()
            assert self.search is not None
            return self.search.ask(n)
        return self.space.to_points(batch)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        self.progress.add(len(points))
        if self.search is not None:
            self.search.tell(points, evaluation)
            return
        fit = fitness(evaluation, self.budget)
        for g, f in zip((tuple(r) for r in self.space.matrix(points).tolist()), fit.tolist(),
                        strict=True):
            self._known[g] = f
            self.best_gops = max(self.best_gops, f)
        self._update()

    # ------------------------------------------------------------------ policy

    def _sample(self, count: int) -> list[tuple[Genome, np.ndarray, np.ndarray, np.ndarray]]:
        """``count`` episodes: tilings with the states, masks and actions of every step."""
        dim, width = self.space.dim, self.policy.sizes[-1]
        genomes = np.ones((count, dim), dtype=np.int64)
        states = np.zeros((count, len(self.steps), 2 * dim))
        masks = np.zeros((count, len(self.steps), width), dtype=bool)
        actions = np.zeros((count, len(self.steps)), dtype=np.int64)
        chosen = np.zeros((count, dim))
        for t, col in enumerate(self.steps):
            states[:, t, t] = 1.0
            states[:, t, dim:] = chosen
            par = self.space.parent[col]
            options = [self.candidates[col]] * count if par is None else [
                np.array(self.space.legal_divisors(col, int(v)), dtype=np.int64)
                for v in genomes[:, par]]
            for e, opts in enumerate(options):
                masks[e, t, : len(opts)] = True
            probs = masked_softmax(self.policy(states[:, t]), masks[:, t])
            actions[:, t] = sample_categorical(probs, self.rng)
            genomes[:, col] = [int(opts[a]) for opts, a in zip(options, actions[:, t],
                                                               strict=True)]
            chosen[:, col] = self.cube.encode(genomes)[:, col]
        return [(tuple(int(v) for v in genomes[e]), states[e], masks[e], actions[e])
                for e in range(count)]

    def _reward(self, f: float) -> float:
        if f < 0:
            return -1.0
        return f / self.best_gops if self.best_gops > 0 else 0.0

    def _update(self) -> None:
        """One REINFORCE step on every episode whose tiling has a known fitness."""
        done = [ep for ep in self._episodes if ep[0] in self._known]
        self._episodes = []
        if not done:
            return
        rewards = np.array([self._reward(self._known[ep[0]]) for ep in done])
        mean = float(rewards.mean())
        self.baseline = mean if self.baseline is None else (
            _BASELINE_DECAY * self.baseline + (1 - _BASELINE_DECAY) * mean)
        adv = rewards - self.baseline
        adv /= max(float(adv.std()), 1e-6)
        x = np.concatenate([ep[1] for ep in done])
        mask = np.concatenate([ep[2] for ep in done])
        act = np.concatenate([ep[3] for ep in done])
        weight = np.repeat(adv, len(self.steps)) / len(done)
        fwd = self.policy.forward(x)
        p = masked_softmax(fwd.output, mask)
        onehot = np.zeros_like(p)
        onehot[np.arange(len(act)), act] = 1.0
        # d(-A log p_a)/dz = -A (onehot - p); d(-beta H)/dz_j = beta p_j (log p_j + H)
        logp = np.log(np.where(mask, p, 1.0))
        ent = -(p * logp).sum(axis=1, keepdims=True)
        grad = -weight[:, None] * (onehot - p)
        grad += self.entropy / len(done) * p * (logp + ent)
        grads, _ = self.policy.backward(fwd, np.where(mask, grad, 0.0))
        self.optimizer.step(grads)
        self.updates += 1

    def _hand_over(self) -> None:
        """Start the genetic stage from the best tilings found so far."""
        self.search = Evolutionary(self.model, rng=self.rng)
        best = sorted(self._known.items(), key=lambda kv: kv[1], reverse=True)[: self.n_elite]
        self.search.seed_points([self.space.to_point(g) for g, f in best if f >= 0])
