"""How `odyssey network` spends its sample budget on a layer shape's designs: screen, then search.

A shape's result is its best design (``--design all``: 30 designs of ``cnn.c``, 12 of
``dwconv.c``), so most of a run that gives every design the whole budget ``N`` goes to
designs that end far behind. Under a sample budget the run has two phases per shape
(schedule ``screen``, the default):

1. **screen**: every design is searched with ``S = max(SCREEN_MIN, SCREEN_SHARE * N)``
   samples (:func:`screen_samples`): its model built, the MP seed solved and its candidates
   screened, then the evolutionary search;
2. **search**: the :data:`KEEP` designs with the highest screened throughput (ties: the
   designs' order) go on with the rest of their budget, ``N - S`` samples, from the
   :data:`ELITE` best tilings of their screening (:meth:`~odyssey.tune.base.Tuner.seed_points`).
   The other designs keep their screening result and are reported as ``screened out``.

Every kept design has had ``N`` samples in all, so ``--samples`` stays a cap per (shape,
design). The phase-2 set depends on the shape's screening results only, never on which task
finished first, so a run on Dask workers gives the serial run's results: a shape's
screenings are tasks of a few designs each, and its searches are submitted as its last
screening finishes (:func:`odyssey.tune.engine.run_tasks`' ``follow``;
:mod:`odyssey.network.worker`).

No design is dropped on a proof: the interval branch and bound of :mod:`odyssey.tune.exact`
that could show a design cannot beat the shape's best took 13 to 29 s per design on VGG16
conv3-2 (3 designs measured), against about 0.3 s for a design's whole screened search. A
screened-out design is one that trailed after ``S`` samples; its result is what it reached.

With the ``odyssey`` method the bound-guided search is off under this schedule (the MP seed
and the evolutionary search run): under a sample budget it takes most of a design's time
(10 s of 10.3 s on conv3-2 ``o-ohw.ipq`` at 5000 samples) and, sharing the samples, does not
find better tilings on the shapes' best designs. Pass ``bound_search=True`` in the tuner
options to have it anyway. Schedule ``full``, or a time budget alone, gives every design
the whole budget in one search (the tuner's defaults, bound search included), as before.

Seeds: each phase of each (shape, design) has its own, :func:`~odyssey.tune.tasks.task_seed`
of the run's seed, the layer kind and sizes, the design id and the phase, so a layer's
results do not change when the network gains or loses other layers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from odyssey.errors import NetworkError, OdysseyError
from odyssey.mapping.space import Design
from odyssey.model.design_model import DesignModel
from odyssey.tune import Progress, Trial, make_tuner, run_tuner

SCHEDULES = ("screen", "full")
#: share of the per-design budget every design gets in the screening phase, and its floor
SCREEN_SHARE = 0.3
SCREEN_MIN = 200
#: designs of a shape that go on to the search phase
KEEP = 5
#: tilings of a design's screening that start its search
ELITE = 8
#: tuner options of the ``odyssey`` method under the screen schedule (see the module)
SCREEN_OPTIONS: dict[str, dict[str, Any]] = {"odyssey": {"bound_search": False}}
#: ... and of its search phase: the MP seed ran in the screening
SEARCH_OPTIONS: dict[str, dict[str, Any]] = {"odyssey": {"bound_search": False, "mp_solver": None}}

Tiling = tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class DesignOutcome:
    """One design tuned on one shape; ``throughput_gops`` is None without a feasible point.

    ``phase``: ``full`` (one search with the whole budget), ``screen+search`` (screened,
    kept, searched on: ``samples`` and ``seconds`` are both phases'), ``screened out`` (its
    screening only) or ``screen`` (screened; its search not run, e.g. interrupted).
    ``screen_gops``: the best GOP/s of its screening (None without one)."""

    design: str
    dataflow: str
    ordering: str
    throughput_gops: float | None
    latency_cycles: float | None
    samples: int
    seconds: float
    stop_reason: str
    error: str = ""
    phase: str = "full"
    screen_gops: float | None = None


@dataclass(frozen=True, slots=True)
class PhaseRun:
    """One phase of one design on one shape: its outcome, its best trial (None: none
    feasible) and its best tilings (for the next phase)."""

    outcome: DesignOutcome
    trial: Trial | None = None
    elite: tuple[Tiling, ...] = ()


def check_schedule(schedule: str) -> str:
    if schedule not in SCHEDULES:
        raise NetworkError(f"unknown schedule {schedule!r}; choose one of {', '.join(SCHEDULES)}")
    return schedule


def screen_samples(schedule: str, samples: int | None, designs: int) -> int | None:
    """Samples of a design's screening, or None when every design gets the whole budget in
    one search (schedule ``full``, no sample budget, no more designs than :data:`KEEP`, or a
    budget too small to split)."""
    if schedule != "screen" or samples is None or designs <= KEEP:
        return None
    screen = max(SCREEN_MIN, math.ceil(SCREEN_SHARE * samples))
    return screen if screen < samples else None


def phase_options(method: str, options: Mapping[str, Any], phase: str) -> dict[str, Any]:
    """The tuner options of a phase: the schedule's defaults for ``method`` under the user's."""
    base = {"screen": SCREEN_OPTIONS, "search": SEARCH_OPTIONS}.get(phase, {}).get(method, {})
    return {**base, **options}


def run_phase(
    model: Callable[[], DesignModel], design: Design, *, phase: str, method: str,
    options: Mapping[str, Any], time_s: float | None, samples: int | None, seed: int,
    seeds: Sequence[Tiling] = (), progress: Callable[[Progress], None] | None = None,
) -> PhaseRun:
    """Search ``design`` (its model from ``model()``) for one phase (``full``, ``screen`` or
    ``search``, started from ``seeds``); an OdysseyError becomes the outcome's ``error``.
    The same steps in this process and on a worker."""
    begin = time.perf_counter()
    try:
        m = model()
        tuner = make_tuner(method, m, seed=seed, **phase_options(method, options, phase))
        if seeds:
            tuner.seed_points([dict(t) for t in seeds])
        result = run_tuner(tuner, m, time_s=time_s, samples=samples, progress=progress)
    except OdysseyError as exc:
        return PhaseRun(DesignOutcome(design.id, design.dataflow, design.ordering, None, None, 0,
                                      time.perf_counter() - begin, "error", str(exc), phase))
    trial = result.best
    gops = trial.throughput_gops if trial else None
    elite: tuple[Tiling, ...] = ()
    if phase == "screen":
        elite = tuple(tuple((k, int(v)) for k, v in t.tiling.items()) for t in _elite(result.trials))
    return PhaseRun(DesignOutcome(
        design.id, design.dataflow, design.ordering, gops,
        trial.latency_cycles if trial else None, result.samples, result.seconds,
        result.stop_reason, "", phase, gops if phase == "screen" else None), trial, elite)


def _elite(trials: Sequence[Trial]) -> list[Trial]:
    """The :data:`ELITE` best feasible trials, distinct tilings (the first of equals)."""
    out: list[Trial] = []
    seen: set[Tiling] = set()
    for t in sorted((t for t in trials if t.feasible), key=lambda t: t.latency_cycles):
        key = tuple(sorted(t.tiling.items()))
        if key not in seen:
            seen.add(key)
            out.append(t)
            if len(out) == ELITE:
                break
    return out


def kept(screened: Sequence[PhaseRun]) -> list[int]:
    """Indices (into ``screened``, a shape's designs in order) of the :data:`KEEP` designs
    with the highest screened throughput, in the designs' order; a design without a
    feasible tiling is never kept."""
    ranked = sorted((i for i, r in enumerate(screened) if r.outcome.throughput_gops is not None),
                    key=lambda i: (-(screened[i].outcome.throughput_gops or 0.0), i))
    return sorted(ranked[:KEEP])


def merged(screen: PhaseRun, search: PhaseRun | None, kept_: bool) -> PhaseRun:
    """A design's result over both phases: the better trial (the screening's on a tie),
    the samples and seconds of both."""
    s = screen.outcome
    if search is None:
        phase = "screen" if kept_ else "screened out"
        stop = s.stop_reason if kept_ or s.stop_reason == "error" else "screened out"
        return PhaseRun(_replace(s, phase=phase, stop_reason=stop), screen.trial)
    f = search.outcome
    trial = screen.trial
    if search.trial is not None and (trial is None or search.trial.latency_cycles < trial.latency_cycles):
        trial = search.trial
    out = DesignOutcome(
        s.design, s.dataflow, s.ordering, trial.throughput_gops if trial else None,
        trial.latency_cycles if trial else None, s.samples + f.samples, s.seconds + f.seconds,
        f.stop_reason, f.error, "screen+search", s.screen_gops)
    return PhaseRun(out, trial)


def _replace(o: DesignOutcome, **kw: Any) -> DesignOutcome:
    from dataclasses import replace

    return replace(o, **kw)
