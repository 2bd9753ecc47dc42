"""Multi-fidelity BO: a fake expensive fidelity on a real pool, the GP, the acquisitions,
budgets and failures, one real timed simulation, the CLI, and the tuner contract."""

from __future__ import annotations

import json
import shutil
import zlib
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from odyssey.cli import main
from odyssey.errors import TunerError
from odyssey.frontend import load_scop
from odyssey.mapping.space import KernelSpace, analyse
from odyssey.platforms import load_platform
from odyssey.tune.fidelity.acquisition import (
    ExpectedImprovement,
    HypervolumeImprovement,
    LinearCost,
    Observed,
    expected_below,
    hypervolume,
    pareto_mask,
)
from odyssey.tune.fidelity.mfbo import Candidate, Measurement, MultiFidelityBO, run_mfbo
from odyssey.tune.fidelity.mfbo_fidelity import TimedSimFidelity, model_candidates
from tests.tune.contract import TunerContract

ROOT = Path(__file__).resolve().parents[2]
MM = ROOT / "kernels" / "mm.c"
DESIGNS = ("i-ij.k", "ij-ij.k", "ik-jk.i", "jk-jk.i", "k-jk.i", "j-ik.j")


@pytest.fixture(scope="module")
def mm64() -> KernelSpace:
    return analyse(load_scop(MM, {"I": "64", "J": "64", "K": "64"}))


@pytest.fixture(scope="module")
def pool(mm64: KernelSpace) -> tuple[Candidate, ...]:
    designs = [mm64.design(d) for d in DESIGNS]
    out = model_candidates(mm64, platform=load_platform("u250"), designs=designs, top_k=80,
                           samples=400, seed=0)
    BLIND_PENALTY.clear()
    BLIND_PENALTY[out[0].key] = 1.3
    return out


#: the model's own best tiling of the pool is this much slower in the stand-in "truth", so that
#: taking the model's best blindly is a poor choice whatever the pool (set by the pool fixture)
BLIND_PENALTY: dict[tuple[object, ...], float] = {}


def distortion(c: Candidate) -> float:
    """Smooth in the log tiling factors, with a phase per design (crc32: stable across runs),
    times :data:`BLIND_PENALTY` for the model's best."""
    t = dict(c.tiling)
    phase = 2 * np.pi * (zlib.crc32(c.design.encode()) % 1000) / 1000
    smooth = 1.0 + 0.15 * float(np.sin(phase + 2.0 + 0.7 * np.log(t["T_i1"] * t["T_k1"])))
    return smooth * BLIND_PENALTY.get(c.key, 1.0)


class Fake:
    """Model latency times :func:`distortion`; counts its calls."""

    def __init__(self, fail: frozenset[object] = frozenset()) -> None:
        self.calls: list[Candidate] = []
        self.fail = fail  # designs, or candidates' keys, that do not compile

    def __call__(self, c: Candidate) -> Measurement:
        self.calls.append(c)
        if c.design in self.fail or c.key in self.fail:
            return Measurement(None, 0.5, "compile_error", "stand-in failure")
        return Measurement(c.model_cycles * distortion(c), 1.0)


def test_pool_is_ranked_distinct_and_feasible(pool: tuple[Candidate, ...]) -> None:
    assert len(pool) == 80 and len({c.key for c in pool}) == 80
    lat = [c.model_cycles for c in pool]
    assert lat == sorted(lat) and {c.design for c in pool} <= set(DESIGNS)
    assert all(c.dsp > 0 and c.space_loops for c in pool)


