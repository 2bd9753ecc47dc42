"""Tune every layer of a network: one search per unique layer shape.

:func:`tune_network` groups the layers by ``(kind, sizes)``
(:func:`~odyssey.network.networks.unique_shapes`), analyses each shape's kernel
(``conv``/``pointwise`` layers: ``kernel``, normally ``kernels/cnn.c``; ``depthwise``
layers: ``dw_kernel``, normally ``kernels/dwconv.c``; ``matmul`` layers: ``mm_kernel``,
normally ``kernels/mm.c``), and tunes it with the project's
tuner (:func:`odyssey.tune.make_tuner` + :func:`odyssey.tune.run_tuner` on
:func:`odyssey.model.build_model`'s ``accurate`` model). With ``design="all"`` a shape
takes the best of every design of its kernel (the paper's space: arrays of at most two
dimensions, 30 designs for ``cnn.c``, 12 for ``dwconv.c``); with a design id, that design
on every shape, except where the shape's kernel has no such design (a ``cnn.c`` id on a
depthwise or matmul layer): there the best of that kernel's designs, with a note saying so.

Per layer (cycles ``L`` at the platform clock ``f``, ``ops = 2 * MACs``):

* latency ``L`` cycles, ``L / f`` seconds;
* throughput ``ops / (L / f)`` in GOP/s;
* DSP efficiency ``throughput / (2 * lanes * f) = MACs / (lanes * L)``, with
  ``lanes = #PE * SIMD`` the multiply-accumulate lanes of the design (each a multiplier and
  an adder, 5 DSPs in fp32): the fraction of the array's peak the layer achieves (padding,
  I/O stalls, prologue and epilogue lower it).

A layer of ``batch`` B runs its shape's design B times: latency ``B * L``, ``B`` times
the operations (the throughput and DSP efficiency are its shape's).

Network totals: latency ``sum_l B_l * L_l`` (layers run one after another on one array, each
with its own best design: a layer-wise reconfigurable upper bound, as in the paper's
section 5.4), throughput ``sum_l ops_l / (sum_l L_l / f)``.

Stride-2 layers are tuned as stride 1 over their output size (see
:mod:`odyssey.network.networks`). A KeyboardInterrupt ends the run with the results so far
(``interrupted=True``); a design whose model cannot be built is recorded with its error.

Under a sample budget a shape's designs are screened with 30% of it and the best
five searched on with the rest (:mod:`odyssey.network.schedule`; ``schedule="full"`` gives
every design the whole budget).

With a distributed :class:`~odyssey.tune.engine.Engine` the (shape, design) phases are tasks
on Dask workers (:func:`odyssey.network.worker.designs_task`: the kernel source at the
layer's sizes, the design ids, budgets and seeds travel; the worker rebuilds the models),
with the same results.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odyssey.codegen.tiling import make_tiling
from odyssey.errors import NetworkError, UnknownSizeError
from odyssey.frontend import load_scop
from odyssey.mapping.space import Design, KernelSpace, analyse
from odyssey.model import build_model
from odyssey.model.design_model import DesignModel
from odyssey.network.networks import (
    KERNEL_SIZES,
    Layer,
    Network,
    ShapeGroup,
    ShapeKey,
    kernel_for,
    stride_note,
    unique_shapes,
)
from odyssey.network.schedule import (
    DesignOutcome,
    PhaseRun,
    Tiling,
    check_schedule,
    kept,
    merged,
    run_phase,
    screen_samples,
)
from odyssey.network.worker import CHUNK, Job, designs_task
from odyssey.platforms import Platform
from odyssey.tune import Progress
from odyssey.tune import tuner_options as allowed_options
from odyssey.tune.engine import Engine, OnDone, OnNotice, Session, Task
from odyssey.tune.registry import tuner_module
from odyssey.tune.tasks import KernelSource, task_seed

#: largest array dimension of the ``all`` space (the paper's Table 2: 1D and 2D arrays)
ALL_MAX_DIM = 2
#: largest array dimension a fixed design id may have (as ``odyssey tune --design``)
FIXED_MAX_DIM = 3


@dataclass(frozen=True, slots=True)
class ShapeResult:
    """The best design of one unique shape (shared by every layer in ``layers``).

    ``design`` is None when no design found a feasible point (then every metric is None).
    ``complete`` is False when the run was interrupted before every design was tuned.
    ``seconds``: the shape's wall-clock time here; on a distributed engine, the search
    times of its designs summed.
    """

    index: int
    kind: str
    sizes: tuple[tuple[str, int], ...]
    layers: tuple[str, ...]
    kernel: str
    ops: int
    design: str | None
    dataflow: str | None
    ordering: str | None
    tiling: tuple[tuple[str, int], ...] | None
    latency_cycles: float | None
    throughput_gops: float | None
    dsp: float | None
    bram18k: float | None
    mac_lanes: int | None
    dsp_efficiency: float | None
    designs: tuple[DesignOutcome, ...]
    complete: bool
    seconds: float
    note: str = ""
    stride: int = 1

    @property
    def key(self) -> ShapeKey:
        """``(kind, sizes, stride)``, as :attr:`Layer.shape_key`."""
        return (self.kind, self.sizes, self.stride)


@dataclass(frozen=True, slots=True)
class LayerResult:
    """A layer and the result of its shape (None if its shape was not reached)."""

    layer: Layer
    shape: ShapeResult | None
    duplicate_of: str | None  # the first layer of the same shape, if it is not this one

    @property
    def tuned(self) -> bool:
        return self.shape is not None and self.shape.design is not None


@dataclass(frozen=True, slots=True)
class NetworkResult:
    """Per-layer and per-shape results of :func:`tune_network`, and the network totals."""

    network: Network
    platform: str
    clock_mhz: float
    design: str
    method: str
    seed: int
    time_s: float | None
    samples: int | None
    kernel: str
    dw_kernel: str | None
    shapes: tuple[ShapeResult, ...]
    layers: tuple[LayerResult, ...]
    interrupted: bool
    seconds: float
    schedule: str = "full"
    mm_kernel: str | None = None

    @property
    def missing(self) -> tuple[str, ...]:
        """Layers without a result (not reached, or no feasible design)."""
        return tuple(r.layer.name for r in self.layers if not r.tuned)

    @property
    def complete(self) -> bool:
        return not self.missing and not self.interrupted

    @property
    def tuned_kinds(self) -> dict[str, int]:
        """The tuned layers per kind, in network order: ``{"conv": 13, "matmul": 3}``."""
        out: dict[str, int] = {}
        for r in self.layers:
            if r.tuned:
                out[r.layer.kind] = out.get(r.layer.kind, 0) + 1
        return out

    @property
    def latency_cycles(self) -> float:
        """Sum of the tuned layers' latencies, ``batch * shape latency`` each (cycles)."""
        return sum(_latency(r) for r in self.layers if r.tuned)

    @property
    def latency_ms(self) -> float:
        return self.latency_cycles / (self.clock_mhz * 1e3)

    @property
    def ops(self) -> int:
        """Operations of the tuned layers (``2 * MACs``)."""
        return sum(r.layer.ops for r in self.layers if r.tuned)

    @property
    def throughput_gops(self) -> float:
        """``ops / total latency`` over the tuned layers, in GOP/s (0 if none)."""
        seconds = self.latency_cycles / (self.clock_mhz * 1e6)
        return self.ops / seconds / 1e9 if seconds > 0 else 0.0


