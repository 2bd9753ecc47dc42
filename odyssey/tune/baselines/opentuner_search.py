"""OpenTuner itself (``pip install opentuner``, 0.8.8), the baseline of Odyssey section 5.2.

OpenTuner (Ansel et al., PACT 2014) runs an ensemble of search techniques under a
multi-armed bandit; its default root technique, ``AUCBanditMetaTechniqueA``, chooses
between differential evolution, uniform and normal greedy mutation and random
Nelder-Mead. Here it searches through its own API (``opentuner.api.TuningRunManager``:
``get_next_desired_result`` / ``report_result``), wrapped in :mod:`._opentuner_run`:

* each tiling factor is an OpenTuner ``LogIntegerParameter`` over ``[lower, upper]``
  (factors span three decades). A configuration OpenTuner asks for is repaired to the
  nearest legal tiling (:meth:`SearchSpace.repair_genome`: inner factors to the nearest
  legal divisor of their enclosing factor) and that tiling is evaluated;
* the time reported is the latency in cycles for a feasible tiling and
  ``INFEASIBLE_CYCLES * (1 + over)`` for one over budget (``over`` as in
  :func:`~odyssey.tune.base.fitness`), above every latency, closer to the budget better;
* a configuration that repairs to an already evaluated tiling is answered from a cache
  and costs no sample; when OpenTuner's requests are all known (or it asks for nothing),
  new random tilings are given to it as seed configurations, so it requests them next
  and learns their results too;
* ``batch_size`` is OpenTuner's ``--parallelism``: the requests per generation.

Randomness: OpenTuner draws from Python's global ``random`` module (and numpy's global
generator for some parameter types). The tuner keeps a private state of both, seeded
from its ``rng``, and swaps it in around every call into OpenTuner, so runs are
reproducible and independent of each other and of other users of the global
generators in the same process (not across threads: the swap is process-wide). The
default technique runs with its differential evolution's parents drawn in a fixed order
(see :mod:`._opentuner_run`); OpenTuner's own draws them from a set ordered by memory
addresses, which no seed makes reproducible.

Cost: every request and result goes through OpenTuner's SQL results database (SQLite in
memory), 5 to 17 ms each: 60 to 200 evaluations/s, against ~300,000/s for the model.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng, fitness
from odyssey.tune.space import Genome, SearchSpace

#: requests per generation: OpenTuner's default ``--parallelism``
BATCH_SIZE = 4
#: OpenTuner's default root technique
TECHNIQUE = "AUCBanditMetaTechniqueA"
#: the time reported for an over-budget tiling is ``INFEASIBLE_CYCLES * (1 + over)``
INFEASIBLE_CYCLES = 1e18
_RETRIES = 4


def _opentuner_run() -> ModuleType:
    """:mod:`._opentuner_run`, imported on first use: OpenTuner is an optional dependency."""
    try:
        return importlib.import_module("odyssey.tune.baselines._opentuner_run")
    except ImportError as exc:
        raise TunerError(
            f"the `opentuner` tuner needs OpenTuner, which is not installed ({exc}); "
            "install it with pip install 'odyssey[opentuner]' (or pip install opentuner), "
            "or use the `ensemble` tuner, our OpenTuner-style ensemble."
        ) from exc


def reported_times(evaluation: Evaluation, budget: Mapping[str, float]) -> np.ndarray:
    """The time OpenTuner minimises for each evaluated tiling, in cycles.

    The latency when feasible; ``INFEASIBLE_CYCLES * (1 + over)`` over budget (``over``
    the largest relative excess of a resource, as in :func:`fitness`); ``inf`` if illegal.
    """
    f = fitness(evaluation, budget)
    return np.where(evaluation.feasible, evaluation.latency_cycles, INFEASIBLE_CYCLES * (1.0 - f))


class OpenTunerSearch(Tuner):
    """OpenTuner's search over the tiling factors; see the module docstring.

    Options: ``batch_size >= 1`` (4, OpenTuner's ``--parallelism``), ``technique`` a name
    of OpenTuner's registered techniques (``AUCBanditMetaTechniqueA``, its default).
    """

    name = "opentuner"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        batch_size: int = BATCH_SIZE,
        technique: str = TECHNIQUE,
    ) -> None:
        self.rng = check_rng(rng)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        glue = _opentuner_run()
        names = glue.technique_names()
        if technique not in names:
            raise TunerError(f"`technique` must be one of OpenTuner's techniques "
                             f"({', '.join(sorted(names))}), got {technique!r}.")
        self.technique = technique
        if technique == glue.OPENTUNER_DEFAULT:  # the same search, reproducible
            technique = glue.DEFAULT
        self.space = SearchSpace(model.params)
        self.budget = dict(model.budget)
        seed = int(self.rng.integers(2**32))
        self._py_state = random.Random(seed).getstate()
        self._np_state = np.random.RandomState(seed).get_state()
        bounds = {n: (lo, hi) for n, lo, hi in zip(self.space.names, self.space.lower,
                                                     self.space.upper, strict=True)}
        with self._own_random():
            self.run = glue.OpenTunerRun(bounds, technique=technique,
                                         parallelism=self.batch_size)
        self._known: dict[Genome, float] = {}  # tiling -> the time reported
        self._waiting: dict[Genome, list[Any]] = {}  # tiling -> OpenTuner's requests
        #: configurations OpenTuner requested, and those answered from the cache
        self.requests = 0
        self.cached = 0

    # ------------------------------------------------------------------ ask/tell

    def seed_points(self, points: Sequence[Point]) -> None:
        """Give ``points`` (repaired to legal tilings) to OpenTuner as seed configurations."""
        genomes = dict.fromkeys(self.space.repair_genome(self.space.genome(p)) for p in points)
        self.run.add_seeds(self.space.to_points(genomes))

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        batch: list[Genome] = []
        if n == 0:
            return []
        with self._own_random():
            self._collect(batch, n, n * _RETRIES)
            if len(batch) < n:  # all known, or nothing asked: new random tilings as seeds
                fresh = self._fresh(n - len(batch), set(batch))
                self.run.add_seeds(self.space.to_points(fresh))
                self._collect(batch, n, n * _RETRIES)
        return self.space.to_points(batch)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        times = reported_times(evaluation, self.budget).tolist()
        with self._own_random():
            for g, t in zip((tuple(r) for r in self.space.matrix(points).tolist()), times,
                            strict=True):
                self._known[g] = t
                for request in self._waiting.pop(g, []):
                    self.run.report(request, t)

    # ------------------------------------------------------------------ internals

    def _collect(self, batch: list[Genome], n: int, tries: int) -> None:
        """Take OpenTuner's requests until ``batch`` holds ``n`` new tilings, OpenTuner
        has nothing more this generation, or ``tries`` requests were taken."""
        in_batch = set(batch)
        for _ in range(tries):
            if len(batch) >= n:
                return
            got = self.run.next()
            if got is None:
                return
            request, config = got
            self.requests += 1
            g = self.space.repair_genome(self.space.genome(config))
            if g in self._known:
                self.cached += 1
                self.run.report(request, self._known[g])
                continue
            self._waiting.setdefault(g, []).append(request)
            if g not in in_batch:
                in_batch.add(g)
                batch.append(g)

    def _fresh(self, n: int, taken: set[Genome]) -> list[Genome]:
        """Up to ``n`` random legal tilings neither known, waiting nor in ``taken``."""
        out: list[Genome] = []
        for row in self.space.sample(self.rng, 4 * n).tolist():
            g = tuple(row)
            if len(out) < n and g not in self._known and g not in self._waiting \
                    and g not in taken:
                taken.add(g)
                out.append(g)
        return out

    @contextmanager
    def _own_random(self) -> Iterator[None]:
        """Swap this tuner's states of ``random`` and ``numpy.random`` in for the block."""
        outer = random.getstate(), np.random.get_state()
        random.setstate(self._py_state)
        np.random.set_state(self._np_state)
        try:
            yield
        finally:
            self._py_state, self._np_state = random.getstate(), np.random.get_state()
            random.setstate(outer[0])
            np.random.set_state(outer[1])
