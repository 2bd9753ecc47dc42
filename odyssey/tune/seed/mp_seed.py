"""The mathematical-programming seed of the evolutionary search (Odyssey section 4.2).

The MP problem, one continuous variable ``t[p]`` per tuning parameter ``p``::

    minimise    objective(t)
    subject to  lower_p <= t[p] <= upper_p
                t[c] <= t[p]                  for every factor c dividing p
                dsp(t)     / DSP_usable  <= 1  (eq. 3, 5, 6)
                bram18k(t) / BRAM_usable <= 1  (eq. 3, 4)
                uram(t)    / URAM_usable <= 1  (when the model uses URAM)
                lut(t)     / LUT_usable  <= 1, ff(t) / FF_usable <= 1
                                                (then, if no rounding of that solution is
                                                 feasible, again without these two: PROBLEMS)

with the model's own expressions (``<name>_smooth`` instead of ``<name>`` when the
model provides one, e.g. ``bram18k_smooth`` without the LUTRAM threshold) translated
by :func:`odyssey.expr.to_pyomo`
(``ceil``/``floor`` relaxed to real division, ``max``/``min`` smoothed).
Objectives, all normalised (``D = dsp / DSP_usable``, ``C = offchip_bytes / B0``
with ``B0`` the bytes of reading every input and writing the output once, i.e.
``offchip_bytes`` of the single-tile tiling where every ``T_l1`` is its upper bound):

* ``comp`` (Obj1, eq. 7): minimise ``-D``;
* ``comm`` (Obj2, eq. 8): minimise ``C``;
* ``comm-comp`` (Obj3, eq. 9, the default): minimise ``C - D``;
* ``latency`` (beyond the paper): minimise ``log(compute_cycles + comm_cycles)``,
  the model's own compute and communication cycle counts relaxed, an upper
  bound of the ``max`` model's latency within a factor of two. On MM 1024^3
  (U250, serialized images, packed drain) its best rounded seed reaches 30% of
  the best tiling found on average against 58% for ``comm-comp``: the relaxed sum
  does not see the overlap of compute and communication, so it cannot tell an
  overlapped tiling from one twice as slow, and on 9 of the 18 designs Ipopt stops
  at its time limit (the seeds are then random points).

If-then-else (``Where``) nodes cannot reach the solver (casadi's NL importer
rejects them), so ``Where(c, a, b)`` is replaced by the smooth surrogate
``max(a, b)``: an upper bound of a resource, which keeps its constraint
conservative. An expression with a comparison outside a ``Where`` has no
surrogate and its constraint is dropped. Either is reported in
``MPSeedResult.surrogates``.

The continuous solution is rounded to legal points (floor/ceil of every outer
factor and the smallest tiles of the two nearest tile counts, the nearest legal
divisors below and above for every inner one; outer factors shrunk step by step
when no rounding is feasible), the candidates are
evaluated with the model and the best feasible ones become the seeds. When the
solver fails, times out or yields nothing feasible, the seeds are random feasible
points and the result says so.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np
import pyomo.environ as pyo

from odyssey.errors import TunerError
from odyssey.expr import Eq, Expr, Le, Lt, Where, emax, free_symbols, map_expr, to_pyomo
from odyssey.model.design_model import RESOURCES, DesignModel
from odyssey.tune.base import Point, check_int, check_rng
from odyssey.tune.seed.nlsolve import solve_nl
from odyssey.tune.space import Genome, SearchSpace

Objective = Literal["comp", "comm", "comm-comp", "latency"]
MPSolver = Literal["ipopt", "scip"]
OBJECTIVES: tuple[str, ...] = get_args(Objective)
SOLVERS: tuple[str, ...] = get_args(MPSolver)

#: seeds kept by default
N_SEEDS = 8
#: rounding candidates evaluated at most (a random subset beyond this)
MAX_CANDIDATES = 4096
_SHRINK = (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)


@dataclass(frozen=True)
class MPSeedResult:
    """Outcome of :func:`mp_seed`.

    ``status`` is the solver's (``optimal``, ``locally_optimal``, ``infeasible``,
    ``time_limit``, ``error``). ``raw_values`` is the continuous solution by
    parameter name (empty without one); ``seeds`` are legal feasible tilings, best
    first, from the solution unless ``fallback`` (then random feasible points).
    ``evaluations`` counts the model evaluations spent screening candidates.
    """

    status: str
    solver: str
    objective_name: str
    raw_values: dict[str, float]
    seeds: tuple[Point, ...]
    message: str
    seconds: float
    objective_value: float | None = None
    fallback: bool = False
    evaluations: int = 0
    surrogates: tuple[str, ...] = field(default=())


# --------------------------------------------------------------------- expressions

def smooth_surrogate(e: Expr) -> tuple[Expr, int]:
    """``e`` with every ``Where(c, a, b)`` replaced by ``max(a, b)``, and how many were.

    Comparisons left outside a ``Where`` are kept (see :func:`has_comparison`).
    """
    count = 0

    def smooth(n: Expr, rec: Callable[[Expr], Expr]) -> Expr | None:
        nonlocal count
        if isinstance(n, Where):
            count += 1
            return emax(rec(n.a), rec(n.b))
        return n if isinstance(n, Le | Lt | Eq) else None  # comparisons: left as they are

    return map_expr(e, smooth), count


def has_comparison(e: Expr) -> bool:
    stack, seen = [e], set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if isinstance(n, Le | Lt | Eq | Where):
            return True
        stack.extend(n.children())
    return False


# --------------------------------------------------------------------- the MP model


def base_bytes(model: DesignModel) -> float:
    """Off-chip bytes of the single-tile tiling (every input read, the output written once)."""
    space = SearchSpace(model.params)
    g = [0] * space.dim
    for ch in space.chains:
        g[ch.columns[0]] = space.upper[ch.columns[0]]
        for col in ch.columns[1:]:
            g[col] = space.legal_divisors(col, g[space.parent[col] or 0])[0]
    ev = model.evaluate({n: [v] for n, v in zip(space.names, g, strict=True)})
    b = float(ev.offchip_bytes[0])
    return b if math.isfinite(b) and b > 0 else 1.0


def build_mp_model(
    model: DesignModel, objective: Objective = "comm-comp", *, base: float | None = None,
    search_only: Sequence[str] = (),
) -> tuple[pyo.ConcreteModel, tuple[str, ...]]:
    """The Pyomo model of the module docstring and notes on surrogates / dropped constraints.

    Variables are ``m.t[name]``; constraints ``m.nest[child]`` and ``m.res[r]``; the
    objective ``m.obj``. ``base`` is the byte count normalising communication
    (:func:`base_bytes`, one model evaluation, when not given); the resources of
    ``search_only`` are not constrained (left to the search). Raises TunerError for
    an unknown objective or when an expression the objective needs has no smooth form.
    """
    if objective not in OBJECTIVES:
        raise TunerError(f"`objective` must be one of {', '.join(OBJECTIVES)}, got {objective!r}.")
    space = SearchSpace(model.params)
    notes: list[str] = []
    m = pyo.ConcreteModel(name=f"mp_{model.design_id}")
    names = list(space.names)
    m.t = pyo.Var(names, domain=pyo.Reals,
                  bounds=lambda _m, n: (space.lower[space.index[n]], space.upper[space.index[n]]),
                  initialize=lambda _m, n: _start(space, n))
    var_map = {n: m.t[n] for n in names}
    nested = [n for n in names if space.parent[space.index[n]] is not None]
    m.nest = pyo.Constraint(
        nested, rule=lambda _m, n: _m.t[n] <= _m.t[space.names[space.parent[space.index[n]] or 0]]
    )

    def smooth(key: str, *, required: bool) -> Any:  # None only when not required
        if f"{key}_smooth" in model.exprs:  # the model's own MP-friendly form
            notes.append(f"{key}: the model's {key}_smooth")
            key = f"{key}_smooth"
        e, n_where = smooth_surrogate(model.exprs[key])
        if has_comparison(e):
            if required:
                raise TunerError(
                    f"model expression {key!r} of design {model.design_id} has a comparison "
                    "outside an if-then-else; it has no smooth form for the MP objective"
                )
            notes.append(f"{key}: dropped (comparison without a smooth surrogate)")
            return None
        if n_where:
            notes.append(f"{key}: {n_where} if-then-else replaced by max(then, else)")
        return to_pyomo(e, var_map)

    res: dict[str, Any] = {}
    for r in RESOURCES:
        if not free_symbols(model.exprs[r]) or not math.isfinite(model.budget[r]):
            continue
        if r in search_only:
            notes.append(f"{r}: left to the search")
            continue
        expr = smooth(r, required=False)
        if expr is not None:
            res[r] = expr / max(model.budget[r], 1e-9)
    m.res = pyo.Constraint(list(res), rule=lambda _m, r: res[r] <= 1)
    terms: list[Any] = []
    if objective == "latency":
        parts = ("compute_cycles", "comm_cycles")
        if all(k in model.exprs for k in parts):
            cycles = smooth(parts[0], required=True) + smooth(parts[1], required=True)
        else:  # a model without the split: its latency itself
            cycles = smooth("latency", required=True)
        m.obj = pyo.Objective(expr=pyo.log(cycles), sense=pyo.minimize)
        return m, tuple(notes)
    if objective != "comp":
        terms.append(smooth("offchip_bytes", required=True) / (base or base_bytes(model)))
    if objective != "comm":
        terms.append(-smooth("dsp", required=True) / max(model.budget["dsp"], 1e-9))
    m.obj = pyo.Objective(expr=sum(terms[1:], start=terms[0]), sense=pyo.minimize)
    return m, tuple(notes)


#: the MP problems :func:`mp_seed` solves, by the resources each leaves to the search. LUT and
#: FF are sums of many per-construct ``where`` terms (FIFO lanes, loop counters) whose
#: max(then, else) surrogates overstate them, so a problem that constrains them can sit away
#: from the optimum (2026-11-27: the seeded search fell to 832 GOP/s from 891 unseeded on MM
#: 1024^3); one that does not maximises DSPs with PEs whose logic does not fit (MM 1024^3
#: `ij-ij.k`: 41 x 41 PEs of one lane, whose best feasible rounding reaches 0.31 of the
#: optimum, against 0.75 with LUT constrained; `ik-ij.k` 0.21 against 0.91; on the other 16
#: designs the two seeds are within 0.4%). The first is solved; the second only when the
#: first has no feasible rounding.
PROBLEMS: tuple[tuple[str, ...], ...] = ((), ("lut", "ff"))


def _start(space: SearchSpace, name: str) -> float:
    """Ipopt's start: outer factors at the geometric middle of their range, inner at 1."""
    i = space.index[name]
    if space.parent[i] is not None:
        return float(space.lower[i])
    return float(math.sqrt(space.lower[i] * space.upper[i]))


