"""The baseline tuners keep the contract of tests/tune/contract.py; checks specific to each."""

from __future__ import annotations

import importlib.util
import logging
import math
import random
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import optuna
import pytest

from odyssey.errors import TunerError
from odyssey.studies.tuner_bench import BenchConfig, run_bench
from odyssey.tune import (
    TUNERS,
    BayesianOptimization,
    ExhaustiveSearch,
    GreedyBestFirst,
    MindMappings,
    NeighbourhoodA2C,
    OpenTunerEnsemble,
    ReinforcementLearning,
    SearchSpace,
    SimulatedAnnealing,
    Sunstone,
    fitness,
    make_tuner,
    run_tuner,
)
from odyssey.tune.baselines.ensemble import AUCBandit
from odyssey.tune.baselines.ensemble_techniques import DifferentialEvolution
from odyssey.tune.baselines.exhaustive import _Permutation, chain_options
from odyssey.tune.baselines.moves import all_moves, apply_move, neighbours
from odyssey.tune.baselines.nn import MLP, masked_softmax, sample_categorical
from odyssey.tune.baselines.opentuner_search import (
    INFEASIBLE_CYCLES,
    OpenTunerSearch,
    reported_times,
)
from odyssey.tune.baselines.sunstone import pareto_front
from tests.tune.contract import TunerContract, _columns
from tests.tune.mm_model import mm_model

SMALL = mm_model(8, 8, 8, design_id="synthetic-mm-8")
MODEL = mm_model()


class TestExhaustive(TunerContract):
    name = "exhaustive"
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"dsp_threshold": 1.5}, "in [0, 1]"),
        ({"order": "random"}, "'shuffled' or 'lexicographic'"),
        ({"batch_size": 0}, "integer >= 1"),
    ]

    def test_visits_every_point_of_a_small_space_once(self) -> None:
        space = SearchSpace(SMALL.params)
        legal = {g for g in _all_genomes(space)}
        for order in ("shuffled", "lexicographic"):
            tuner = make_tuner("exhaustive", SMALL, seed=0, dsp_threshold=0.0, order=order)
            result = run_tuner(tuner, SMALL, samples=10**6)
            seen = [tuple(t.tiling.values()) for t in result.trials]
            assert result.stop_reason == "converged" and tuner.converged
            assert len(seen) == len(set(seen)) == len(legal) == 8000 and set(seen) == legal

    def test_prunes_by_dsp_use(self) -> None:
        tuner = make_tuner("exhaustive", MODEL, seed=1)
        assert isinstance(tuner, ExhaustiveSearch)
        points = tuner.ask(2000)
        dsp = MODEL.evaluate(_columns(points, MODEL)).dsp
        cap = MODEL.budget["dsp"]
        assert (dsp >= 0.25 * cap).all() and (dsp <= cap).all() and tuner.pruned > 0

    def test_permutation_is_a_bijection(self) -> None:
        for n in (1, 2, 7, 64, 1000, 4097):
            perm = _Permutation(n, np.random.default_rng(n))
            assert sorted(perm(np.arange(n)).tolist()) == list(range(n))


def _all_genomes(space: SearchSpace) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    cols: list[int] = []
    for ch in space.chains:
        out = [g + tuple(t) for g in out for t in chain_options(space, ch).tolist()]
        cols += list(ch.columns)
    order = np.argsort(cols)
    return [tuple(g[k] for k in order) for g in out]


