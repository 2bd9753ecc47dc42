"""Sunstone-style enumeration with dominance pruning (Ng, UBC 2022; seed 003), ask/tell.

Sunstone enumerates a mapping's tile factors level by level and never builds the
candidates an algebraic argument shows to be dominated (a tile that can grow and
still fit has strictly more reuse), then combines the surviving candidates of each
level, cheapest first. Its dominance rules rest on an energy model that is monotone
in the tile sizes; our latency model is not (zero padding, ``ceil``, II limits), so
here dominance is *measured*: a loop's tiling is dominated when another tiling of the
same loop is no slower and uses no more of any resource, with the other loops fixed.

* Every legal tuple of one loop's factors (``T_i1`` with each legal divisor ``T_i2``,
  ...) is enumerated, in the context of a *reference* tiling for the other loops;
* per loop, the tuples on the Pareto front of (latency, DSP, BRAM18K, URAM) survive
  (over-budget ones included: they may fit once the other loops shrink), at most
  ``front_size`` of them, evenly spread along the front by latency, fewer when the
  product over loops would exceed ``max_combinations``;
* the product of the surviving tuples is enumerated; its best tiling becomes the
  reference of the next round. A round that does not improve the reference ends the
  descent; the next one starts from the best of ``n_start`` fresh random tilings.

The first reference is the best of ``n_start`` random legal tilings. It is exact-ish:
exact when the loops' effects on latency and resources are separable, and a
coordinate-wise Pareto descent otherwise. Every tiling it looks at is a sample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import RESOURCES, DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng, fitness
from odyssey.tune.baselines.exhaustive import chain_options
from odyssey.tune.space import Genome, SearchSpace

BATCH_SIZE = 1024
N_START = 256
FRONT_SIZE = 48
MAX_COMBINATIONS = 60_000


def pareto_front(costs: np.ndarray, *, block: int = 256) -> np.ndarray:
    """Indices of the rows of ``costs`` (smaller is better in every column) that no other
    row dominates, in lexicographic order of the columns; equal rows keep the first.

    Rows are taken in lexicographic order, ``block`` at a time: a row is dominated when
    an earlier row is no worse in every column (checked against the rows kept so far and
    the earlier rows of its block; transitivity makes that enough).
    """
    order = np.lexsort(costs.T[::-1])
    ranked = costs[order]
    keep = np.zeros(len(ranked), dtype=bool)
    kept = np.empty((0, costs.shape[1]))
    for start in range(0, len(ranked), block):
        idx = np.arange(start, min(start + block, len(ranked)))
        rows = ranked[idx]
        alive = ~np.any(np.all(kept[None, :, :] <= rows[:, None, :], axis=2), axis=1)
        idx, rows = idx[alive], rows[alive]  # usually few survive the kept rows
        by_earlier = np.tril(np.all(rows[None, :, :] <= rows[:, None, :], axis=2), k=-1)
        alive = ~np.any(by_earlier, axis=1)
        keep[idx[alive]] = True
        kept = np.vstack([kept, rows[alive]])
    return order[keep]


class Sunstone(Tuner):
    """Per-loop enumeration, Pareto pruning, combination; see the module docstring.

    Options: ``n_start >= 1`` (256), ``front_size >= 1`` (48), ``max_combinations >= 1``
    (60,000), ``batch_size >= 1`` (1024).
    """

    name = "sunstone"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        n_start: int = N_START,
        front_size: int = FRONT_SIZE,
        max_combinations: int = MAX_COMBINATIONS,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        self.rng = check_rng(rng)
        self.n_start = check_int("n_start", n_start, minimum=1)
        self.front_size = check_int("front_size", front_size, minimum=1)
        self.max_combinations = check_int("max_combinations", max_combinations, minimum=1)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.space = SearchSpace(model.params)
        self.budget = dict(model.budget)
        self.options = [chain_options(self.space, ch) for ch in self.space.chains]
        self.reference: Genome | None = None
        self.reference_fitness = -np.inf
        self.rounds = 0
        self.phase = "start"
        self._round_start = -np.inf
        self._sweep_ref: Genome | None = None
        self._queue = np.empty((0, self.space.dim), dtype=np.int64)
        self._results: dict[Genome, tuple[float, np.ndarray]] = {}
        self._seeds: list[Genome] = []
        self._begin_start()

    # ------------------------------------------------------------------ ask/tell

    def seed_points(self, points: Sequence[Point]) -> None:
        """Seeds join the first reference's candidates."""
        self._seeds.extend(self.space.repair_genome(self.space.genome(p)) for p in points)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        first, self._seeds = self._seeds[:n], self._seeds[n:]
        rows: list[Genome] = list(first)
        for _ in range(4):  # a phase may end without anything new to propose
            if len(rows) >= n:
                break
            if not len(self._queue):
                if rows:  # let this phase's last tilings be told before the next phase
                    break
                self._next_phase()
            take, self._queue = self._queue[: n - len(rows)], self._queue[n - len(rows):]
            rows.extend(tuple(r) for r in take.tolist())
        return self.space.to_points(rows)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        fit = fitness(evaluation, self.budget)
        costs = np.stack([evaluation.latency_cycles] + [
            np.asarray(getattr(evaluation, r), dtype=np.float64) for r in RESOURCES], axis=1)
        keys = [tuple(r) for r in self.space.matrix(points).tolist()]
        self._results.update(zip(keys, zip(fit.tolist(), costs, strict=True), strict=True))
        if len(fit) and fit.max() > self.reference_fitness:
            k = int(np.argmax(fit))
            self.reference, self.reference_fitness = keys[k], float(fit[k])

    # ------------------------------------------------------------------ phases

    def _begin_start(self) -> None:
        self.phase = "start"
        self._results = {}
        self._queue = self.space.sample(self.rng, self.n_start)

    def _next_phase(self) -> None:
        """Move on: start -> sweep -> combine -> sweep ... (restart after no progress)."""
        if self.phase == "start" or self.phase == "combine":
            improved = self.phase == "start" or self.reference_fitness > self._round_start
            if not improved or self.reference is None:
                self.reference_fitness = -np.inf
                self._begin_start()
                return
            self.rounds += 1
            self._round_start = self.reference_fitness
            self.phase = "sweep"
            self._results = {}
            self._sweep_ref = self.reference
            self._queue = np.concatenate(self._blocks(self.reference))
        else:
            self.phase = "combine"
            fronts = self._fronts()
            self._results = {}
            self._queue = self._combine(fronts)

    def _blocks(self, ref: Genome) -> list[np.ndarray]:
        """Per loop, the reference with that loop's tuple replaced by each legal tuple."""
        out = []
        for ch, opts in zip(self.space.chains, self.options, strict=True):
            block = np.tile(np.array(ref, dtype=np.int64), (len(opts), 1))
            block[:, list(ch.columns)] = opts
            out.append(block)
        return out

    def _fronts(self) -> list[np.ndarray]:
        """Per loop, the surviving tuples of the sweep (the reference's own at least)."""
        assert self._sweep_ref is not None
        ref = self._sweep_ref
        n_chains = len(self.space.chains)
        cap = max(1, min(self.front_size, int(self.max_combinations ** (1.0 / n_chains))))
        fronts = []
        for ch, block in zip(self.space.chains, self._blocks(ref), strict=True):
            cols = list(ch.columns)
            got = [self._results.get(k) for k in map(tuple, block.tolist())]
            seen = [k for k, r in enumerate(got) if r is not None and np.isfinite(r[0])]
            own = [ref[c] for c in cols]
            if not seen:
                fronts.append(np.array([own], dtype=np.int64))
                continue
            costs = np.array([got[k][1] for k in seen])  # type: ignore[index]
            front = block[seen][pareto_front(costs)][:, cols]
            if len(front) > cap:
                front = front[np.unique(np.linspace(0, len(front) - 1, cap).round().astype(int))]
            if not (front == own).all(axis=1).any():
                front = np.vstack([front, own])
            fronts.append(front)
        return fronts

    def _combine(self, fronts: list[np.ndarray]) -> np.ndarray:
        """Every combination of the loops' surviving tuples."""
        total = math.prod(len(f) for f in fronts)
        out = np.empty((total, self.space.dim), dtype=np.int64)
        idx = np.arange(total)
        for ch, front in zip(self.space.chains, fronts, strict=True):
            out[:, list(ch.columns)] = front[idx % len(front)]
            idx //= len(front)
        return out
