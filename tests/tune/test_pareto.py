"""Pareto fronts: dominance, hypervolume and ADRS against brute force and hand-computed
values; the exact enumeration against a plain one; NSGA-II against the exact front."""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odyssey.errors import TunerError
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.model.design_model import DesignModel
from odyssey.platforms import load_platform, with_kernel_resources
from odyssey.tune.pareto import (
    NSGA2,
    TilingGrid,
    adrs,
    crowding_distance,
    dominance_ranks,
    hypervolume,
    nondominated,
    normalised_hypervolume,
    pareto_front,
    parse_objectives,
)
from odyssey.tune.space import SearchSpace

ROOT = Path(__file__).resolve().parents[2]
MM = str(ROOT / "kernels" / "mm.c")


def _dominates(a: np.ndarray, b: np.ndarray) -> bool:
    return bool((a <= b).all() and (a < b).any())


def _brute_nondominated(f: np.ndarray) -> list[int]:
    """Rows no other row dominates, first of identical rows: the definition, O(n^2)."""
    keep = []
    for i in range(len(f)):
        if any(_dominates(f[j], f[i]) for j in range(len(f))):
            continue
        if any((f[j] == f[i]).all() for j in range(i)):
            continue
        keep.append(i)
    return keep


def _brute_hypervolume(f: np.ndarray, ref: list[int]) -> int:
    """Unit cells of the integer grid below ``ref`` that some point dominates."""
    cells = itertools.product(*[range(r) for r in ref])
    return sum(1 for c in cells if (f <= np.array(c)).all(axis=1).any())


_matrices = st.integers(1, 4).flatmap(lambda m: st.lists(
    st.lists(st.integers(0, 5), min_size=m, max_size=m), min_size=1, max_size=40))


# ------------------------------------------------------------------ dominance


@settings(max_examples=300, deadline=None)
@given(_matrices)
def test_nondominated_matches_the_definition(rows: list[list[int]]) -> None:
    f = np.array(rows, dtype=np.float64)
    assert nondominated(f).tolist() == _brute_nondominated(f)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 3))
def test_nondominated_on_many_continuous_points(seed: int, m: int) -> None:
    rng = np.random.default_rng(seed)
    f = rng.random((150, m))
    f[:, -1] = 2 - f[:, :-1].sum(axis=1) + 0.05 * f[:, -1]  # a large, anti-correlated front
    assert nondominated(f).tolist() == _brute_nondominated(f)


def test_nondominated_edge_cases() -> None:
    assert nondominated(np.zeros((0, 3))).tolist() == []
    assert nondominated(np.array([[3.0], [1.0], [1.0]])).tolist() == [1]
    with pytest.raises(TunerError, match="NaN"):
        nondominated(np.array([[1.0, np.nan]]))


@settings(max_examples=100, deadline=None)
@given(_matrices)
def test_ranks_peel_fronts(rows: list[list[int]]) -> None:
    f = np.array(rows, dtype=np.float64)
    ranks = dominance_ranks(f)
    for i, j in itertools.permutations(range(len(f)), 2):
        if _dominates(f[j], f[i]):
            assert ranks[j] < ranks[i]
    for i in range(len(f)):  # rank r > 0: some row of rank r - 1 dominates it
        if ranks[i] > 0:
            assert any(_dominates(f[j], f[i]) for j in np.flatnonzero(ranks == ranks[i] - 1))


def test_crowding_distance_by_hand() -> None:
    f = np.array([[0.0, 4.0], [1.0, 2.0], [2.0, 1.0], [4.0, 0.0]])
    d = crowding_distance(f)
    assert np.isinf(d[0]) and np.isinf(d[3])
    # point 1: neighbours 0 and 2 -> (2-0)/4 + (4-1)/4; point 2: (4-1)/4 + (2-0)/4
    assert d[1] == pytest.approx(1.25) and d[2] == pytest.approx(1.25)


# ------------------------------------------------------------------ hypervolume and ADRS


def test_hypervolume_by_hand() -> None:
    # staircase (1,3), (2,2), (3,1) under (4,4): 1*1 + 1*2 + 1*3
    assert hypervolume(np.array([[1, 3], [2, 2], [3, 1]]), [4, 4]) == 6.0
    # a dominated point and one beyond the reference change nothing
    assert hypervolume(np.array([[1, 3], [2, 2], [3, 1], [3, 3], [5, 0]]), [4, 4]) == 6.0
    assert hypervolume(np.array([[1, 1, 1]]), [2, 2, 2]) == 1.0
    # boxes [0,2]^2 x [1,2] (4) and [1,2]^2 x [0,2] (2) overlap in [1,2]^3 (1)
    assert hypervolume(np.array([[0, 0, 1], [1, 1, 0]]), [2, 2, 2]) == 5.0
    assert hypervolume(np.zeros((0, 3)), [1, 1, 1]) == 0.0
    assert hypervolume(np.array([[0.5, 0.5, 0.5, 0.5]]), [1, 1, 1, 1]) == 0.0625
    # normalised: divide by the reference; (50, 2) under (100, 4) is (0.5, 0.5) under (1, 1)
    assert normalised_hypervolume(np.array([[50.0, 2.0]]), [100.0, 4.0]) == 0.25


