"""Exhaustive search with pruning, the baseline of Odyssey section 5.2, as an ask/tell tuner.

Every legal tiling is visited exactly once. The legal space is the product of the
legal tuples of each loop's chain of factors (``T_i1`` with every legal divisor
``T_i2`` of it, ...); a tiling is an index ``k`` in ``[0, N)`` of that product in
mixed radix. The order of visit is, by default, a seeded pseudo-random permutation
of ``[0, N)`` (a 4-round Feistel network on the next even power of two, with cycle
walking), so an unfinished search has sampled the space uniformly *without
replacement*; ``order="lexicographic"`` visits the indices in order.

Pruning (the paper's rule): a tiling whose DSP use is below ``dsp_threshold`` of the
DSP budget (25%; the smallest of the 18 MM designs' optima uses 30%) is skipped, and
so is one above the budget (it cannot be feasible). The DSP expression is evaluated
on its own, vectorized, before anything is proposed; skipped tilings cost no samples.
The search has ``converged`` once every index was visited.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from odyssey.errors import TunerError
from odyssey.expr import compile_vectorized
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng, check_unit
from odyssey.tune.space import Chain, SearchSpace

DSP_THRESHOLD = 0.25
BATCH_SIZE = 1024
MAX_POINTS = 1 << 62
_ROUNDS = 4
_MULT = np.uint64(0x9E3779B97F4A7C15)


def chain_options(space: SearchSpace, ch: Chain) -> np.ndarray:
    """Every legal tuple of ``ch``'s factors, outermost first, as an ``(n, len)`` array."""
    rows: list[tuple[int, ...]] = []

    def extend(prefix: tuple[int, ...]) -> None:
        if len(prefix) == len(ch.columns):
            rows.append(prefix)
            return
        for d in space.legal_divisors(ch.columns[len(prefix)], prefix[-1]):
            extend((*prefix, d))

    root = ch.columns[0]
    for v in range(space.lower[root], space.upper[root] + 1):
        extend((v,))
    return np.array(rows, dtype=np.int64).reshape(len(rows), len(ch.columns))


class _Permutation:
    """A seeded bijection of ``[0, n)``: a balanced Feistel network on ``2*half`` bits,
    applied again while the image is ``>= n`` (cycle walking stays inside ``[0, n)``)."""

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        self.n = n
        self.half = max(1, (max(n - 1, 1).bit_length() + 1) // 2)
        self.mask = np.uint64((1 << self.half) - 1)
        self.keys = [np.uint64(k) for k in rng.integers(0, 1 << 62, size=_ROUNDS)]

    def _round(self, x: np.ndarray) -> np.ndarray:
        h = np.uint64(self.half)
        left, right = x >> h, x & self.mask
        for key in self.keys:
            f = ((right ^ key) * _MULT) >> np.uint64(64 - self.half) & self.mask
            left, right = right, left ^ f
        return (left << h) | right

    def __call__(self, k: np.ndarray) -> np.ndarray:
        y = self._round(k.astype(np.uint64))
        out_of_range = y >= np.uint64(self.n)
        while out_of_range.any():
            y[out_of_range] = self._round(y[out_of_range])
            out_of_range = y >= np.uint64(self.n)
        return y.astype(np.int64)


class ExhaustiveSearch(Tuner):
    """Every legal tiling once, with DSP pruning; see the module docstring.

    Options: ``dsp_threshold`` in ``[0, 1]`` (0.25), ``order`` (``"shuffled"``, the
    default, or ``"lexicographic"``), ``batch_size >= 1`` (1024). Raises TunerError for
    a space of more than 2**62 tilings.
    """

    name = "exhaustive"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        dsp_threshold: float = DSP_THRESHOLD,
        order: Literal["shuffled", "lexicographic"] = "shuffled",
        batch_size: int = BATCH_SIZE,
    ) -> None:
        self.rng = check_rng(rng)
        self.dsp_threshold = check_unit("dsp_threshold", dsp_threshold)
        if order not in ("shuffled", "lexicographic"):
            raise TunerError(f"`order` must be 'shuffled' or 'lexicographic', got {order!r}.")
        self.order = order
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.space = SearchSpace(model.params)
        self.options = [chain_options(self.space, ch) for ch in self.space.chains]
        self.size = math.prod(len(o) for o in self.options)
        if self.size > MAX_POINTS:
            raise TunerError(f"design {model.design_id} has {self.size:.3g} legal tilings; "
                             "exhaustive search handles at most 2**62")
        self._dsp = compile_vectorized({"dsp": model.exprs["dsp"]}, list(self.space.names))
        cap = float(model.budget["dsp"])
        self._dsp_range = (self.dsp_threshold * cap, cap)
        self._perm = _Permutation(self.size, self.rng) if order == "shuffled" else None
        self._next = 0  # indices below this were visited (proposed or pruned)
        self._ready = np.empty((0, self.space.dim), dtype=np.int64)
        self._seeds: list[tuple[int, ...]] = []
        self.pruned = 0

    def seed_points(self, points: Sequence[Point]) -> None:
        self._seeds.extend(self.space.repair_genome(self.space.genome(p)) for p in points)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        first, self._seeds = self._seeds[:n], self._seeds[n:]
        want = n - len(first)
        while len(self._ready) < want and self._next < self.size:
            self._ready = np.vstack([self._ready, self._scan(max(4 * want, 4096))])
        rest, self._ready = self._ready[:want], self._ready[want:]
        return self.space.to_points([*first, *rest.tolist()])

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        """Nothing to learn: the order of visit is fixed."""

    @property
    def converged(self) -> bool:
        return self._next >= self.size and not len(self._ready) and not self._seeds

    @property
    def visited_fraction(self) -> float:
        """Fraction of the legal space visited (proposed or pruned)."""
        return self._next / self.size

    def _scan(self, count: int) -> np.ndarray:
        """The unpruned tilings among the next ``count`` indices of the order."""
        stop = min(self.size, self._next + count)
        k = np.arange(self._next, stop, dtype=np.int64)
        self._next = stop
        idx = self._perm(k) if self._perm is not None else k
        genomes = np.empty((len(idx), self.space.dim), dtype=np.int64)
        for ch, opts in zip(self.space.chains, self.options, strict=True):
            genomes[:, list(ch.columns)] = opts[idx % len(opts)]
            idx = idx // len(opts)
        dsp = np.asarray(self._dsp({nm: genomes[:, c] for c, nm in enumerate(self.space.names)})
                         ["dsp"], dtype=np.float64)
        dsp = np.broadcast_to(dsp, (len(genomes),))
        keep = (dsp >= self._dsp_range[0]) & (dsp <= self._dsp_range[1])
        self.pruned += int((~keep).sum())
        return genomes[keep]