class TestAnnealing(TunerContract):
    name = "annealing"
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"n_chains": 0}, "integer >= 1"),
        ({"temperature": -1}, "positive number"),
        ({"final_temperature": 0}, "positive number"),
        ({"alpha": 2}, "in [0, 1]"),
    ]

    def test_metropolis_acceptance_follows_the_temperature(self) -> None:
        tuner = make_tuner("annealing", MODEL, seed=0)
        assert isinstance(tuner, SimulatedAnnealing)
        assert tuner.accept(10.0, 5.0, 1e-9)  # better: always
        for temperature in (50.0, 200.0):
            rate = np.mean([tuner.accept(400.0, 500.0, temperature) for _ in range(4000)])
            assert rate == pytest.approx(math.exp(-100.0 / temperature), abs=0.03)
        assert not any(tuner.accept(400.0, 500.0, 1.0) for _ in range(1000))

    def test_cools_geometrically_over_the_sample_budget(self) -> None:
        tuner = make_tuner("annealing", MODEL, seed=0, temperature=200.0, final_temperature=2.0)
        assert isinstance(tuner, SimulatedAnnealing)
        tuner.begin(time_s=None, samples=100)
        assert tuner.current_temperature == pytest.approx(200.0)
        tuner.progress.add(50)
        assert tuner.current_temperature == pytest.approx(20.0)
        tuner.progress.add(50)
        assert tuner.current_temperature == pytest.approx(2.0)


class TestBayesian(TunerContract):
    name = "bayesian"
    samples = 300
    # TPE costs ~5 ms a trial: the contract runs mostly on its random start-up trials
    options: ClassVar[dict[str, Any]] = {"batch_size": 16, "n_startup_trials": 500}
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"batch_size": 0}, "integer >= 1"),
        ({"n_startup_trials": 0}, "integer >= 1"),
        ({"multivariate": "yes"}, "True or False"),
    ]

    def test_drives_an_optuna_tpe_study(self) -> None:
        tuner = self.make(seed=2, n_startup_trials=20)
        assert isinstance(tuner, BayesianOptimization)
        assert isinstance(tuner.study.sampler, optuna.samplers.TPESampler)
        seed = {"T_i1": 128, "T_j1": 128, "T_k1": 64, "T_i2": 4, "T_j2": 8, "T_k2": 4}
        tuner.seed_points([seed])
        result = run_tuner(tuner, self.model, samples=200)
        assert dict(result.trials[0].tiling) == seed  # enqueued first
        done = tuner.study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
        assert len(done) >= 200
        assert result.best is not None
        feasible = [float(t.value or 0.0) for t in done if t.constraints["resources"] <= 0]
        assert max(feasible) == pytest.approx(result.best.throughput_gops)


class TestEnsemble(TunerContract):
    name = "ensemble"
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"batch_size": 0}, "integer >= 1"),
        ({"population_size": 3}, "integer >= 4"),
    ]

    def test_auc_bandit_credits_recent_successes(self) -> None:
        bandit = AUCBandit(["a", "b"], window=4)
        assert bandit.score("a") == math.inf  # unused: tried first
        for success in (False, True, True):
            bandit.record("a", success)
        bandit.record("b", False)
        assert bandit.ordered(np.random.default_rng(0))[0] == "a"
        assert bandit.auc["a"] == 2 + 3  # the 2nd and 3rd uses succeeded
        bandit.record("b", False)  # the window drops a's first use
        assert bandit.uses == {"a": 2, "b": 2} and bandit.auc["a"] == 5 - 2

    def test_every_technique_takes_part(self) -> None:
        tuner = self.make(seed=3)
        assert isinstance(tuner, OpenTunerEnsemble)
        run_tuner(tuner, self.model, samples=3000)
        assert all(n > 0 for n in tuner.bandit.uses.values())
        de = tuner.techniques["differential_evolution"]
        assert isinstance(de, DifferentialEvolution) and len(de.pop) == 30


_NO_OPENTUNER = importlib.util.find_spec("opentuner") is None