@settings(max_examples=150, deadline=None)
@given(_matrices.filter(lambda rows: len(rows[0]) >= 2 and len(rows) <= 12))
def test_hypervolume_counts_dominated_cells(rows: list[list[int]]) -> None:
    f = np.array(rows, dtype=np.float64)
    ref = [6] * f.shape[1]
    assert hypervolume(f, ref) == _brute_hypervolume(f, ref)


def test_adrs_by_hand() -> None:
    g = np.array([[10.0, 100.0], [20.0, 50.0]])
    assert adrs(g, g) == 0.0
    assert adrs(g, np.vstack([g, [[5.0, 500.0]]])) == 0.0  # extra points never hurt
    assert adrs(g, np.array([[9.0, 40.0]])) == 0.0  # a dominating point covers both
    # (10,110): shortfalls 10% for the first point, max(-50%, 120%) for the second
    assert adrs(g, np.array([[10.0, 110.0]])) == pytest.approx((0.1 + 1.2) / 2)
    # a zero objective is compared in absolute units: 0 -> 1 is a shortfall of 1
    assert adrs(np.array([[100.0, 0.0]]), np.array([[100.0, 1.0]])) == 1.0
    assert adrs(g, np.zeros((0, 2))) == float("inf")


# ------------------------------------------------------------------ models


@functools.cache
def _models(n: int, designs: tuple[str, ...], dsp: int | None = None,
            bram: int | None = None) -> tuple[DesignModel, ...]:
    ks = analyse(load_scop(MM, {"I": str(n), "J": str(n), "K": str(n)}))
    plat = load_platform("u250")
    if dsp is not None or bram is not None:
        region = plat.kernel_resources
        plat = with_kernel_resources(plat, dsp=dsp or region.dsp, bram18k=bram or region.bram18k)
    chosen = ks.designs if designs == ("all",) else tuple(ks.design(d) for d in designs)
    return tuple(build_model(ks, d, platform=plat) for d in chosen)


def _brute_front(models: tuple[DesignModel, ...]) -> np.ndarray:
    """Objective vectors of the front, from every legal tiling built with itertools."""
    rows = []
    for m in models:
        chains: dict[str, list[dict[str, int]]] = {}
        for p in sorted(m.params, key=lambda p: p.divides is not None):
            combos = chains.setdefault(p.loop, [{}])
            chains[p.loop] = [dict(c, **{p.name: v}) for c in combos
                              for v in range(p.lower, p.upper + 1)
                              if p.divides is None or c[p.divides] % v == 0]
        points = [dict(itertools.chain.from_iterable(c.items() for c in combo))
                  for combo in itertools.product(*chains.values())]
        ev = m.evaluate({n: [pt[n] for pt in points] for n in m.param_names})
        rows.append(np.stack([ev.latency_cycles, ev.dsp, ev.bram18k], axis=1)[ev.feasible])
    f = np.concatenate(rows)
    front = f[nondominated(f)]
    return front[np.lexsort(front.T[::-1])]


def test_grid_lists_every_legal_tiling_once() -> None:
    (model,) = _models(12, ("ij-ij.k",))
    space = SearchSpace(model.params)
    grid = TilingGrid(space)
    rows = np.vstack(list(grid.chunks(1000)))
    assert len(rows) == grid.size == len({tuple(r) for r in rows.tolist()})
    assert all(space.is_legal(r) for r in rows.tolist())
    # per loop: the pairs (T1, T2 | T1) with T1 <= 12, T2 <= 12 (or 12 for SIMD): sum of d(T1)
    assert grid.size == 35 ** 3


@pytest.mark.parametrize("budget", [(None, None), (200, 60)])
def test_exact_front_equals_brute_force(budget: tuple[int | None, int | None]) -> None:
    models = _models(12, ("i-ij.k", "ij-ij.k", "jk-ik.j"), *budget)
    r = pareto_front(models, "latency,dsp,bram18k", method="exact")
    assert r.status == "complete" and r.exact and r.method == "exact"
    assert np.array_equal(r.matrix(), _brute_front(models))
    assert all(p.feasible and p.dsp <= r.budget["dsp"] and p.bram18k <= r.budget["bram18k"]
               for p in r.points)
    assert sum(d.evaluated for d in r.designs) == r.evaluations == sum(d.legal_tilings for d in r.designs)
    assert sum(d.on_front for d in r.designs) == len(r.points)
    for p in r.points:  # every point is reproduced by its own design's model
        (m,) = [m for m in models if m.design_id == p.design_id]
        again = m.evaluate_one(p.tiling)
        assert (again["latency_cycles"], again["dsp"], again["bram18k"]) == (
            p.latency_cycles, p.dsp, p.bram18k)
    assert r.reference == (max(p.latency_cycles for p in r.points), r.budget["dsp"],
                           r.budget["bram18k"])
    assert 0 < r.hypervolume < 1


