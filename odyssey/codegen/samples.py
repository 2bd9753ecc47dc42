"""Deterministic example tilings of a design, for tests, sweeps and documentation.

``kind`` selects what the tiling exercises:

* ``"divisor"``: every array-partitioning factor divides its loop (a divisor near 8), latency
  hiding 2 where it divides, no SIMD;
* ``"nondivisor"``: array-partitioning factors that do *not* divide their loops where one
  exists (zero padding), latency hiding where it divides;
* ``"simd"``: divisor factors with SIMD lanes (4 or 2) on the SIMD loop.

Arrays stay small (at most 4 PEs per dimension) so that C simulation is quick.
"""

from __future__ import annotations

from typing import Literal

from odyssey.mapping.space import Design, param_name

Kind = Literal["divisor", "nondivisor", "simd"]


def _divisor_near(e: int, cap: int) -> int:
    return max(d for d in range(1, min(e, cap) + 1) if e % d == 0)


def _nondivisor(e: int) -> int:
    for cand in (6, 5, 7, 3, 2):
        if cand < e and e % cand != 0:
            return cand
    return _divisor_near(e, 8)


def _largest_div(t1: int, options: tuple[int, ...]) -> int:
    return next((o for o in options if t1 % o == 0 and o <= t1), 1)


def sample_tiling(design: Design, kind: Kind) -> dict[str, int]:
    out: dict[str, int] = {}
    for b in design.band:
        e = b.extent
        space = b.name in design.space_loops
        if kind == "nondivisor":
            t1 = _nondivisor(e)
        elif kind == "simd" and b.name == design.simd_loop:
            t1 = min(e, 8)  # may pad: SIMD lanes need an even tile
        else:
            t1 = _divisor_near(e, 8)
            if t1 < 4 and not space and e <= 64:
                t1 = e  # a prime extent: one tile along a time loop
        out[param_name(b.name, 1)] = t1
    for p in design.params:
        if p.level == "latency":
            t1 = out[p.divides or ""]
            space = p.loop in design.space_loops
            # keep at most 4 PEs along a space loop
            opts = (2, 3, 1) if not space else tuple(d for d in (2, 3, 4, 6, 8) if t1 // d <= 4) + (1,)
            out[p.name] = _largest_div(t1, opts)
            if space and t1 // out[p.name] > 4:
                out[p.name] = t1
        elif p.level == "simd":
            t1 = out[p.divides or ""]
            out[p.name] = _largest_div(t1, (4, 2)) if kind == "simd" else 1
            if p.loop in design.space_loops and t1 // out[p.name] > 4:
                # a space loop: the fewest lanes that keep at most 4 PEs (at least 2 PEs)
                out[p.name] = next(d for d in range(1, t1 + 1) if t1 % d == 0 and t1 // d <= 4)
    for b in design.band:  # space loops without a level-two factor: cap the PE count at 4
        if b.name in design.space_loops and param_name(b.name, 2) not in out:
            out[param_name(b.name, 1)] = min(out[param_name(b.name, 1)], 4)
    return out