@pytest.mark.skipif(_NO_OPENTUNER, reason="OpenTuner is not installed: pip install opentuner")
class TestOpenTuner(TunerContract):
    """The real OpenTuner: ~100 evaluations/s through its SQL database, so short runs."""

    name = "opentuner"
    samples = 60
    odd_samples = 77
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"batch_size": 0}, "integer >= 1"),
        ({"technique": "Bogus"}, "one of OpenTuner's techniques"),
    ]

    @pytest.fixture(autouse=True, scope="class")
    @classmethod
    def _import_opentuner(cls) -> None:
        """Import OpenTuner (~0.5 s) before any run is timed."""
        make_tuner("opentuner", MODEL, seed=0)

    def test_runs_opentuners_default_ensemble_and_reports_the_model(self) -> None:
        tuner = self.make(seed=4)
        assert isinstance(tuner, OpenTunerSearch)
        result = run_tuner(tuner, self.model, samples=100)
        history = tuner.run.history()
        assert len(history) == tuner.requests >= result.samples == 100
        assert {r for r, _, _ in history} >= {"DifferentialEvolutionAlt", "UniformGreedyMutation",
                                               "NormalGreedyMutation", "RandomNelderMead"}
        space = tuner.space
        for _, config, reported in history[::3]:
            ev = self.model.evaluate_one(space.repair(config))
            if ev["feasible"]:
                assert reported == ev["latency_cycles"]
            else:
                assert reported > INFEASIBLE_CYCLES
        assert result.best is not None
        assert min(t for _, _, t in history) == result.best.latency_cycles

    def test_seed_points_are_requested_first(self) -> None:
        tuner = self.make(seed=2)
        seed = {"T_i1": 128, "T_j1": 128, "T_k1": 64, "T_i2": 4, "T_j2": 8, "T_k2": 4}
        tuner.seed_points([seed, {**seed, "T_i2": 3}])  # 3 does not divide 128: 2 (ties go down)
        result = run_tuner(tuner, self.model, samples=8)
        assert dict(result.trials[0].tiling) == seed
        assert dict(result.trials[1].tiling) == {**seed, "T_i2": 2}

    def test_runs_are_independent_of_each_other_and_of_the_global_generators(self) -> None:
        first = self.make(seed=9)
        alone = [p for _ in range(6) for p in _step(first, self.model)]
        a, b = self.make(seed=9), self.make(seed=10)
        random.seed(0)
        interleaved: list[dict[str, int]] = []
        for _ in range(6):
            interleaved += _step(a, self.model)
            _step(b, self.model)
            random.random()
        assert interleaved == alone

    def test_leaves_the_process_as_it_found_it(self, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.chdir(tmp_path)
        before = (random.getstate(), np.random.get_state()[1].tolist(), logging.Formatter,
                  list(logging.getLogger().handlers), logging.getLogger().level)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run_tuner(self.make(seed=1), self.model, samples=20)
        after = (random.getstate(), np.random.get_state()[1].tolist(), logging.Formatter,
                 list(logging.getLogger().handlers), logging.getLogger().level)
        assert [str(w.message) for w in caught] == []
        assert before == after
        assert list(tmp_path.iterdir()) == []  # no opentuner.db/, no opentuner.log

    def test_missing_opentuner_is_a_tuner_error(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delitem(sys.modules, "odyssey.tune.baselines._opentuner_run")
        monkeypatch.setitem(sys.modules, "opentuner", None)  # import opentuner fails
        with pytest.raises(TunerError, match=r"needs OpenTuner.*pip install"):
            self.make()


def test_reported_times_rank_feasible_tilings_first_then_the_least_over_budget() -> None:
    space = SearchSpace(MODEL.params)
    points = space.to_points(space.sample(np.random.default_rng(0), 400).tolist())
    ev = MODEL.evaluate(_columns(points, MODEL))
    assert ev.feasible.any() and not ev.feasible.all()
    times = reported_times(ev, MODEL.budget)
    assert (times[ev.feasible] == ev.latency_cycles[ev.feasible]).all()
    assert times[ev.feasible].max() < INFEASIBLE_CYCLES < times[~ev.feasible].min()
    fit = fitness(ev, MODEL.budget)
    over = ~ev.feasible
    order = np.argsort(times[over])
    assert (np.diff(fit[over][order]) <= 0).all()  # less time, less over budget


def _step(tuner: Any, model: Any) -> list[dict[str, int]]:
    points = tuner.ask(tuner.batch_size)
    tuner.tell(points, model.evaluate(_columns(points, model)))
    return points


class TestRL(TunerContract):
    name = "rl"
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"batch_size": 0}, "integer >= 1"),
        ({"learning_rate": -1.0}, "non-negative"),
        ({"rl_fraction": 2}, "in [0, 1]"),
        ({"n_grid": 1}, "integer >= 2"),
    ]

    def test_policy_gradient_matches_finite_differences(self) -> None:
        """The REINFORCE step's gradient is that of ``-mean(A * sum log pi) - beta H``."""
        tuner = self.make(seed=0, hidden=5, entropy=0.05)
        assert isinstance(tuner, ReinforcementLearning)
        tuner.best_gops = 100.0
        episodes = tuner._sample(6)
        for k, (g, *_rest) in enumerate(episodes):
            tuner._known[g] = [50.0, -0.5, 100.0, 20.0, 0.0, 70.0][k]
        tuner._episodes = list(episodes)
        captured: list[Sequence[np.ndarray]] = []
        tuner.optimizer.step = captured.append  # type: ignore[method-assign, assignment]
        tuner.baseline = 0.2
        tuner._update()
        adv = np.array([tuner._reward(tuner._known[e[0]]) for e in episodes]) - tuner.baseline
        adv /= adv.std()

        def loss() -> float:
            total = 0.0
            for (_, x, mask, act), a in zip(episodes, adv, strict=True):
                p = masked_softmax(tuner.policy(x), mask)
                logp = np.log(np.where(mask, p, 1.0))
                total -= a * logp[np.arange(len(act)), act].sum()
                total -= 0.05 * -(p * logp).sum()
            return total / len(episodes)

        w = tuner.policy.params[0]
        for idx in [(0, 0), (3, 2), (7, 4)]:
            old = w[idx]
            w[idx] = old + 1e-6
            up = loss()
            w[idx] = old - 1e-6
            down = loss()
            w[idx] = old
            assert captured[0][0][idx] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-8)

    def test_hands_over_to_the_genetic_stage_with_its_best_points(self) -> None:
        tuner = self.make(seed=1, rl_fraction=0.5)
        assert isinstance(tuner, ReinforcementLearning)
        result = run_tuner(tuner, self.model, samples=2000)
        assert tuner.search is not None and tuner.updates > 0
        best_rl = max(tuner._known.values())
        assert result.best is not None and result.best.throughput_gops >= best_rl