def _latency(r: LayerResult) -> float:
    """The layer's cycles: its shape's latency times its ``batch``."""
    assert r.shape is not None and r.shape.latency_cycles is not None
    return r.layer.batch * r.shape.latency_cycles


@dataclass(frozen=True, slots=True)
class NetworkProgress:
    """What :func:`tune_network` reports: shape ``shape`` of ``shapes`` (1-based), design
    ``design`` of ``designs`` of the phase ``phase`` on it (``full``, ``screen`` or
    ``search``, see :mod:`odyssey.network.schedule`), the best GOP/s of the shape so far,
    the tuner's own progress (None at the start of a design) and the seconds since the run
    started."""

    shape: int
    shapes: int
    layers: tuple[str, ...]
    design: int
    designs: int
    design_id: str
    best_gops: float
    tuner: Progress | None
    seconds: float
    phase: str = "full"


@dataclass(frozen=True, slots=True)
class _Plan:
    """A shape ready to tune: its analysed kernel (and the source a worker rebuilds it
    from), the designs to try."""

    group: ShapeGroup
    kernel: str
    space: KernelSpace
    designs: tuple[Design, ...]
    note: str
    src: KernelSource


@dataclass(frozen=True, slots=True)
class _Budget:
    """What every (shape, design) phase shares: the tuner, its options, the budget, the
    run's seed and the schedule."""

    platform: Platform
    method: str
    options: Mapping[str, Any]
    time_s: float | None
    samples: int | None
    seed: int
    schedule: str

    def screen(self, plan: _Plan) -> int | None:
        """Samples of the shape's screening (None: one search with the whole budget)."""
        return screen_samples(self.schedule, self.samples, len(plan.designs))

    def phase(self, plan: _Plan, design: Design, phase: str
              ) -> tuple[float | None, int | None, int]:
        """``(time_s, samples, seed)`` of ``design``'s ``phase`` on ``plan``'s shape: a
        phase of a screened shape has its share of the time and samples; the seed is the
        task's own (:func:`~odyssey.tune.tasks.task_seed`)."""
        time_s, samples = self.time_s, self.samples
        screen = self.screen(plan)
        if phase != "full" and screen is not None and samples is not None:
            part = screen if phase == "screen" else samples - screen
            time_s = time_s * part / samples if time_s is not None else None
            samples = part
        seed = task_seed(self.seed, plan.group.kind, plan.group.sizes, design.id, phase)
        return time_s, samples, seed


