"""What a Dask worker runs for :func:`odyssey.network.network_tuning.tune_network`, and the
models it keeps between tasks.

A task (:func:`designs_task`) runs one phase of a few designs of one layer shape, one after
another: :data:`CHUNK` screenings, or one design's search. Dask costs about 5 ms of CPU per
task (2 ms in the `odyssey` process: scheduler, client, result; 3 ms in the worker), and a
VGG16 screening takes 0.1-0.4 s; 3 screenings per task (one for the last shape's, so the
workers end together) take VGG16's 315 tasks down to 155, while a shape of 30 designs still
makes 10 tasks to spread (`scripts/bench_network.py`; see docs/cluster.md).

Models (:class:`ModelShelf`): a design's search runs on the worker that screened it (the
task's ``near``), so the worker keeps the model its screening built. Which designs a shape
searches is known only when all its screenings finished, on other workers too; but a
design the run keeps is among the :data:`~odyssey.network.schedule.KEEP` best of every
subset of the shape's designs that holds it, in particular of those this worker screened.
So the shelf keeps, per shape, the models of the ``KEEP`` best designs it screened (the same
ranking: GOP/s, then the designs' order) and drops a model as soon as its design falls out
of them, and after its search. An unlimited cache of the last 32 models instead held a
shape's 25 screened-out models until they aged out: the collector traversed them, and the
workers spent 1-2 CPU s more on the VGG16 network than the serial run, which frees a
shape's models when it moves to the next one (2026-11-26, `/tmp` probes). A model the shelf
no longer holds is rebuilt (the same model: results never depend on the shelf).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from odyssey.model.design_model import DesignModel
from odyssey.network.schedule import KEEP, PhaseRun, Tiling, run_phase
from odyssey.platforms import Platform
from odyssey.tune.tasks import SPACE_CACHE, KernelSource, design_model, kernel_space

#: designs a first-phase task (screen, or full search) runs, one after another
CHUNK = 3


@dataclass(frozen=True, slots=True)
class Job:
    """One phase of one design of a task: the design's id and its position among the shape's
    designs (the tie-break of :func:`~odyssey.network.schedule.kept`), the phase, its budget
    and seed, and the tilings it starts from."""

    design_id: str
    position: int
    phase: str
    time_s: float | None
    samples: int | None
    seed: int
    seeds: tuple[Tiling, ...] = ()


@dataclass
class _ShapeShelf:
    ranks: dict[str, tuple[float, int]]  # screened design id -> (-GOP/s, position)
    models: dict[str, DesignModel]


class ModelShelf:
    """A worker's models of the designs it may still search (see the module): per layer shape
    (kernel source and platform), the :data:`KEEP` best it screened; at most ``shapes``
    shapes (the oldest forgotten first)."""

    def __init__(self, keep: int = KEEP, shapes: int = SPACE_CACHE) -> None:
        self.keep = keep
        self.shapes = shapes
        self._by_shape: OrderedDict[tuple[KernelSource, Platform], _ShapeShelf] = OrderedDict()

    def _shape(self, src: KernelSource, platform: Platform) -> _ShapeShelf:
        key = (src, platform)
        shelf = self._by_shape.get(key)
        if shelf is None:
            shelf = self._by_shape[key] = _ShapeShelf({}, {})
            while len(self._by_shape) > self.shapes:
                self._by_shape.popitem(last=False)
        self._by_shape.move_to_end(key)
        return shelf

    def model(self, src: KernelSource, design_id: str, platform: Platform) -> DesignModel:
        """The design's ``accurate`` model: the one on the shelf, or a new one (held until
        :meth:`settle` says whether to keep it)."""
        shelf = self._shape(src, platform)
        if design_id not in shelf.models:
            shelf.models[design_id] = design_model(src, design_id, platform)
        return shelf.models[design_id]

    def settle(self, src: KernelSource, platform: Platform, job: Job, run: PhaseRun) -> None:
        """After ``job`` ran: a screening with a feasible result joins the shape's ranking and
        its model stays if it ranks among the ``keep`` best (those that fall out are
        dropped); any other phase's model is dropped."""
        shelf = self._shape(src, platform)
        gops = run.outcome.throughput_gops
        if job.phase != "screen" or gops is None:
            shelf.models.pop(job.design_id, None)
            return
        shelf.ranks[job.design_id] = (-gops, job.position)
        best = set(sorted(shelf.ranks, key=shelf.ranks.__getitem__)[:self.keep])
        for design_id in [d for d in shelf.models if d not in best]:
            del shelf.models[design_id]

    def held(self, src: KernelSource, platform: Platform) -> tuple[str, ...]:
        """The ids of the shape's models on the shelf."""
        shelf = self._by_shape.get((src, platform))
        return tuple(shelf.models) if shelf is not None else ()


#: the shelf of this process (a worker's, or this one's when tasks run here)
SHELF = ModelShelf()


def designs_task(src: KernelSource, platform: Platform, method: str,
                 options: Mapping[str, Any], jobs: tuple[Job, ...]) -> tuple[PhaseRun, ...]:
    """The phases ``jobs`` of designs of the shape ``src`` (its kernel at the shape's sizes)
    on ``platform``, one after another, as the serial run does them
    (:func:`~odyssey.network.schedule.run_phase`); the shape's space is analysed once per
    worker, the models come from :data:`SHELF`."""
    space = kernel_space(src)
    runs = []
    for job in jobs:
        run = run_phase(partial(SHELF.model, src, job.design_id, platform),
                        space.design(job.design_id), phase=job.phase, method=method,
                        options=options, time_s=job.time_s, samples=job.samples, seed=job.seed,
                        seeds=job.seeds)
        SHELF.settle(src, platform, job, run)
        runs.append(run)
    return tuple(runs)