def test_finds_the_true_best_sooner_than_a_random_order(pool: tuple[Candidate, ...]) -> None:
    """Over seeds 0-5, the step at which the search first measures the true best: a random
    order of the 80 candidates puts it at step 40 on average and within 40 steps half the
    time (all six within 40: probability 1/64). Measured on the model of 2026-11-28 after the
    serial drains' pace was charged at every tiling: steps 39, 37, 37, 3, 4, 37 (median 37;
    seeds 6-9: 8, 38, 36, 33), where the true best is the model's second-best candidate, so
    the model's own order finds it at step 2; before that correction (PE pipeline registers):
    37, 35, 4, 3, 11, 4 (median 7.5); on the model of 2026-11-25 every seed by step 21."""
    truth = {c.key: c.model_cycles * distortion(c) for c in pool}
    best = min(truth.values())
    blind = truth[pool[0].key]
    assert blind > 1.05 * best  # the model's own best is a poor choice here
    steps = []
    for seed in range(6):
        fake = Fake()
        result = run_mfbo(pool, fake, budget=40, seed=seed)
        assert len(fake.calls) == len(result.steps) == 40
        assert result.blind is not None and result.blind.index == 0  # evaluated first
        found = [s.index for s in result.steps if s.measurement.cycles == pytest.approx(best)]
        steps.append(found[0] if found else 40)
        assert result.best is not None and (not found or result.best.measurement.cycles == pytest.approx(best))
    assert sum(s < 40 for s in steps) == 6
    assert sorted(steps)[2] < 40  # the median of the six, where a random order's is 40


def test_same_seed_same_run_and_seeds_differ(pool: tuple[Candidate, ...]) -> None:
    a = run_mfbo(pool, Fake(), budget=8, seed=4)
    b = run_mfbo(pool, Fake(), budget=8, seed=4)
    c = run_mfbo(pool, Fake(), budget=8, seed=5)
    assert [s.candidate.key for s in a.steps] == [s.candidate.key for s in b.steps]
    assert [s.predicted_cycles for s in a.steps] == [s.predicted_cycles for s in b.steps]
    assert [s.candidate.key for s in a.steps] != [s.candidate.key for s in c.steps]


def test_budget_pool_exhaustion_and_failures(pool: tuple[Candidate, ...]) -> None:
    small = pool[:6]
    fake = Fake()
    r = run_mfbo(small, fake, budget=50, seed=0)
    assert len(fake.calls) == 6 and len({c.key for c in fake.calls}) == 6  # never twice
    # the model's three best candidates do not compile (the first is always evaluated first);
    # failing a whole design instead would depend on which designs the model ranks first
    failing = Fake(fail=frozenset(c.key for c in pool[:3]))
    r = run_mfbo(pool, failing, budget=10, seed=0)
    assert len(r.steps) == 10 and len(failing.calls) == 10
    failed = [s for s in r.steps if not s.measurement.ok]
    assert failed and all(s.measurement.status == "compile_error" for s in failed)
    assert r.best is not None and r.best.measurement.ok
    assert len({s.candidate.key for s in r.steps}) == 10
    with pytest.raises(TunerError, match="`budget`.*0"):
        run_mfbo(pool, fake, budget=0)
    with pytest.raises(TunerError, match="empty"):
        run_mfbo((), fake, budget=3)


def test_gp_learns_the_discrepancy_from_the_low_fidelity(pool: tuple[Candidate, ...]) -> None:
    """High = 1.2 x low: after a few points the GP predicts 1.2 x low everywhere, with
    small uncertainty (the low fidelity is the prior mean and an input)."""
    bo = MultiFidelityBO(pool, rng=np.random.default_rng(0))
    for k in (0, 10, 25, 40, 60):
        bo.tell(k, Measurement(1.2 * bo.pool[k].model_cycles, 1.0))
    rows = np.arange(len(pool))
    mean, std = bo.predict(rows, [0, 10, 25, 40, 60])
    low = np.array([c.model_cycles for c in bo.pool])
    assert np.allclose(np.exp(mean), 1.2 * low, rtol=0.01)
    assert float(std.max()) < 0.05


def test_expected_improvement_and_its_limits() -> None:
    mean, std = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    got = expected_below(0.0, mean, std)
    assert got[0] == pytest.approx(1 / np.sqrt(2 * np.pi)) and got[1] == 0 and got[2] == 0
    assert expected_below(2.0, np.array([1.0]), np.array([0.0]))[0] == 1.0
    ei = ExpectedImprovement(xi=0.0).score(np.array([0.5, 1.5]), np.array([0.1, 0.1]),
                                           np.zeros(2), Observed(np.array([1.0]), np.zeros(1)))
    assert ei[0] > 0.49 and ei[1] < 1e-6
    with pytest.raises(TunerError, match="`xi`.*-1"):
        ExpectedImprovement(xi=-1)