def tune_network(
    network: Network,
    *,
    kernel: str | Path,
    platform: Platform,
    dw_kernel: str | Path | None = None,
    mm_kernel: str | Path | None = None,
    design: str = "all",
    time_s: float | None = None,
    samples: int | None = None,
    seed: int = 0,
    method: str = "odyssey",
    tuner_options: Mapping[str, Any] | None = None,
    progress: Callable[[NetworkProgress], None] | None = None,
    engine: Engine | None = None,
    on_task: OnDone | None = None,
    on_notice: OnNotice | None = None,
    schedule: str = "screen",
) -> NetworkResult:
    """Tune every unique layer shape of ``network``; ``time_s``/``samples`` are per design
    and shape (as :func:`~odyssey.tune.run_tuner`'s, at least one of them). ``schedule``
    (``screen`` or ``full``) shares a sample budget among a shape's designs as
    :mod:`odyssey.network.schedule` says.

    With a distributed ``engine`` (:mod:`odyssey.tune.engine`) every (shape, design) phase
    runs on its workers, with its own seed as here, so a sample-budgeted run gives the
    same results; ``on_task``/``on_notice`` then report finished tasks and worker deaths
    (``progress`` is for the run here). A local cluster starts (its workers importing
    the tasks' modules) while the shapes are analysed here.

    ``dw_kernel`` and ``mm_kernel`` default to ``dwconv.c`` and ``mm.c`` next to
    ``kernel`` (:func:`~odyssey.network.networks.kernel_for`). Every shape's kernel is
    loaded and analysed (and a fixed ``design`` resolved) before any tuning starts, so bad
    inputs fail fast with an OdysseyError.
    """
    if time_s is None and samples is None:
        raise NetworkError("tune_network needs a budget: time_s, samples, or both")
    check_schedule(schedule)
    dw = kernel_for("depthwise", kernel, dw_kernel=dw_kernel)
    mm = kernel_for("matmul", kernel, mm_kernel=mm_kernel)
    engine = engine or Engine()
    # a cluster starts (its workers loading the tuner) while the shapes are analysed here
    with Session(engine, preload=(designs_task.__module__, tuner_module(method))) as session:
        options = dict(tuner_options or {})
        # (the tuner's module is imported only to check options: a cluster's workers load it)
        unknown = sorted(set(options) - allowed_options(method)) if options else []
        if unknown:
            raise NetworkError(f"unknown option(s) {', '.join(unknown)} for tuner {method!r}")
        plans = _plan(network, Path(kernel), dw, mm, design)
        budget = _Budget(platform, method, options, time_s, samples, seed, schedule)
        started = time.perf_counter()
        shapes: list[ShapeResult] = []
        interrupted = False
        if engine.distributed:
            shapes, interrupted = _tune_on_engine(plans, session, budget, on_task=on_task,
                                                  on_notice=on_notice)
        for n, plan in enumerate(() if engine.distributed else plans, 1):
            result, interrupted = _tune_shape(plan, n, len(plans), budget, progress=progress,
                                              started=started)
            if result is not None:
                shapes.append(result)
            if interrupted:
                break
    by_key = {s.key: s for s in shapes}
    layers: list[LayerResult] = []
    first: dict[ShapeKey, str] = {}
    for layer in network.layers:
        key = layer.shape_key
        dup = first.setdefault(key, layer.name)
        layers.append(LayerResult(layer, by_key.get(key), None if dup == layer.name else dup))
    uses_dw = any(p.group.kind == "depthwise" for p in plans)
    uses_mm = any(p.group.kind == "matmul" for p in plans)
    return NetworkResult(
        network=network, platform=platform.name, clock_mhz=platform.clock_mhz, design=design,
        method=method, seed=seed, time_s=time_s, samples=samples, kernel=str(kernel),
        dw_kernel=str(dw) if uses_dw else None, shapes=tuple(shapes), layers=tuple(layers),
        interrupted=interrupted, seconds=time.perf_counter() - started, schedule=schedule,
        mm_kernel=str(mm) if uses_mm else None)


