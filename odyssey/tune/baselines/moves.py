"""The tiling graph: moves between neighbouring tilings, for G-BFS and N-A2C.

The G-BFS / N-A2C paper (seed 002) moves a factor of 2 from one tiling level of a
loop to another (``s[i] *= 2, s[j] /= 2``), so every state is a power-of-two
factorisation. Our tilings are richer (any integer outer factor, zero padding), so
the moves are generalised; on the levels ``[ceil(N/T_1), T_1/T_2, ..., T_m]`` of one
loop (:mod:`odyssey.tune.space`):

* ``shift``: move a prime factor ``p`` (2, 3, 5, 7 by default) from level ``src`` to
  level ``dst``. Leaving a level other than the tile count needs ``p`` to divide it;
  leaving the tile count multiplies the tile by ``p`` (non-divisor tiles appear, e.g.
  ``T_1 = 3 * 128 = 384``); entering the tile count divides the tile;
* ``step``: ``T_1 +/- 1``, the inner factors repaired to the nearest legal divisor.

A move that leaves the bounds, or does not change the tiling, does not apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from odyssey.tune.space import Genome, SearchSpace

PRIMES = (2, 3, 5, 7)


@dataclass(frozen=True, slots=True)
class Move:
    """One edge type of the tiling graph (see the module docstring)."""

    chain: int
    kind: Literal["shift", "step"]
    src: int = 0
    dst: int = 0
    factor: int = 1  # the prime moved by a shift; +1 or -1 for a step


def all_moves(space: SearchSpace, primes: Sequence[int] = PRIMES) -> tuple[Move, ...]:
    """Every move of ``space``, in a fixed order (chains, then shifts, then steps)."""
    out: list[Move] = []
    for c, ch in enumerate(space.chains):
        n_levels = len(ch.columns) + 1
        for src in range(n_levels):
            for dst in range(n_levels):
                if src != dst:
                    out.extend(Move(c, "shift", src, dst, p) for p in primes)
        out.extend((Move(c, "step", factor=1), Move(c, "step", factor=-1)))
    return tuple(out)


def apply_move(space: SearchSpace, genome: Sequence[int], move: Move) -> Genome | None:
    """The legal tiling ``move`` leads to from ``genome``, or None if it does not apply."""
    ch = space.chains[move.chain]
    g = [int(v) for v in genome]
    if move.kind == "step":
        root = ch.columns[0]
        value = g[root] + move.factor
        if not space.lower[root] <= value <= space.upper[root]:
            return None
        g[root] = value
        out = space.repair_genome(g)
    else:
        levels = space.levels(g, ch)
        p = move.factor
        if move.src != 0:
            if levels[move.src] % p:
                return None
            levels[move.src] //= p
        if move.dst != 0:  # entering the tile count needs nothing: the tile shrank above
            levels[move.dst] *= p
        space.apply_levels(g, ch, levels)
        out = tuple(g)
        if not space.is_legal(out):
            return None
    return None if out == tuple(int(v) for v in genome) else out


def neighbours(
    space: SearchSpace, genome: Sequence[int], moves: Sequence[Move]
) -> list[Genome]:
    """The distinct tilings one move away from ``genome`` (in the order of ``moves``)."""
    seen: set[Genome] = set()
    out: list[Genome] = []
    for m in moves:
        g = apply_move(space, genome, m)
        if g is not None and g not in seen:
            seen.add(g)
            out.append(g)
    return out
