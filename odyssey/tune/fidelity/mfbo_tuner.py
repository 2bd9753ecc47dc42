"""Multi-fidelity Bayesian optimization as an ask/tell tuner of one design (``--method mfbo``).

The high fidelity is whatever the driver (:func:`~odyssey.tune.base.run_tuner`) evaluates
the asked points with: the design's model. The low fidelity is ``low_fidelity``, another
model of the same design (``odyssey tune --method mfbo`` passes the ``max`` variant), or the
model itself by default, when the surrogate learns a zero discrepancy and the search is a
cost-aware re-ranking of the screened pool. On the first :meth:`ask`, an evolutionary
search of ``screen_samples`` low-fidelity evaluations builds the pool (its
``pool_size`` best distinct feasible points); from then on :class:`MultiFidelityBO`
chooses one point per ask. Screening evaluations of the model itself count against the
sample budget (:attr:`own_evaluations`); those of a separate low-fidelity model do not.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng, run_tuner
from odyssey.tune.fidelity.mfbo import (
    OBJECTIVES,
    Candidate,
    Measurement,
    MultiFidelityBO,
    Objective,
)
from odyssey.tune.search.evolutionary import Evolutionary

POOL_SIZE = 200
SCREEN_SAMPLES = 3000


class MFBOTuner(Tuner):
    """See the module docstring. Options: ``low_fidelity`` (a DesignModel with the same
    parameters, or None), ``pool_size >= 1`` (200), ``screen_samples >= 1`` (3000),
    ``objective`` (``latency`` or ``latency-dsp``), ``n_init >= 1`` (3)."""

    name = "mfbo"
    batch_size = 1

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        low_fidelity: DesignModel | None = None,
        pool_size: int = POOL_SIZE,
        screen_samples: int = SCREEN_SAMPLES,
        objective: Objective = "latency",
        n_init: int = 3,
    ) -> None:
        self.rng = check_rng(rng)
        if low_fidelity is not None and (not isinstance(low_fidelity, DesignModel)
                                         or low_fidelity.param_names != model.param_names):
            raise TunerError(f"`low_fidelity` must be a DesignModel of the same tuning "
                             f"parameters as the model, got {low_fidelity!r}.")
        if objective not in OBJECTIVES:
            raise TunerError(f"`objective` must be one of {', '.join(OBJECTIVES)}, "
                             f"got {objective!r}.")
        self.model = model
        self.low = low_fidelity or model
        self.pool_size = check_int("pool_size", pool_size, minimum=1)
        self.screen_samples = check_int("screen_samples", screen_samples, minimum=1)
        self.n_init = check_int("n_init", n_init, minimum=1)
        self.objective: Objective = objective
        self.bo: MultiFidelityBO | None = None
        self._index: dict[tuple[tuple[str, int], ...], int] = {}
        self._screened = 0
        self._budget_cap: int | None = None

    def begin(self, *, time_s: float | None, samples: int | None) -> None:
        if samples is not None and self.low is self.model:
            self._budget_cap = max(1, samples // 2)  # leave half the budget to the BO

    @property
    def own_evaluations(self) -> int:
        return self._screened if self.low is self.model else 0

    def _screen(self) -> None:
        n = self.screen_samples if self._budget_cap is None else min(
            self.screen_samples, self._budget_cap)
        search = Evolutionary(self.low, rng=self.rng, patience=None)
        result = run_tuner(search, self.low, samples=n)
        self._screened = result.samples
        best: dict[tuple[tuple[str, int], ...], Candidate] = {}
        for t in result.trials:
            key = tuple(sorted((k, int(v)) for k, v in t.tiling.items()))
            if t.feasible and key not in best:
                best[key] = Candidate(self.model.design_id, key, t.latency_cycles, t.dsp,
                                      t.bram18k)
        pool = sorted(best.values(), key=lambda c: (c.model_cycles, c.dsp, c.tiling))
        if pool:
            self.bo = MultiFidelityBO(pool[: self.pool_size], rng=self.rng,
                                      objective=self.objective, n_init=self.n_init)
            self._index = {c.tiling: k for k, c in enumerate(self.bo.pool)}

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        if n == 0:
            return []
        if self.bo is None and self._screened == 0:
            self._screen()
        if self.bo is None:
            return []  # nothing feasible found while screening
        k = self.bo.ask()
        if k is None:
            return []
        return [dict(self.bo.pool[k].tiling)]

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        if self.bo is None:
            return
        for j, p in enumerate(points):
            k = self._index.get(tuple(sorted((name, int(v)) for name, v in p.items())))
            if k is None or k in self.bo.done:
                continue  # not a pool point, or already known
            ok = bool(evaluation.feasible[j])
            self.bo.tell(k, Measurement(float(evaluation.latency_cycles[j]) if ok else None,
                                        0.0, "pass" if ok else "infeasible",
                                        evaluation.reason_at(j)))