def _plan(network: Network, kernel: Path, dw_kernel: Path, mm_kernel: Path,
          design: str) -> list[_Plan]:
    """Load and analyse every shape's kernel; resolve a fixed ``design`` to an id."""
    groups = unique_shapes(network)
    max_dim = ALL_MAX_DIM if design == "all" else FIXED_MAX_DIM
    spaces: list[tuple[ShapeGroup, Path, KernelSpace]] = []
    for group in groups:
        path = kernel_for(group.kind, kernel, dw_kernel=dw_kernel, mm_kernel=mm_kernel,
                          stride=group.stride)
        spaces.append((group, path, _analyse(group.first, path, max_dim)))
    wanted = design
    if design != "all":
        # the id is the --kernel's (cnn.c) one; a network without conv or pointwise layers
        # resolves it on its first layer's kernel
        home = next((s for g, _, s in spaces if g.first.kernel == "cnn"), None) or spaces[0][2]
        wanted = home.design(design).id
    texts: dict[Path, str] = {}
    plans: list[_Plan] = []
    for group, path, ks in spaces:
        if path not in texts:
            texts[path] = KernelSource.read(path, None, max_dim=max_dim).text
        src = KernelSource(str(path), texts[path], tuple(sorted(group.first.defines().items())),
                           max_dim)
        paper_space = tuple(d for d in ks.designs if len(d.space_loops) <= ALL_MAX_DIM)
        note = stride_note(path, group.stride)
        if design == "all":
            plans.append(_Plan(group, str(path), ks, paper_space, note, src))
        elif any(d.id == wanted for d in ks.designs):
            plans.append(_Plan(group, str(path), ks, (ks.design(wanted),), note, src))
        else:
            note = "; ".join(x for x in (note, f"design {wanted} is not in the design space of "
                                         f"{path}; took the best of its {len(paper_space)} "
                                         "designs") if x)
            plans.append(_Plan(group, str(path), ks, paper_space, note, src))
    return plans


