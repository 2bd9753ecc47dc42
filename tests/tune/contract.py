"""The contract every tuner keeps: one reusable suite, inherited per tuner.

Subclass :class:`TunerContract` as ``TestSomething`` and set ``name`` (a key of
``odyssey.tune.TUNERS``), ``options`` (keyword options for every run) and
``bad_options`` (option sets that must be rejected, each with a fragment the
message must contain), or override :meth:`make`. The model is the synthetic
MM 1024^3 model of :mod:`tests.tune.mm_model`; the tuner sees only the
:class:`DesignModel` interface.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pytest

import odyssey.tune.base
from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune import Progress, SearchSpace, Tuner, TuneResult, make_tuner, run_tuner
from tests.tune.mm_model import mm_model

_MODEL = mm_model()


class CountingModel(DesignModel):
    """The synthetic model, counting every point it evaluates."""

    def __init__(self) -> None:
        base = _MODEL
        super().__init__(base.design_id, base.params, base.exprs, base.platform, ops=base.ops)
        self.points = 0
        self.calls = 0

    def evaluate(self, tilings: Mapping[str, Any], *, details: bool = False) -> Evaluation:
        ev = super().evaluate(tilings, details=details)
        self.points += len(ev)
        self.calls += 1
        return ev


class FakeClock:
    """``run_tuner``'s clock in the time-budget test: it moves only when the model evaluates
    (``dt`` seconds per point), so the budget is measured in work the tuner asked for, the
    same on a loaded machine as on a quiet one."""

    def __init__(self, dt: float) -> None:
        self.now = 0.0
        self.dt = dt

    def perf_counter(self) -> float:
        return self.now


class ClockedModel(CountingModel):
    """The counting model, advancing a :class:`FakeClock` by its cost per point."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock

    def evaluate(self, tilings: Mapping[str, Any], *, details: bool = False) -> Evaluation:
        ev = super().evaluate(tilings, details=details)
        self.clock.now += self.clock.dt * len(ev)
        return ev


