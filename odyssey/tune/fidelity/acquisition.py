"""Acquisition functions of the multi-fidelity Bayesian optimization (:mod:`.mfbo`).

Both objectives are minimised. The surrogate predicts the expensive fidelity's
log-latency ``Y(x) ~ N(m(x), s(x)^2)``; resources (DSP) come from the analytic model
and are known exactly. Every acquisition is divided by the predicted cost of the
evaluation (:class:`LinearCost`), so a cheap evaluation with the same expected gain
is preferred (the thesis' cost-weighted acquisition, ``rho_i = T_impl / T_i``).

* :class:`ExpectedImprovement`: ``EI(x) = E[max(0, y* - Y)]`` with ``y*`` the best
  observed log-latency::

      EI = (y* - m) * Phi(z) + s * phi(z),   z = (y* - m) / s

* :class:`HypervolumeImprovement`: the expected gain of the 2-D hypervolume of the
  observed Pareto front of ``(log-latency, DSP / DSP_ref)`` below the reference point
  ``(y_ref, 1)``. With the candidate's DSP ``d`` known, the region it adds at DSP level
  ``b`` spans latencies ``[Y, c(b)]`` where ``c(b) = min(y_ref, min{y_i : d_i <= b})``
  is the front's staircase; so ``HVI = sum_j w_j * max(0, c_j - Y)`` over the
  staircase's steps ``[b_j, b_j+1)`` above ``d`` (widths ``w_j``), and its expectation is
  a sum of closed-form expected improvements with thresholds ``c_j``.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from odyssey.errors import TunerError

#: standard deviations below this are treated as a certain prediction
_MIN_STD = 1e-12


def expected_below(threshold: np.ndarray | float, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """``E[max(0, threshold - Y)]`` for ``Y ~ N(mean, std^2)``, elementwise (>= 0)."""
    gap = np.asarray(threshold, dtype=np.float64) - mean
    s = np.maximum(std, _MIN_STD)
    z = gap / s
    out = gap * norm.cdf(z) + s * norm.pdf(z)
    return np.where(std > _MIN_STD, np.maximum(out, 0.0), np.maximum(gap, 0.0))


def pareto_mask(latency: np.ndarray, dsp: np.ndarray) -> np.ndarray:
    """Points no other point dominates (``<=`` in both objectives, ``<`` in one)."""
    n = len(latency)
    keep = np.ones(n, dtype=bool)
    for k in range(n):
        dominated = (latency <= latency[k]) & (dsp <= dsp[k]) & (
            (latency < latency[k]) | (dsp < dsp[k]))
        keep[k] = not dominated.any()
    return keep


def hypervolume(latency: np.ndarray, dsp: np.ndarray, ref: tuple[float, float]) -> float:
    """Area dominated by the points and bounded by ``ref = (latency_ref, dsp_ref)``."""
    inside = (latency < ref[0]) & (dsp < ref[1])
    if not inside.any():
        return 0.0
    order = np.argsort(dsp[inside], kind="stable")
    lat, d = latency[inside][order], dsp[inside][order]
    area, best = 0.0, ref[0]
    edges = np.append(d, ref[1])
    for k in range(len(d)):
        best = min(best, float(lat[k]))
        area += (ref[0] - best) * float(edges[k + 1] - edges[k])
    return area


@dataclass(frozen=True, slots=True)
class Observed:
    """What the acquisition knows of the points evaluated so far (successes only)."""

    log_latency: np.ndarray
    dsp: np.ndarray  # normalised by the reference DSP


class Acquisition(abc.ABC):
    """Scores candidates from the surrogate's prediction; larger is better."""

    name: str = "acquisition"

    @abc.abstractmethod
    def score(self, mean: np.ndarray, std: np.ndarray, dsp: np.ndarray,
              observed: Observed) -> np.ndarray:
        """Expected gain of evaluating each candidate (``mean``/``std`` of its log-latency,
        ``dsp`` normalised by the reference DSP)."""