def _analyse(layer: Layer, path: Path, max_dim: int) -> KernelSpace:
    """The design space of ``path`` at ``layer``'s sizes; the kernel's size parameters must be
    exactly the layer's (unknown ``-D`` names would otherwise be ignored silently)."""
    try:
        scop = load_scop(path, layer.defines())
        have = sorted(name for name, _ in scop.params)
    except UnknownSizeError:
        scop, have = None, sorted(name for name, _ in load_scop(path).params)
    want = sorted(KERNEL_SIZES[layer.kernel])
    if have != want or scop is None:
        raise NetworkError(
            f"{path}: its size parameters are {', '.join(have) or 'none'}, but {layer.kind} layers "
            f"such as {layer.name} set {', '.join(KERNEL_SIZES[layer.kernel])}; pass the "
            f"{'dwconv.c' if layer.kernel == 'dwconv' else 'cnn.c'} kernel (or one with its sizes)")
    return analyse(scop, max_dim=max_dim)


def _tune_shape(
    plan: _Plan, n: int, total: int, budget: _Budget, *,
    progress: Callable[[NetworkProgress], None] | None, started: float,
) -> tuple[ShapeResult | None, bool]:
    """Tune every design of ``plan`` here (screen, then search on the kept designs, or one
    full search each); the shape's result, and whether the run was interrupted."""
    group = plan.group
    models: dict[str, DesignModel] = {}
    best = [0.0]  # GOP/s of the shape so far
    shape_start = time.perf_counter()

    def model_of(design: Design) -> Callable[[], DesignModel]:
        def get() -> DesignModel:
            if design.id not in models:
                models[design.id] = build_model(plan.space, design, platform=budget.platform,
                                                variant="accurate")
            return models[design.id]
        return get

    def run(designs: Sequence[Design], phase: str, seeds: Sequence[Sequence[Tiling]]
            ) -> tuple[list[PhaseRun], bool]:
        runs: list[PhaseRun] = []
        for k, (design, start) in enumerate(zip(designs, seeds, strict=True), 1):

            def report(p: Progress | None, k: int = k, did: str = design.id,
                       so_far: float = best[0]) -> None:
                if progress is not None:
                    progress(NetworkProgress(n, total, group.names, k, len(designs), did,
                                             so_far, p, time.perf_counter() - started, phase))

            time_s, samples, seed = budget.phase(plan, design, phase)
            try:
                report(None)
                r = run_phase(model_of(design), design, phase=phase, method=budget.method,
                              options=budget.options, time_s=time_s, samples=samples, seed=seed,
                              seeds=start, progress=report if progress is not None else None)
            except KeyboardInterrupt:
                return runs, True
            runs.append(r)
            if r.outcome.throughput_gops is not None:
                best[0] = max(best[0], r.outcome.throughput_gops)
            if r.outcome.stop_reason == "interrupted":
                return runs, True
        return runs, False

    screen = budget.screen(plan)
    first, interrupted = run(plan.designs, "full" if screen is None else "screen",
                             [()] * len(plan.designs))
    if not first:
        return None, interrupted
    searched: dict[int, PhaseRun] = {}
    screened = not interrupted  # every design screened: the kept ones are known
    keep = kept(first) if screen is not None and screened else []
    if keep:
        more, interrupted = run([plan.designs[i] for i in keep], "search",
                                [first[i].elite for i in keep])
        searched = dict(zip(keep, more, strict=False))
    if screen is None:
        runs = first
    else:  # a design not known to be screened out (the screening unfinished) is "screen"
        runs = [merged(r, searched.get(i), i in keep or not screened)
                for i, r in enumerate(first)]
    last = list(searched.values())[-1] if searched else first[-1]  # the run that ran last
    complete = len(first) == len(plan.designs) and len(searched) == len(keep) and not (
        interrupted and last.outcome.stop_reason == "interrupted")
    return _shape_result(plan, n, runs, complete, time.perf_counter() - shape_start), interrupted