class TestMindMappings(TunerContract):
    name = "mind_mappings"
    options: ClassVar[dict[str, Any]] = {"n_train": 128, "hidden": 16}
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"n_train": 0}, "integer >= 1"),
        ({"step": 0}, "positive number"),
        ({"penalty": -1}, "positive number"),
        ({"inject_every": 0}, "integer >= 1"),
    ]

    def test_surrogate_gradient_matches_finite_differences(self) -> None:
        tuner = self.make(seed=0)
        assert isinstance(tuner, MindMappings)
        run_tuner(tuner, self.model, samples=200)
        assert tuner.trainings >= 1
        sur, x = tuner.surrogate, np.random.default_rng(0).random((3, tuner.space.dim))
        _, grad = sur.cost_and_gradient(x, tuner.limits, tuner.penalty)
        for d in range(tuner.space.dim):
            e = np.zeros_like(x)
            e[:, d] = 1e-6
            up, _ = sur.cost_and_gradient(x + e, tuner.limits, tuner.penalty)
            down, _ = sur.cost_and_gradient(x - e, tuner.limits, tuner.penalty)
            assert grad[:, d] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-6)

    def test_walkers_descend_the_surrogate(self) -> None:
        tuner = self.make(seed=1, inject_every=1000)
        assert isinstance(tuner, MindMappings)
        run_tuner(tuner, self.model, samples=300)
        before, _ = tuner.surrogate.cost_and_gradient(tuner.walkers, tuner.limits, tuner.penalty)
        for _ in range(5):
            tuner._descend()
        after, _ = tuner.surrogate.cost_and_gradient(tuner.walkers, tuner.limits, tuner.penalty)
        assert after.mean() < before.mean()