# --------------------------------------------------------------------- rounding


def outer_roundings(x: float, extent: int) -> tuple[int, ...]:
    """Integer outer factors for the continuous ``x`` of a loop of ``extent`` ``N``: the
    floor and ceil of ``x``, and for the two tile counts nearest ``N / x``
    (``n = floor(N/x)`` and ``ceil(N/x)``, at least 1) the smallest tile with that
    count, ``ceil(N / n)``.

    The MP problem relaxes ``ceil(N / T)`` to ``N / T``, so it does not see padding: on
    MM 1024^3 (U250) its solutions sit at ``T = 0.77-0.92 N``, where floor and ceil need
    two tiles per loop (before the packed drain, the seed of design j-jk.i,
    ``T_j1 = 843, T_k1 = 921`` once shrunk to feasibility, computed 2.97 times the work:
    44 GOP/s against an optimum of 564); ``ceil(N / 2) = 512`` pads none. With the
    serialized images and the packed drain, rounding the tile count lifts the best seed
    from 13% to 58% of the best tiling found on average over the 18 designs
    (``comm-comp``).
    """
    out = {math.floor(x), math.ceil(x)}
    count = extent / max(x, 1.0)
    out.update(math.ceil(extent / max(n, 1)) for n in (math.floor(count), math.ceil(count)))
    return tuple(sorted(out))


