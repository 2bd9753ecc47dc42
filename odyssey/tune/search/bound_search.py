"""The branch and bound of :mod:`odyssey.tune.exact.optimum` as a part of an ask/tell tuner.

:class:`BoundSearch` runs :class:`~odyssey.tune.exact.optimum.BranchAndBound` (best first by
the interval lower bound on latency, with dives for early incumbents) but has every
tiling it wants evaluated asked through the tuner, so each one counts as a sample of the
run; the interval bounds of boxes are a relaxation, like the MP seed's continuous solve,
and cost time but no samples. Small leaves (:data:`LEAF_POINTS` tilings) make it frugal:
on the 18 MM 1024^3 designs on U250 it reaches the proven optimum after at most 151
evaluated tilings. When no box is left, the best tiling told to it (by itself or by any
other search, through :meth:`BoundSearch.offer`) is optimal, and :attr:`proven` says so.

A driver advances the search with :meth:`BoundSearch.step` (bounded in time, so it can
share the clock with another search) until it :attr:`wants` tilings, hands them out with
:meth:`ask` and answers them with :meth:`tell`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point
from odyssey.tune.exact.optimum import BranchAndBound

#: tilings in a box small enough to evaluate point by point
LEAF_POINTS = 16
#: boxes bounded per expansion
BATCH = 4096


class BoundSearch:
    """A branch and bound whose exact evaluations are asked and told (see the module)."""

    def __init__(self, model: DesignModel, *, seed: int, leaf_points: int = LEAF_POINTS,
                 batch: int = BATCH) -> None:
        self.bb = BranchAndBound(model, leaf_points=leaf_points, batch=batch, seed=seed)
        self.names = self.bb.space.names
        self._steps = self.bb.run(None)
        self._request: np.ndarray | None = None  # rows the search waits for
        self._answers: list[np.ndarray] = []
        self._handed = 0  # rows of the request handed out by ask
        self.asked = 0  # rows handed out in all
        self.finished = False  # no box is left: the incumbent is optimal
        self.lower_bound = 0.0  # proven lower bound on the latency, once finished
        self.seconds = 0.0  # time spent bounding and splitting boxes

    @property
    def wants(self) -> int:
        """Tilings of the current request not yet handed out."""
        return 0 if self._request is None else len(self._request) - self._handed

    @property
    def proven(self) -> bool:
        """No box is left: the incumbent (the best tiling told or offered) is optimal."""
        return self.finished

    def _send(self, value: np.ndarray | None) -> np.ndarray | None:
        """Resume the search with ``value`` (latencies, or None after a pause; None also
        starts it) and return what it yields next: a request, or None for a pause or
        when it has finished."""
        start = time.perf_counter()
        try:
            request = self._steps.send(value)
        except StopIteration as stop:
            self.finished, self.lower_bound = True, float(stop.value)
            request = None
        self.seconds += time.perf_counter() - start
        if request is not None:
            self._request, self._handed, self._answers = request, 0, []
        return request

    def step(self, *, time_slice_s: float = math.inf, max_pauses: int | None = None) -> None:
        """Advance the search until it wants tilings evaluated, it is finished, the time
        slice is spent or it paused ``max_pauses`` times (it pauses after every expansion
        of boxes; counting pauses instead of seconds keeps a run reproducible)."""
        start = time.perf_counter()
        pauses = 0
        while not self.finished and self._request is None:
            if pauses and (time.perf_counter() - start >= time_slice_s
                           or (max_pauses is not None and pauses >= max_pauses)):
                return
            self._send(None)
            pauses += 1

    def ask(self, n: int) -> list[Point]:
        """Up to ``n`` tilings of the current request, in order."""
        if self._request is None or n <= 0:
            return []
        rows = self._request[self._handed:self._handed + n]
        self._handed += len(rows)
        self.asked += len(rows)
        return [{k: int(v) for k, v in zip(self.names, row, strict=True)} for row in rows.tolist()]

    def tell(self, evaluation: Evaluation) -> None:
        """Latencies of the tilings handed out by the last :meth:`ask`, in its order; the
        search resumes once the whole request is answered."""
        self._answers.append(_latencies(evaluation))
        if self._request is None or sum(len(a) for a in self._answers) < len(self._request):
            return
        lat = np.concatenate(self._answers)
        self._request, self._answers = None, []
        self._send(lat)

    def offer(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        """Tilings another search evaluated: a better feasible one becomes the incumbent,
        which prunes more boxes."""
        if points:
            lat = _latencies(evaluation)
            k = int(np.argmin(lat))
            self.bb.offer(np.array([[points[k][n] for n in self.names]], dtype=np.int64),
                          lat[k:k + 1])


def _latencies(evaluation: Evaluation) -> np.ndarray:
    """Latency per point, infinite where infeasible (what the branch and bound is sent)."""
    return np.where(evaluation.feasible, evaluation.latency_cycles, np.inf)