class TestGBFS(TunerContract):
    name = "gbfs"
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"rho": -1}, "integer >= 0"),
        ({"n_starts": 0}, "integer >= 1"),
    ]

    def test_expands_the_best_node_first(self) -> None:
        tuner = self.make(seed=0, n_starts=4, rho=0, batch_size=1000)
        assert isinstance(tuner, GreedyBestFirst)
        starts = tuner.ask(4)
        ev = self.model.evaluate(_columns(starts, self.model))
        tuner.tell(starts, ev)
        best = starts[int(np.argmax(np.where(ev.feasible, ev.throughput_gops, -1)))]
        space = tuner.space
        expected = neighbours(space, space.genome(best), tuner.moves)
        got = [space.genome(p) for p in tuner.ask(len(expected))]
        assert got == expected


def test_moves_lead_to_legal_neighbouring_tilings() -> None:
    space = SearchSpace(MODEL.params)
    moves = all_moves(space)
    g = (128, 96, 64, 4, 8, 4)
    for m in moves:
        h = apply_move(space, g, m)
        if h is None:
            continue
        assert space.is_legal(h) and h != g
        changed = {space.chain_of[c] for c in range(space.dim) if h[c] != g[c]}
        assert changed == {m.chain}
        if m.kind == "shift" and 0 not in (m.src, m.dst):  # inside the tile: T_1 is kept
            assert h[space.chains[m.chain].columns[0]] == g[space.chains[m.chain].columns[0]]
    assert apply_move(space, g, next(m for m in moves if m.kind == "shift" and m.src == 0
                                     and m.dst == 2 and m.factor == 3)) == (384, 96, 64, 12, 8, 4)


class TestA2C(TunerContract):
    name = "a2c"
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"steps": 0}, "integer >= 1"),
        ({"tau": 1.5}, "in [0, 1]"),
        ({"gamma": -0.1}, "in [0, 1]"),
        ({"memory": 0}, "integer >= 1"),
    ]

    def test_explores_from_the_best_and_learns_from_memory(self) -> None:
        tuner = self.make(seed=0, patience=2)
        assert isinstance(tuner, NeighbourhoodA2C)
        result = run_tuner(tuner, self.model, samples=1500)
        assert result.best is not None and tuner.center == tuple(result.best.tiling.values())
        assert len(tuner.memory) > 0 and tuner.depth >= tuner.steps
        before = [p.copy() for p in tuner.actor.params]
        tuner._train()
        assert any((a != b).any() for a, b in zip(before, tuner.actor.params, strict=True))


class TestSunstone(TunerContract):
    name = "sunstone"
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"n_start": 0}, "integer >= 1"),
        ({"front_size": 0}, "integer >= 1"),
        ({"max_combinations": 0}, "integer >= 1"),
    ]

    def test_pareto_front_matches_brute_force(self) -> None:
        costs = np.random.default_rng(0).integers(0, 6, size=(200, 3)).astype(float)
        front = set(pareto_front(costs).tolist())
        for k, row in enumerate(costs):
            dominated = ((costs <= row).all(axis=1) & (costs < row).any(axis=1)).any()
            if dominated:
                assert k not in front
            else:  # undominated: on the front, or an exact duplicate of a front row
                assert k in front or any((costs[j] == row).all() for j in front)

    def test_sweeps_each_loop_then_combines_the_fronts(self) -> None:
        tuner = self.make(seed=0, n_start=64)
        assert isinstance(tuner, Sunstone)
        run_tuner(tuner, self.model, samples=64)
        sweep = tuner.ask(10**6)  # the first sweep, whole
        sizes = [len(o) for o in tuner.options]
        assert tuner.phase == "sweep" and len(sweep) == sum(sizes)
        tuner.tell(sweep, MODEL.evaluate(_columns(sweep, MODEL)))
        combos = tuner.ask(10**6)
        assert tuner.phase == "combine" and 1 <= len(combos) <= tuner.max_combinations