class TunerContract:
    name: ClassVar[str]
    options: ClassVar[dict[str, Any]] = {}
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = []
    #: samples for the quick runs of this suite
    samples: ClassVar[int] = 700
    #: the sample budget of the exact-budget check (not a multiple of any batch size)
    odd_samples: ClassVar[int] = 777

    model: DesignModel = _MODEL

    def make(self, seed: int = 0, model: DesignModel | None = None, **extra: Any) -> Tuner:
        return make_tuner(self.name, model or self.model, seed=seed, **{**self.options, **extra})

    def run(self, seed: int = 0, **kw: Any) -> TuneResult:
        return run_tuner(self.make(seed), self.model, **{"samples": self.samples, **kw})

    # ------------------------------------------------------------------ ask / tell

    def test_ask_returns_legal_points_with_the_right_keys(self) -> None:
        tuner = self.make()
        space = SearchSpace(self.model.params)
        for _ in range(3):
            points = tuner.ask(40)
            assert 0 < len(points) <= 40
            for p in points:
                assert set(p) == set(self.model.param_names)
                assert all(type(v) is int for v in p.values())
                assert space.is_legal(space.genome(p)), p
            tuner.tell(points, self.model.evaluate(_columns(points, self.model)))
        assert tuner.ask(0) == []

    def test_tell_accepts_infeasible_and_illegal_points(self) -> None:
        tuner = self.make()
        tuner.ask(8)
        huge = {p.name: p.upper if p.divides is None else 1 for p in self.model.params}
        illegal = {**huge, "T_i1": 10, "T_i2": 3}  # 3 does not divide 10
        points = [huge, illegal]
        ev = self.model.evaluate(_columns(points, self.model))
        assert not ev.feasible.any() and ev.legal.tolist() == [True, False]
        tuner.tell(points, ev)
        space = SearchSpace(self.model.params)
        assert all(space.is_legal(space.genome(p)) for p in tuner.ask(16))

    # ------------------------------------------------------------------ reproducibility

    def test_same_seed_gives_identical_results(self) -> None:
        a, b = self.run(seed=3), self.run(seed=3)
        assert a.samples == b.samples == len(a.trials) == len(b.trials)
        assert all(x.same_point(y) for x, y in zip(a.trials, b.trials, strict=True))
        assert a.best is not None and b.best is not None and a.best.same_point(b.best)

    def test_different_seeds_differ(self) -> None:
        a, b = self.run(seed=1), self.run(seed=2)
        assert [dict(t.tiling) for t in a.trials] != [dict(t.tiling) for t in b.trials]

    # ------------------------------------------------------------------ budgets

    def test_sample_budget_is_respected_exactly(self) -> None:
        model = CountingModel()
        budget = self.odd_samples
        result = run_tuner(self.make(model=model), model, samples=budget)
        assert result.samples == len(result.trials)
        assert model.points == result.samples + result.tuner_evaluations <= budget
        assert result.stop_reason in ("samples", "converged", "exhausted")
        if result.stop_reason == "samples":
            assert model.points == budget
        assert [t.index for t in result.trials] == list(range(result.samples))

    def test_time_budget_is_respected(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The driver checks the time budget before every batch: it asks for no batch once
        the budget is spent, and a run stopped by time has spent it. Measured on a fake
        clock that only the model's evaluations move (1,000 points a second), not on the
        wall clock of a shared machine."""
        budget = 2.0
        clock = FakeClock(dt=1e-3)
        monkeypatch.setattr(odyssey.tune.base, "time", clock)
        model = ClockedModel(clock)
        tuner = self.make(model=model)
        asked_at: list[float] = []
        ask = tuner.ask

        def timed_ask(n: int) -> list[dict[str, int]]:
            asked_at.append(clock.now)
            return ask(n)

        monkeypatch.setattr(tuner, "ask", timed_ask)
        result = run_tuner(tuner, model, samples=None, time_s=budget)
        assert result.stop_reason in ("time", "converged", "exhausted")
        assert asked_at and max(asked_at) < budget  # no batch asked after the budget
        assert result.seconds == clock.now
        if result.stop_reason == "time":
            assert result.seconds >= budget
        elif result.stop_reason == "converged":  # checked right after the time budget
            assert result.seconds < budget
        assert result.samples > 0 and model.points == result.samples + result.tuner_evaluations

    # ------------------------------------------------------------------ interruption

    def test_stop_callback_returns_the_partial_result(self) -> None:
        calls = 0

        def stop() -> bool:
            nonlocal calls
            calls += 1
            return calls > 3

        result = self.run(samples=100_000, stop=stop)
        assert result.stop_reason == "stopped"
        assert 0 < result.samples < 100_000 and len(result.trials) == result.samples

    def test_keyboard_interrupt_in_progress_returns_the_partial_result(self) -> None:
        reports: list[Progress] = []

        def progress(p: Progress) -> None:
            reports.append(p)
            raise KeyboardInterrupt

        result = self.run(samples=None, time_s=10.0, progress=progress)
        assert result.stop_reason == "interrupted"
        assert len(reports) == 1 and reports[0].samples == result.samples > 0
        assert reports[0].seconds >= 0.2 and reports[0].time_left_s is not None
        assert result.seconds < 5

    def test_progress_is_reported_at_most_every_fifth_of_a_second(self) -> None:
        stamps: list[float] = []
        self.run(samples=None, time_s=0.9, progress=lambda p: stamps.append(p.seconds))
        assert all(b - a >= 0.19 for a, b in zip(stamps, stamps[1:], strict=False))

    # ------------------------------------------------------------------ the best

    def test_best_is_feasible_and_beats_every_told_feasible_point(self) -> None:
        result = self.run(seed=5)
        best = result.best
        assert best is not None and best.feasible and best.reason == ""
        feasible = [t.throughput_gops for t in result.trials if t.feasible]
        assert best.throughput_gops == max(feasible)
        again = self.model.evaluate_one(dict(best.tiling))
        assert again["feasible"] and again["throughput_gops"] == best.throughput_gops
        gops = [p.throughput_gops for p in result.trace]
        assert gops == sorted(gops) and result.trace[-1].samples == result.samples
        assert result.trace[-1].throughput_gops == best.throughput_gops

    # ------------------------------------------------------------------ validation

    def test_unknown_options_and_seeds_are_rejected(self) -> None:
        with pytest.raises(TunerError, match="unknown option.*bogus"):
            self.make(bogus=1)
        with pytest.raises(TunerError, match="`seed`.*-1"):
            make_tuner(self.name, self.model, seed=-1, **self.options)

    def test_bad_option_values_are_rejected_naming_argument_and_value(self) -> None:
        for bad, fragment in self.bad_options:
            with pytest.raises(TunerError) as info:
                self.make(**bad)
            message = str(info.value)
            assert fragment in message, (bad, message)
            # the message names the offending argument (in backquotes) and its value
            assert any(f"`{n}`" in message and repr(v) in message for n, v in bad.items()), (
                bad, message)


def _columns(points: list[dict[str, int]], model: DesignModel) -> dict[str, np.ndarray]:
    return {n: np.array([p[n] for p in points], dtype=np.int64) for n in model.param_names}