def round_candidates(
    space: SearchSpace, raw: Mapping[str, float], rng: np.random.Generator,
    *, limit: int = MAX_CANDIDATES,
) -> list[Genome]:
    """Legal points around the continuous solution ``raw`` (by parameter name).

    Per loop: the outer factors of :func:`outer_roundings` (clipped to their bounds),
    then for every inner factor the largest legal divisor of its enclosing value at
    or below the raw value and the smallest at or above. Loops combine as a product;
    past ``limit`` a random subset is kept.
    """
    per_chain: list[list[tuple[int, ...]]] = []
    for ch in space.chains:
        root = ch.columns[0]
        lo, hi = space.lower[root], space.upper[root]
        partials = sorted({min(max(v, lo), hi)
                           for v in outer_roundings(float(raw[space.names[root]]), ch.extent)})
        combos: list[tuple[int, ...]] = [(v,) for v in partials]
        for col in ch.columns[1:]:
            y = float(raw[space.names[col]])
            grown: list[tuple[int, ...]] = []
            for part in combos:
                divs = space.legal_divisors(col, part[-1])
                if not divs:
                    continue
                below = [d for d in divs if d <= y]
                above = [d for d in divs if d >= y]
                picks = {below[-1] if below else divs[0], above[0] if above else divs[-1]}
                grown.extend(part + (d,) for d in sorted(picks))
            combos = grown
        per_chain.append(combos)
    total = math.prod(len(c) for c in per_chain)
    out: list[Genome] = []
    for combo in itertools.product(*per_chain):
        g = [0] * space.dim
        for ch, vals in zip(space.chains, combo, strict=True):
            for col, v in zip(ch.columns, vals, strict=True):
                g[col] = v
        out.append(tuple(g))
        if len(out) >= 16 * limit:
            break
    if total > limit:
        keep = np.sort(rng.choice(len(out), size=limit, replace=False))
        out = [out[k] for k in keep.tolist()]
    return out


