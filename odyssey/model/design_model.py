"""A design's performance model: expressions in its tuning parameters, evaluated in bulk.

:class:`DesignModel` holds named expressions (latency in cycles, DSP, BRAM18K, URAM,
off-chip bytes, per-module latencies ...) over the design's tuning parameters (problem
sizes are substituted). ``evaluate`` runs them on numpy arrays of tilings at once and
checks legality (ranges, divisibility) and feasibility (resources within the platform's
usable budget); an infeasible point is a result with a reason, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from odyssey.errors import ModelError
from odyssey.expr import Expr, compile_vectorized, native
from odyssey.platforms import Platform, available

#: resources checked against the platform budget, in this order
RESOURCES = ("dsp", "lut", "ff", "bram18k", "uram")


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """A tuning parameter: an integer in ``[lower, upper]`` that divides ``divides`` (if set)."""

    name: str
    loop: str
    level: str  # "array_part", "latency" or "simd"
    lower: int
    upper: int
    divides: str | None


@dataclass(frozen=True)
class Evaluation:
    """Arrays over a batch of tilings (all of the batch's length)."""

    latency_cycles: np.ndarray
    throughput_gops: np.ndarray
    dsp: np.ndarray
    lut: np.ndarray
    ff: np.ndarray
    bram18k: np.ndarray
    uram: np.ndarray
    offchip_bytes: np.ndarray
    legal: np.ndarray  # ranges and divisibility hold
    feasible: np.ndarray  # legal and within the resource budget
    reason_code: np.ndarray  # 0 feasible; 1+k parameter k illegal; 1000+r resource r over budget
    extra: Mapping[str, np.ndarray] = field(default_factory=dict)
    param_names: tuple[str, ...] = ()
    budget: tuple[float, ...] = ()

    def __len__(self) -> int:
        return int(self.latency_cycles.shape[0])

    def reason_at(self, k: int) -> str:
        """Why point ``k`` is not feasible (empty when it is)."""
        code = int(self.reason_code[k])
        if code == 0:
            return ""
        if code < 1000:
            return f"{self.param_names[code - 1]} out of range or not a divisor"
        r = code - 1000
        value = getattr(self, RESOURCES[r])[k]
        return f"{RESOURCES[r]} {value:.0f} > {self.budget[r]:.0f}"

    @cached_property
    def reason(self) -> np.ndarray:
        """:meth:`reason_at` for every point (object array of str), formatted on first use."""
        out = np.full(len(self), "", dtype=object)
        for k in np.flatnonzero(self.reason_code):
            out[k] = self.reason_at(int(k))
        return out

    def point(self, k: int) -> dict[str, float | bool | str]:
        out: dict[str, float | bool | str] = {
            "latency_cycles": float(self.latency_cycles[k]), "throughput_gops": float(self.throughput_gops[k]),
            "dsp": float(self.dsp[k]), "lut": float(self.lut[k]), "ff": float(self.ff[k]),
            "bram18k": float(self.bram18k[k]), "uram": float(self.uram[k]),
            "offchip_bytes": float(self.offchip_bytes[k]), "legal": bool(self.legal[k]),
            "feasible": bool(self.feasible[k]), "reason": self.reason_at(k),
        }
        for name, arr in self.extra.items():
            out[name] = float(arr[k])
        return out


class DesignModel:
    """Latency and resource model of one design on one platform.

    ``exprs`` must define ``latency`` (cycles), ``dsp``, ``lut``, ``ff``, ``bram18k``, ``uram`` and
    ``offchip_bytes``; any other entries (e.g. ``module:PE`` latencies, ``comm`` words,
    ``compute_cycles``) are evaluated into ``Evaluation.extra``. ``ops`` is the number of
    arithmetic operations of the kernel (for GOP/s).
    """

    REQUIRED = ("latency", *RESOURCES, "offchip_bytes")

    def __init__(
        self, design_id: str, params: tuple[ParamSpec, ...], exprs: Mapping[str, Expr],
        platform: Platform, *, ops: float, variant: str = "accurate",
        info: Mapping[str, object] | None = None,
    ) -> None:
        missing = [k for k in self.REQUIRED if k not in exprs]
        if missing:
            raise ModelError(f"design {design_id}: model lacks {', '.join(missing)}")
        self.design_id = design_id
        self.params = params
        self.exprs = dict(exprs)
        self.platform = platform
        self.ops = float(ops)
        self.variant = variant
        self.info = dict(info or {})
        self.budget = {r: available(platform, r) for r in RESOURCES}
        names = [p.name for p in params]
        # the tuner's hot path evaluates only what feasibility and fitness need: numpy's
        # evaluator first, the native loop once a search has spent a compilation's time
        bounds = {p.name: float(max(abs(p.lower), abs(p.upper), 1)) for p in params}
        self._core = native.AdaptiveEvaluator({k: self.exprs[k] for k in self.REQUIRED}, names, bounds)
        self._full: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None

    @property
    def core(self) -> Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]]:
        """The evaluator of :attr:`REQUIRED` alone, for callers that pass legal tilings within
        the parameters' ranges themselves (the exact optimum's leaves): one evaluator, numpy's
        then native, per model and process."""
        return self._core

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def evaluate(self, tilings: Mapping[str, np.ndarray | list[int] | int], *, details: bool = False) -> Evaluation:
        """Evaluate a batch: ``tilings`` maps every parameter name to an integer array.
        ``details`` also evaluates every other expression (per-module latencies, bounds,
        BRAM per buffer, traffic per array) into ``Evaluation.extra``."""
        arrays: dict[str, np.ndarray] = {}
        n = None
        for p in self.params:
            if p.name not in tilings:
                raise ModelError(f"evaluate: no values for tuning parameter {p.name}")
            a = np.atleast_1d(np.asarray(tilings[p.name], dtype=np.int64))
            n = a.shape[0] if n is None else max(n, a.shape[0])
            arrays[p.name] = a
        assert n is not None
        arrays = {k: np.broadcast_to(v, (n,)) for k, v in arrays.items()}
        legal = np.ones(n, dtype=bool)
        code = np.zeros(n, dtype=np.int32)
        for idx, p in enumerate(self.params):
            v = arrays[p.name]
            bad = (v < p.lower) | (v > p.upper)
            if p.divides is not None:
                d = arrays[p.divides]
                bad |= (v <= 0) | (np.remainder(d, np.maximum(v, 1)) != 0)
            code[bad & legal] = idx + 1
            legal &= ~bad
        safe = {k: np.where(legal, v, 1) for k, v in arrays.items()}
        if details:
            if self._full is None:
                self._full = compile_vectorized(self.exprs, list(self.param_names))
            out = self._full(safe)
        else:
            out = self._core(safe)
        lat = np.asarray(out["latency"], dtype=np.float64)
        res = {r: np.asarray(out[r], dtype=np.float64) for r in RESOURCES}
        feasible = legal.copy()
        for r_idx, r in enumerate(RESOURCES):
            over = (res[r] > self.budget[r]) & feasible
            code[over] = 1000 + r_idx
            feasible &= ~over
        lat = np.where(legal, lat, np.inf)
        seconds = lat / (self.platform.clock_mhz * 1e6)
        gops = np.where(legal, self.ops / np.maximum(seconds, 1e-30) / 1e9, 0.0)
        extra = {k: np.asarray(v, dtype=np.float64) for k, v in out.items() if k not in self.REQUIRED}
        return Evaluation(lat, gops, res["dsp"], res["lut"], res["ff"], res["bram18k"], res["uram"],
                          np.asarray(out["offchip_bytes"], dtype=np.float64), legal, feasible, code, extra,
                          self.param_names, tuple(self.budget[r] for r in RESOURCES))

    def evaluate_one(self, tiling: Mapping[str, int]) -> dict[str, float | bool | str]:
        """One tiling with every detail."""
        return self.evaluate({k: [v] for k, v in tiling.items()}, details=True).point(0)
