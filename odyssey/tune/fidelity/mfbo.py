"""Multi-fidelity Bayesian optimization over a pool of candidate designs.

The pool holds the analytic model's best designs (cheap fidelity: the model's
latency, known for all of them); an expensive fidelity (the timed simulation, or any
callable) is spent on few of them. The surrogate is a Gaussian process
(scikit-learn ``GaussianProcessRegressor``, ARD Matern 5/2 + white noise,
``normalize_y``) in the non-linear multi-fidelity form ``f_high(x) = z(f_low(x), x)``:

    log f_high(x) = log f_low(x) + g([phi(x), log f_low(x)]),   g ~ GP

so the low fidelity is both the prior mean and an input of the GP, which learns the
(non-linear, design-dependent) discrepancy ``g``. ``phi(x)`` are the candidate's
features: log tiling factors min-max scaled over the pool, the dataflow (space loops,
multi-hot), the ordering's reuse loops (multi-hot) and whether partial sums leave the
array. A candidate is picked by ``acquisition(x) / cost(x)``
(:mod:`odyssey.tune.fidelity.acquisition`); the loop stops after ``budget`` expensive
evaluations or when the pool is exhausted. A failed expensive evaluation is recorded
(never raised) and its candidate is not proposed again.

:class:`MultiFidelityBO` is the ask/tell engine over pool indices; :func:`run_mfbo`
drives it with an expensive-fidelity callable.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

from odyssey.errors import TunerError
from odyssey.tune.base import check_int, check_rng
from odyssey.tune.fidelity.acquisition import (
    Acquisition,
    ExpectedImprovement,
    HypervolumeImprovement,
    LinearCost,
    Observed,
    pareto_mask,
)

Objective = Literal["latency", "latency-dsp"]
OBJECTIVES: tuple[str, ...] = ("latency", "latency-dsp")
#: initial expensive evaluations before the surrogate is used (the model's best first)
N_INIT = 3
#: random restarts of the GP's marginal-likelihood optimizer
GP_RESTARTS = 1
#: bounds of the Matern length scales over features scaled to [0, 1]; the upper bound
#: keeps every feature (e.g. an unseen dataflow) from being ignored entirely
LENGTH_SCALE_BOUNDS = (1e-2, 5.0)
#: improvement asked of the expected improvement, in log-latency (about 2%)
XI = 0.02
#: smallest prior standard deviation of the log discrepancy (0.05: the model may be off
#: by about 5% anywhere, as near the validation's largest errors); without it a few
#: similar first observations make the GP certain that it never exceeds their spread
DISCREPANCY_FLOOR = 0.05


@dataclass(frozen=True, slots=True)
class Candidate:
    """A design point of the pool with its cheap-fidelity (model) figures.

    ``space_loops`` and ``reuse_loops`` (the ordering's RL group) describe the dataflow;
    ``partial_sums`` says whether partial sums leave the array.
    """

    design: str
    tiling: tuple[tuple[str, int], ...]
    model_cycles: float
    dsp: float
    bram18k: float = 0.0
    space_loops: tuple[str, ...] = ()
    reuse_loops: tuple[str, ...] = ()
    partial_sums: bool = False

    def __post_init__(self) -> None:
        if not self.model_cycles > 0 or not np.isfinite(self.model_cycles):
            raise TunerError(f"Candidate {self.design}: `model_cycles` must be a positive "
                             f"finite number, got {self.model_cycles!r}.")

    @property
    def key(self) -> tuple[str, tuple[tuple[str, int], ...]]:
        return (self.design, self.tiling)

    def describe(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.tiling)


@dataclass(frozen=True, slots=True)
class Measurement:
    """One expensive evaluation: ``cycles`` (None when it failed, then ``message`` says
    why), the wall ``seconds`` it took, and the evaluator's ``status``."""

    cycles: float | None
    seconds: float
    status: str = "pass"
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.cycles is not None and self.cycles > 0


ExpensiveFidelity = Callable[[Candidate], Measurement]


@dataclass(frozen=True, slots=True)
class MFBOStep:
    """The ``index``-th expensive evaluation (0-based) of pool entry ``pool_index``:
    the surrogate's prediction of its latency before the evaluation (None for the
    initial points) and the acquisition value per predicted second."""

    index: int
    pool_index: int
    candidate: Candidate
    measurement: Measurement
    predicted_cycles: float | None
    acquisition: float | None

    @property
    def model_error(self) -> float | None:
        """``(model - measured) / measured`` (None when the evaluation failed)."""
        c = self.measurement.cycles
        return None if not c else (self.candidate.model_cycles - c) / c


@dataclass(frozen=True, slots=True)
class MFBOResult:
    """Every expensive evaluation in order; ``best`` is the confirmed lowest latency,
    ``blind`` the evaluation of the model's own best candidate (pool entry 0, when it
    was evaluated), ``pareto`` the confirmed (latency, DSP) front."""

    steps: tuple[MFBOStep, ...]
    pool_size: int
    budget: int
    objective: Objective
    seconds: float
    interrupted: bool = False

    @property
    def successes(self) -> tuple[MFBOStep, ...]:
        return tuple(s for s in self.steps if s.measurement.ok)

    @property
    def best(self) -> MFBOStep | None:
        ok = self.successes
        return min(ok, key=lambda s: (s.measurement.cycles, s.candidate.dsp, s.index)) \
            if ok else None

    @property
    def blind(self) -> MFBOStep | None:
        return next((s for s in self.steps if s.pool_index == 0), None)

    @property
    def pareto(self) -> tuple[MFBOStep, ...]:
        ok = self.successes
        if not ok:
            return ()
        lat = np.array([s.measurement.cycles for s in ok], dtype=np.float64)
        dsp = np.array([s.candidate.dsp for s in ok])
        keep = pareto_mask(lat, dsp)
        return tuple(sorted((s for s, k in zip(ok, keep, strict=True) if k),
                            key=lambda s: s.candidate.dsp))

    @property
    def expensive_seconds(self) -> float:
        return sum(s.measurement.seconds for s in self.steps)


def features(pool: Sequence[Candidate]) -> np.ndarray:
    """``(len(pool), d)`` inputs of the GP: ``phi(x)`` and the scaled ``log f_low(x)``.

    Tiling factors a candidate lacks count as 1 (untiled); every column is min-max
    scaled over the pool (constant columns are dropped).
    """
    names = sorted({k for c in pool for k, _ in c.tiling})
    loops = sorted({lp for c in pool for lp in (*c.space_loops, *c.reuse_loops)})
    cols: list[np.ndarray] = []
    tiling = np.array([[dict(c.tiling).get(n, 1) for n in names] for c in pool], dtype=np.float64)
    cols.extend(np.log(tiling.reshape(len(pool), len(names))).T)
    for lp in loops:
        cols.append(np.array([lp in c.space_loops for c in pool], dtype=np.float64))
        cols.append(np.array([lp in c.reuse_loops for c in pool], dtype=np.float64))
    cols.append(np.array([c.partial_sums for c in pool], dtype=np.float64))
    cols.append(np.log([c.model_cycles for c in pool]))
    x = np.stack(cols, axis=1) if cols else np.zeros((len(pool), 0))
    lo, hi = x.min(axis=0), x.max(axis=0)
    varying = hi > lo
    return (x[:, varying] - lo[varying]) / (hi[varying] - lo[varying])


class MultiFidelityBO:
    """Ask/tell engine: which pool entry to evaluate expensively next.

    ``pool`` is ranked by the cheap fidelity here (latency, then DSP), so entry 0 is the
    model's best. The first ``n_init`` asks are entry 0 then random entries (``rng``);
    later asks maximise ``acquisition / cost``. ``objective`` is ``latency`` (expected
    improvement) or ``latency-dsp`` (expected hypervolume improvement with the model's
    DSP), unless ``acquisition`` is given.
    """

    def __init__(
        self,
        pool: Sequence[Candidate],
        *,
        rng: np.random.Generator,
        objective: Objective = "latency",
        n_init: int = N_INIT,
        acquisition: Acquisition | None = None,
        cost: LinearCost | None = None,
        gp_restarts: int = GP_RESTARTS,
    ) -> None:
        if not pool:
            raise TunerError("the candidate pool is empty: nothing to evaluate")
        if objective not in OBJECTIVES:
            raise TunerError(f"`objective` must be one of {', '.join(OBJECTIVES)}, "
                             f"got {objective!r}.")
        if acquisition is not None and not isinstance(acquisition, Acquisition):
            raise TunerError(f"`acquisition` must be an Acquisition, got {acquisition!r}.")
        if len({c.key for c in pool}) != len(pool):
            raise TunerError("the candidate pool lists a (design, tiling) twice")
        self.rng = check_rng(rng)
        self.n_init = check_int("n_init", n_init, minimum=1)
        self.gp_restarts = check_int("gp_restarts", gp_restarts, minimum=0)
        self.objective = objective
        self.pool: tuple[Candidate, ...] = tuple(
            sorted(pool, key=lambda c: (c.model_cycles, c.dsp, c.bram18k, c.design, c.tiling)))
        self.x = features(self.pool)
        self.log_low = np.log([c.model_cycles for c in self.pool])
        dsp = np.array([c.dsp for c in self.pool], dtype=np.float64)
        self.dsp_ref = float(dsp.max()) * 1.1 if dsp.max() > 0 else 1.0
        self.dsp = dsp / self.dsp_ref
        if acquisition is None:
            acquisition = (ExpectedImprovement(xi=XI) if objective == "latency" else
                           HypervolumeImprovement(ref_latency=float(self.log_low.max()) + 0.5))
        self.acquisition = acquisition
        self.cost = cost or LinearCost()
        self._done: dict[int, Measurement] = {}
        self._order: list[int] = []
        self._last: tuple[float | None, float | None] = (None, None)

    # ------------------------------------------------------------------ ask / tell

    @property
    def remaining(self) -> int:
        return len(self.pool) - len(self._done)

    @property
    def done(self) -> Mapping[int, Measurement]:
        """The measurements told so far, by pool index."""
        return MappingProxyType(self._done)

    def ask(self) -> int | None:
        """The pool index to evaluate next, or None when every entry was evaluated."""
        free = np.array([k for k in range(len(self.pool)) if k not in self._done], dtype=np.int64)
        if len(free) == 0:
            return None
        ok = [k for k in self._order if self._done[k].ok]
        if len(self._order) < self.n_init or len(ok) < 2:
            self._last = (None, None)
            if 0 not in self._done:
                return 0
            return int(self.rng.choice(free))
        mean, std = self.predict(free, ok)
        observed = Observed(np.log(self._cycles(ok)), self.dsp[ok])
        gain = self.acquisition.score(mean, std, self.dsp[free], observed)
        seconds = self.cost.predict(
            np.array([self.pool[k].model_cycles for k in free]),
            [self.pool[k].model_cycles for k in self._order],
            [self._done[k].seconds for k in self._order])
        score = gain / seconds
        best = int(np.argmax(score))  # first of equal scores: the lower model latency
        self._last = (float(np.exp(mean[best])), float(score[best]))
        return int(free[best])

    @property
    def last_prediction(self) -> tuple[float | None, float | None]:
        """``(predicted cycles, acquisition per second)`` behind the last :meth:`ask`."""
        return self._last

    def tell(self, index: int, measurement: Measurement) -> None:
        if not 0 <= index < len(self.pool):
            raise TunerError(f"tell: pool index {index} out of range [0, {len(self.pool)})")
        if index in self._done:
            raise TunerError(f"tell: pool entry {index} was already evaluated")
        self._done[index] = measurement
        self._order.append(index)

    def _cycles(self, indices: Sequence[int] | np.ndarray) -> np.ndarray:
        """Measured cycles of successfully evaluated pool entries."""
        out = [self._done[int(k)].cycles for k in indices]
        assert all(c is not None for c in out)
        return np.array(out, dtype=np.float64)

    # ------------------------------------------------------------------ surrogate

    def predict(self, rows: np.ndarray, observed: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation of the expensive log-latency at pool ``rows``, from
        a GP fitted on the discrepancy ``log f_high - log f_low`` at ``observed``."""
        obs = np.asarray(observed, dtype=np.int64)
        target = np.log(self._cycles(obs)) - self.log_low[obs]
        dim = self.x.shape[1]
        # normalize_y divides by the targets' spread (by 1 when they do not spread, as
        # scikit-learn does): express the floor in those units
        spread = float(np.std(target))
        floor = (DISCREPANCY_FLOOR / (spread if spread > 1e-9 else 1.0)) ** 2
        amp_lo = min(floor, 1e6)
        kernel = ConstantKernel(max(1.0, amp_lo), (amp_lo if amp_lo > 1e-3 else 1e-3,
                                                   max(1e3, 10 * amp_lo))) * Matern(
            length_scale=np.ones(max(dim, 1)), length_scale_bounds=LENGTH_SCALE_BOUNDS, nu=2.5,
        ) + WhiteKernel(1e-4, (1e-8, 1e-1))
        gp = GaussianProcessRegressor(
            kernel=kernel, normalize_y=True, n_restarts_optimizer=self.gp_restarts,
            random_state=int(self.rng.integers(2**31 - 1)))
        x = self.x if dim else np.zeros((len(self.pool), 1))
        with warnings.catch_warnings():
            # tiny data sets often put a length scale on its bound; the fit is still usable
            warnings.simplefilter("ignore", ConvergenceWarning)
            gp.fit(x[obs], target)
            mu, sd = gp.predict(x[rows], return_std=True)
        # the predictive std includes the white noise; the expensive fidelity is
        # deterministic, so the acquisition needs the latent function's std (else an
        # unevaluated twin of the best point looks like a free improvement)
        scale = spread if spread > 1e-9 else 1.0  # as normalize_y scales
        noise = float(gp.kernel_.k2.noise_level) * scale**2
        latent = np.sqrt(np.maximum(np.asarray(sd, dtype=np.float64) ** 2 - noise, 0.0))
        return self.log_low[rows] + mu, latent


def run_mfbo(
    pool: Sequence[Candidate],
    expensive: ExpensiveFidelity,
    *,
    budget: int,
    seed: int | np.random.Generator = 0,
    objective: Objective = "latency",
    n_init: int = N_INIT,
    acquisition: Acquisition | None = None,
    cost: LinearCost | None = None,
    progress: Callable[[MFBOStep], None] | None = None,
) -> MFBOResult:
    """Spend at most ``budget`` calls of ``expensive`` on ``pool``; see the module docstring.

    ``progress`` is called after every evaluation. An exception other than a
    KeyboardInterrupt raised by ``expensive`` propagates (it should return a failed
    :class:`Measurement` instead); a KeyboardInterrupt ends the run with the steps so far.
    """
    budget = check_int("budget", budget, minimum=1)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(
        check_int("seed", seed, minimum=0))
    bo = MultiFidelityBO(pool, rng=rng, objective=objective, n_init=n_init,
                         acquisition=acquisition, cost=cost)
    steps: list[MFBOStep] = []
    start = time.perf_counter()
    interrupted = False
    try:
        while len(steps) < budget:
            k = bo.ask()
            if k is None:
                break
            predicted, score = bo.last_prediction
            m = expensive(bo.pool[k])
            if not isinstance(m, Measurement):
                raise TunerError(f"the expensive fidelity returned {m!r}, not a Measurement")
            bo.tell(k, m)
            steps.append(MFBOStep(len(steps), k, bo.pool[k], m, predicted, score))
            if progress is not None:
                progress(steps[-1])
    except KeyboardInterrupt:
        interrupted = True
    return MFBOResult(tuple(steps), len(bo.pool), budget, objective,
                      time.perf_counter() - start, interrupted)