def _screen(
    model: DesignModel, space: SearchSpace, genomes: Sequence[Genome], n: int
) -> tuple[list[Genome], int]:
    """The best ``n`` feasible genomes by throughput, and how many were evaluated."""
    genomes = list(dict.fromkeys(genomes))
    if not genomes:
        return [], 0
    mat = np.array(genomes, dtype=np.int64).reshape(len(genomes), space.dim)
    ev = model.evaluate({name: mat[:, k] for k, name in enumerate(space.names)})
    gops = np.where(ev.feasible, ev.throughput_gops, -np.inf)
    order = np.argsort(-gops, kind="stable")
    best = [genomes[k] for k in order.tolist() if np.isfinite(gops[k])][:n]
    return best, len(genomes)


def random_feasible(
    model: DesignModel, space: SearchSpace, rng: np.random.Generator, n: int,
    *, limit: int = 5120, batch: int = 256,
) -> tuple[list[Genome], int]:
    """Up to ``n`` random legal feasible genomes, in sampling order, and the evaluations
    spent (at most ``limit``, in batches of ``batch``)."""
    found: list[Genome] = []
    spent = 0
    while spent < limit:
        mat = space.sample(rng, min(batch, limit - spent))
        ev = model.evaluate({name: mat[:, k] for k, name in enumerate(space.names)})
        spent += len(mat)
        for k in np.flatnonzero(ev.feasible).tolist():
            g = tuple(int(v) for v in mat[k])
            if g not in found:
                found.append(g)
            if len(found) >= n:
                return found, spent
    return found, spent


# --------------------------------------------------------------------- the seed


