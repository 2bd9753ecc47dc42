"""The provably best tiling of one design under its model: branch and bound over boxes.

Problem: minimise ``latency`` (cycles, so maximise throughput) over the legal tilings of a
:class:`~odyssey.model.DesignModel` (each parameter in ``[lower, upper]``, level-two
parameters dividing their parent) subject to ``dsp``, ``bram18k`` and ``uram`` within the
platform's usable budget. Nothing here is specific to a kernel: the search reads only the
parameter table and the model's expressions, so it serves MM, CNN and any other design.

Method.

* Coordinates (:mod:`.optimum_rewrite`): a box ranges over the tile sizes, the ratios
  ``T_p/T_c`` that set the PE counts, and the SIMD factors; the model is rewritten with
  identities that hold at legal tilings so each quantity appears once where possible.
* Boxes (:mod:`.optimum_boxes`): every coordinate takes an arithmetic progression
  ``lo, lo+m, ..., hi``. A box is
  first *tightened* with the divisibility constraints (a child is at most its parent; a
  fixed child ``v`` makes its parent a multiple of ``v``; a parent with at most four
  values makes its child one of their divisors), which also detects boxes with no legal
  tiling, then *cut* to a resource budget that is one monomial of the coordinates (the DSP
  model ``#PE * SIMD * cost``, :mod:`.optimum_budget`: a coordinate is at most what the
  budget leaves at the others' smallest values), then *bounded* (:mod:`.optimum_bounds`:
  sound interval and congruence arithmetic on the latency and resource expressions, the
  latency's ``1/(#PE * SIMD)`` taken within the DSP budget).
* Branching, best first by latency bound: a box where an equality on a residue (the
  packing lanes, ``T mod 16 == 0``) is undecided is split into residue classes
  (``T = r (mod m)`` into classes mod ``2m``); any other box in two along the
  coordinate whose halves have the best bounds (*strong branching*: all are tried, after
  the first 2,000 splits the 4 that gave the best split most often), cut at the
  tile-count boundary (where some ``ceil(N/T)`` changes) nearest to the geometric mean
  of the range, or at that mean. A trial that prunes one of its halves also cuts the
  box: the children keep only their part outside every pruned half.
* A child is dropped when it holds no legal tiling, when a resource's lower bound
  exceeds the budget (or the cut leaves none of its legal tilings), or when its latency
  bound is at least the incumbent's latency;
  enumerated (every legal tiling, vectorized, evaluated exactly) when it holds at most
  ``leaf_points`` points; kept otherwise.
* Incumbent: a few random legal tilings, then *dives* (a beam of the 64 lowest-bound
  boxes followed down to the leaves) at rounds 1, 2, 4, 8, ... of the best-first loop.

When no box is left the incumbent is optimal: every legal tiling lies in a box that was
enumerated, or whose bounds show it holds nothing feasible and faster. With a time limit,
the smallest bound of the open boxes is a proven lower bound on the optimum (the latency of
every tiling within the budget).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import RESOURCES, DesignModel
from odyssey.tune.base import PROGRESS_INTERVAL_S
from odyssey.tune.divisibility import sweep_values
from odyssey.tune.exact.optimum_bounds import IntervalProgram
from odyssey.tune.exact.optimum_boxes import (
    _Boxes,
    _divisor_table,
    _down,
    _enumerate,
    _random_points,
    _Space,
    _split_congruence,
    _split_range,
    _tighten,
    _up,
)
from odyssey.tune.exact.optimum_budget import model_budgets, per_unit
from odyssey.tune.exact.optimum_reach import Reach
from odyssey.tune.exact.optimum_result import OptimumProgress, OptimumResult, Status

_OBJECTIVES = ("latency", *RESOURCES)
#: the steps of a search: it yields parameter rows (legal tilings) to evaluate and is sent
#: back their exact latencies (infinite when over budget), or yields ``None`` where its
#: driver may pause it (and is sent ``None``)
Steps = Generator[np.ndarray | None, Any, None]
_ENUM_CHUNK = 400_000  # points per exact evaluation call
#: boxes split per step of find_optimum's best-first loop, at least (the chunks of the
#: lowest bounds, merged): strong branching bounds ~10x as many children in one batch
_EXPAND_AT_LEAST = 1024
_BEAM = 64  # boxes followed by a dive
#: strong branching: after ``_WARMUP`` splits, only the ``_TRIALS`` coordinates that gave the
#: best split most often so far (among those a box can split) are tried
_TRIALS = 4
_WARMUP = 2000
_WINDOW = 6  # polish: values either side of the incumbent's in a pair sweep
_POLISH_PASSES = 8
_ELITE = 24  # polish: starts


# -------------------------------------------------------------------- search


@dataclass(frozen=True, slots=True)
class _Assessed:
    boxes: _Boxes  # tightened
    empty: np.ndarray  # no legal tiling
    over: np.ndarray  # a resource's lower bound exceeds the budget
    lb: np.ndarray  # latency lower bound (inf for empty boxes)
    undecided: np.ndarray
    reach: np.ndarray  # (n, caps): per cap, a bound on its monomial at the box's tilings within it

    def take(self, idx: np.ndarray) -> _Assessed:
        return _Assessed(self.boxes.take(idx), self.empty[idx], self.over[idx], self.lb[idx],
                         self.undecided[idx], self.reach[idx])

    @staticmethod
    def concat(parts: Sequence[_Assessed]) -> _Assessed:
        return _Assessed(_Boxes.concat([p.boxes for p in parts], parts[0].boxes.lo.shape[1]),
                         np.concatenate([p.empty for p in parts]), np.concatenate([p.over for p in parts]),
                         np.concatenate([p.lb for p in parts]),
                         np.concatenate([p.undecided for p in parts]),
                         np.concatenate([p.reach for p in parts]))


@dataclass(frozen=True, slots=True)
class _Chunk:
    boxes: _Boxes
    lb: np.ndarray
    cdim: np.ndarray  # parameter to split by congruence (-1: split by range)
    cfactor: np.ndarray
    reach: np.ndarray  # as _Assessed.reach: its children's are at most these

    def take(self, idx: np.ndarray) -> _Chunk:
        return _Chunk(self.boxes.take(idx), self.lb[idx], self.cdim[idx], self.cfactor[idx], self.reach[idx])

    @staticmethod
    def concat(parts: Sequence[_Chunk]) -> _Chunk:
        return _Chunk(_Boxes.concat([p.boxes for p in parts], parts[0].boxes.lo.shape[1]),
                      np.concatenate([p.lb for p in parts]), np.concatenate([p.cdim for p in parts]),
                      np.concatenate([p.cfactor for p in parts]), np.concatenate([p.reach for p in parts]))


class BranchAndBound:
    """State of one branch-and-bound run over a design's tilings.

    :func:`find_optimum` drives it with exact evaluation; :mod:`odyssey.tune.search.bound_search`
    drives it from a tuner's ask/tell loop. ``best``/``best_lat`` is the incumbent (rows in
    the order of ``space.names``), ``points`` the tilings it had evaluated."""

    def __init__(self, model: DesignModel, *, leaf_points: int, batch: int, seed: int,
                 polish: bool = False, expand_at_least: int = 0) -> None:
        self.polish_incumbent = polish
        #: when set (``time.perf_counter()`` seconds), seeding and polishing stop there too
        self.deadline: float | None = None
        #: a proven lower bound on the optimal latency so far: the lowest bound of the open
        #: boxes (or the incumbent) when :meth:`run` last took one; valid from then on
        self.proven_lower = 0.0
        self.expand_at_least = expand_at_least
        self.elite = np.zeros((0, len(model.params)), dtype=np.int64)
        self.elite_lat = np.zeros(0)
        self.polished: set[tuple[int, ...]] = set()
        self.bound_evaluations = 0
        self.wins = np.zeros(len(model.params), dtype=np.int64)
        self.model = model
        self.space = _Space.of(model)
        exprs = {k: model.exprs[k] for k in _OBJECTIVES}
        coords = self.space.coords
        rewritten, integral = coords.rewrite(exprs)
        self.budgets = model_budgets(model, coords, rewritten)
        self.bounds = IntervalProgram(rewritten, coords.dims, integral=integral, caps=self.budgets,
                                      children=self.space.children())
        self.bounds.compute_breakpoints(self.space.lower.tolist(), self.space.upper.tolist())
        self.reach = [Reach(cap, self.space) for cap in self.bounds.caps]
        # per cap, the interval program of its resource per unit of its monomial, whose lower
        # bound in a box caps the monomial there (optimum_budget.per_unit)
        self.per_unit: list[tuple[int, IntervalProgram]] = []
        for c, cap in enumerate(self.bounds.caps):
            ratio = per_unit(rewritten[cap.resource], cap, coords.dims) if cap.resource in rewritten else None
            if ratio is not None:
                prog = IntervalProgram({"ratio": ratio}, coords.dims, integral=integral,
                                       children=self.space.children())
                prog.compute_breakpoints(self.space.lower.tolist(), self.space.upper.tolist())
                self.per_unit.append((c, prog))
        # the coordinates whose split may lower a box's reach: the caps' and their parents
        self.reach_dims = frozenset(d for cap in self.bounds.caps for d, _ in cap.powers) | frozenset(
            coords.parent[d] for cap in self.bounds.caps for d, _ in cap.powers if coords.parent[d] >= 0)
        # the model's own evaluator (its outputs include _OBJECTIVES; its parameters are
        # ``space.names``, in their order): one compilation serves the tuner and this search
        self.exact: Callable[[Mapping[str, Any]], dict[str, np.ndarray]] = model.core
        self.budget = np.array([model.budget[r] for r in RESOURCES], dtype=np.float64)
        self.leaf_points = leaf_points
        self.batch = batch
        self.rng = np.random.default_rng(seed)
        self.best_lat = math.inf
        self.best: np.ndarray | None = None
        self.points = 0
        self.explored = self.pruned_bound = self.pruned_res = self.empty = self.enumerated = 0
        top = max([int(self.space.param_upper[p]) for _, p in self.space.pairs], default=1)
        self.divs = _divisor_table(min(top, 1 << 16))

    # exact evaluation --------------------------------------------------------

    def exact_latency(self, pts: np.ndarray) -> np.ndarray:
        """Exact latency of legal tilings (parameter rows); infinite where over budget."""
        out = self.exact({n: pts[:, i] for i, n in enumerate(self.space.names)})
        lat = np.asarray(out["latency"], dtype=np.float64)
        feas = np.isfinite(lat)
        for r, cap in zip(RESOURCES, self.budget, strict=True):
            feas &= np.asarray(out[r], dtype=np.float64) <= cap
        return np.where(feas, lat, np.inf)

    def offer(self, pts: np.ndarray, lat: np.ndarray) -> None:
        """Update the incumbent with evaluated tilings (rows) and their latencies (infinite
        when over budget): from this search, or any other that evaluated them exactly."""
        if len(pts):
            k = int(np.argmin(lat))
            if lat[k] < self.best_lat:
                self.best_lat, self.best = float(lat[k]), np.array(pts[k], dtype=np.int64)
            if self.polish_incumbent:  # the best few, where the local search starts
                top = np.argsort(lat, kind="stable")[:_ELITE]
                rows = np.concatenate([self.elite, np.asarray(pts, dtype=np.int64)[top]])
                lats = np.concatenate([self.elite_lat, np.asarray(lat, dtype=np.float64)[top]])
                rows, first = np.unique(rows, axis=0, return_index=True)
                order = np.argsort(lats[first], kind="stable")[:_ELITE]
                self.elite, self.elite_lat = rows[order], lats[first][order]

    def evaluate(self, pts: np.ndarray) -> Steps:
        """Have legal tilings (parameter rows) evaluated exactly, by whoever drives the
        search (see :data:`Steps`), and update the incumbent."""
        for start in range(0, len(pts), _ENUM_CHUNK):
            chunk = pts[start:start + _ENUM_CHUNK]
            lat = yield chunk
            self.points += len(chunk)
            self.offer(chunk, np.asarray(lat, dtype=np.float64))

    def seed_incumbent(self, samples: int) -> Steps:
        """A first incumbent from random legal tilings (the dives of :meth:`run` soon find
        better ones; this only guarantees one early)."""
        if samples:
            yield from self.evaluate(_random_points(self.space, self.divs, self.rng, samples))

    def polish(self) -> Steps:
        """Local search (when enabled) from each of the ``_ELITE`` best tilings evaluated so
        far not yet searched from: sweep each coordinate over its whole range, and each pair
        of coordinates over ``_WINDOW`` values either side, the others fixed; move to the
        best tiling found; repeat until a round finds nothing better. A better incumbent
        early prunes the boxes whose bound lies between it and the incumbents the dives find
        (the optimum sits on a plateau of near-equal tilings at the DSP budget)."""
        if not self.polish_incumbent:
            return
        coords = self.space.coords
        for row, lat in zip(self.elite, self.elite_lat, strict=True):
            key = tuple(int(v) for v in row)
            if key in self.polished or not np.isfinite(lat):
                continue
            self.polished.add(key)
            point, value = coords.to_coords(row[None, :])[0], float(lat)
            for _ in range(_POLISH_PASSES):
                if self._late():
                    return
                cand = self._neighbours(point)
                lats = yield from self._ask(coords.to_params(cand))
                if not len(lats) or not lats.min() < value:
                    break
                k = int(np.argmin(lats))
                point, value = cand[k], float(lats[k])
                self.polished.add(tuple(int(v) for v in coords.to_params(cand[k:k + 1])[0]))

    def _neighbours(self, point: np.ndarray) -> np.ndarray:
        """The legal coordinate rows one sweep away from ``point`` (see :meth:`polish`)."""
        space = self.space
        rows = []
        for d in range(len(space.names)):
            vals = sweep_values(int(space.lower[d]), int(space.upper[d]), around=int(point[d]))
            cand = np.repeat(point[None, :], len(vals), axis=0)
            cand[:, d] = vals
            rows.append(cand)
        for d, e in itertools.combinations(range(len(space.names)), 2):
            a = np.arange(max(space.lower[d], point[d] - _WINDOW), min(space.upper[d], point[d] + _WINDOW) + 1)
            b = np.arange(max(space.lower[e], point[e] - _WINDOW), min(space.upper[e], point[e] + _WINDOW) + 1)
            cand = np.repeat(point[None, :], len(a) * len(b), axis=0)
            cand[:, d] = np.repeat(a, len(b))
            cand[:, e] = np.tile(b, len(a))
            rows.append(cand)
        cand = _unique_rows(np.concatenate(rows), space.upper)
        return cand[space.legal(cand)]

    def _late(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def _ask(self, pts: np.ndarray) -> Generator[np.ndarray | None, Any, np.ndarray]:
        """Like :meth:`evaluate`, returning the latencies (of the first rows only, when the
        deadline passes before the last chunk)."""
        out: list[np.ndarray] = []
        for start in range(0, len(pts), _ENUM_CHUNK):
            if out and self._late():
                break
            chunk = pts[start:start + _ENUM_CHUNK]
            lat = np.asarray((yield chunk), dtype=np.float64)
            self.points += len(chunk)
            self.offer(chunk, lat)
            out.append(lat)
        return np.concatenate(out) if out else np.zeros(0)

    # bounding ----------------------------------------------------------------

    def assess(self, boxes: _Boxes, inherited: np.ndarray | None = None,
               fresh: np.ndarray | None = None) -> _Assessed:
        """Tighten, cut to the monomial budgets and bound boxes (no bookkeeping but the count
        of bound evaluations). A box the cut leaves without a legal tiling is over budget.

        The latency's ``1/(#PE * SIMD)`` is taken at most at the box's :class:`Reach` of each
        cap: computed (for the boxes ``fresh`` says, default all) and within ``inherited``
        (``(n, caps)``, the reach of the boxes' parents: a part of a box reaches no more than
        the box)."""
        boxes, ok = _tighten(boxes, self.space)
        n = len(boxes)
        caps = self.bounds.caps
        limit = np.full((n, len(caps)), np.inf) if inherited is None else inherited.copy()
        lb = np.full(n, np.inf)
        over = np.zeros(n, dtype=bool)
        if self.budgets:  # cut off the tilings over a monomial budget, then tighten again
            lo, hi = boxes.lo, boxes.hi
            for cap in self.budgets:
                lo, hi = cap.cut(lo, hi, boxes.mod)
            cut, fits = _tighten(_Boxes(lo, hi, boxes.mod), self.space)
            over = ok & ~fits  # every legal tiling there is over budget
            boxes = cut
            ok = fits
        undecided = np.zeros((n, len(self.bounds.mod_sites)), dtype=bool)
        idx = np.nonzero(ok)[0]
        if len(idx):
            self.bound_evaluations += len(idx)
            inner = boxes.take(idx)
            new = np.arange(len(idx)) if fresh is None else np.nonzero(fresh[idx])[0]
            if len(new):
                part = inner.take(new)
                for c, of in enumerate(self.reach):
                    limit[idx[new], c] = np.minimum(limit[idx[new], c], of(part))
                for c, prog in self.per_unit:  # P <= cap / min(resource / P)
                    low = prog(part.lo, part.hi, part.mod).lo["ratio"]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        top = np.where(low > 0, caps[c].cap / low * (1 + 1e-9), np.inf)
                    limit[idx[new], c] = np.minimum(limit[idx[new], c], top)
            # no legal tiling of the box reaches a product within the cap
            over[idx] |= (limit[idx] <= 0).any(axis=1)
            bb = self.bounds(inner.lo, inner.hi, inner.mod, [limit[idx, c] for c in range(len(caps))])
            lb[idx] = bb.lo["latency"]
            for r, cap in zip(RESOURCES, self.budget, strict=True):
                over[idx] |= bb.lo[r] > cap
            undecided[idx] = bb.undecided
        return _Assessed(boxes, ~ok & ~over, over, lb, undecided, limit)

    def classify(self, a: _Assessed) -> Generator[np.ndarray | None, Any, _Chunk | None]:
        """Count assessed boxes as pruned, enumerate the small ones, return the rest."""
        boxes, lb = a.boxes, a.lb
        self.explored += len(boxes)
        self.empty += int(a.empty.sum())
        over = a.over & ~a.empty
        self.pruned_res += int(over.sum())
        alive = ~a.empty & ~over
        dominated = alive & (lb >= self.best_lat)
        self.pruned_bound += int(dominated.sum())
        alive &= ~dominated
        leaf = alive & (boxes.sizes <= self.leaf_points)
        if leaf.any():
            self.enumerated += int(leaf.sum())
            leaves = boxes.take(leaf)
            ends = np.cumsum(leaves.sizes)
            start = 0
            while start < len(leaves):  # a few hundred thousand points per evaluation
                stop = max(int(np.searchsorted(ends, ends[start] - leaves.sizes[start] + _ENUM_CHUNK)), start + 1)
                pts = _enumerate(leaves.take(np.arange(start, stop)), self.space)
                yield from self.evaluate(self.space.coords.to_params(pts))
                start = stop
        keep = alive & ~leaf
        cdim, cfactor = self._congruence_choice(boxes, a.undecided)
        return _Chunk(boxes.take(keep), lb[keep], cdim[keep], cfactor[keep], a.reach[keep])

    def _congruence_choice(self, boxes: _Boxes, undecided: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For boxes where a residue equality is undecided: the parameter whose residue
        class to refine, and into how many classes."""
        n = len(boxes)
        cdim = np.full(n, -1, dtype=np.int64)
        factor = np.zeros(n, dtype=np.int64)
        for s, site in enumerate(self.bounds.mod_sites):
            need = undecided[:, s] & (cdim < 0)
            if not need.any():
                continue
            two = site.modulus & (site.modulus - 1) == 0
            for d in site.dims:
                m = boxes.mod[:, d]
                q = site.modulus // np.gcd(m, site.modulus)
                pick = need & (q > 1) & (boxes.lo[:, d] < boxes.hi[:, d])
                if two:  # a class with a known 2-adic valuation (r != 0 mod 2^a) is decided
                    pick &= np.remainder(boxes.lo[:, d], m) == 0
                cdim[pick] = d
                factor[pick] = _smallest_prime_factor(q[pick])
                need &= ~pick
        return cdim, factor

    def expand(self, chunk: _Chunk) -> Generator[np.ndarray | None, Any, _Chunk | None]:
        """Split every box of the chunk and classify the children."""
        dims = len(self.space.names)
        cong = chunk.cdim >= 0
        pieces = _Boxes.concat(_split_congruence(chunk.boxes.take(cong), chunk.cdim[cong], chunk.cfactor[cong])
                               if cong.any() else [], dims)
        rest = ~cong
        if not rest.any():
            return (yield from self.classify(self.assess(pieces)))
        # the residue classes are bounded with the trial halves: one evaluation of the tape
        split, classes = self._strong_split(chunk.boxes.take(rest), chunk.reach[rest], pieces)
        return (yield from self.classify(_Assessed.concat([classes, split])))

    def _strong_split(self, boxes: _Boxes, reached: np.ndarray, extra: _Boxes) -> tuple[_Assessed, _Assessed]:
        """Split each box in two along the parameter whose halves have the highest bounds
        (*strong branching*): every parameter with two values or more is tried (after the
        first ``_WARMUP`` splits, the ``_TRIALS`` that won most often so far), and the
        split whose weaker half has the larger latency bound wins, a half pruned by any rule
        counting as infinite (ties: the stronger half).

        Every other trial that pruned one half and kept the other also cuts the box: the
        pruned half holds no legal tiling within the budget faster than the incumbent, so
        the two children are taken within the box less every pruned half (a box again: on
        each parameter, the kept half), and bounded again when that removed anything.

        ``extra`` boxes are bounded in the same evaluation and returned second."""
        n, dims = len(boxes), len(self.space.names)
        counts = boxes.counts
        if self.wins.sum() >= _WARMUP and dims > _TRIALS:  # the coordinates that won most often
            rank = np.argsort(-self.wins, kind="stable")
            avail = counts[:, rank] > 1
            take = np.cumsum(avail, axis=1) <= _TRIALS
            mask = np.zeros_like(avail)
            mask[:, rank] = avail & take
            counts = np.where(mask, counts, 1)
        cands = []
        inherited, fresh = [], []  # the boxes' reach; whether a trial's halves need their own
        left_at = np.zeros((dims, n), dtype=np.int64)  # where each trial's halves are in cands
        right_at = np.zeros((dims, n), dtype=np.int64)
        left_hi = np.zeros((dims, n), dtype=np.int64)  # the last value of each trial's left half
        start = 0
        for d in range(dims):
            rows = np.nonzero(counts[:, d] > 1)[0]
            left, right = _split_range(boxes.take(rows), np.full(len(rows), d), self.bounds.breakpoints)
            cands += [left, right]
            inherited += [reached[rows], reached[rows]]
            fresh.append(np.full(2 * len(rows), d in self.reach_dims))
            left_at[d, rows] = start + np.arange(len(rows))
            right_at[d, rows] = start + len(rows) + np.arange(len(rows))
            left_hi[d, rows] = left.hi[:, d]
            start += 2 * len(rows)
        inherited.append(np.full((len(extra), reached.shape[1]), np.inf))
        fresh.append(np.ones(len(extra), dtype=bool))
        every = self.assess(_Boxes.concat([*cands, extra], dims), np.concatenate(inherited), np.concatenate(fresh))
        a, classes = every.take(np.arange(start)), every.take(np.arange(start, start + len(extra)))
        dead = a.empty | a.over | (a.lb >= self.best_lat)
        eff = np.where(dead, np.inf, a.lb)
        weak = np.minimum(eff[left_at], eff[right_at])
        strong = np.maximum(eff[left_at], eff[right_at])
        tried = counts.T > 1
        score = np.where(tried, weak + 1e-6 * np.minimum(strong, 1e30), -np.inf)
        best = np.argmax(score, axis=0)
        self.wins += np.bincount(best, minlength=dims)
        rows = np.arange(n)
        chosen = a.take(np.concatenate([left_at[best, rows], right_at[best, rows]]))
        # the box less the pruned halves of the other trials
        drop_left = (tried & dead[left_at] & ~dead[right_at]).T  # (n, dims)
        drop_right = (tried & dead[right_at] & ~dead[left_at]).T
        drop_left[rows, best] = drop_right[rows, best] = False
        cut = (drop_left | drop_right).any(axis=1)
        if not cut.any():
            return chosen, classes
        lo = np.where(drop_left, left_hi.T + boxes.mod, boxes.lo)
        hi = np.where(drop_right, left_hi.T, boxes.hi)
        both = np.concatenate([cut, cut])
        kids = chosen.boxes.take(both)
        keep_lo, keep_hi = np.concatenate([lo, lo])[both], np.concatenate([hi, hi])[both]
        k_lo = _up(kids.lo, kids.mod, np.maximum(kids.lo, keep_lo))
        k_hi = _down(k_lo, kids.mod, np.minimum(kids.hi, keep_hi))
        # the children's bounds hold on their parts within the cut box: no new bounds here,
        # the smaller boxes are bounded when they are split in turn
        shrunk, ok = _tighten(_Boxes(k_lo, k_hi, kids.mod), self.space)
        old = chosen.take(np.nonzero(both)[0])
        redone = _Assessed(shrunk, old.empty | ~ok, old.over & ok, np.where(ok, old.lb, np.inf), old.undecided,
                           old.reach)
        return _Assessed.concat([chosen.take(np.nonzero(~both)[0]), redone]), classes

    # driver --------------------------------------------------------------------

    def run(self, deadline: float | None) -> Generator[np.ndarray | None, Any, float]:
        """Branch and bound until no box is left or the deadline; returns the proven lower
        bound on the optimal latency (the incumbent's latency when finished). Yields the
        tilings to evaluate (see :data:`Steps`) and ``None`` after every expansion, where
        a driver may pause the search."""
        space = self.space
        root = _Boxes(space.lower[None, :].copy(), space.upper[None, :].copy(),
                      np.ones((1, len(space.names)), dtype=np.int64))
        heap: list[tuple[float, int, _Chunk]] = []
        counter = itertools.count()

        def push(chunk: _Chunk | None) -> None:
            if chunk is None or len(chunk.lb) == 0:
                return
            order = np.argsort(chunk.lb, kind="stable")
            for s in range(0, len(order), self.batch):
                idx = order[s:s + self.batch]
                part = chunk.take(idx)
                heapq.heappush(heap, (float(part.lb[0]), next(counter), part))

        def dive(chunk: _Chunk) -> Generator[np.ndarray | None, Any, None]:
            """Beam search from the chunk's best boxes, keeping the ``_BEAM`` children with
            the lowest bounds at every level, down to the leaves: an early incumbent. Every
            other child goes to the heap."""
            order = np.argsort(chunk.lb, kind="stable")
            push(chunk.take(order[_BEAM:]))
            beam = chunk.take(order[:_BEAM])
            while len(beam.lb) and beam.lb.min() < self.best_lat:
                if deadline is not None and time.perf_counter() > deadline:
                    break
                out = yield from self.expand(beam)
                yield None
                if out is None or len(out.lb) == 0:
                    return
                order = np.argsort(out.lb, kind="stable")
                push(out.take(order[_BEAM:]))
                beam = out.take(order[:_BEAM])
            push(beam)

        push((yield from self.classify(self.assess(root))))
        rounds = 0
        while heap:
            self.proven_lower = max(self.proven_lower, min(self.best_lat, heap[0][0]))
            if heap[0][0] >= self.best_lat:
                break
            if deadline is not None and time.perf_counter() > deadline:
                # the interval bounds round outward and can dip below 0 (a subtraction at
                # 2^40 and more); no latency is negative, and the proven bound starts at 0
                return self.proven_lower
            _, _, chunk = heapq.heappop(heap)
            # with the next chunks, up to ``expand_at_least`` boxes: one bound evaluation
            # of many boxes costs much less per box than several of few
            parts = [chunk]
            while (heap and heap[0][0] < self.best_lat
                   and sum(len(c.lb) for c in parts) < self.expand_at_least):
                parts.append(heapq.heappop(heap)[2])
            chunk = _Chunk.concat(parts) if len(parts) > 1 else chunk
            live = chunk.lb < self.best_lat
            self.pruned_bound += int((~live).sum())
            chunk = chunk.take(live)
            if len(chunk.lb) == 0:
                continue
            rounds += 1
            if rounds & (rounds - 1) == 0:  # rounds 1, 2, 4, 8, ...
                yield from dive(chunk)
                yield from self.polish()
            else:
                push((yield from self.expand(chunk)))
                yield None
        self.pruned_bound += sum(len(c.lb) for _, _, c in heap)
        return self.best_lat


