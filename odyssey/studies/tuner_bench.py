"""The tuner benchmark (Odyssey section 5.2, Figures 7-9): every method on every design.

Each method of :data:`odyssey.tune.TUNERS` runs on each design of a kernel, for several
seeds, at one budget (``time_s`` seconds, optionally capped at ``samples``). One run
records its whole trace of best-so-far improvements, so the best at any earlier time
(0.5 s, ...) comes from the same run. So does the best at a sample count (300, ...) for
methods that search the same way whatever their budget. A method that adapts to its
budget (it overrides :meth:`~odyssey.tune.base.Tuner.begin`: annealing cools over it,
Odyssey spends samples and seconds differently) is also run once per sample checkpoint
with that many samples as its budget (and ``sample_time_s`` as a cap), and read there. Results are normalised
by each design's exact optimum (:func:`odyssey.tune.exact.optimum.find_optimum`), which the
caller may cache (:func:`optimum_key`). Nothing here prints or writes files: the script
``scripts/bench_tuners.py`` does, and a study command can call :func:`run_bench`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from odyssey.errors import OdysseyError, TunerError
from odyssey.frontend import load_scop
from odyssey.frontend.bundled import KERNELS_DIR
from odyssey.mapping.space import analyse
from odyssey.model import DesignModel, build_model
from odyssey.platforms import DEFAULT_PLATFORM, Platform, load_platform
from odyssey.tune import TUNERS, TracePoint, make_tuner, run_tuner
from odyssey.tune.base import Tuner
from odyssey.tune.engine import Engine, Task, run_tasks
from odyssey.tune.exact.optimum import find_optimum
from odyssey.tune.tasks import KernelSource, cached_model, design_model

#: every method of the paper's comparison plus ours, in plotting order
METHODS = ("random", "exhaustive", "annealing", "bayesian", "opentuner", "ensemble", "rl",
           "mind_mappings", "gbfs", "a2c", "sunstone", "evolutionary", "odyssey")


@dataclass(frozen=True, slots=True)
class BenchConfig:
    """What to run: ``kernel`` at ``sizes`` on ``platform``, ``designs`` (None: all),
    ``methods`` x ``seeds``, each for ``time_s`` seconds (and at most ``samples``), read
    back at the ``at_seconds`` and ``at_samples`` checkpoints."""

    kernel: Path = KERNELS_DIR / "mm.c"
    sizes: Mapping[str, int] = field(default_factory=lambda: {"I": 1024, "J": 1024, "K": 1024})
    platform: str = DEFAULT_PLATFORM
    designs: tuple[str, ...] | None = None
    methods: tuple[str, ...] = METHODS
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    time_s: float = 5.0
    samples: int | None = None
    at_seconds: tuple[float, ...] = (0.5, 5.0)
    at_samples: tuple[int, ...] = (300, 3000, 30000)
    sample_runs: bool = True  # budget-aware methods: one run per sample checkpoint
    sample_time_s: float = 30.0  # the time cap of a sample run
    time_runs: bool = True  # False: only the sample runs (to add them to earlier time runs)

    def __post_init__(self) -> None:
        unknown = [m for m in self.methods if m not in TUNERS]
        if unknown:
            raise TunerError(f"unknown method(s) {', '.join(unknown)}; choose among "
                             f"{', '.join(TUNERS)}")
        if not self.seeds or not self.methods:
            raise TunerError("the benchmark needs at least one method and one seed")
        if not self.time_s > 0:
            raise TunerError(f"`time_s` must be positive, got {self.time_s!r}")

    @property
    def size_label(self) -> str:
        return "x".join(str(v) for v in self.sizes.values())


#: the paper's setting: MM 1024^3, all 18 designs, 5 seeds, 5 s
FULL = BenchConfig()
#: a quick look: MM 256^3, 3 designs, 2 seeds, 0.5 s
QUICK = BenchConfig(sizes={"I": 256, "J": 256, "K": 256}, designs=("i-ij.k", "ij-ij.k", "jk-ij.k"),
                    seeds=(0, 1), time_s=0.5, at_seconds=(0.1, 0.5), at_samples=(300, 3000),
                    sample_time_s=5.0)


@dataclass(frozen=True, slots=True)
class Run:
    """One method on one design with one seed: the trace of its best-so-far."""

    method: str
    design: str
    seed: int
    trace: tuple[TracePoint, ...]
    samples: int
    seconds: float
    stop_reason: str
    own_evaluations: int = 0  # made by the tuner itself before its first ask (MP seed)
    budget: int | None = None  # None: a time-budgeted run; else its sample budget

    def best_at(self, *, seconds: float | None = None, samples: int | None = None) -> float | None:
        """Best feasible GOP/s within ``seconds`` / ``samples`` (0 if none was found by
        then); None when the run ended (by its budget) before reaching that point. The
        tuner's own evaluations count as samples spent before the first asked point."""
        own = self.own_evaluations
        if samples is not None and samples > self.samples + own and self.stop_reason == "time":
            return None
        if seconds is not None and seconds > self.seconds * 1.05 and self.stop_reason == "samples":
            return None
        best = 0.0
        for p in self.trace:
            if (seconds is None or p.seconds <= seconds) and (
                    samples is None or p.samples + own <= samples):
                best = max(best, p.throughput_gops)
        return best


