"""The ask/tell interface every tuner implements, its records, and the search driver.

A :class:`Tuner` proposes tilings (``ask``) and learns from their evaluation
(``tell``); it never evaluates anything itself. :func:`run_tuner` owns the loop:
budgets (samples, seconds, or both), evaluation in vectorized batches through
``DesignModel.evaluate``, the best-so-far record and trace, progress reports,
and the stop conditions. An infeasible point is a :class:`Trial` with a reason,
never an exception.
"""

from __future__ import annotations

import abc
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import RESOURCES, DesignModel, Evaluation

Point = dict[str, int]
StopReason = Literal["samples", "time", "converged", "stopped", "interrupted", "exhausted"]

#: seconds between two progress reports
PROGRESS_INTERVAL_S = 0.2
#: trials kept in a result by default (``samples`` still counts every evaluation)
DEFAULT_KEEP_TRIALS = 100_000


@dataclass(frozen=True, slots=True)
class Trial:
    """One evaluated tiling.

    ``index`` is the 0-based position of the sample in the run; ``seconds`` the wall
    time since the run started when its batch was evaluated. ``throughput_gops`` is
    ``ops / latency`` (also for infeasible points: their resources exceed the budget,
    see ``reason``); an illegal point has infinite latency and zero throughput.
    """

    index: int
    tiling: Mapping[str, int]
    latency_cycles: float
    throughput_gops: float
    dsp: float
    bram18k: float
    feasible: bool
    reason: str
    seconds: float

    def __post_init__(self) -> None:
        if self.index < 0:
            raise TunerError(f"Trial.index must be >= 0, got {self.index}")
        if self.seconds < 0:
            raise TunerError(f"Trial.seconds must be >= 0, got {self.seconds}")
        if self.feasible == bool(self.reason):
            raise TunerError(
                f"Trial {self.index}: a feasible trial has no reason and an infeasible one has "
                f"one (feasible={self.feasible}, reason={self.reason!r})"
            )

    def same_point(self, other: Trial) -> bool:
        """Equal up to the wall-clock ``seconds`` (for reproducibility checks)."""
        return (self.index, dict(self.tiling), self.latency_cycles, self.feasible, self.reason) == (
            other.index, dict(other.tiling), other.latency_cycles, other.feasible, other.reason)


@dataclass(frozen=True, slots=True)
class TracePoint:
    """The best feasible throughput after ``samples`` evaluations and ``seconds``."""

    samples: int
    seconds: float
    throughput_gops: float


@dataclass(frozen=True, slots=True)
class Progress:
    """What :func:`run_tuner` reports to its ``progress`` callback."""

    best_throughput_gops: float  # 0 until a feasible point is found
    evals_per_s: float
    time_left_s: float | None  # None without a time budget
    samples: int
    samples_left: int | None  # None without a sample budget
    seconds: float


@dataclass(frozen=True, slots=True)
class TuneResult:
    """Outcome of :func:`run_tuner`.

    ``best`` is the feasible trial of highest throughput (``None`` if no feasible
    point was seen); ``trace`` lists every improvement of the best (and the final
    state); ``trials`` holds the first ``keep_trials`` trials while ``samples``
    counts every evaluation of the driver; ``tuner_evaluations`` those the tuner
    made itself (they count against the sample budget too).
    """

    tuner: str
    design_id: str
    best: Trial | None
    trials: tuple[Trial, ...]
    trace: tuple[TracePoint, ...]
    samples: int
    seconds: float
    stop_reason: StopReason
    tuner_evaluations: int = 0  # made by the tuner itself (e.g. MP seed screening)

    @property
    def evals_per_s(self) -> float:
        return self.samples / self.seconds if self.seconds > 0 else 0.0


class Tuner(abc.ABC):
    """An ask/tell search strategy over one design's tilings.

    Subclasses implement :meth:`ask` and :meth:`tell`; the hooks
    :meth:`seed_points`, :meth:`begin` and :attr:`converged` have defaults.
    ``batch_size`` is how many points the driver asks for at a time.
    """

    name: str = "tuner"
    batch_size: int = 256

    @abc.abstractmethod
    def ask(self, n: int) -> list[Point]:
        """Up to ``n`` legal tilings to evaluate next (fewer, or none, when exhausted)."""

    @abc.abstractmethod
    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        """Learn from ``evaluation`` of ``points`` (any points, feasible or not)."""

    def seed_points(self, points: Sequence[Point]) -> None:  # noqa: B027 - optional hook
        """Points to try first (e.g. from the MP seed); by default ignored."""

    def begin(self, *, time_s: float | None, samples: int | None) -> None:  # noqa: B027
        """Called once by :func:`run_tuner` before the first ask, with the budget."""

    @property
    def converged(self) -> bool:
        """Whether searching further is pointless; by default never."""
        return False

    @property
    def own_evaluations(self) -> int:
        """Model evaluations the tuner made itself (e.g. screening MP seeds); by default 0.

        They count against the sample budget of :func:`run_tuner`.
        """
        return 0