def _unique_rows(rows: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``np.unique(rows, axis=0)`` (the distinct rows, in lexicographic order) for rows of
    integers in ``[0, upper]`` per column: the columns packed into a few 62-bit keys and
    sorted by those, several times faster than numpy's sort of structured rows."""
    bits = [max(int(u), 1).bit_length() for u in upper]
    keys: list[np.ndarray] = []
    key, used = np.zeros(len(rows), dtype=np.int64), 0
    for d, b in enumerate(bits):
        if used + b > 62:
            keys.append(key)
            key, used = np.zeros(len(rows), dtype=np.int64), 0
        key = (key << b) | rows[:, d]
        used += b
    keys.append(key)
    order = np.lexsort(keys[::-1])  # the first key is the primary one
    stacked = np.stack([k[order] for k in keys], axis=1)
    first = np.ones(len(rows), dtype=bool)
    first[1:] = (stacked[1:] != stacked[:-1]).any(axis=1)
    return rows[order[first]]


_T = TypeVar("_T")


def drive(steps: Generator[np.ndarray | None, Any, _T], latency: Callable[[np.ndarray], np.ndarray],
          *, pause: Callable[[], None] | None = None) -> _T:
    """Run a search's steps to the end, answering each request with ``latency(rows)``;
    ``pause()``, when given, is called where the search pauses (it yields ``None``)."""
    try:
        request = next(steps)
        while True:
            if request is None and pause is not None:
                pause()
            request = steps.send(None if request is None else latency(request))
    except StopIteration as stop:
        return stop.value


def _smallest_prime_factor(q: np.ndarray) -> np.ndarray:
    out = q.copy()
    for p in (2, 3, 5, 7, 11, 13):
        hit = (np.remainder(q, p) == 0) & (out == q)
        out[hit] = p
    return out


def find_optimum(
    model: DesignModel, *, time_limit_s: float | None = None, seed: int = 0,
    leaf_points: int = 512, batch: int = 4096, seed_samples: int = 2_000,
    interruptible: bool = False, progress: Callable[[OptimumProgress], None] | None = None,
) -> OptimumResult:
    """The tiling of ``model`` with the lowest latency among those within the resource
    budget, with a proof of optimality (see the module docstring), or the best found and
    the remaining gap when ``time_limit_s`` runs out. ``seed`` drives the random seeding
    of the incumbent only: the optimum's latency does not depend on it. With
    ``interruptible``, a KeyboardInterrupt (Ctrl-C) ends the search with status
    ``"interrupted"``, the best tiling so far and the lower bound proven so far; without
    it (a caller running several searches, which must stop them all), it propagates.
    ``progress`` hears of the search at its start and then every ``PROGRESS_INTERVAL_S``."""
    if time_limit_s is not None and not time_limit_s > 0:
        raise TunerError(f"`time_limit_s` must be positive, got {time_limit_s!r}")
    if leaf_points < 1:
        raise TunerError(f"`leaf_points` must be at least 1, got {leaf_points!r}")
    if batch < 1:
        raise TunerError(f"`batch` must be at least 1, got {batch!r}")
    start = time.perf_counter()
    deadline = None if time_limit_s is None else start + time_limit_s
    search = BranchAndBound(model, leaf_points=leaf_points, batch=batch, seed=seed, polish=True,
                            expand_at_least=_EXPAND_AT_LEAST)
    search.deadline = deadline
    phase, last = "seed", -math.inf

    def tick() -> None:
        nonlocal last
        now = time.perf_counter()
        if progress is not None and now - last >= PROGRESS_INTERVAL_S:
            last = now
            progress(OptimumProgress(phase, now - start, search.best_lat, search.proven_lower,
                                     search.points, search.explored))

    def latency(rows: np.ndarray) -> np.ndarray:
        tick()
        return search.exact_latency(rows)

    try:
        tick()
        drive(search.seed_incumbent(seed_samples), latency)
        phase = "polish"
        drive(search.polish(), latency)
        phase = "bound"
        lower = drive(search.run(deadline), latency, pause=tick)
    except KeyboardInterrupt:
        if not interruptible:
            raise
        lower = min(search.best_lat, search.proven_lower)
        return _result(model, search, lower, time.perf_counter() - start, interrupted=True)
    return _result(model, search, lower, time.perf_counter() - start)


def _result(model: DesignModel, s: BranchAndBound, lower: float, seconds: float, *,
            interrupted: bool = False) -> OptimumResult:
    finished = lower >= s.best_lat and not (interrupted and s.best is None)
    stopped: Status = "interrupted" if interrupted else "time_limit"
    if s.best is None:
        status: Status = "infeasible" if finished else stopped
    else:
        status = "optimal" if finished else stopped
    tiling = None
    lat = gops = dsp = bram = uram = lut = ff = math.inf
    if s.best is not None:
        tiling = {n: int(v) for n, v in zip(s.space.names, s.best, strict=True)}
        ev = model.evaluate({k: [v] for k, v in tiling.items()})
        lat, gops = float(ev.latency_cycles[0]), float(ev.throughput_gops[0])
        dsp, bram, uram = float(ev.dsp[0]), float(ev.bram18k[0]), float(ev.uram[0])
        lut, ff = float(ev.lut[0]), float(ev.ff[0])
    else:
        gops = 0.0
    gap = (s.best_lat - lower) / s.best_lat if s.best is not None and math.isfinite(lower) else math.inf
    split = s.explored - s.pruned_bound - s.pruned_res - s.empty - s.enumerated
    boxes = (f"{s.explored:,} boxes of tilings were bounded: {split:,} were split further, "
             f"{s.pruned_bound:,} pruned because their interval lower bound on latency is at least "
             f"{s.best_lat:,.0f} cycles, {s.pruned_res:,} because a lower bound on a resource (DSP, LUT, FF, "
             f"BRAM18K, URAM) exceeds the usable budget, {s.empty:,} hold no legal tiling, and the "
             f"{s.enumerated:,} remaining small boxes were evaluated point by point "
             f"({s.points:,} tilings evaluated in all)")
    if status == "optimal":
        proof = (f"Optimal under the {model.variant} model: no legal tiling within the budget is "
                 f"faster than {lat:,.0f} cycles, since the space was covered by boxes and {boxes}.")
    elif status == "infeasible":
        proof = f"No legal tiling fits the budget: {boxes}."
    else:
        why = "Interrupted" if interrupted else "Time limit"
        proof = (f"{why}: the best tiling found takes {lat:,.0f} cycles and none within the "
                 f"budget is faster than {lower:,.0f} cycles (gap {100 * gap:.2f}%); so far {boxes}.")
    return OptimumResult(
        design_id=model.design_id, status=status, tiling=tiling, latency_cycles=lat,
        throughput_gops=gops, dsp=dsp, bram18k=bram, uram=uram, lower_bound_cycles=lower, gap=gap,
        seconds=seconds, points_evaluated=s.points, regions_explored=s.explored,
        regions_pruned_bound=s.pruned_bound, regions_pruned_resources=s.pruned_res,
        regions_empty=s.empty, regions_enumerated=s.enumerated,
        bound_evaluations=s.bound_evaluations, proof=proof, lut=lut, ff=ff,
    )
