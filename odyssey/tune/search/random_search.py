"""Random search: the baseline of Odyssey section 5.2 as an ask/tell tuner.

Every point is a fresh legal sample of :meth:`SearchSpace.sample` (outer factors
uniform in their range, inner factors uniform among the legal divisors), with
replacement; seeded points are proposed first. It learns nothing from ``tell``
and never converges.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng
from odyssey.tune.space import Genome, SearchSpace

BATCH_SIZE = 1024


class RandomSearch(Tuner):
    """Uniform legal sampling; ``batch_size >= 1`` points per ask (1024)."""

    name = "random"

    def __init__(
        self, model: DesignModel, *, rng: np.random.Generator, batch_size: int = BATCH_SIZE
    ) -> None:
        self.rng = check_rng(rng)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.space = SearchSpace(model.params)
        self._pending: list[Genome] = []

    def seed_points(self, points: Sequence[Point]) -> None:
        self._pending.extend(self.space.repair_genome(self.space.genome(p)) for p in points)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        first, self._pending = self._pending[:n], self._pending[n:]
        rest = self.space.sample(self.rng, n - len(first)).tolist()
        return self.space.to_points([*first, *rest])

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        """Nothing to learn."""