def test_nsga2_finds_the_exact_front_of_every_small_design() -> None:
    """Checked on 2026-11-25 (main 80c4778, and again on 915b6c6): ADRS 0 and the exact
    hypervolume (22 points) with seeds 0 to 5. Under the complete resource model (2026-11-27:
    every m_axi adapter's buffers and the drains' operators counted) the exact front has 144
    points; 30,000 NSGA-II evaluations come within ADRS 3.0e-4 (seed 0), 8.7e-5 (seed 1) and
    2.2e-3 (seed 2), 60,000 within 8.7e-5. With single-element PE drains and bound buffers
    (2026-11-27) the front has 138 points; 30,000 evaluations come within ADRS 6.5e-4, 9.5e-4
    and 8.2e-4 (seeds 0, 1, 2), 60,000 within 4.3e-4, 2.6e-4 and 2.6e-4. With PEs that pack
    their own words (2026-11-28) the front has 167 points; 60,000 evaluations come within ADRS
    8.6e-4, 6.7e-4 and 0 (seeds 0, 1, 2), 120,000 within 5.4e-4, 5.4e-4 and 0, each with the
    hypervolume to 3e-7."""
    models = _models(16, ("all",))
    exact = pareto_front(models, method="exact")
    found = pareto_front(models, method="nsga2", samples=60_000, seed=0)
    assert found.status == "samples" and found.evaluations == 60_000 and not found.exact
    assert adrs(exact.matrix(), found.matrix()) < 1e-3
    assert found.hypervolume_at(exact.reference) == pytest.approx(exact.hypervolume, rel=1e-3)


@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason="open (re-checked 2026-11-25): on main 80c4778 the exact front "
                   "had 113 points and NSGA-II found all of them with seed 0 (so it xpassed) but missed "
                   "one with seeds 1 and 2 at 150k and at 300k samples; on 915b6c6 (corrected drain "
                   "chains) the front has 107 points and seeds 0, 1, 2 each miss one at 150k (ADRS "
                   "1.0e-4, 1.6e-4, 1.6e-4): a search weakness, not a budget one; on 4d59da7 they miss "
                   "2, 1, 1 (ADRS 1.6e-4, 1.0e-4, 5.6e-5), among them ij-ij.k T_k1=T_k2=23 (1,162 cycles, "
                   "1,840 DSP), which seeds 0, 1, 2 also miss on all 18 designs at 300k (docs/results/pareto)")
def test_nsga2_matches_the_exhaustive_front_on_mm64() -> None:
    models = _models(64, ("ij-ij.k", "i-jk.i"))
    exact = pareto_front(models, method="exact")
    assert exact.exact and exact.evaluations == 2 * 280 * 280 * 248
    found = pareto_front(models, method="nsga2", samples=150_000, seed=0)
    assert adrs(exact.matrix(), found.matrix()) == 0.0


def test_nsga2_is_reproducible_with_a_seed() -> None:
    models = _models(32, ("ij-ij.k", "k-jk.i"))
    a, b = (pareto_front(models, method="nsga2", samples=4000, seed=7) for _ in range(2))
    assert a.points == b.points and a.seed == 7
    c = pareto_front(models, "latency,dsp", method="nsga2", samples=4000, seed=8)
    assert c.objectives == ("latency", "dsp") and c.matrix().shape[1] == 2


def test_auto_picks_the_method_by_the_count_of_tilings() -> None:
    models = _models(12, ("ij-ij.k",))
    assert pareto_front(models, method="auto").method == "exact"
    r = pareto_front(models, method="auto", samples=500, exact_limit=1000)
    assert r.method == "nsga2" and r.evaluations == 500


def test_bad_arguments_are_reported() -> None:
    models = _models(12, ("ij-ij.k",))
    with pytest.raises(TunerError, match="valid objectives are latency, dsp, bram18k, uram, offchip"):
        parse_objectives("latency,luts")
    with pytest.raises(TunerError, match="at least two objectives"):
        parse_objectives("latency")
    with pytest.raises(TunerError, match="needs a budget"):
        pareto_front(models, method="nsga2")
    with pytest.raises(TunerError, match="`method` must be"):
        pareto_front(models, method="random")  # type: ignore[arg-type]
    with pytest.raises(TunerError, match="one platform"):
        pareto_front(models + _models(12, ("ij-ij.k",), 100, 40), method="exact")
    with pytest.raises(TunerError, match="population_size"):
        NSGA2([SearchSpace(models[0].params)], rng=np.random.default_rng(0), population_size=1)


def test_interrupt_returns_the_front_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    (model,) = _models(16, ("ij-ij.k",))
    calls = {"n": 0}
    real = DesignModel.evaluate

    def evaluate(self: DesignModel, *args: object, **kw: object) -> object:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(DesignModel, "evaluate", evaluate)
    r = pareto_front([model], method="nsga2", samples=100_000, seed=0)
    assert r.status == "interrupted" and r.points and not r.exact