def _shape_result(plan: _Plan, n: int, runs: Sequence[PhaseRun], complete: bool,
                  seconds: float) -> ShapeResult:
    """The shape's best design over ``runs`` (in the designs' order: the first of the
    highest GOP/s) and its metrics."""
    group = plan.group
    by_id = {d.id: d for d in plan.designs}
    best: PhaseRun | None = None
    for run in runs:
        if run.trial is not None and (best is None or best.trial is None
                                      or run.trial.throughput_gops > best.trial.throughput_gops):
            best = run
    metrics: dict[str, Any] = dict.fromkeys(
        ("design", "dataflow", "ordering", "tiling", "latency_cycles", "throughput_gops", "dsp",
         "bram18k", "mac_lanes", "dsp_efficiency"))
    if best is not None and best.trial is not None:
        design, trial = by_id[best.outcome.design], best.trial
        lanes = mac_lanes(design, trial.tiling)
        metrics.update(
            design=design.id, dataflow=design.dataflow, ordering=design.ordering,
            tiling=tuple((k, int(v)) for k, v in trial.tiling.items()),
            latency_cycles=trial.latency_cycles, throughput_gops=trial.throughput_gops,
            dsp=trial.dsp, bram18k=trial.bram18k, mac_lanes=lanes,
            dsp_efficiency=dsp_efficiency(group.first.unit_macs, lanes, trial.latency_cycles))
    return ShapeResult(index=n, kind=group.kind, sizes=group.sizes, stride=group.stride,
                       layers=group.names,
                       kernel=plan.kernel, ops=group.first.unit_ops,
                       designs=tuple(r.outcome for r in runs), complete=complete,
                       seconds=seconds, note=plan.note, **metrics)


