"""Bayesian optimization with Optuna's TPE sampler, the baseline of Odyssey section 5.2.

The paper used a Gaussian-process package (``bayes_opt``) on continuous parameters;
here Optuna's Tree-structured Parzen Estimator does the same job natively on integers:

* one log-scaled distribution per tiling factor over ``[lower, upper]`` (factors span
  three decades). It is continuous: Optuna's TPE evaluates integer distributions with
  a per-integer truncated-normal mass in pure Python (~40 ms per trial here), its
  continuous path is vectorized; the suggestion is rounded to the nearest integer;
* a suggestion is repaired to the nearest legal tiling (inner factors to the nearest
  legal divisor) and that tiling is evaluated; the trial is told its fitness;
* the objective is the throughput in GOP/s (maximised); resources enter as a
  *constraint* ``max_r used_r / budget_r - 1 <= 0`` through TPE's
  ``constraints_func``, so infeasible trials inform the sampler without polluting the
  objective;
* ``batch_size`` trials are asked at a time (TPE's constant liar covers the pending
  ones); a suggestion that repairs to an already evaluated tiling is told the known
  result at once and costs no sample; when TPE keeps suggesting known tilings, random
  ones are enqueued as trials to fill the batch.

Optuna's own log messages are silenced (its verbosity is set to WARNING).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, FloatDistribution
from optuna.samplers import TPESampler
from optuna.trial import Trial

from odyssey.errors import TunerError
from odyssey.model.design_model import RESOURCES, DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng
from odyssey.tune.space import Genome, SearchSpace

BATCH_SIZE = 8
N_STARTUP_TRIALS = 20
_RETRIES = 4


class BayesianOptimization(Tuner):
    """TPE over log-scaled tiling factors; see the module docstring.

    Options: ``batch_size >= 1`` (8), ``n_startup_trials >= 1`` random trials before TPE
    models the results (20), ``multivariate`` (True: a joint density over all factors).
    """

    name = "bayesian"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        batch_size: int = BATCH_SIZE,
        n_startup_trials: int = N_STARTUP_TRIALS,
        multivariate: bool = True,
    ) -> None:
        self.rng = check_rng(rng)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.n_startup_trials = check_int("n_startup_trials", n_startup_trials, minimum=1)
        if not isinstance(multivariate, bool):
            raise TunerError(f"`multivariate` must be True or False, got {multivariate!r}.")
        self.space = SearchSpace(model.params)
        self.budget = dict(model.budget)
        self.distributions: dict[str, BaseDistribution] = {
            n: FloatDistribution(lo, hi, log=True)
            for n, lo, hi in zip(self.space.names, self.space.lower, self.space.upper,
                                 strict=True)
        }
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            sampler = TPESampler(
                seed=int(self.rng.integers(2**31)), n_startup_trials=self.n_startup_trials,
                multivariate=multivariate, constant_liar=True,
            )
        self.study = optuna.create_study(direction="maximize", sampler=sampler)
        self._pending: dict[Genome, list[Trial]] = {}
        self._known: dict[Genome, tuple[float, float]] = {}  # tiling -> (GOP/s, constraint)
        self._seeds: list[Genome] = []

    def seed_points(self, points: Sequence[Point]) -> None:
        """Enqueue ``points`` as Optuna's first trials (repaired to legal tilings)."""
        for p in points:
            g = self.space.repair_genome(self.space.genome(p))
            self.study.enqueue_trial(self.space.to_point(g), skip_if_exists=True)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        batch: list[Genome] = []
        stuck = 0  # TPE suggestions in a row that were known already
        for _ in range(n * _RETRIES):
            if len(batch) >= n or stuck >= n:
                break
            trial = self.study.ask(self.distributions)
            g = self.space.repair_genome([round(trial.params[n]) for n in self.space.names])
            stuck += 1
            if g in self._known:
                self._finish(trial, *self._known[g])
            elif g in self._pending:
                self._pending[g].append(trial)
            else:
                self._pending[g] = [trial]
                batch.append(g)
                stuck = 0
        for row in self.space.sample(self.rng, n - len(batch)).tolist():
            g = tuple(row)  # TPE keeps suggesting known tilings: random trials instead
            if g not in self._known and g not in self._pending:
                self.study.enqueue_trial(self.space.to_point(g))
                self._pending[g] = [self.study.ask(self.distributions)]
                batch.append(g)
        return self.space.to_points(batch)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        over = np.zeros(len(evaluation))
        for r in RESOURCES:
            cap = float(self.budget.get(r, math.inf))
            used = np.asarray(getattr(evaluation, r), dtype=np.float64)
            over = np.maximum(over, used / cap - 1.0 if cap > 0 else np.where(used > 0, 1.0, -1.0))
        gops = np.where(evaluation.legal, evaluation.throughput_gops, 0.0)
        over = np.where(evaluation.legal, over, 1.0)
        for k, g in enumerate(tuple(r) for r in self.space.matrix(points).tolist()):
            result = (float(gops[k]), float(over[k]))
            self._known[g] = result
            for trial in self._pending.pop(g, []):
                self._finish(trial, *result)

    def _finish(self, trial: Trial, gops: float, over: float) -> None:
        trial.set_constraint("resources", over)
        self.study.tell(trial, gops)
