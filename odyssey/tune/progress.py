"""How much of a run's budget is spent, for tuners whose behaviour follows the budget.

Simulated annealing cools over the budget; the RL tuner hands over to its genetic stage
half way through. :class:`BudgetProgress` measures the fraction spent: of the sample
budget when there is one (so a run with a sample budget is reproducible), else of the
time budget, from :meth:`Tuner.begin` on.
"""

from __future__ import annotations

import time


class BudgetProgress:
    """Fraction of the budget spent, in ``[0, 1]`` (0 until :meth:`begin` is called)."""

    def __init__(self) -> None:
        self.samples: int | None = None
        self.time_s: float | None = None
        self.told = 0
        self._start = time.perf_counter()

    def begin(self, *, time_s: float | None, samples: int | None) -> None:
        self.samples, self.time_s = samples, time_s
        self.told = 0
        self._start = time.perf_counter()

    def add(self, n: int) -> None:
        """``n`` more samples were evaluated."""
        self.told += n

    @property
    def fraction(self) -> float:
        if self.samples is not None:
            return min(1.0, self.told / self.samples)
        if self.time_s is not None:
            return min(1.0, (time.perf_counter() - self._start) / self.time_s)
        return 0.0
