"""`--workers`/`--scheduler`: the commands' side of :mod:`odyssey.tune.engine` (the options,
the progress lines, and the tasks of `odyssey tune --design all`)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from odyssey.cli._common import positive_int
from odyssey.errors import OdysseyError

if TYPE_CHECKING:  # the engine (and the tune package) load when a command runs, not at --help
    from odyssey.tune.engine import Engine, EngineRun


def add_engine_options(p: argparse.ArgumentParser, what: str) -> None:
    """Add ``--workers`` and ``--scheduler`` to a command whose tasks are ``what``."""
    p.add_argument("--workers", type=positive_int, default=1, metavar="N",
                   help=f"run the {what} on a local Dask cluster of N worker processes "
                        "(default 1: one after another in this process; docs/cluster.md)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"run the {what} on the Dask cluster whose scheduler is at ADDRESS, "
                        "e.g. tcp://10.0.0.5:8786 (docs/cluster.md)")


def engine_from(args: argparse.Namespace) -> Engine:
    from odyssey.tune.engine import Engine

    return Engine(workers=args.workers, scheduler=args.scheduler)


class TaskProgress:
    """Progress of a distributed run on stderr: ``[done/total]``, the task that finished and
    the best so far (of its ``group``: the tasks whose GOP/s compare, e.g. one layer shape's
    designs); one line per task when stderr is not a terminal, a line rewritten in place
    when it is. ``score(value)`` is a finished task's GOP/s (None: no result)."""

    def __init__(self, engine: Engine, total: int | None, score: Callable[[Any], float | None],
                 label: str = "task", group: Callable[[str], str] = lambda key: "",
                 describe: Callable[[Any], str] | None = None) -> None:
        self.live = sys.stderr.isatty()
        self.score = score
        self.describe = describe
        self.label = label
        self.group = group
        self.best: dict[str, tuple[float, str]] = {}
        self.start = time.perf_counter()
        count = f"{total} {label}s" if total is not None else f"the {label}s"
        print(f"odyssey: {count} {engine.describe()}", file=sys.stderr, flush=True)

    def done(self, key: str, value: Any, done: int, total: int) -> None:
        gops = self.score(value)
        group = self.group(key)
        old = self.best.get(group)
        if gops is not None and (old is None or gops > old[0]):
            self.best[group] = old = (gops, key)
        got = f"{gops:.1f} GOP/s" if gops is not None else "no result"
        of = f" of {group}" if group else ""
        best = f"best{of} {old[0]:.1f} GOP/s ({old[1]})" if old else f"no best{of} yet"
        if self.describe is not None:  # no GOP/s to compare: what the task found
            got, best = self.describe(value), ""
        line = (f"[{done}/{total}] {key}: {got}; {best + '; ' if best else ''}"
                f"{time.perf_counter() - self.start:.0f} s")
        if self.live:
            print(f"\r{line}\x1b[K", end="", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def notice(self, text: str) -> None:
        print(f"{chr(13) + chr(27) + '[K' if self.live else ''}odyssey: {text}",
              file=sys.stderr, flush=True)

    def close(self, run: EngineRun) -> None:
        if self.live:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
        for key, error in run.failed.items():
            print(f"odyssey: {self.label} {key} failed: {error}", file=sys.stderr)


def tune_task(src: Any, design_id: str, platform: Any, method: str, options: Mapping[str, Any],
              time_s: float | None, samples: int | None, seed: int) -> dict[str, Any]:
    """One design of `odyssey tune --design all`, on a worker: the record the serial run
    writes for it (an OdysseyError becomes the record's ``error``)."""
    from odyssey.cli.tune_cmds import _tune_record
    from odyssey.tune import make_tuner, run_tuner
    from odyssey.tune.tasks import design_model, kernel_space

    started = time.perf_counter()
    try:
        model = design_model(src, design_id, platform)
        tuner = make_tuner(method, model, seed=seed, **options)
        result = run_tuner(tuner, model, time_s=time_s, samples=samples)
    except OdysseyError as exc:
        return {"design": design_id, "error": str(exc),
                "seconds": time.perf_counter() - started}
    return _tune_record(kernel_space(src).design(design_id), model, tuner, result)


def tune_designs(args: argparse.Namespace, designs: Any, platform: Any,
                 options: Mapping[str, Any], time_s: float | None,
                 ) -> tuple[list[dict[str, Any]], bool]:
    """The records of `odyssey tune` over ``designs`` on the engine of ``args`` (in the
    designs' order; those not finished are left out), and whether it was interrupted."""
    from odyssey.cli._common import defines
    from odyssey.tune.engine import Task, run_tasks
    from odyssey.tune.tasks import KernelSource

    engine = engine_from(args)
    src = KernelSource.read(args.kernel, defines(args.define),
                            max_dim=2 if args.design == "all" else 3)
    tasks = [Task(d.id, tune_task, (src, d.id, platform, args.method, dict(options), time_s,
                                    args.samples, args.seed)) for d in designs]
    report = TaskProgress(engine, len(tasks), lambda r: r.get("throughput_gops"), "design")
    run = run_tasks(tasks, engine, on_done=report.done, on_notice=report.notice)
    report.close(run)
    records = [run.results[t.key] if t.key in run.results else
               {"design": t.key, "error": f"the cluster failed it: {run.failed[t.key]}",
                "seconds": 0.0}
               for t in tasks if t.key in run.results or t.key in run.failed]
    return records, run.interrupted
