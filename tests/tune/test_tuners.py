"""Every registered tuner keeps the contract of tests/tune/contract.py; Odyssey-specific checks."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import statistics
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from odyssey.errors import TunerError
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.platforms import load_platform
from odyssey.tune import TUNERS, Evolutionary, OdysseyTuner, make_tuner, run_tuner
from odyssey.tune.exact.optimum import find_optimum
from tests.tune.contract import TunerContract
from tests.tune.mm_model import mm_model

ROOT = Path(__file__).resolve().parents[2]


def test_every_registered_tuner_has_a_contract_suite() -> None:
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):  # suites of other modules
        if info.name.startswith("test_"):
            importlib.import_module(f"tests.tune.{info.name}")
    suites = {cls.name for cls in TunerContract.__subclasses__()}
    assert suites == set(TUNERS)


class TestRandomSearch(TunerContract):
    name = "random"
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"batch_size": 0}, "integer >= 1"),
        ({"batch_size": 2.5}, "integer >= 1"),
    ]


class TestEvolutionary(TunerContract):
    name = "evolutionary"
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"population_size": 1}, "integer >= 2"),
        ({"n_parents": 0}, "integer in [1, 64]"),
        ({"population_size": 10, "n_parents": 11}, "in [1, 10]"),
        ({"mutation_rate": 1.5}, "in [0, 1]"),
        ({"crossover_rate": -0.1}, "in [0, 1]"),
        ({"alpha": 2}, "in [0, 1]"),
        ({"patience": 0}, "integer >= 1"),
        ({"min_gain": 1.5}, "in [0, 1]"),
    ]

    def test_converges_when_the_best_stops_improving(self) -> None:
        tuner = self.make(patience=3, population_size=8, n_parents=2)
        result = run_tuner(tuner, self.model, samples=100_000)
        assert result.stop_reason == "converged" and result.samples < 100_000
        assert tuner.converged

    def test_never_proposes_a_point_twice(self) -> None:
        result = self.run(seed=4, samples=3000)
        tilings = [tuple(t.tiling.values()) for t in result.trials]
        assert len(set(tilings)) == len(tilings)

    def test_population_keeps_the_fittest(self) -> None:
        # no restarts: a restart empties the population (and the best found stays the result)
        tuner = self.make(population_size=16, n_parents=4, patience=None)
        assert isinstance(tuner, Evolutionary)
        result = run_tuner(tuner, self.model, samples=640)
        fitness = [f for _, f in tuner.population]
        assert len(fitness) == 16 and fitness == sorted(fitness, reverse=True)
        assert result.best is not None and fitness[0] == result.best.throughput_gops

    def test_seed_points_are_proposed_first(self) -> None:
        tuner = self.make()
        seeds = [{"T_i1": 129, "T_j1": 130, "T_k1": 64, "T_i2": 3, "T_j2": 13, "T_k2": 4},
                 {"T_i1": 100, "T_j1": 100, "T_k1": 100, "T_i2": 7, "T_j2": 10, "T_k2": 5}]
        tuner.seed_points(seeds)
        asked = tuner.ask(10)
        assert asked[0] == seeds[0]
        # the second is repaired to the nearest legal point: 7 -> 5 (divisors of 100: 4, 5, 10)
        assert asked[1] == {**seeds[1], "T_i2": 5}

    @pytest.mark.parametrize(("budget", "restarts"), [({"samples": 10_000}, 1),
                                                      ({"time_s": 10.0}, 0)])
    def test_fruitless_local_batches_stall_the_population_under_a_sample_budget(
        self, budget: dict[str, Any], restarts: int
    ) -> None:
        """One local batch of 64 neighbours, none better: 64 samples are 8 generations of a
        population of 8, past a patience of 2, under a sample budget; under a time budget
        a local batch is no generation at all."""
        tuner = self.make(patience=2, population_size=8, n_parents=2)
        assert isinstance(tuner, Evolutionary)
        tuner.begin(time_s=budget.get("time_s"), samples=budget.get("samples"))
        names = self.model.param_names

        def evaluate(points: list[dict[str, int]]) -> Any:
            return self.model.evaluate({n: [p[n] for p in points] for n in names})

        first = tuner.ask(tuner.batch_size)
        tuner.tell(first, evaluate(first))  # a first best: its neighbourhood is queued
        local = tuner.ask(tuner.batch_size)
        assert len(local) == 64 and tuner.restarts_done == 0
        ev = evaluate(local)  # judged over budget, so none improves on the best
        tuner.tell(local, dataclasses.replace(ev, feasible=np.zeros(len(ev), dtype=bool),
                                              dsp=np.full(len(ev), 2 * self.model.budget["dsp"])))
        assert tuner.generations == 1 and tuner.restarts_done == restarts

    @pytest.mark.parametrize(("min_gain", "restarts"), [(0.01, 1), (0.001, 0)])
    def test_a_better_best_by_less_than_min_gain_does_not_reset_the_restart_clock(
        self, min_gain: float, restarts: int
    ) -> None:
        """One local batch of 64 neighbours (8 generations of a population of 8, past a
        patience of 2, under a sample budget) whose best is 0.5% above the first best: a
        better best, but progress only when ``min_gain`` is below 0.5%."""
        tuner = self.make(patience=2, population_size=8, n_parents=2, min_gain=min_gain)
        assert isinstance(tuner, Evolutionary)
        tuner.begin(time_s=None, samples=10_000)
        names = self.model.param_names

        def evaluate(points: list[dict[str, int]]) -> Any:
            return self.model.evaluate({n: [p[n] for p in points] for n in names})

        first = tuner.ask(tuner.batch_size)
        ev = evaluate(first)
        tuner.tell(first, ev)
        best = float(np.max(np.where(ev.feasible, ev.throughput_gops, -np.inf)))
        local = tuner.ask(tuner.batch_size)
        assert len(local) == 64 and tuner.restarts_done == 0
        ev = evaluate(local)
        gops = np.zeros(len(ev))
        gops[0] = 1.005 * best  # one neighbour 0.5% better, the others feasible but poor
        ones = np.ones(len(ev), dtype=bool)
        tuner.tell(local, dataclasses.replace(ev, feasible=ones, legal=ones, throughput_gops=gops,
                                              dsp=np.zeros(len(ev)), bram18k=np.zeros(len(ev)),
                                              uram=np.zeros(len(ev))))
        assert tuner.restarts_done == restarts
        if not restarts:  # the population kept, led by the better best
            assert tuner.population[0][1] == pytest.approx(1.005 * best)

    def test_mutation_and_alpha_are_exclusive(self) -> None:
        from odyssey.tune import HybridMutation

        with pytest.raises(TunerError, match="either `mutation` or `alpha`"):
            self.make(mutation=HybridMutation(0.5), alpha=0.5)


class TestOdysseyTuner(TunerContract):
    name = "odyssey"
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"mp_objective": "speed"}, "comp, comm, comm-comp, latency"),
        ({"mp_solver": "gurobi"}, "ipopt, scip"),
        ({"mp_time_limit_s": 0}, "positive"),
        ({"n_seeds": 0}, "integer >= 1"),
        ({"population_size": 1}, "integer >= 2"),
        ({"bound_search": "yes"}, "True or False"),
        ({"bound_share": 1.5}, "bound_share"),
    ]

    def test_bound_search_proves_the_optimum_under_a_sample_budget(self) -> None:
        # (`i-ik.j`: MM 256^3 `i-ij.k`, the case before, needs more than 300 samples since the
        # model charges its drain chain's pace, docs/validation.md item 9)
        ks = analyse(load_scop(ROOT / "kernels" / "mm.c", {"I": "256", "J": "256", "K": "256"}))
        model = build_model(ks, ks.design("i-ik.j"), platform=load_platform("u250"))
        tuner = make_tuner("odyssey", model, seed=2)
        assert isinstance(tuner, OdysseyTuner)
        result = run_tuner(tuner, model, samples=300)
        opt = find_optimum(model)
        assert tuner.proven_optimal and result.stop_reason == "converged"
        assert result.best is not None and result.best.latency_cycles == opt.latency_cycles
        assert result.samples + result.tuner_evaluations < 300

    def test_a_bound_search_that_cannot_finish_leaves_the_samples_to_evolution(self) -> None:
        # the synthetic model's bounds are weak: its branch and bound runs for minutes
        tuner = self.make(seed=2)
        assert isinstance(tuner, OdysseyTuner)
        result = run_tuner(tuner, self.model, samples=400)
        assert tuner.bound is not None and not tuner.proven_optimal
        assert tuner.bound.asked <= 300  # BOUND_SAMPLE_SHARE of the budget
        assert result.samples + result.tuner_evaluations == 400

    def test_under_a_time_budget_the_evolutionary_search_starts_alone(self) -> None:
        tuner = self.make(seed=2)
        assert isinstance(tuner, OdysseyTuner)
        run_tuner(tuner, self.model, time_s=0.2)
        assert tuner.bound is None  # not built within the first SOLO_S seconds
        assert not tuner.proven_optimal

    def test_an_early_converged_evolution_hands_the_clock_to_the_bound_search(self) -> None:
        # patience 1, no restarts: the evolutionary search converges within its first SOLO_S
        # seconds (before the fix the run stopped there, unproven, after 13 ms);
        # the run goes on with the bound search, which proves the optimum
        ks = analyse(load_scop(ROOT / "kernels" / "mm.c", {"I": "64", "J": "64", "K": "64"}))
        model = build_model(ks, ks.design("i-ij.k"), platform=load_platform("u250"))
        tuner = make_tuner("odyssey", model, seed=2, mp_solver=None, patience=1,
                           restarts=0)
        assert isinstance(tuner, OdysseyTuner)
        result = run_tuner(tuner, model, time_s=60)
        assert tuner.search.converged and tuner.proven_optimal
        assert result.stop_reason == "converged" and result.seconds < 60
        assert result.best is not None
        assert result.best.latency_cycles == find_optimum(model).latency_cycles

    def test_absorbed_points_join_the_population_without_a_generation(self) -> None:
        tuner = self.make(seed=2, mp_solver=None, bound_search=False)
        assert isinstance(tuner, OdysseyTuner)
        search = tuner.search
        points = search.space.to_points(search.space.sample(np.random.default_rng(0), 32).tolist())
        search.absorb(points, self.model.evaluate(
            {n: [p[n] for p in points] for n in self.model.param_names}))
        assert search.generations == 0 and len(search.population) > 0
        assert not any(p in points for p in tuner.ask(64))  # never proposed again

    def test_runs_the_mp_seed_once_and_reports_it(self) -> None:
        tuner = self.make()
        assert isinstance(tuner, OdysseyTuner)
        result = run_tuner(tuner, self.model, samples=500)
        mp = tuner.mp_result
        assert mp is not None and mp.status == "locally_optimal" and not mp.fallback
        assert mp.objective_name == "comm-comp" and mp.seeds
        # the seeds are the first points asked
        first = [dict(t.tiling) for t in result.trials[: len(mp.seeds)]]
        assert first == [dict(s) for s in mp.seeds]

    def test_mp_time_is_capped_by_the_time_budget(self) -> None:
        tuner = self.make(mp_time_limit_s=30.0, mp_fraction=0.1)
        assert isinstance(tuner, OdysseyTuner)
        tuner.begin(time_s=2.0, samples=None)
        assert tuner._time_limit == pytest.approx(0.2)

    def test_without_solver_it_is_the_evolutionary_search(self) -> None:
        a = run_tuner(self.make(seed=7, mp_solver=None, bound_search=False), self.model, samples=500)
        b = run_tuner(make_tuner("evolutionary", self.model, seed=7), self.model, samples=500)
        assert all(x.same_point(y) for x, y in zip(a.trials, b.trials, strict=True))


def test_make_tuner_rejects_unknown_names() -> None:
    with pytest.raises(TunerError, match="unknown tuner 'bogus'; choose one of odyssey"):
        make_tuner("bogus", mm_model(), seed=0)


def test_seeded_search_is_at_least_as_good_as_unseeded_search() -> None:
    """Odyssey section 4.2: MP seeds help at an equal sample budget (synthetic MM 1024^3)."""
    model = mm_model()
    budget = 3000

    def median_best(name: str) -> float:
        bests = []
        for seed in range(3):
            result = run_tuner(make_tuner(name, model, seed=seed), model, samples=budget)
            assert result.best is not None
            # the whole budget, unless the bound search proved the best optimal before
            assert result.samples + result.tuner_evaluations == budget or result.stop_reason == "converged"
            bests.append(result.best.throughput_gops)
        return statistics.median(bests)

    assert median_best("odyssey") >= median_best("evolutionary")



def test_a_resumed_run_keeps_the_whole_budget_the_tuner_began_with() -> None:
    """``resume=True`` does not call ``begin`` again: the evolutionary search told a budget of
    4000 keeps the local-search cap of 4000 samples through stretches of 100 (re-begun, the
    cap would follow each stretch); the tuner's own evaluations count per call (the MP seed's,
    made in the first stretch, do not eat the later stretches' samples)."""
    model = mm_model()
    tuner = make_tuner("evolutionary", model, seed=1)
    assert isinstance(tuner, Evolutionary)
    tuner.begin(time_s=None, samples=4000)
    cap = tuner._local_cap
    for _ in range(3):
        assert run_tuner(tuner, model, samples=100, resume=True).samples == 100
        assert tuner._local_cap == cap
    run_tuner(tuner, model, samples=100)
    assert tuner._local_cap < cap
    odyssey = make_tuner("odyssey", model, seed=1, bound_search=False)
    odyssey.begin(time_s=None, samples=600)
    first = run_tuner(odyssey, model, samples=300, resume=True)
    assert first.tuner_evaluations > 0 and first.samples + first.tuner_evaluations == 300
    second = run_tuner(odyssey, model, samples=300, resume=True)
    assert (second.samples, second.tuner_evaluations) == (300, 0)