def mp_seed(
    model: DesignModel,
    *,
    rng: np.random.Generator,
    objective: Objective = "comm-comp",
    solver: MPSolver = "ipopt",
    time_limit_s: float = 10.0,
    n_seeds: int = N_SEEDS,
    max_evaluations: int | None = None,
) -> MPSeedResult:
    """Solve the MP problem of the module docstring and round its solution to seeds.

    Failures are values: a solver error, infeasibility, time-out, or a solution with
    no feasible rounding falls back to random feasible seeds (``fallback=True``) and
    the message says why. ``max_evaluations`` bounds the model evaluations spent on
    normalising, screening and the fallback (5120 for the fallback by default).
    Raises TunerError only for invalid arguments.
    """
    check_rng(rng)
    n_seeds = check_int("n_seeds", n_seeds, minimum=1)
    if max_evaluations is not None:
        max_evaluations = check_int("max_evaluations", max_evaluations, minimum=1)
    if solver not in SOLVERS:
        raise TunerError(f"`solver` must be one of {', '.join(SOLVERS)}, got {solver!r}.")
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, int | float) or not (
        0 < time_limit_s < math.inf
    ):
        raise TunerError(f"`time_limit_s` must be a positive number, got {time_limit_s!r}.")
    if objective not in OBJECTIVES:
        raise TunerError(f"`objective` must be one of {', '.join(OBJECTIVES)}, got {objective!r}.")
    start = time.perf_counter()
    space = SearchSpace(model.params)
    spent = screened = 0
    base = None
    if objective != "comp":
        base, spent = base_bytes(model), 1

    def left() -> int:
        return 1 << 62 if max_evaluations is None else max(0, max_evaluations - spent)

    seeds: list[Genome] = []
    raw: dict[str, float] = {}
    status, value, solver_message, why = "error", None, "", ""
    notes: tuple[str, ...] = ()
    for k, search_only in enumerate(PROBLEMS):  # every resource constrained; LUT and FF left to the search
        remaining = float(time_limit_s) - (time.perf_counter() - start)
        if k and remaining <= 0:  # the first problem is always tried, at the whole limit
            break
        try:
            mp, these = build_mp_model(model, objective, base=base, search_only=search_only)
        except TunerError as exc:  # no smooth form of an expression the objective needs
            why = why or f"the MP problem cannot be built ({exc})"
            continue
        sol = solve_nl(mp, solver=solver, time_limit_s=remaining if k else float(time_limit_s))
        got = {n: float(sol.values[f"t[{n}]"]) for n in space.names if f"t[{n}]" in sol.values}
        # the reported solution: this problem's (the loop goes on only while nothing is seeded)
        raw, status, value, solver_message, notes = got, sol.status, sol.objective, sol.message, these
        if not sol.ok:
            why = why or f"the solver did not solve the MP problem ({sol.status}: {sol.message})"
            continue
        if len(got) != space.dim:
            why = why or f"the solver returned values for {sorted(got)} only"
            continue
        for scale in (1.0, *_SHRINK):
            scaled = {n: v * scale if space.parent[space.index[n]] is None else v for n, v in got.items()}
            candidates = round_candidates(space, scaled, rng)[: left()]
            seeds, k = _screen(model, space, candidates, n_seeds)
            spent += k
            screened += k
            if seeds:
                if scale < 1.0:
                    notes = (*notes, f"outer factors shrunk to {scale:.0%} to reach feasibility")
                break
            if not left():
                break
        if seeds:
            why = ""
            break
        why = ("no rounding of the MP solution is feasible" if left()
               else f"the evaluation budget ({max_evaluations}) ran out screening roundings")
        if not left():
            break
    if why:
        seeds, k = random_feasible(model, space, rng, n_seeds, limit=min(5120, left()))
        spent += k
        message = f"{why}; seeds are {len(seeds)} random feasible points"
        if not seeds:
            message = f"{why}; no random feasible point was found either ({k} samples)"
    else:
        message = f"{solver_message}; {len(seeds)} feasible seeds from {screened} rounded candidates"
    return MPSeedResult(
        status=status, solver=solver, objective_name=objective, raw_values=raw,
        seeds=tuple(space.to_point(g) for g in seeds), message=message,
        seconds=time.perf_counter() - start, objective_value=value,
        fallback=bool(why), evaluations=spent, surrogates=tuple(notes),
    )
