"""The fidelities of :mod:`odyssey.tune.fidelity.mfbo`: the candidate pool from the analytic model,
and the expensive evaluations (timed simulation of the generated design, or a model).

* :func:`model_candidates`: search every design's tilings on the model (a registered
  tuner, evolutionary by default) and keep the ``top_k`` distinct feasible points of
  lowest latency (ties: fewer DSPs) across all designs;
* :class:`TimedSimFidelity`: generate the design, write it to a temporary directory,
  run :func:`~odyssey.codegen.timedsim.run_timed_sim`, and return the simulated cycles
  (cached by ``(design, tiling)``); generation or simulation failures are
  :class:`~odyssey.tune.fidelity.mfbo.Measurement` values with the reason;
* :class:`HlsFidelity`: the worst-case latency of the Vitis HLS synthesis report of the
  generated design (for users with the vendor tools);
* :class:`ModelFidelity`: a model variant as the expensive fidelity (the accurate
  model above the ``max`` variant), for runs without a compiler.
"""

from __future__ import annotations

import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path

from odyssey.codegen.generate import generate
from odyssey.codegen.hls_report import run_hls_synthesis
from odyssey.codegen.timedsim import run_timed_sim
from odyssey.codegen.writer import write_design
from odyssey.errors import OdysseyError
from odyssey.mapping.space import Design, KernelSpace
from odyssey.model import build_model
from odyssey.model.design_model import DesignModel
from odyssey.platforms import DEFAULT_PLATFORM, Platform
from odyssey.tune import make_tuner
from odyssey.tune.base import check_int, run_tuner
from odyssey.tune.fidelity.mfbo import Candidate, Measurement

#: largest array dimension the generator builds (so the timed simulation can run)
SIMULATABLE_MAX_DIM = 2
TOP_K = 200
SCREEN_SAMPLES = 3000


def model_candidates(
    space: KernelSpace,
    *,
    platform: Platform,
    designs: Sequence[Design] | None = None,
    top_k: int = TOP_K,
    samples: int = SCREEN_SAMPLES,
    seed: int = 0,
    method: str = "evolutionary",
    variant: str = "accurate",
) -> tuple[Candidate, ...]:
    """The ``top_k`` best distinct feasible design points of the ``variant`` model.

    Every design of ``designs`` (default: the simulatable ones, at most
    :data:`SIMULATABLE_MAX_DIM`-D arrays) is searched with tuner ``method`` for ``samples``
    model evaluations; a design whose model cannot be built is skipped. Ranked by model
    latency, then DSP, BRAM, design id and tiling (deterministic).
    """
    top_k = check_int("top_k", top_k, minimum=1)
    samples = check_int("samples", samples, minimum=1)
    chosen = tuple(designs) if designs is not None else tuple(
        d for d in space.designs if len(d.space_loops) <= SIMULATABLE_MAX_DIM)
    rows: dict[tuple[str, tuple[tuple[str, int], ...]], tuple[float, float, float, Design]] = {}
    for design in chosen:
        try:
            model = build_model(space, design, platform=platform, variant=variant)
        except OdysseyError:
            continue
        result = run_tuner(make_tuner(method, model, seed=seed), model, samples=samples)
        for t in result.trials:
            if t.feasible:
                key = (design.id, tuple(sorted((k, int(v)) for k, v in t.tiling.items())))
                rows[key] = (t.latency_cycles, t.dsp, t.bram18k, design)
    ranked = sorted(rows.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[1][2], kv[0]))
    return tuple(
        Candidate(design=did, tiling=tiling, model_cycles=lat, dsp=dsp, bram18k=bram,
                  space_loops=d.space_loops, reuse_loops=d.order_groups[1],
                  partial_sums=d.output_accumulation == "partial_sums_leave_array")
        for (did, tiling), (lat, dsp, bram, d) in ranked[:top_k])


#: cache key of a candidate: ``(design, tiling)``
CacheKey = tuple[str, tuple[tuple[str, int], ...]]
#: what a generated-design fidelity measures: cycles (None: failed), status, message
Outcome = tuple[float | None, str, str]


