"""A synthetic but realistic model of the MM design ``[i,j]`` with ordering ``<[i,j],k>``.

Built by hand from expressions until ``odyssey.model.build_model`` exists; the
tuners only see the :class:`DesignModel` interface. Sizes ``I x J x K`` fp32,
``C[i][j] += A[i][k] * B[k][j]``; a ``rows x cols`` array with
``rows = T_i1/T_i2``, ``cols = T_j1/T_j2``; each PE computes a ``T_i2 x T_j2``
block of C with ``T_k2`` SIMD lanes along k.

* DSP: ``5 * rows * cols * T_k2`` (fp32 MAC = 2 DSP multiply + 3 DSP add).
* BRAM18K (a 512 x 36 block holds ``ceil(w/36) * ceil(d/512)`` for a ``w``-bit,
  ``d``-deep buffer): per row an A buffer ``T_i2 x T_k1`` packed ``T_k2`` wide,
  per column a B buffer ``T_k1 x T_j2`` likewise, both double-buffered; per PE a
  C accumulator of ``T_i2*T_j2`` words. With ``where=True`` the accumulator
  lives in registers when it has at most 32 words (an if-then-else in the model).
* Latency in cycles: ``tiles * (max(compute, load_A, load_B) + rows + cols)
  + tiles_ij * drain_C + 20`` with ``tiles_ij = ceil(I/T_i1)*ceil(J/T_j1)``,
  ``tiles = tiles_ij*ceil(K/T_k1)``, ``compute = T_k1/T_k2 * T_i2*T_j2 * II``,
  ``II = max(1, ceil(8/(T_i2*T_j2)))`` (fp32 add latency 8), loads and the drain at
  16 words per cycle (one 512-bit port per array).
* Off-chip bytes (eq. (1) for C; A and B re-read for every tile):
  ``4 * (tiles*(T_i1*T_k1 + T_k1*T_j1) + tiles_ij*T_i1*T_j1)``.
"""

from __future__ import annotations

import dataclasses

from odyssey.expr import Expr, ceil_div, const, emax, floor_div, le, sym, where
from odyssey.model.design_model import DesignModel, ParamSpec
from odyssey.platforms import Platform, load_platform


def _blocks(width_bits: Expr | int, depth: Expr) -> Expr:
    return ceil_div(width_bits, 36) * ceil_div(depth, 512)


def mm_params(i: int, j: int, k: int) -> tuple[ParamSpec, ...]:
    return (
        ParamSpec("T_i1", "i", "array_part", 1, i, None),
        ParamSpec("T_j1", "j", "array_part", 1, j, None),
        ParamSpec("T_k1", "k", "array_part", 1, k, None),
        ParamSpec("T_i2", "i", "latency", 1, i, "T_i1"),
        ParamSpec("T_j2", "j", "latency", 1, j, "T_j1"),
        ParamSpec("T_k2", "k", "simd", 1, min(k, 32), "T_k1"),
    )


def mm_exprs(i: int, j: int, k: int, *, with_where: bool = False) -> dict[str, Expr]:
    ti1, tj1, tk1, ti2, tj2, tk2 = (sym(n) for n in ("T_i1", "T_j1", "T_k1", "T_i2", "T_j2", "T_k2"))
    rows = floor_div(ti1, ti2)
    cols = floor_div(tj1, tj2)
    pes = rows * cols
    width = 32 * tk2
    a_buf = rows * 2 * _blocks(width, floor_div(ti2 * tk1, tk2))
    b_buf = cols * 2 * _blocks(width, floor_div(tk1 * tj2, tk2))
    acc = ceil_div(ti2 * tj2, 512)
    c_buf = pes * (where(le(ti2 * tj2, 32), 0, acc) if with_where else acc)
    tiles_ij = ceil_div(i, ti1) * ceil_div(j, tj1)
    tiles = tiles_ij * ceil_div(k, tk1)
    ii = emax(1, ceil_div(8, ti2 * tj2))
    compute = floor_div(tk1, tk2) * ti2 * tj2 * ii
    load_a = ceil_div(ti1 * tk1, 16)
    load_b = ceil_div(tk1 * tj1, 16)
    drain_c = ceil_div(ti1 * tj1, 16)
    return {
        "latency": tiles * (emax(compute, load_a, load_b) + rows + cols) + tiles_ij * drain_c + 20,
        "dsp": 5 * pes * tk2,
        "lut": const(0),  # the synthetic model prices DSP and BRAM only
        "ff": const(0),
        "bram18k": a_buf + b_buf + c_buf,
        "uram": const(0),
        "offchip_bytes": 4 * (tiles * (ti1 * tk1 + tk1 * tj1) + tiles_ij * ti1 * tj1),
    }


def mm_model(
    i: int = 1024, j: int = 1024, k: int = 1024, *, platform: Platform | str = "u250",
    with_where: bool = False, design_id: str = "synthetic-mm-ij",
) -> DesignModel:
    plat = load_platform(platform) if isinstance(platform, str) else platform
    # the synthetic model keeps the device's budget it was written for (12,288 DSPs), not the
    # U250 shell's kernel region: its tests compare tuners on that landscape
    plat = dataclasses.replace(plat, region=None)
    return DesignModel(
        design_id, mm_params(i, j, k), mm_exprs(i, j, k, with_where=with_where), plat,
        ops=2.0 * i * j * k, info={"synthetic": True},
    )