class ExpectedImprovement(Acquisition):
    """EI on log-latency; ``xi >= 0`` asks for at least that much improvement (0)."""

    name = "ei"

    def __init__(self, *, xi: float = 0.0) -> None:
        if isinstance(xi, bool) or not isinstance(xi, int | float) or not 0 <= xi < math.inf:
            raise TunerError(f"`xi` must be a non-negative number, got {xi!r}.")
        self.xi = float(xi)

    def score(self, mean: np.ndarray, std: np.ndarray, dsp: np.ndarray,
              observed: Observed) -> np.ndarray:
        if len(observed.log_latency) == 0:
            return -mean  # nothing to improve on yet: the lowest predicted latency first
        best = float(observed.log_latency.min()) - self.xi
        return expected_below(best, mean, std)


class HypervolumeImprovement(Acquisition):
    """Expected 2-D hypervolume improvement over ``(log-latency, DSP)``.

    ``ref_latency`` is the reference log-latency (points at or above it add nothing);
    the DSP reference is 1 (the inputs are normalised by it).
    """

    name = "ehvi"

    def __init__(self, *, ref_latency: float) -> None:
        if not math.isfinite(ref_latency):
            raise TunerError(f"`ref_latency` must be finite, got {ref_latency!r}.")
        self.ref_latency = float(ref_latency)

    def score(self, mean: np.ndarray, std: np.ndarray, dsp: np.ndarray,
              observed: Observed) -> np.ndarray:
        y_ref = self.ref_latency
        order = np.argsort(observed.dsp, kind="stable")
        front_d = observed.dsp[order]
        front_y = np.minimum.accumulate(np.minimum(observed.log_latency[order], y_ref)) \
            if len(order) else np.empty(0)
        out = np.zeros(len(mean))
        for k in range(len(mean)):
            d = float(dsp[k])
            if d >= 1.0:
                continue
            # staircase steps above d: [d, e_1), [e_1, e_2), ..., [e_last, 1)
            edges = [d, *(float(e) for e in front_d if d < e < 1.0), 1.0]
            gain = 0.0
            for lo, hi in zip(edges, edges[1:], strict=False):
                covered = front_d <= lo
                c = float(front_y[covered][-1]) if covered.any() else y_ref
                gain += (hi - lo) * float(expected_below(c, mean[k:k + 1], std[k:k + 1])[0])
            out[k] = gain
        return out


class LinearCost:
    """Predicted seconds of an expensive evaluation: ``a + b * model_cycles``.

    ``a`` (fixed cost, e.g. compiling the simulator) and ``b`` (seconds per simulated
    cycle) start at ``fixed_s`` and ``per_cycle_s`` and are refitted by least squares
    (clipped to ``>= 0``) on the observed durations once there are ``min_observations``.
    """

    def __init__(self, *, fixed_s: float = 5.0, per_cycle_s: float = 1e-5,
                 min_observations: int = 3) -> None:
        for name, value in (("fixed_s", fixed_s), ("per_cycle_s", per_cycle_s)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise TunerError(f"`{name}` must be a non-negative number, got {value!r}.")
        if fixed_s == 0 and per_cycle_s == 0:
            raise TunerError("`fixed_s` and `per_cycle_s` cannot both be 0.")
        self.fixed_s = float(fixed_s)
        self.per_cycle_s = float(per_cycle_s)
        self.min_observations = int(min_observations)

    def fitted(self, cycles: Sequence[float], seconds: Sequence[float]) -> tuple[float, float]:
        """``(a, b)`` refitted on observations (the priors when too few or degenerate)."""
        a, b = self.fixed_s, self.per_cycle_s
        if len(cycles) < self.min_observations or max(seconds, default=0.0) <= 0:
            return a, b
        x = np.asarray(cycles, dtype=np.float64)
        y = np.asarray(seconds, dtype=np.float64)
        if np.ptp(x) > 0:
            slope = float(np.clip(np.polyfit(x, y, 1)[0], 0.0, None))
            icept = max(float(np.mean(y - slope * x)), 0.0)
        else:
            slope, icept = 0.0, float(np.mean(y))
        if icept + slope * float(x.mean()) <= 0:
            return a, b
        return max(icept, 1e-3 * float(np.mean(y))), slope

    def predict(self, model_cycles: np.ndarray, cycles: Sequence[float],
                seconds: Sequence[float]) -> np.ndarray:
        a, b = self.fitted(cycles, seconds)
        return a + b * np.asarray(model_cycles, dtype=np.float64)