def fitness(evaluation: Evaluation, budget: Mapping[str, float]) -> np.ndarray:
    """Fitness of each evaluated point, larger is better.

    Feasible points score their throughput in GOP/s (``>= 0``). Legal points over
    budget score ``-over`` with ``over = max_r used_r / budget_r - 1 > 0``, so they
    rank below every feasible point and closer to the budget ranks higher. Illegal
    points score ``-inf``.
    """
    over = np.zeros(len(evaluation))
    for r in RESOURCES:
        used = np.asarray(getattr(evaluation, r), dtype=np.float64)
        b = float(budget.get(r, math.inf))
        ratio = used / b if b > 0 else np.where(used > 0, np.inf, 0.0)
        over = np.maximum(over, ratio - 1.0)
    score = np.where(evaluation.feasible, evaluation.throughput_gops, -np.maximum(over, 1e-12))
    return np.where(evaluation.legal, score, -np.inf)


def _columns(points: Sequence[Point], names: Sequence[str]) -> dict[str, np.ndarray]:
    rows = np.array([[p[n] for n in names] for p in points], dtype=np.int64)
    rows = rows.reshape(len(points), len(names))
    return {n: rows[:, k] for k, n in enumerate(names)}


def _check_budget(time_s: float | None, samples: int | None) -> None:
    if time_s is None and samples is None:
        raise TunerError("run_tuner needs a budget: pass time_s, samples, or both")
    if time_s is not None and (
        isinstance(time_s, bool) or not isinstance(time_s, int | float) or not time_s > 0
    ):
        raise TunerError(f"time_s must be a positive number of seconds, got {time_s!r}")
    if samples is not None and (
        isinstance(samples, bool) or not isinstance(samples, int) or samples < 1
    ):
        raise TunerError(f"samples must be a positive integer, got {samples!r}")