@dataclass(frozen=True, slots=True)
class Record:
    """A row of ``tuners.csv``: a run read at one budget point."""

    method: str
    design: str
    seed: int
    budget: str  # "0.5s", "5s", "3000 samples"
    best_gops: float | None
    fraction: float | None  # of the design's optimum


@dataclass(frozen=True, slots=True)
class BenchProgress:
    method: str
    design: str
    seed: int
    done: int
    total: int
    fraction: float  # of the optimum, at the end of this run
    budget: int | None = None  # the run's sample budget (None: a time run)


@dataclass(frozen=True, slots=True)
class BenchResult:
    config: BenchConfig
    optima: Mapping[str, float]  # design -> optimal GOP/s
    runs: tuple[Run, ...]

    def records(self) -> list[Record]:
        """Every run read at the configured checkpoints: a time run at every time checkpoint
        and at the sample checkpoints that have no run of their own; a sample run at its
        budget."""
        out = []
        own = {(r.method, r.design, r.seed, r.budget) for r in self.runs if r.budget is not None}
        for run in self.runs:
            opt = self.optima[run.design]
            budgets: list[tuple[str, float | None, int | None]]
            if run.budget is not None:
                budgets = [(f"{run.budget} samples", None, run.budget)]
            else:
                budgets = [(f"{s:g}s", s, None) for s in self.config.at_seconds] + [
                    (f"{n} samples", None, n) for n in self.config.at_samples
                    if (run.method, run.design, run.seed, n) not in own]
            for label, secs, count in budgets:
                best = run.best_at(seconds=secs, samples=count)
                frac = None if best is None or opt <= 0 else best / opt
                out.append(Record(run.method, run.design, run.seed, label, best, frac))
        return out

    def trace_runs(self, method: str, design: str, axis: str) -> list[Run]:
        """The runs whose traces show ``method``'s progress on ``design`` against
        ``axis`` (``samples`` or ``seconds``): the time runs, or for samples the runs
        with the largest sample budget when the method has sample runs."""
        runs = [r for r in self.runs if r.method == method and r.design == design]
        budgets = [r.budget for r in runs if r.budget is not None]
        top = max(budgets) if axis == "samples" and budgets else None
        return [r for r in runs if r.budget == top]

    def per_design(self, method: str, budget: str) -> dict[str, float]:
        """Median over seeds of the fraction of the optimum, by design (designs where a
        run did not reach ``budget`` are left out)."""
        got: dict[str, list[float]] = {}
        for r in self.records():
            if r.method == method and r.budget == budget:
                got.setdefault(r.design, []).append(math.nan if r.fraction is None
                                                    else r.fraction)
        return {d: statistics.median(v) for d, v in got.items() if not any(map(math.isnan, v))}

    def median_fraction(self, method: str, budget: str) -> float | None:
        """Median over designs of :meth:`per_design` (None if no design reached ``budget``)."""
        values = list(self.per_design(method, budget).values())
        return statistics.median(values) if values else None

    def worst_fraction(self, method: str, budget: str) -> float | None:
        """The smallest of :meth:`per_design` (the worst design)."""
        values = list(self.per_design(method, budget).values())
        return min(values) if values else None


def optimum_key(config: BenchConfig, design: str) -> str:
    """Cache key of a design's optimum: sizes, platform and design id."""
    return f"{config.kernel.stem}:{config.size_label}:{config.platform}:{design}"


def design_models(config: BenchConfig) -> list[DesignModel]:
    """The models of the configured designs, in the kernel space's order."""
    ks = analyse(load_scop(config.kernel, {k: str(v) for k, v in config.sizes.items()}))
    wanted = config.designs
    designs = [d for d in ks.designs if wanted is None or d.id in wanted]
    missing = sorted(set(wanted or ()) - {d.id for d in designs})
    if missing:
        raise OdysseyError(f"unknown design(s) {', '.join(missing)}; the kernel has "
                           f"{', '.join(d.id for d in ks.designs)}")
    platform = load_platform(config.platform)
    return [build_model(ks, d, platform=platform) for d in designs]