def _tune_on_engine(
    plans: list[_Plan], session: Session, budget: _Budget, *, on_task: OnDone | None,
    on_notice: OnNotice | None,
) -> tuple[list[ShapeResult], bool]:
    """Every (shape, design) phase on ``engine``'s workers (:mod:`odyssey.network.worker`):
    the screenings (or full searches), :data:`~odyssey.network.worker.CHUNK` designs of a
    shape per task, first; a shape's searches, one task each, submitted when its last
    screening finishes, each to the worker that screened the design (it holds the model).
    The shapes with at least one finished design (``complete`` when all finished), and
    whether the run was interrupted. A shape's ``seconds`` are its designs' search times
    summed."""

    def task(key: str, plan: _Plan, positions: Sequence[int], phase: str,
             seeds: tuple[Tiling, ...] = (), near: str = "") -> Task:
        jobs = []
        for i in positions:
            time_s, samples, seed = budget.phase(plan, plan.designs[i], phase)
            jobs.append(Job(plan.designs[i].id, i, phase, time_s, samples, seed, seeds))
        return Task(key, designs_task, (plan.src, budget.platform, budget.method,
                                        dict(budget.options), tuple(jobs)), near=near)

    tasks: list[Task] = []
    first_phase: dict[str, tuple[int, range]] = {}  # key -> (shape, its designs' positions)
    screened_by: dict[tuple[int, int], str] = {}  # (shape, position) -> key of its first task
    for n, plan in enumerate(plans, 1):
        phase = "full" if budget.screen(plan) is None else "screen"
        chunk = CHUNK if n < len(plans) else 1  # the last shape's: the workers end together
        for lo in range(0, len(plan.designs), chunk):
            part = range(lo, min(lo + chunk, len(plan.designs)))
            key = f"shape {n} {phase} {_ids(plan, part)}"
            first_phase[key] = (n, part)
            screened_by.update({(n, i): key for i in part})
            tasks.append(task(key, plan, part, phase))
    firsts: dict[int, dict[int, PhaseRun | None]] = {n: {} for n in range(1, len(plans) + 1)}
    searches: dict[str, tuple[int, int]] = {}  # key -> (shape, position)

    def follow(key: str, value: Any) -> list[Task]:
        """A shape's searches, once every design of it is screened (a screening the cluster
        failed counts as a design without a feasible tiling)."""
        if key not in first_phase:
            return []
        n, part = first_phase[key]
        plan = plans[n - 1]
        firsts[n].update({i: value[k] if value is not None else None
                          for k, i in enumerate(part)})
        if budget.screen(plan) is None or len(firsts[n]) < len(plan.designs):
            return []
        runs = [firsts[n][j] or _failed(plan.designs[j], "screening failed")
                for j in range(len(plan.designs))]
        out = []
        for j in kept(runs):
            key = f"shape {n} search {plan.designs[j].id}"
            searches[key] = (n, j)
            out.append(task(key, plan, [j], "search", runs[j].elite, near=screened_by[n, j]))
        return out

    run = session.run(tasks, on_done=on_task, on_notice=on_notice, follow=follow)

    def outcomes(key: str, n: int, positions: Sequence[int]) -> dict[tuple[int, int], PhaseRun]:
        """The phases a finished task ran, or the cluster's failure for each of its designs
        (none: not finished)."""
        if key in run.results:
            return dict(zip(((n, i) for i in positions), run.results[key], strict=True))
        if key in run.failed:
            error = f"the cluster failed it: {run.failed[key]}"
            return {(n, i): _failed(plans[n - 1].designs[i], error) for i in positions}
        return {}

    found: dict[tuple[int, int], PhaseRun] = {}
    for key, (n, part) in first_phase.items():
        found.update(outcomes(key, n, part))
    searched: dict[tuple[int, int], PhaseRun] = {}
    for key, (n, j) in searches.items():
        searched.update(outcomes(key, n, [j]))
    shapes: list[ShapeResult] = []
    for n, plan in enumerate(plans, 1):
        got = [found.get((n, i)) for i in range(len(plan.designs))]
        if all(r is None for r in got):
            continue
        done = [r for r in got if r is not None]
        complete = len(done) == len(plan.designs)
        if budget.screen(plan) is None:
            runs = done
        else:
            all_screened = complete  # every design screened: the kept ones are known
            keep = set(kept(done)) if all_screened else set()
            runs = []
            for i, r in enumerate(got):
                if r is None:
                    continue
                search = searched.get((n, i))
                complete &= search is not None or i not in keep
                runs.append(merged(r, search, i in keep or not all_screened))
        shapes.append(_shape_result(plan, n, runs, complete,
                                    sum(r.outcome.seconds for r in runs)))
    return shapes, run.interrupted


def _ids(plan: _Plan, part: range) -> str:
    """The ids of a task's designs, for its key: ``o-ohw.ipq,oh-ohw.ipq,ow-ohw.ipq``."""
    return ",".join(plan.designs[i].id for i in part)


def _failed(d: Design, error: str) -> PhaseRun:
    return PhaseRun(DesignOutcome(d.id, d.dataflow, d.ordering, None, None, 0, 0.0, "error", error))


def mac_lanes(design: Design, tiling: Mapping[str, int]) -> int:
    """Multiply-accumulate lanes of ``design`` at ``tiling``: ``#PE * SIMD`` (the PEs are
    ``prod_s T_s1 / T_s2`` over the space loops, the SIMD lanes ``T_l2`` of the SIMD loop)."""
    t = make_tiling(design, tiling)
    simd = t.loop(design.simd_loop).t2 if design.simd_loop is not None else 1
    return t.num_pes * simd


def dsp_efficiency(macs: int, lanes: int, latency_cycles: float) -> float:
    """``MACs / (lanes * cycles)``: throughput over the peak ``2 * lanes * clock`` of the
    design's MAC lanes (1 = every lane busy on a real MAC every cycle)."""
    if lanes <= 0 or not math.isfinite(latency_cycles) or latency_cycles <= 0:
        return 0.0
    return macs / (lanes * latency_cycles)