class _GeneratedDesignFidelity(ABC):
    """An expensive fidelity that generates the candidate's design and measures it
    (:meth:`_measure`); results are cached by ``(design, tiling)`` in ``cache`` (any mutable
    mapping, a dict by default) and returned with their original seconds. An
    :class:`OdysseyError` (generation, tools) is a failed ``error`` measurement. Designs are
    generated for ``platform`` (a bundled name or a file: its clock, part and DRAM channels)."""

    def __init__(self, space: KernelSpace, *,
                 cache: MutableMapping[CacheKey, Measurement] | None = None, platform: str = DEFAULT_PLATFORM) -> None:
        self.space = space
        self.platform = platform
        self.cache = cache if cache is not None else {}
        self.runs = 0  # measurements actually made (cache misses)

    def __call__(self, c: Candidate) -> Measurement:
        got = self.cache.get(c.key)
        if got is not None:
            return got
        start = time.perf_counter()
        try:
            cycles, status, message = self._measure(c)
        except OdysseyError as exc:
            cycles, status, message = None, "error", str(exc)
        m = Measurement(cycles, time.perf_counter() - start, status, message)
        self.runs += 1
        self.cache[c.key] = m
        return m

    @abstractmethod
    def _measure(self, c: Candidate) -> Outcome:
        """Generate ``c``'s design and measure it."""


class TimedSimFidelity(_GeneratedDesignFidelity):
    """Simulated latency (cycles) of a candidate's generated design (the cache as in
    :class:`_GeneratedDesignFidelity`). ``seed`` seeds the testbench data; ``timeout_s`` and
    ``cxx`` go to the simulation.
    """

    def __init__(
        self, space: KernelSpace, *, timeout_s: float = 300.0, cxx: str = "g++", seed: int = 1,
        cache: MutableMapping[CacheKey, Measurement] | None = None, platform: str = DEFAULT_PLATFORM,
    ) -> None:
        super().__init__(space, cache=cache, platform=platform)
        self.timeout_s = timeout_s
        self.cxx = cxx
        self.seed = seed

    def _measure(self, c: Candidate) -> Outcome:
        gen = generate(self.space, self.space.design(c.design), dict(c.tiling), seed=self.seed,
                       platform=self.platform)
        if gen.model_only:
            return None, "not_simulatable", gen.model_only
        with tempfile.TemporaryDirectory(prefix="odyssey-mfbo-") as tmp:
            res = run_timed_sim(write_design(gen, Path(tmp) / "design"),
                                timeout_s=self.timeout_s, cxx=self.cxx)
        if res.passed and res.cycles is not None:
            return float(res.cycles), res.status, ""
        return None, res.status, res.message


class HlsFidelity(_GeneratedDesignFidelity):
    """Worst-case latency (cycles) of a candidate's generated design in the Vitis HLS
    synthesis report (:func:`~odyssey.codegen.hls_report.run_hls_synthesis`), for users with
    the vendor tools (the cache as in :class:`_GeneratedDesignFidelity`). ``keep`` (a
    directory): keep each synthesized design there, in ``<design>_<n>/``, instead of a
    temporary one.
    """

    def __init__(
        self, space: KernelSpace, *, timeout_s: float = 7200.0, keep: Path | None = None,
        cache: MutableMapping[CacheKey, Measurement] | None = None, platform: str = DEFAULT_PLATFORM,
    ) -> None:
        super().__init__(space, cache=cache, platform=platform)
        self.timeout_s = timeout_s
        self.keep = Path(keep) if keep is not None else None

    def _measure(self, c: Candidate) -> Outcome:
        gen = generate(self.space, self.space.design(c.design), dict(c.tiling), platform=self.platform)
        if self.keep is not None:
            run = run_hls_synthesis(write_design(gen, self.keep / f"{c.design}_{self.runs}"),
                                    timeout_s=self.timeout_s)
        else:
            with tempfile.TemporaryDirectory(prefix="odyssey-hls-") as tmp:
                run = run_hls_synthesis(write_design(gen, Path(tmp) / "design"),
                                        timeout_s=self.timeout_s)
        rep = run.report
        if rep is not None and rep.worst_cycles is not None and not run.message:
            return float(rep.worst_cycles), "pass", ""
        return None, "hls_failed", run.message


class ModelFidelity:
    """A performance model as the expensive fidelity: its latency at the candidate's
    tiling (failed when the point is not feasible there)."""

    def __init__(self, models: Mapping[str, DesignModel]) -> None:
        self.models = dict(models)

    @classmethod
    def build(cls, space: KernelSpace, designs: Sequence[Design], *, platform: Platform,
              variant: str = "accurate") -> ModelFidelity:
        return cls({d.id: build_model(space, d, platform=platform, variant=variant)
                    for d in designs})

    def __call__(self, c: Candidate) -> Measurement:
        start = time.perf_counter()
        point = self.models[c.design].evaluate_one(dict(c.tiling))
        seconds = time.perf_counter() - start
        if not point["feasible"]:
            return Measurement(None, seconds, "infeasible", str(point["reason"]))
        return Measurement(float(point["latency_cycles"]), seconds)
