"""Budget propagation: a resource that is one monomial of the box coordinates caps them.

The DSP model is ``#PE * SIMD * cost``; in the coordinates of
:class:`~odyssey.tune.exact.optimum_rewrite.Coordinates` (the PE counts are coordinates) it
is one monomial, ``c * prod(x_d ** k_d)``. Within a box the budget ``c * prod(x_d ** k_d)
<= B`` then bounds every coordinate by the others' most favourable ends:

    ``x_d ** k_d <= B / (c * prod_{j != d} min_box(x_j ** k_j))``

an upper end for ``k_d > 0`` (a lower end for ``k_d < 0``). Cutting the box there removes
only tilings over the budget, so no feasible tiling is lost. This matters because interval
bounds decouple the objective from the constraints: the latency bound of a box is taken at
its largest PE count and SIMD factor, the DSP bound at its smallest, so near the DSP limit
(where the packed designs' optima lie) most boxes straddle the budget and neither bound
prunes them. With the cut the latency bound is taken over what fits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from odyssey.expr import Add, Const, Expr, Mul, Pow, Sym, add, mul

#: relative slack on every cut, so that float rounding never removes a tiling within budget
_SLACK = 1e-9


@dataclass(frozen=True, slots=True)
class MonomialBudget:
    """``coef * prod(x[d] ** k for d, k in powers) <= cap`` over positive coordinates."""

    resource: str
    coef: float
    powers: tuple[tuple[int, int], ...]
    cap: float

    @staticmethod
    def of(resource: str, e: Expr, dims: Sequence[str], cap: float) -> MonomialBudget | None:
        """The budget of ``resource`` when its (rewritten) expression ``e`` is a positive
        monomial of the coordinates ``dims``; else None."""
        index = {n: i for i, n in enumerate(dims)}
        coef = Fraction(1)
        powers: dict[int, int] = {}
        for f in e.factors if isinstance(e, Mul) else (e,):
            base, k = (f.base, f.exp) if isinstance(f, Pow) else (f, 1)
            if isinstance(base, Const) and k == 1:
                coef *= Fraction(base.value)
            elif isinstance(base, Sym) and base.name in index:
                powers[index[base.name]] = powers.get(index[base.name], 0) + k
            else:
                return None
        powers = {d: k for d, k in powers.items() if k}
        if coef <= 0 or not powers or not np.isfinite(cap):
            return None
        return MonomialBudget(resource, float(coef), tuple(sorted(powers.items())), float(cap))

    def cut(self, lo: np.ndarray, hi: np.ndarray, mod: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Boxes (progressions ``lo, lo+mod, ..., hi`` per coordinate, coordinates >= 1) with
        every coordinate cut to the tilings the budget allows; a box none of whose points
        fits comes out with ``lo > hi`` in some coordinate."""
        lo, hi = lo.copy(), hi.copy()
        for _ in range(2 if any(k < 0 for _, k in self.powers) else 1):  # a lower end moves the others
            for d, k in self.powers:
                others = np.full(lo.shape[0], self.coef)
                for j, kj in self.powers:
                    if j != d:
                        others = others * (lo[:, j].astype(np.float64) ** kj if kj > 0
                                           else hi[:, j].astype(np.float64) ** kj)
                room = self.cap / others  # x_d ** k <= room
                with np.errstate(divide="ignore", over="ignore"):
                    if k > 0:
                        top = np.floor(room ** (1.0 / k) * (1 + _SLACK))
                        top = np.minimum(top, hi[:, d]).astype(np.int64)
                        hi[:, d] = lo[:, d] + np.floor_divide(top - lo[:, d], mod[:, d]) * mod[:, d]
                    else:
                        bottom = np.ceil(room ** (1.0 / k) * (1 - _SLACK))
                        bottom = np.maximum(bottom, lo[:, d]).astype(np.int64)
                        lo[:, d] = lo[:, d] - np.floor_divide(lo[:, d] - bottom, mod[:, d]) * mod[:, d]
        return lo, hi


