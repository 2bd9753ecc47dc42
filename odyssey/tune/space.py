"""The search space of a design: its tuning parameters, legal sampling and repair.

A *genome* is a tuple of integers, one per tuning parameter in the model's order
(:attr:`SearchSpace.names`). The parameters form *chains* by their ``divides``
links: a root (``T_i1``, level ``array_part``, any integer in ``[lower, upper]``,
non-divisors of the problem size allowed, the loop is zero-padded) followed by
factors that divide their enclosing factor (``T_i2 | T_i1``, latency hiding or
SIMD). A point is *legal* when every value is within its bounds and every
divisibility holds; legality says nothing about resources.

The *levels* of a chain ``(T_1, T_2, ..., T_m)`` over a loop of extent ``N`` are
the loop bounds after tiling (the paper's Figure 4)::

    [ceil(N / T_1), T_1 / T_2, ..., T_{m-1} / T_m, T_m]

Their product is ``>= N`` (equal when ``T_1 | N``); mutations act on levels.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import ParamSpec
from odyssey.tune.divisibility import SWEEP_LIMIT, divisors

Genome = tuple[int, ...]

#: (column, value) pairs whose legal divisors a space remembers
_LEGAL_DIVS_KEPT = 1 << 16

__all__ = ["Chain", "Genome", "SearchSpace", "divisors"]


@dataclass(frozen=True, slots=True)
class Chain:
    """The parameters tiling one loop, outermost first, as genome column indices.

    ``extent`` is the upper bound of the outermost factor (the loop's trip count).
    """

    loop: str
    extent: int
    columns: tuple[int, ...]


class SearchSpace:
    """Legal tilings of a design, built from its :class:`ParamSpec` tuple.

    Raises TunerError when the parameters do not form chains (a ``divides``
    naming an unknown parameter, a cycle, or two factors dividing the same one).
    """

    def __init__(self, params: Sequence[ParamSpec]) -> None:
        if not params:
            raise TunerError("the design has no tuning parameters; there is nothing to tune")
        self.params: tuple[ParamSpec, ...] = tuple(params)
        self.names: tuple[str, ...] = tuple(p.name for p in self.params)
        if len(set(self.names)) != len(self.names):
            raise TunerError(f"duplicate tuning parameter names in {list(self.names)}")
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.lower = tuple(int(p.lower) for p in self.params)
        self.upper = tuple(int(p.upper) for p in self.params)
        for p in self.params:
            if not 1 <= p.lower <= p.upper:
                raise TunerError(
                    f"tuning parameter {p.name} has bounds [{p.lower}, {p.upper}]; "
                    "they must satisfy 1 <= lower <= upper"
                )
            if p.divides is not None and p.divides not in self.index:
                raise TunerError(f"tuning parameter {p.name} divides unknown parameter {p.divides}")
        self.parent: tuple[int | None, ...] = tuple(
            None if p.divides is None else self.index[p.divides] for p in self.params
        )
        self.chains: tuple[Chain, ...] = self._chains()
        self.chain_of: tuple[int, ...] = self._chain_of()
        self.order: tuple[int, ...] = tuple(c for ch in self.chains for c in ch.columns)
        groups: dict[str, list[int]] = {}
        for ch in self.chains:
            groups.setdefault(ch.loop, []).extend(ch.columns)
        #: genome columns grouped by the original loop they tile (crossover exchanges groups)
        self.loop_groups: tuple[tuple[int, ...], ...] = tuple(tuple(g) for g in groups.values())
        self._legal_divs: dict[tuple[int, int], tuple[int, ...]] = {}

    def _chains(self) -> tuple[Chain, ...]:
        child: dict[int, int] = {}
        for i, par in enumerate(self.parent):
            if par is None:
                continue
            if par in child:
                a, b = self.names[child[par]], self.names[i]
                raise TunerError(
                    f"tuning parameters {a} and {b} both divide {self.names[par]}; "
                    "each factor may enclose at most one other"
                )
            child[par] = i
        chains: list[Chain] = []
        seen: set[int] = set()
        for root, par in enumerate(self.parent):
            if par is not None:
                continue
            cols = [root]
            while cols[-1] in child:
                cols.append(child[cols[-1]])
            seen.update(cols)
            p = self.params[root]
            chains.append(Chain(p.loop, p.upper, tuple(cols)))
        if len(seen) != len(self.names):
            lost = [self.names[i] for i in range(len(self.names)) if i not in seen]
            raise TunerError(f"tuning parameters {lost} form a divisibility cycle")
        return tuple(chains)

    def _chain_of(self) -> tuple[int, ...]:
        out = [0] * len(self.names)
        for k, ch in enumerate(self.chains):
            for c in ch.columns:
                out[c] = k
        return tuple(out)

    @property
    def dim(self) -> int:
        return len(self.names)

    # ------------------------------------------------------------------ legality

    def legal_divisors(self, col: int, parent_value: int) -> tuple[int, ...]:
        """Values column ``col`` may take under an enclosing factor ``parent_value``: by
        trial division over the column's range when it is short (a SIMD factor of at most
        32 under a factor of 2**60), else from the factorization of ``parent_value``.
        Remembered for the last ``_LEGAL_DIVS_KEPT`` pairs (a search at a large size asks
        about millions of distinct values)."""
        key = (col, parent_value)
        got = self._legal_divs.get(key)
        if got is None:
            lo, hi = self.lower[col], min(self.upper[col], parent_value)
            if hi - lo < SWEEP_LIMIT:
                cand = np.arange(lo, hi + 1, dtype=np.int64)
                got = tuple(int(d) for d in cand[parent_value % cand == 0])
            else:
                got = tuple(d for d in divisors(parent_value) if lo <= d <= hi)
            if len(self._legal_divs) >= _LEGAL_DIVS_KEPT:
                self._legal_divs.clear()
            self._legal_divs[key] = got
        return got

    def is_legal(self, genome: Sequence[int]) -> bool:
        """Bounds and divisibility hold for every parameter."""
        for i, v in enumerate(genome):
            if not self.lower[i] <= v <= self.upper[i]:
                return False
            par = self.parent[i]
            if par is not None and genome[par] % v != 0:
                return False
        return True

    # ------------------------------------------------------------------ sampling

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` legal genomes as an ``(n, dim)`` int64 array.

        Roots are uniform in ``[lower, upper]`` (non-divisors of the extent
        included), log-uniform when the range holds more than ``SWEEP_LIMIT`` values
        (at 2**40 a uniform root is almost never within the resource budget); every
        other factor is a uniformly chosen legal divisor of its enclosing factor. A
        root value with no legal divisor for its child is drawn again.
        """
        out = np.empty((n, self.dim), dtype=np.int64)
        if n == 0:
            return out
        u = rng.random((n, self.dim))
        for ch in self.chains:
            root = ch.columns[0]
            vals = self._roots(rng, root, n)
            for r in range(n):
                out[r, root] = self._sample_chain(ch, int(vals[r]), out[r], u[r], rng)
        return out

    def _roots(self, rng: np.random.Generator, root: int, n: int) -> np.ndarray:
        """``n`` values of root column ``root``: see :meth:`sample`."""
        lo, hi = self.lower[root], self.upper[root]
        if hi - lo < SWEEP_LIMIT:
            return rng.integers(lo, hi + 1, size=n)
        u = rng.uniform(np.log(lo), np.log(hi + 1.0), size=n)
        return np.clip(np.floor(np.exp(u)), lo, hi).astype(np.int64)

    def _sample_chain(
        self, ch: Chain, root_value: int, row: np.ndarray, u: np.ndarray, rng: np.random.Generator
    ) -> int:
        root = ch.columns[0]
        for _ in range(1000):
            value = root_value
            ok = True
            for col in ch.columns[1:]:
                divs = self.legal_divisors(col, value)
                if not divs:
                    ok = False
                    break
                value = divs[min(int(u[col] * len(divs)), len(divs) - 1)]
                row[col] = value
            if ok:
                return root_value
            root_value = int(self._roots(rng, root, 1)[0])
            u = rng.random(self.dim)
        raise TunerError(
            f"no legal values found for the factors of loop {ch.loop}: check the bounds of "
            f"{[self.names[c] for c in ch.columns]}"
        )

    # ------------------------------------------------------------------ repair

    def repair_genome(self, genome: Sequence[int]) -> Genome:
        """The nearest legal genome: roots clipped to their bounds, every other factor
        moved to the legal divisor of its (repaired) enclosing factor closest to it
        (ties to the smaller). A root whose child has no legal divisor steps down
        until one exists."""
        g = [int(v) for v in genome]
        lower, upper = self.lower, self.upper
        for ch in self.chains:
            root = ch.columns[0]
            v = min(max(g[root], lower[root]), upper[root])
            target = [g[c] for c in ch.columns]
            while True:
                value, ok = v, True
                for k, col in enumerate(ch.columns[1:], 1):
                    want = target[k]
                    if lower[col] <= want <= upper[col] and value % want == 0:
                        value = g[col] = want  # already legal: the common case
                        continue
                    divs = self.legal_divisors(col, value)
                    if not divs:
                        ok = False
                        break
                    value = g[col] = _nearest(divs, want)
                if ok:
                    break
                if v <= lower[root]:
                    raise TunerError(
                        f"no legal values for the factors of loop {ch.loop} "
                        f"({[self.names[c] for c in ch.columns]})"
                    )
                v -= 1
            g[root] = v
        return tuple(g)

    def repair(self, tiling: Mapping[str, int]) -> dict[str, int]:
        """:meth:`repair_genome` on a tiling by name; every parameter must be present."""
        return self.to_point(self.repair_genome(self.genome(tiling)))

    # ------------------------------------------------------------------ levels

    def levels(self, genome: Sequence[int], ch: Chain) -> list[int]:
        """``[ceil(N/T_1), T_1/T_2, ..., T_m]`` of chain ``ch`` (see the module docstring)."""
        vals = [int(genome[c]) for c in ch.columns]
        out = [-(-ch.extent // vals[0])]
        for a, b in zip(vals, vals[1:], strict=False):
            out.append(a // b)
        out.append(vals[-1])
        return out

    def apply_levels(self, genome: list[int], ch: Chain, levels: Sequence[int]) -> None:
        """Write the factors implied by ``levels`` into ``genome`` (in place).

        ``T_m = levels[-1]`` and ``T_k = T_{k+1} * levels[k]``; the tile count
        ``levels[0]`` is implied by ``T_1`` and not stored. Values may exceed their
        bounds: :meth:`repair_genome` brings them back.
        """
        value = int(levels[-1])
        cols = ch.columns
        genome[cols[-1]] = value
        for k in range(len(cols) - 2, -1, -1):
            value *= int(levels[k + 1])
            genome[cols[k]] = value

    # ------------------------------------------------------------------ conversions

    def genome(self, tiling: Mapping[str, int]) -> Genome:
        missing = [n for n in self.names if n not in tiling]
        if missing:
            raise TunerError(f"tiling {dict(tiling)} lacks tuning parameters {missing}")
        return tuple(int(tiling[n]) for n in self.names)

    def to_point(self, genome: Sequence[int]) -> dict[str, int]:
        return {n: int(v) for n, v in zip(self.names, genome, strict=True)}

    def to_points(self, genomes: Iterable[Sequence[int]]) -> list[dict[str, int]]:
        names = self.names
        return [dict(zip(names, map(int, g), strict=True)) for g in genomes]

    def matrix(self, points: Sequence[Mapping[str, int]]) -> np.ndarray:
        """``(len(points), dim)`` int64 array of ``points`` in genome order."""
        names = self.names
        return np.array([[p[n] for n in names] for p in points], dtype=np.int64).reshape(
            len(points), self.dim
        )


def _nearest(sorted_values: tuple[int, ...], x: int) -> int:
    k = bisect_left(sorted_values, x)
    if k == 0:
        return sorted_values[0]
    if k == len(sorted_values):
        return sorted_values[-1]
    lo, hi = sorted_values[k - 1], sorted_values[k]
    return hi if hi - x < x - lo else lo