def test_mlp_backward_matches_finite_differences() -> None:
    rng = np.random.default_rng(0)
    net = MLP((3, 4, 4, 2), rng)
    x, w = rng.random((5, 3)), rng.random((5, 2))
    fwd = net.forward(x)
    grads, gx = net.backward(fwd, w)

    def loss(xx: np.ndarray) -> float:
        return float((net(xx) * w).sum())

    for p, g in zip(net.params, grads, strict=True):
        flat = p.reshape(-1)
        for i in range(0, flat.size, 3):
            old = flat[i]
            flat[i] = old + 1e-6
            up = loss(x)
            flat[i] = old - 1e-6
            down = loss(x)
            flat[i] = old
            assert g.reshape(-1)[i] == pytest.approx((up - down) / 2e-6, rel=1e-5, abs=1e-8)
    e = np.zeros_like(x)
    e[1, 2] = 1e-6
    assert gx[1, 2] == pytest.approx((loss(x + e) - loss(x - e)) / 2e-6, rel=1e-5)


def test_categorical_sampling_never_draws_a_masked_entry() -> None:
    rng = np.random.default_rng(0)
    mask = np.array([[False, True, False, True, False]] * 2000)
    probs = masked_softmax(rng.normal(size=mask.shape), mask)
    draws = sample_categorical(probs, rng)
    assert set(draws.tolist()) == {1, 3}
    assert np.mean(draws == 1) == pytest.approx(probs[:, 1].mean(), abs=0.03)


def test_every_baseline_is_registered() -> None:
    assert {"exhaustive", "annealing", "bayesian", "opentuner", "ensemble", "rl",
            "mind_mappings", "gbfs", "a2c", "sunstone"} <= set(TUNERS)


def test_benchmark_reads_every_run_at_every_budget_point() -> None:
    kernel = Path(__file__).resolve().parents[2] / "kernels" / "mm.c"
    cfg = BenchConfig(kernel=kernel, sizes={"I": 32, "J": 32, "K": 32}, designs=("ij-ij.k",),
                      methods=("random", "annealing"), seeds=(0, 1), time_s=0.2,
                      at_seconds=(0.05, 0.2), at_samples=(100,))
    cache: dict[str, float] = {}
    result = run_bench(cfg, cache=cache)
    # a time run each, and annealing (which cools over its budget) a run of 100 samples too
    assert list(cache) == ["mm:32x32x32:u250:ij-ij.k"] and len(result.runs) == 6
    assert sorted((r.method, r.budget or 0) for r in result.runs) == [
        ("annealing", 0), ("annealing", 0), ("annealing", 100), ("annealing", 100),
        ("random", 0), ("random", 0)]
    records = result.records()
    # time runs at 0.05 s and 0.2 s (and random's at 100 samples), sample runs at 100 samples
    assert len(records) == 2 * 3 + 2 * 2 + 2
    assert {r.budget for r in records if r.method == "annealing"} == {"0.05s", "0.2s", "100 samples"}
    for r in records:
        assert r.fraction is None or 0 <= r.fraction <= 1 + 1e-9
    early, late = (result.median_fraction("annealing", b) for b in ("0.05s", "0.2s"))
    assert early is not None and late is not None and early <= late


@pytest.mark.parametrize("name", ["ensemble", "bayesian", "annealing", "gbfs", "a2c"])
def test_keeps_proposing_new_tilings_after_converging(name: str) -> None:
    """A tuner whose own proposals are all known falls back to new random tilings."""
    # TPE's cost grows with its trials: a shorter run (it still falls back ~400 times)
    options = {"n_startup_trials": 100} if name == "bayesian" else {}
    samples = 600 if name == "bayesian" else 1500
    result = run_tuner(make_tuner(name, SMALL, seed=0, **options), SMALL, samples=samples)
    assert result.stop_reason == "samples"
    assert len({tuple(t.tiling.values()) for t in result.trials}) >= samples - samples // 15
