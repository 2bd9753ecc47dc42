"""Tiling factors of a design: validation and the derived loop geometry.

For a band loop ``l`` with extent ``E`` (``[lower, lower+E)``):

* array partitioning ``T_l1`` (any integer in ``[1, E]``): ``ceil(E / T_l1)`` tiles; the
  loop is zero-padded to ``ceil(E / T_l1) * T_l1``;
* level two ``T_l2`` divides ``T_l1``: latency hiding on a parallel loop, SIMD lanes on the
  SIMD loop; loops without a level-two factor use 1;
* a space loop ``s`` gives ``T_s1 / T_s2`` PEs along its axis; each PE covers ``T_s2`` values
  of ``s`` (its latency-hiding loop or its SIMD lanes);
* a time loop ``t`` runs ``T_t1 / T_t2`` outer iterations in the PE (``t.1``) and ``T_t2``
  inner ones (``t.2``, latency hiding) or lanes (SIMD).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from odyssey.errors import TilingError
from odyssey.expr import Expr, ceil_div, const, floor_div, sym
from odyssey.mapping.space import BandLoop, Design, param_name
from odyssey.polyhedral.affine import Affine


@dataclass(frozen=True, slots=True)
class LoopGeom:
    """Concrete and symbolic sizes of one band loop under a tiling."""

    name: str
    lower: int
    extent: int
    t1: int
    t2: int
    level2: str | None  # "latency", "simd" or None
    space: bool
    reduction: bool
    # symbolic forms, in the tuning parameters and size parameters
    extent_sym: Expr
    t1_sym: Expr
    t2_sym: Expr

    @property
    def tiles(self) -> int:
        return -(-self.extent // self.t1)

    @property
    def padded(self) -> int:
        return self.tiles * self.t1

    @property
    def is_padded(self) -> bool:
        return self.padded != self.extent

    @property
    def outer(self) -> int:
        """``T_l1 / T_l2``: PEs along a space loop, or ``l.1`` iterations of a time loop."""
        return self.t1 // self.t2

    @property
    def tiles_sym(self) -> Expr:
        return ceil_div(self.extent_sym, self.t1_sym)

    @property
    def outer_sym(self) -> Expr:
        return floor_div(self.t1_sym, self.t2_sym)

    @property
    def pe_range(self) -> int:
        """Values of the loop one PE covers within a tile."""
        return self.t2 if self.space else self.t1

    @property
    def pe_range_sym(self) -> Expr:
        return self.t2_sym if self.space else self.t1_sym


@dataclass(frozen=True, slots=True)
class Tiling:
    design: Design
    values: tuple[tuple[str, int], ...]
    loops: tuple[LoopGeom, ...]

    def loop(self, name: str) -> LoopGeom:
        for g in self.loops:
            if g.name == name:
                return g
        raise KeyError(name)

    @property
    def as_dict(self) -> dict[str, int]:
        return dict(self.values)

    @property
    def space(self) -> tuple[LoopGeom, ...]:
        return tuple(self.loop(n) for n in self.design.space_loops)

    @property
    def num_pes(self) -> int:
        n = 1
        for g in self.space:
            n *= g.outer
        return n

    def describe(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.values)


def affine_expr(a: Affine) -> Expr:
    """An :class:`~odyssey.polyhedral.affine.Affine` in size parameters as an expression."""
    e: Expr = const(a.const)
    for name, c in a.coeffs:
        e = e + sym(name) * c
    return e


def _extent_sym(b: BandLoop) -> Expr:
    return affine_expr(b.extent_expr) if b.extent_expr is not None else const(b.extent)


def parse_tiling_text(text: str) -> dict[str, int]:
    """``"T_i1=16,T_j1=8"`` -> ``{"T_i1": 16, "T_j1": 8}``."""
    out: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep:
            raise TilingError(f"--tiling item `{item}`: expected NAME=VALUE, e.g. T_i1=16")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise TilingError(f"--tiling {name.strip()}={value}: the value must be an integer") from None
    return out


def make_tiling(design: Design, values: Mapping[str, int]) -> Tiling:
    """Validate ``values`` against the design's parameters and derive the loop geometry.

    Missing parameters default to 1 only for level-two factors (no latency hiding, no SIMD);
    every array-partitioning factor must be given.
    """
    known = {p.name: p for p in design.params}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise TilingError(
            f"unknown tiling parameter(s) {', '.join(unknown)} for design {design.id}; "
            f"its parameters are {', '.join(known)}"
        )
    full: dict[str, int] = {}
    for p in design.params:
        if p.name not in values:
            if p.level == "array_part":
                raise TilingError(
                    f"tiling parameter {p.name} (array partitioning of loop {p.loop}) is missing; "
                    f"give an integer in [{p.lower}, {p.upper}]"
                )
            full[p.name] = 1
            continue
        v = int(values[p.name])
        if not p.lower <= v <= p.upper:
            raise TilingError(
                f"tiling parameter {p.name}={v} is out of range; allowed: integers in "
                f"[{p.lower}, {p.upper}]"
            )
        full[p.name] = v
    for p in design.params:
        if p.divides is not None and full[p.divides] % full[p.name] != 0:
            divs = [d for d in range(1, full[p.divides] + 1) if full[p.divides] % d == 0]
            raise TilingError(
                f"tiling parameter {p.name}={full[p.name]} must divide {p.divides}="
                f"{full[p.divides]}; allowed values: {', '.join(map(str, divs))}"
            )
    geoms = []
    for b in design.band:
        n1, n2 = param_name(b.name, 1), param_name(b.name, 2)
        level2 = known[n2].level if n2 in known else None
        geoms.append(LoopGeom(
            name=b.name, lower=b.lower, extent=b.extent, t1=full[n1],
            t2=full.get(n2, 1), level2=level2, space=b.name in design.space_loops,
            reduction=b.name in design.reduction_loops, extent_sym=_extent_sym(b),
            t1_sym=sym(n1), t2_sym=sym(n2) if n2 in known else const(1),
        ))
    return Tiling(design, tuple((p.name, full[p.name]) for p in design.params), tuple(geoms))