def optima_for(config: BenchConfig, models: Sequence[DesignModel],
               cache: MutableMapping[str, float], *, engine: Engine | None = None,
               on_notice: Callable[[str], None] | None = None) -> dict[str, float]:
    """The optimal GOP/s of each design, from ``cache`` or computed (and added to it); the
    missing ones as tasks of ``engine`` (default: one after another here)."""
    todo = [m.design_id for m in models if optimum_key(config, m.design_id) not in cache]
    if todo:
        src, platform = _source(config), load_platform(config.platform)
        run = run_tasks([Task(d, optimum_task, (src, d, platform)) for d in todo],
                        engine or Engine(), on_notice=on_notice)
        if run.interrupted:
            raise KeyboardInterrupt
        for d in todo:
            if d not in run.results:
                raise OdysseyError(f"{d}: the cluster failed the optimum: {run.failed.get(d)}")
            status, gops = run.results[d]
            if status != "optimal":
                raise OdysseyError(f"{d}: the optimum search ended {status}")
            cache[optimum_key(config, d)] = gops
    return {m.design_id: float(cache[optimum_key(config, m.design_id)]) for m in models}


def optimum_task(src: KernelSource, design_id: str, platform: Platform) -> tuple[str, float]:
    """A design's optimum (its status and GOP/s), on a worker or here."""
    result = find_optimum(design_model(src, design_id, platform))
    return str(result.status), float(result.throughput_gops)


def run_task(src: KernelSource, design_id: str, platform: Platform, method: str, seed: int,
             time_s: float, samples: int | None, budget: int | None) -> Run:
    """One run of the benchmark (one method on one design with one seed), on a worker or
    here: the design's model rebuilt from the kernel source, the tuner run on it."""
    model = cached_model(src, design_id, platform)
    res = run_tuner(make_tuner(method, model, seed=seed), model, time_s=time_s, samples=samples,
                    keep_trials=0)
    return Run(method, design_id, seed, res.trace, res.samples, res.seconds, res.stop_reason,
               res.tuner_evaluations, budget)


def _source(config: BenchConfig) -> KernelSource:
    return KernelSource.read(config.kernel, {k: str(v) for k, v in config.sizes.items()},
                             max_dim=2)


def run_bench(
    config: BenchConfig, *, optima: Mapping[str, float] | None = None,
    cache: MutableMapping[str, float] | None = None,
    progress: Callable[[BenchProgress], None] | None = None,
    engine: Engine | None = None, on_notice: Callable[[str], None] | None = None,
) -> BenchResult:
    """Run every method x design x seed of ``config``: one after another here, or as tasks
    of a distributed ``engine`` (``on_notice`` hears of its failures). Runs of a time budget
    measure what fits in their seconds: give them one core each (no more workers than idle
    cores). ``optima`` (GOP/s by design) is computed when not given, through ``cache``.
    """
    models = design_models(config)
    if optima is None:
        optima = optima_for(config, models, {} if cache is None else cache, engine=engine,
                            on_notice=on_notice)

    def budgets(method: str) -> list[int | None]:
        extra = config.at_samples if config.sample_runs and budget_aware(method) else ()
        return [*([None] if config.time_runs else []), *extra]

    specs = [(model.design_id, method, seed, budget) for model in models
             for method in config.methods for seed in config.seeds for budget in budgets(method)]
    src, platform = _source(config), load_platform(config.platform)
    tasks = [Task(f"{d} {method} seed {seed} {budget or 'time'}", run_task,
                  (src, d, platform, method, seed,
                   config.time_s if budget is None else config.sample_time_s,
                   config.samples if budget is None else budget, budget))
             for d, method, seed, budget in specs]

    def done(key: str, run: Run, n: int, total: int) -> None:
        if progress is not None:
            best = run.best_at() or 0.0
            opt = optima[run.design]
            progress(BenchProgress(run.method, run.design, run.seed, n, total,
                                   best / opt if opt > 0 else math.nan, run.budget))

    result = run_tasks(tasks, engine or Engine(), on_done=done, on_notice=on_notice)
    if result.interrupted:
        raise KeyboardInterrupt
    if result.failed:
        raise OdysseyError("the cluster failed run(s) " + "; ".join(
            f"{key}: {error}" for key, error in result.failed.items()))
    return BenchResult(config, dict(optima), tuple(result.results[t.key] for t in tasks))


def budget_aware(method: str) -> bool:
    """Whether the tuner adapts its search to its budget (overrides ``Tuner.begin``)."""
    return TUNERS[method].begin is not Tuner.begin