def run_tuner(
    tuner: Tuner,
    model: DesignModel,
    *,
    time_s: float | None = None,
    samples: int | None = None,
    progress: Callable[[Progress], None] | None = None,
    stop: Callable[[], bool] = lambda: False,
    keep_trials: int = DEFAULT_KEEP_TRIALS,
    resume: bool = False,
) -> TuneResult:
    """Search ``model`` with ``tuner`` until a budget is spent or the search ends.

    Single-threaded: ask a batch (``tuner.batch_size``, cut to the samples left),
    evaluate it with ``model.evaluate``, tell it. Stops, in order of checking,
    when ``samples`` evaluations are done (never more, counting the tuner's
    :attr:`~Tuner.own_evaluations`; asked points past the budget are dropped
    unevaluated), ``time_s`` seconds have passed (checked between batches, so a
    run overshoots by at most one batch), the tuner reports ``converged``,
    ``stop()`` returns True, or the tuner asks nothing (``exhausted``). A KeyboardInterrupt
    raised while searching (also from ``progress`` or ``stop``) ends the search
    with ``stop_reason="interrupted"`` and the result so far. ``progress`` is
    called at most every :data:`PROGRESS_INTERVAL_S` seconds.

    ``resume``: go on with a tuner that has searched before, in stretches of a longer search
    whose whole budget the caller gave :meth:`Tuner.begin` once; ``begin`` is not called
    again (a tuner that adapts to its budget keeps adapting to the whole one), and
    ``samples``/``time_s`` bound this stretch. Samples and tuner evaluations count from this
    call on, in the budget and in the result.
    """
    _check_budget(time_s, samples)
    if keep_trials < 0:
        raise TunerError(f"keep_trials must be >= 0, got {keep_trials}")
    names = model.param_names
    trials: list[Trial] = []
    trace: list[TracePoint] = []
    best: Trial | None = None
    done = 0
    start = time.perf_counter()
    last_report = start
    reason: StopReason = "exhausted"
    own0 = tuner.own_evaluations

    def own() -> int:  # the tuner's own evaluations in this call
        return tuner.own_evaluations - own0

    try:
        if not resume:
            tuner.begin(time_s=time_s, samples=samples)
        while True:
            now = time.perf_counter()
            if samples is not None and done + own() >= samples:
                reason = "samples"
                break
            if time_s is not None and now - start >= time_s:
                reason = "time"
                break
            if tuner.converged:
                reason = "converged"
                break
            if stop():
                reason = "stopped"
                break
            want = tuner.batch_size
            if samples is not None:
                want = min(want, samples - done - own())
            points = tuner.ask(want)
            if len(points) > want:
                raise TunerError(f"{tuner.name}: ask({want}) returned {len(points)} points")
            if samples is not None:  # the tuner may have evaluated points itself while asking
                points = points[: max(0, samples - done - own())]
            if not points:
                spent = samples is not None and done + own() >= samples
                reason = "samples" if spent else "exhausted"
                break
            ev = model.evaluate(_columns(points, names))
            seconds = time.perf_counter() - start
            best = _record(points, ev, done, seconds, best, trials, trace, keep_trials)
            done += len(points)
            tuner.tell(points, ev)
            now = time.perf_counter()
            if progress is not None and now - last_report >= PROGRESS_INTERVAL_S:
                last_report = now
                elapsed = now - start
                progress(Progress(
                    best_throughput_gops=best.throughput_gops if best else 0.0,
                    evals_per_s=done / elapsed if elapsed > 0 else 0.0,
                    time_left_s=None if time_s is None else max(0.0, time_s - elapsed),
                    samples=done,
                    samples_left=(None if samples is None
                                  else samples - done - own()),
                    seconds=elapsed,
                ))
    except KeyboardInterrupt:
        reason = "interrupted"
    seconds = time.perf_counter() - start
    if best is not None and (not trace or trace[-1].samples != done):
        trace.append(TracePoint(done, seconds, best.throughput_gops))
    return TuneResult(tuner.name, model.design_id, best, tuple(trials), tuple(trace), done,
                      seconds, reason, own())


def _record(
    points: Sequence[Point], ev: Evaluation, offset: int, seconds: float, best: Trial | None,
    trials: list[Trial], trace: list[TracePoint], keep: int,
) -> Trial | None:
    """Append trials (up to ``keep``) and update the best and the trace."""

    def trial(k: int) -> Trial:
        return Trial(offset + k, points[k], float(ev.latency_cycles[k]),
                     float(ev.throughput_gops[k]), float(ev.dsp[k]), float(ev.bram18k[k]),
                     bool(ev.feasible[k]), ev.reason_at(k), seconds)

    room = max(0, min(len(points), keep - len(trials)))
    trials.extend(trial(k) for k in range(room))
    gops = np.where(ev.feasible, ev.throughput_gops, -np.inf)
    if len(gops):
        k = int(np.argmax(gops))  # first of the batch's best: ties keep the earlier sample
        if np.isfinite(gops[k]) and (best is None or gops[k] > best.throughput_gops):
            best = trial(k)
            trace.append(TracePoint(offset + k + 1, seconds, best.throughput_gops))
    return best


def check_int(name: str, value: object, *, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an int, or TunerError naming the argument and the value."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum or (
        maximum is not None and value > maximum
    ):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise TunerError(f"`{name}` must be an integer {bound}, got {value!r}.")
    return int(value)


def check_unit(name: str, value: object) -> float:
    """``value`` as a float in [0, 1], or TunerError naming the argument and the value."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise TunerError(f"`{name}` must be a number in [0, 1], got {value!r}.")
    return float(value)


def check_number(name: str, value: object, *, positive: bool = False) -> float:
    """``value`` as a finite float ``>= 0`` (``> 0`` when ``positive``), or TunerError naming
    the argument and the value."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
        (value > 0 if positive else value >= 0) and value < math.inf
    ):
        kind = "positive" if positive else "non-negative"
        raise TunerError(f"`{name}` must be a {kind} number, got {value!r}.")
    return float(value)


def check_rng(value: object) -> np.random.Generator:
    if not isinstance(value, np.random.Generator):
        raise TunerError(
            f"`rng` must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), "
            f"got {value!r}."
        )
    return value
