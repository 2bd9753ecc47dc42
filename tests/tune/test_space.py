"""Search space and genetic operators: legality, repair, levels (Odyssey Figure 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odyssey.errors import TunerError
from odyssey.model.design_model import ParamSpec
from odyssey.tune import (
    FactorizationMutation,
    HybridMutation,
    PerLoopCrossover,
    RandomMutation,
    SearchSpace,
    divisors,
)
from tests.tune.mm_model import mm_params

SPACE = SearchSpace(mm_params(1024, 1024, 1024))
genomes = st.builds(
    lambda seed: SPACE.sample(np.random.default_rng(seed), 1)[0].tolist(),
    st.integers(0, 2**32 - 1),
)


def test_divisors() -> None:
    assert divisors(1) == (1,)
    assert divisors(36) == (1, 2, 3, 4, 6, 9, 12, 18, 36)
    assert divisors(97) == (1, 97)
    assert divisors(1024) == tuple(2**k for k in range(11))
    with pytest.raises(TunerError, match="positive integer"):
        divisors(0)


def test_chains_and_loop_groups_follow_the_divides_links() -> None:
    assert SPACE.names == ("T_i1", "T_j1", "T_k1", "T_i2", "T_j2", "T_k2")
    assert [(c.loop, c.extent, c.columns) for c in SPACE.chains] == [
        ("i", 1024, (0, 3)), ("j", 1024, (1, 4)), ("k", 1024, (2, 5))]
    assert SPACE.loop_groups == ((0, 3), (1, 4), (2, 5))


def test_malformed_parameters_are_rejected() -> None:
    p = ParamSpec
    with pytest.raises(TunerError, match="divides unknown parameter T_x1"):
        SearchSpace([p("T_i1", "i", "array_part", 1, 8, None), p("T_i2", "i", "latency", 1, 8, "T_x1")])
    with pytest.raises(TunerError, match="T_i2 and T_i3 both divide T_i1"):
        SearchSpace([p("T_i1", "i", "array_part", 1, 8, None), p("T_i2", "i", "latency", 1, 8, "T_i1"),
                     p("T_i3", "i", "simd", 1, 8, "T_i1")])
    with pytest.raises(TunerError, match="cycle"):
        SearchSpace([p("T_a", "i", "latency", 1, 8, "T_b"), p("T_b", "i", "latency", 1, 8, "T_a")])
    with pytest.raises(TunerError, match=r"bounds \[4, 2\]"):
        SearchSpace([p("T_i1", "i", "array_part", 4, 2, None)])
    with pytest.raises(TunerError, match="no tuning parameters"):
        SearchSpace([])


def test_sampling_is_legal_uniform_on_outer_factors_and_includes_non_divisors() -> None:
    mat = SPACE.sample(np.random.default_rng(0), 4000)
    assert mat.shape == (4000, 6) and mat.dtype == np.int64
    assert all(SPACE.is_legal(g) for g in mat.tolist())
    outer = mat[:, 0]
    assert outer.min() < 40 and outer.max() > 990 and abs(outer.mean() - 512.5) < 25
    assert (1024 % outer != 0).mean() > 0.9  # non-divisor array partitioning is allowed
    assert mat[:, 5].max() <= 32  # SIMD within its bound


def test_sampling_is_reproducible() -> None:
    a = SPACE.sample(np.random.default_rng(7), 50)
    b = SPACE.sample(np.random.default_rng(7), 50)
    assert (a == b).all()


def test_repair_moves_to_the_nearest_legal_point() -> None:
    assert SPACE.repair({"T_i1": 2000, "T_j1": 0, "T_k1": 100, "T_i2": 7, "T_j2": 5, "T_k2": 40}) == {
        "T_i1": 1024, "T_j1": 1, "T_k1": 100, "T_i2": 8, "T_j2": 1, "T_k2": 25}
    legal = {"T_i1": 129, "T_j1": 130, "T_k1": 64, "T_i2": 3, "T_j2": 13, "T_k2": 4}
    assert SPACE.repair(legal) == legal
    with pytest.raises(TunerError, match=r"lacks tuning parameters \['T_k2'\]"):
        SPACE.repair({k: v for k, v in legal.items() if k != "T_k2"})


def test_levels_are_the_loop_bounds_of_figure_4() -> None:
    g = [129, 32, 64, 3, 8, 4]
    i, j, k = SPACE.chains
    assert SPACE.levels(g, i) == [8, 43, 3]  # ceil(1024/129), 129/3, 3
    assert SPACE.levels(g, j) == [32, 4, 8]
    out = list(g)
    SPACE.apply_levels(out, j, [32, 6, 6])  # Figure 4 right: j.2 8 -> 6, j.1 4 -> 6
    assert out[1] == 36 and out[4] == 6


def test_factorization_mutation_keeps_the_product_of_levels() -> None:
    rng = np.random.default_rng(1)
    op = FactorizationMutation()
    g = [128, 256, 64, 16, 4, 8]
    for _ in range(300):
        m = op.mutate(g, SPACE, rng)
        for ch in SPACE.chains:
            assert math.prod(SPACE.levels(m, ch)) == 1024
        g = list(SPACE.repair_genome(m))


def test_random_mutation_never_shrinks_the_loop_and_reaches_non_divisors() -> None:
    rng = np.random.default_rng(2)
    op = RandomMutation()
    non_divisors = 0
    g = [128, 256, 64, 16, 4, 8]
    for _ in range(300):
        m = op.mutate(g, SPACE, rng)
        for ch in SPACE.chains:
            # the tile count is implied by T_1, so the product covers the loop
            assert math.prod(SPACE.levels(m, ch)) >= ch.extent
        g = list(SPACE.repair_genome(m))
        non_divisors += any(1024 % g[c] for c in (0, 1, 2))
    assert non_divisors > 100


def test_hybrid_mutation_validates_alpha_and_picks_by_it() -> None:
    with pytest.raises(TunerError, match=r"`alpha` must be a number in \[0, 1\], got 1.5"):
        HybridMutation(1.5)
    rng = np.random.default_rng(3)
    only_factorization = HybridMutation(1.0)
    g = [128, 256, 64, 16, 4, 8]
    for _ in range(100):
        m = only_factorization.mutate(g, SPACE, rng)
        assert all(1024 % m[c] == 0 for c in (0, 1, 2))


def test_per_loop_crossover_exchanges_whole_loops() -> None:
    rng = np.random.default_rng(4)
    a, b = (129, 130, 64, 3, 13, 4), (512, 256, 128, 8, 16, 32)
    seen = set()
    for _ in range(200):
        child = PerLoopCrossover().crossover(a, b, SPACE, rng)
        for cols in SPACE.loop_groups:
            src = {tuple(p[c] for c in cols) for p in (a, b)}
            assert tuple(child[c] for c in cols) in src
        assert SPACE.is_legal(child)
        seen.add(tuple(child))
    assert len(seen) == 8  # every combination of the three loops


@settings(max_examples=200, deadline=None)
@given(genomes, st.integers(0, 2**32 - 1))
def test_mutation_then_repair_stays_legal(g: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = HybridMutation().mutate(g, SPACE, rng)
    assert SPACE.is_legal(SPACE.repair_genome(m))
