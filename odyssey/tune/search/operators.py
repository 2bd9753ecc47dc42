"""Genetic operators on tiling genomes (Odyssey section 4.1), as small strategy objects.

Mutations act on the *levels* of one loop (``[ceil(N/T_1), T_1/T_2, T_2]`` for a
two-level tiling, see :mod:`odyssey.tune.space`) and return a genome that may
violate bounds or divisibility; the caller repairs it with
:meth:`SearchSpace.repair_genome`. Crossover exchanges whole loops, so the
offspring of two legal parents is legal.
"""

from __future__ import annotations

import abc

import numpy as np

from odyssey.errors import TunerError
from odyssey.tune.space import Chain, SearchSpace, divisors


def _pick(rng: np.random.Generator, n: int) -> int:
    return int(rng.random() * n) if n > 1 else 0


def _two_levels(levels: list[int], rng: np.random.Generator) -> tuple[int, int] | None:
    """A random source level with value > 1 and a different destination level."""
    movable = [k for k, v in enumerate(levels) if v > 1]
    if not movable:
        return None
    src = movable[_pick(rng, len(movable))]
    dst = _pick(rng, len(levels) - 1)
    return src, dst + (dst >= src)


class BaseMutation(abc.ABC):
    """Changes one genome; the result may need repair."""

    @abc.abstractmethod
    def mutate(self, genome: list[int], space: SearchSpace, rng: np.random.Generator) -> list[int]:
        """A mutated copy of ``genome`` (unchanged when no move applies)."""


class FactorizationMutation(BaseMutation):
    """Move a random divisor ``a > 1`` of one level of a loop to another level of it.

    The product of the loop's levels is kept, so every factor stays a divisor of
    what it was derived from: the paper's factorization-based mutation (Figure 4,
    ``k.2 / 2``, ``k.1 * 2``).
    """

    def mutate(self, genome: list[int], space: SearchSpace, rng: np.random.Generator) -> list[int]:
        ch = space.chains[_pick(rng, len(space.chains))]
        levels = space.levels(genome, ch)
        pair = _two_levels(levels, rng)
        if pair is None:
            return list(genome)
        src, dst = pair
        divs = divisors(levels[src])[1:]  # without 1
        a = divs[_pick(rng, len(divs))]
        levels[src] //= a
        levels[dst] *= a
        return _with_levels(genome, space, ch, levels)


class RandomMutation(BaseMutation):
    """Set one level ``l1`` of a loop to ``s`` uniform in ``[1, l1]`` and another level
    ``l2`` to ``ceil(l1 * l2 / s)``: the product never shrinks, so the mutated point
    still covers the loop, and ``T_1`` may become a non-divisor of the extent (the
    paper's random mutation, Figure 4 right: ``j.2: 8 -> 6``, ``j.1: 4 -> 6``)."""

    def mutate(self, genome: list[int], space: SearchSpace, rng: np.random.Generator) -> list[int]:
        ch = space.chains[_pick(rng, len(space.chains))]
        levels = space.levels(genome, ch)
        pair = _two_levels(levels, rng)
        if pair is None:
            return list(genome)
        src, dst = pair
        l1, l2 = levels[src], levels[dst]
        s = 1 + _pick(rng, l1)
        levels[src] = s
        levels[dst] = -(-(l1 * l2) // s)
        return _with_levels(genome, space, ch, levels)


class HybridMutation(BaseMutation):
    """Factorization mutation with probability ``alpha``, random mutation otherwise.

    ``alpha=0.4`` is the paper's grid-searched default.
    """

    def __init__(
        self, alpha: float = 0.4, *, factorization: BaseMutation | None = None,
        random: BaseMutation | None = None,
    ) -> None:
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 <= alpha <= 1:
            raise TunerError(f"`alpha` must be a number in [0, 1], got {alpha!r}.")
        self.alpha = float(alpha)
        self.factorization = factorization or FactorizationMutation()
        self.random = random or RandomMutation()

    def mutate(self, genome: list[int], space: SearchSpace, rng: np.random.Generator) -> list[int]:
        op = self.factorization if rng.random() < self.alpha else self.random
        return op.mutate(genome, space, rng)

    def __repr__(self) -> str:
        return f"HybridMutation(alpha={self.alpha})"


class BaseCrossover(abc.ABC):
    """Combines two parents into one child."""

    @abc.abstractmethod
    def crossover(
        self, a: tuple[int, ...], b: tuple[int, ...], space: SearchSpace, rng: np.random.Generator
    ) -> list[int]:
        """A child genome of parents ``a`` and ``b``."""


class PerLoopCrossover(BaseCrossover):
    """Uniform crossover over loops: every factor derived from one original loop
    (``T_k1``, ``T_k2``) comes from the same parent, chosen with probability 1/2."""

    def crossover(
        self, a: tuple[int, ...], b: tuple[int, ...], space: SearchSpace, rng: np.random.Generator
    ) -> list[int]:
        child = list(a)
        coins = rng.random(len(space.loop_groups))
        for coin, cols in zip(coins, space.loop_groups, strict=True):
            if coin < 0.5:
                for c in cols:
                    child[c] = b[c]
        return child


def _with_levels(genome: list[int], space: SearchSpace, ch: Chain, levels: list[int]) -> list[int]:
    out = list(genome)
    space.apply_levels(out, ch, levels)
    return out