def test_hypervolume_improvement_matches_the_exact_gain_when_certain() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        lat, dsp = rng.uniform(0, 1, 5), rng.uniform(0, 0.9, 5)
        keep = pareto_mask(lat, dsp)
        acq = HypervolumeImprovement(ref_latency=1.2)
        y, d = rng.uniform(0, 1.2, 8), rng.uniform(0, 1, 8)
        got = acq.score(y, np.zeros(8), d, Observed(lat[keep], dsp[keep]))
        base = hypervolume(lat, dsp, (1.2, 1.0))
        exact = [hypervolume(np.append(lat, y[k]), np.append(dsp, d[k]), (1.2, 1.0)) - base
                 for k in range(8)]
        assert np.allclose(got, exact, atol=1e-12)


def test_multi_objective_run_returns_a_pareto_front(pool: tuple[Candidate, ...]) -> None:
    r = run_mfbo(pool, Fake(), budget=10, seed=0, objective="latency-dsp")
    front = r.pareto
    assert front and r.best in front
    dsp = [s.candidate.dsp for s in front]
    lat = [s.measurement.cycles or 0.0 for s in front]
    assert dsp == sorted(dsp) and lat == sorted(lat, reverse=True)


def test_cost_model_refits_on_observations() -> None:
    cost = LinearCost(fixed_s=5.0, per_cycle_s=0.0)
    assert cost.fitted([1, 2], [1, 2]) == (5.0, 0.0)  # too few: the priors
    a, b = cost.fitted([1000, 2000, 4000], [3.0, 4.0, 6.0])
    assert a == pytest.approx(2.0) and b == pytest.approx(1e-3)
    with pytest.raises(TunerError, match="`fixed_s`"):
        LinearCost(fixed_s=-1)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ for the timed simulation")
def test_real_timed_simulation_confirms_a_design() -> None:
    ks = analyse(load_scop(MM, {"I": "16", "J": "16", "K": "16"}))
    pool = model_candidates(ks, platform=load_platform("u250"), designs=[ks.design("ij-ij.k")],
                            top_k=4, samples=200, seed=0)
    sim = TimedSimFidelity(ks)
    r = run_mfbo(pool, sim, budget=1, seed=0)
    (step,) = r.steps
    assert step.measurement.status == "pass" and step.measurement.cycles
    assert step.model_error is not None and abs(step.model_error) < 0.1
    again = sim(step.candidate)  # cached: no second simulation
    assert again == step.measurement and sim.runs == 1


def test_cli_mfbo_with_the_model_fidelity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mfbo.json"
    code = main(["tune", str(MM), "-D", "I=64", "-D", "J=64", "-D", "K=64", "--design", "ij-ij.k",
                 "--method", "mfbo", "--fidelity", "model", "--budget", "4", "--samples", "300",
                 "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and "confirmed best: design ij-ij.k" in text and "accurate cycles" in text
    doc = json.loads(out.read_text())
    assert doc["high_fidelity"] == "accurate" and len(doc["evaluations"]) == 4
    assert doc["best"]["high_cycles"] == min(e["high_cycles"] for e in doc["evaluations"])


def test_cli_rejects_fidelity_options_without_mfbo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", str(MM), "--method", "random", "--fidelity", "sim"]) != 0
    assert "--method mfbo only" in capsys.readouterr().err


class TestMFBOTuner(TunerContract):
    name = "mfbo"
    # a pool the run cannot exhaust within the contract's first progress report (0.2 s)
    options: ClassVar[dict[str, Any]] = {"pool_size": 120, "screen_samples": 300}
    bad_options: ClassVar[list[tuple[dict[str, Any], str]]] = [
        ({"pool_size": 0}, "integer >= 1"),
        ({"screen_samples": -3}, "integer >= 1"),
        ({"objective": "power"}, "latency"),
        ({"n_init": 0}, "integer >= 1"),
    ]