def monomial_budgets(exprs: Mapping[str, Expr], dims: Sequence[str],
                     budget: Mapping[str, float]) -> tuple[MonomialBudget, ...]:
    """The budgets among ``budget`` whose resource expression is a monomial of ``dims``."""
    out = (MonomialBudget.of(r, exprs[r], dims, cap) for r, cap in budget.items() if r in exprs)
    return tuple(b for b in out if b is not None)


def model_budgets(model: Any, coords: Any, rewritten: Mapping[str, Expr]) -> tuple[MonomialBudget, ...]:
    """The budgets of ``model`` (a :class:`~odyssey.model.design_model.DesignModel`) that cut
    boxes: each resource whose (rewritten) expression is a monomial of ``coords``' dimensions;
    for the DSP, the model's ``dsp_cut`` where it gives one (a monomial lower bound of the DSP,
    ``#PE * SIMD * per-lane cost``, valid at every legal tiling: cutting with it removes only
    tilings over the budget)."""
    cuts = dict(rewritten)
    if "dsp_cut" in model.exprs:
        cuts["dsp"] = coords.rewrite({"dsp": model.exprs["dsp_cut"]})[0]["dsp"]
    return monomial_budgets(cuts, coords.dims, dict(model.budget))


#: a resource expression expanded into more terms than this is not divided by its cap's
#: monomial (:func:`per_unit`)
_MAX_TERMS = 256


def _terms(e: Expr) -> list[Expr] | None:
    """``e`` as a sum of terms none of which has a sum as a factor (products distributed over
    sums, recursively); None beyond ``_MAX_TERMS`` terms."""
    if isinstance(e, Add):
        out: list[Expr] = []
        for t in e.terms:
            part = _terms(t)
            if part is None or len(out) + len(part) > _MAX_TERMS:
                return None
            out += part
        return out
    if isinstance(e, Mul):
        acc: list[Expr] = [Const(1)]
        for f in e.factors:
            part = _terms(f) if isinstance(f, Add) else [f]
            if part is None or len(acc) * len(part) > _MAX_TERMS:
                return None
            acc = [mul(a, b) for a in acc for b in part]
        return acc
    return [e]


def per_unit(e: Expr, budget: MonomialBudget, dims: Sequence[str]) -> Expr | None:
    """The resource ``e`` (rewritten in the coordinates ``dims``) per unit of ``budget``'s
    monomial ``P``: ``e / P`` with the products expanded, so that ``P``'s own factors cancel
    term by term (``(5*T_k2 + 2*acc - 2)*q_i*q_j + 2*q_i*q_j*lanes`` over ``q_i*q_j*T_k2`` is
    ``5 + (2*acc - 2)/T_k2 + 2*lanes/T_k2``). Where ``e`` is within the cap, ``P <= cap /
    min(e / P)``: a box's interval lower bound of this ratio bounds its ``P`` below the cap's
    ``cap / coef`` wherever the resource has terms beside the monomial (a drain's adders, an
    accumulation), which the monomial cut alone does not see. None where ``e`` does not expand
    into few enough terms."""
    terms = _terms(e)
    if terms is None:
        return None
    out: list[Expr] = []
    for t in terms:
        coef: float = 1
        powers: dict[Expr, int] = {}
        for f in t.factors if isinstance(t, Mul) else (t,):
            if isinstance(f, Const):
                coef *= f.value
                continue
            base, k = (f.base, f.exp) if isinstance(f, Pow) else (f, 1)
            powers[base] = powers.get(base, 0) + k
        for d, k in budget.powers:
            powers[Sym(dims[d])] = powers.get(Sym(dims[d]), 0) - k
        factors = [b if k == 1 else Pow(b, k) for b, k in powers.items() if k]
        out.append(mul(Const(coef), *factors))
    return add(*out)