def network_record(result: NetworkResult) -> dict[str, Any]:
    """JSON-ready record: the run's settings, one entry per layer (with the metrics of its
    shape), one per unique shape (with every design tried), the totals, and what the network
    file leaves unmapped or removed. Metrics are None where there is no feasible result."""
    clock_khz = result.clock_mhz * 1e3
    net = result.network
    layers = []
    for r in result.layers:
        s = r.shape
        lat = r.layer.batch * s.latency_cycles if s and s.latency_cycles is not None else None
        layers.append({
            "name": r.layer.name, "kind": r.layer.kind, "kernel": s.kernel if s else None,
            "sizes": r.layer.dims, "batch": r.layer.batch, "stride": r.layer.stride,
            "dilation": r.layer.dilation, "pads": list(r.layer.pads) if r.layer.pads else None,
            "origin": r.layer.origin,
            "macs": r.layer.macs, "ops": r.layer.ops, "shape": s.index if s else None,
            "duplicate_of": r.duplicate_of, "design": s.design if s else None,
            "dataflow": s.dataflow if s else None, "ordering": s.ordering if s else None,
            "tiling": dict(s.tiling) if s and s.tiling else None, "latency_cycles": lat,
            "latency_ms": lat / clock_khz if lat is not None else None,
            "throughput_gops": s.throughput_gops if s else None,
            "dsp_efficiency": s.dsp_efficiency if s else None,
            "mac_lanes": s.mac_lanes if s else None, "dsp": s.dsp if s else None,
            "bram18k": s.bram18k if s else None, "note": s.note if s else "",
        })
    shapes = [{
        "index": s.index, "kind": s.kind, "sizes": dict(s.sizes), "stride": s.stride,
        "layers": list(s.layers),
        "kernel": s.kernel, "design": s.design, "throughput_gops": s.throughput_gops,
        "latency_cycles": s.latency_cycles, "complete": s.complete, "seconds": s.seconds,
        "note": s.note,
        "designs": [{"design": d.design, "dataflow": d.dataflow, "ordering": d.ordering,
                     "throughput_gops": d.throughput_gops, "latency_cycles": d.latency_cycles,
                     "samples": d.samples, "seconds": d.seconds, "stop_reason": d.stop_reason,
                     "error": d.error, "phase": d.phase, "screen_gops": d.screen_gops}
                    for d in s.designs],
    } for s in result.shapes]
    return {
        "network": net.name, "title": net.title, "network_file": net.path, "source": net.source,
        "kernel": result.kernel, "dw_kernel": result.dw_kernel, "mm_kernel": result.mm_kernel,
        "platform": result.platform,
        "clock_mhz": result.clock_mhz, "design": result.design, "method": result.method,
        "seed": result.seed, "time_s": result.time_s, "samples": result.samples,
        "schedule": result.schedule,
        "interrupted": result.interrupted, "seconds": result.seconds,
        "dsp_efficiency_definition": "throughput / (2 * MAC lanes * clock) = MACs / "
                                     "(lanes * cycles), lanes = #PE * SIMD",
        "layers": layers,
        "shapes": shapes,
        "totals": {
            "layers": len(result.layers), "unique_shapes": len(unique_shapes(net)),
            "tuned_layers": sum(1 for r in result.layers if r.tuned),
            "tuned_kinds": result.tuned_kinds,
            "missing": list(result.missing), "complete": result.complete,
            "latency_cycles": result.latency_cycles, "latency_ms": result.latency_ms,
            "ops": result.ops, "throughput_gops": result.throughput_gops,
        },
        "unmapped": [{"name": u.name, "op": u.op, "count": u.count, "macs": u.macs,
                      "reason": u.reason} for u in net.unmapped],
        "removed": [{"name": x.name, "original": dict(x.original), "reason": x.reason}
                    for x in net.removed],
        "nodes": [{"name": n.name, "op": n.op, "outcome": n.outcome, "layers": list(n.layers),
                   "reason": n.reason, "warning": n.warning} for n in net.nodes],
    }
