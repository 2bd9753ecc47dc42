"""Run independent tasks (one design's search, one shape's design) in this process or on a
Dask cluster.

The engine schedules, it does not search: a :class:`Task` is a module-level function and
its arguments, and the function does the whole job (rebuilds what it needs from plain
data, runs the tuner, returns a small picklable result). :func:`run_tasks` runs a list
of them:

* :class:`Engine` ``workers=1`` and no ``scheduler`` (the default): one after another in
  this process; Dask is not imported;
* ``workers=N > 1``: on a ``distributed.LocalCluster`` of N single-threaded worker
  processes on this machine, started for the run and closed after it;
* ``scheduler="tcp://host:8786"``: on an existing Dask cluster (a ``Client`` connects to
  its scheduler; ``workers`` is ignored). Its workers need this version of odyssey
  installed: a task travels as a reference to its function and its arguments.

What :func:`run_tasks` guarantees, whichever way the tasks run:

* the result of each task is the function's value, independent of where and in which
  order it ran: a task carries everything it depends on (its seed included), so a
  sample-budgeted run gives the same results on any number of workers;
* ``on_done(key, value, done, total)`` is called in this process as each task finishes,
  in the order they finish (the caller's progress report);
* ``follow(key, value)``, called in this process as each task finishes, may return new
  tasks that join the run (a later phase that depends on finished tasks, e.g. the full
  searches of the designs a layer's screening kept; ``value`` is None for a task that
  failed on the cluster): in this process they run next,
  before the tasks not started; on Dask they are submitted at once, ahead of the tasks
  waiting. What they compute must depend only on the values they are built from (never on
  which tasks finished first), so the run's results stay independent of the order;
* a KeyboardInterrupt (Ctrl-C) while waiting cancels the tasks not finished and returns
  what finished, with ``interrupted=True``;
* a worker that dies (killed, out of memory) loses the tasks it held; the scheduler runs
  them again on another worker (up to its ``distributed.scheduler.allowed-failures``
  times, 3 by default; past that a task is a failure). ``on_notice`` is told which worker
  left and which tasks it held. A task that raises is run again once
  (``retries=RETRIES``) and, if it raises again, recorded in ``failed`` with its error.

Functions should return errors the caller expects (an OdysseyError on one design) as
values, so that ``failed`` holds only what went wrong with the run itself.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from odyssey.errors import OdysseyError
from odyssey.runtime import deferred_interrupt

#: times Dask runs a task again after it raised (Client.submit's ``retries``)
RETRIES = 1
#: seconds between two looks for finished tasks
WAIT_S = 0.05
#: Dask configuration of the local cluster's workers. Dask's statistical profiler (on by
#: default: every 10 ms it walks the stack of the thread running a task, holding the GIL)
#: cost the searches 15-17% of their CPU time: one worker ran 90 designs' screenings (3
#: VGG16 layer shapes) in 18.95 CPU s with it, 17.11 s without, 17.09 s in a plain process
#: (`scripts/bench_network.py`, 2026-11-25). Its flame graphs are not needed here; a remote
#: cluster's workers keep their own configuration (docs/cluster.md says how to turn it off).
#: The periodic callbacks of the local scheduler, nannies and workers are slowed down too: the
#: event-loop tick (20 ms by default: it only times the loop, to warn when it blocks), the
#: memory monitor (100 ms; 1 s still stops a runaway worker in time) and the system monitor
#: (500 ms, for the dashboard's plots). Each wakes a thread that takes the interpreter lock
#: from the task's thread. The VGG16 network's tasks on one worker took 43.6-44.0 CPU s with
#: the defaults and 41.5-42.8 s without these wake-ups (`/tmp` probes, 2026-11-26); the
#: `odyssey` process itself (scheduler, nannies) 0.4 CPU s less. Work stealing is off: the
#: scheduler's queue hands each worker a task as it frees up (``worker-saturation``), so
#: there is nothing to steal on a cluster of equal single-threaded workers. The worker
#: processes start without Dask's ``MALLOC_TRIM_THRESHOLD_=65536`` (which makes glibc hand
#: freed heap back to the OS at once, for workers that hold large arrays): a model build
#: allocates and frees thousands of blocks, and the workers spent 1.6 s of system time on
#: the VGG16 network with it, 0.9-1.0 s without (the thread libraries stay at one thread).
LOCAL_WORKER_CONFIG = {
    "distributed.nanny.pre-spawn-environ": {
        "OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1},
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.scheduler.work-stealing": False,
}


class EngineError(OdysseyError):
    """The cluster could not be started or reached."""


@dataclass(frozen=True, slots=True)
class Engine:
    """Where tasks run: ``workers`` local processes (1: this process, no Dask), or the
    Dask cluster whose scheduler is at ``scheduler``."""

    workers: int = 1
    scheduler: str | None = None
    connect_timeout_s: float = 20.0  # to reach ``scheduler``

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise EngineError(f"workers must be at least 1, got {self.workers}")

    @property
    def distributed(self) -> bool:
        """Whether tasks run on Dask (a local cluster or a remote one)."""
        return self.scheduler is not None or self.workers > 1

    def describe(self) -> str:
        if self.scheduler is not None:
            return f"on the Dask cluster at {self.scheduler}"
        if self.workers > 1:
            return f"on a local Dask cluster of {self.workers} worker processes"
        return "in this process"


@dataclass(frozen=True, slots=True)
class Task:
    """One unit of work: ``fn(*args)``; ``key`` names it (unique within a run, readable:
    it is what progress and notices show). ``near``: the key of an earlier task of the run
    whose worker should run this one (it holds what this task rebuilds otherwise, e.g. the
    design's model for its search phase); any worker may run it if that one is gone."""

    key: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    near: str = ""


@dataclass(frozen=True, slots=True)
class EngineRun:
    """What :func:`run_tasks` returns: the value of each finished task by key, the
    error of each task that failed, whether the run was interrupted, the notices (worker
    deaths), and the wall-clock seconds."""

    results: dict[str, Any]
    failed: dict[str, str]
    interrupted: bool
    notices: tuple[str, ...]
    seconds: float
    where: str = ""


OnDone = Callable[[str, Any, int, int], None]
OnNotice = Callable[[str], None]
Follow = Callable[[str, Any], Sequence[Task]]


def run_tasks(tasks: Sequence[Task], engine: Engine, *, on_done: OnDone | None = None,
              on_notice: OnNotice | None = None, follow: Follow | None = None) -> EngineRun:
    """Run ``tasks`` (and those ``follow`` adds) on ``engine`` (see the module); keys must
    be unique. The same as ``with Session(engine) as s: s.run(...)``."""
    with Session(engine) as session:
        return session.run(tasks, on_done=on_done, on_notice=on_notice, follow=follow)


class Session:
    """An engine getting ready while its caller prepares the tasks: on Dask, the client
    connects (and a local cluster starts) on a thread of its own from the moment the
    session is made; :meth:`run` waits for it. ``with Session(engine, preload=...) as s:``,
    then work out the tasks, then ``s.run(tasks)`` (any number of runs); the local cluster
    closes with the session.

    ``preload``: modules a local cluster's workers import as they start, before they take
    a task, e.g. the task's module and its tuner (0.35 s for a network's screening, which
    the first task on each worker would otherwise spend; they import while this process
    still plans). A remote cluster's workers are already running: they import on their
    first task.

    A local cluster of 2 workers is ready 0.4 s after its start begins, 0.85-0.9 s with a
    network's preloads (each worker imports Dask, odyssey and Pyomo: about 0.7 CPU s);
    `odyssey network` analyses VGG16's 9 layer shapes (0.2 s) in the meantime (2026-11-26)."""

    def __init__(self, engine: Engine, *, preload: Sequence[str] = ()) -> None:
        self.engine = engine
        self.preload = tuple(preload)
        self._client: Any = None
        self._cluster: Any = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if engine.distributed:
            logging.getLogger("tornado.application").addFilter(_sync_cancel_race)
            self._thread = threading.Thread(target=self._connect, name="odyssey-engine-start",
                                            daemon=True)
            self._thread.start()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self) -> None:
        import distributed

        try:
            if self.engine.scheduler is not None:
                self._client = distributed.Client(
                    self.engine.scheduler, timeout=self.engine.connect_timeout_s,
                    set_as_default=False)
                return
            import dask

            # its HTTP server on a free loopback port: never the default 8787 of another run;
            # the workers' configuration (each nanny passes this process's to its worker)
            # without the statistical profiler (see LOCAL_WORKER_CONFIG)
            with dask.config.set({**LOCAL_WORKER_CONFIG, "distributed.worker.preload": [
                    "odyssey.tune._dask_worker", *self.preload]}):
                self._cluster = distributed.LocalCluster(
                    n_workers=self.engine.workers, threads_per_worker=1, processes=True,
                    dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR)
            self._client = distributed.Client(self._cluster, set_as_default=False)
        except BaseException as exc:  # told by run(), in the caller's thread
            self._error = exc

    def _ready(self) -> Any:
        """The connected client (after waiting for the start to finish)."""
        if self._thread is None:
            raise EngineError("this engine session is closed")
        self._thread.join()
        if self._error is not None:
            if isinstance(self._error, OSError | TimeoutError):
                raise EngineError(f"cannot run {self.engine.describe()}: {self._error}") from None
            raise self._error
        return self._client

    def run(self, tasks: Sequence[Task], *, on_done: OnDone | None = None,
            on_notice: OnNotice | None = None, follow: Follow | None = None) -> EngineRun:
        """Run ``tasks`` (and those ``follow`` adds), as :func:`run_tasks` says."""
        keys = [t.key for t in tasks]
        if len(set(keys)) != len(keys):
            raise EngineError("task keys must be unique")
        if not self.engine.distributed:
            return _run_here(tasks, self.engine, on_done, follow)
        start = time.perf_counter()
        client = self._ready()
        notices: list[str] = []

        def notice(text: str) -> None:
            notices.append(text)
            if on_notice is not None:
                on_notice(text)

        return _drive(client, tasks, self.engine, on_done, notice, start, notices, follow)

    def close(self) -> None:
        """Disconnect (after the start finished), close the local cluster."""
        if self._thread is None:
            return
        self._thread.join()
        self._thread = None
        try:
            if self._client is not None:
                self._client.close()
            if self._cluster is not None:
                self._cluster.close()
        finally:
            logging.getLogger("tornado.application").removeFilter(_sync_cancel_race)


class _Keys:
    """The keys of a run so far: a task ``follow`` adds must not reuse one."""

    def __init__(self, tasks: Sequence[Task]) -> None:
        self.seen = {t.key for t in tasks}

    def add(self, new: Sequence[Task]) -> list[Task]:
        out = list(new)
        keys = [t.key for t in out]
        if len(set(keys)) != len(keys) or self.seen & set(keys):
            raise EngineError("task keys must be unique (a follow-up task reuses one)")
        self.seen |= set(keys)
        return out


def _run_here(tasks: Sequence[Task], engine: Engine, on_done: OnDone | None,
              follow: Follow | None) -> EngineRun:
    start = time.perf_counter()
    results: dict[str, Any] = {}
    interrupted = False
    queue = list(reversed(tasks))  # a stack: follow-up tasks run next
    keys = _Keys(tasks)
    total = len(tasks)
    while queue:
        task = queue.pop()
        try:
            value = task.fn(*task.args)
        except KeyboardInterrupt:
            interrupted = True
            break
        results[task.key] = value
        if follow is not None:
            more = keys.add(follow(task.key, value))
            total += len(more)
            queue += reversed(more)
        if on_done is not None:
            on_done(task.key, value, len(results), total)
    return EngineRun(results, {}, interrupted, (), time.perf_counter() - start, engine.describe())


def _sync_cancel_race(record: Any) -> bool:
    """Drop one log record: distributed's ``sync`` (2024-2025 releases) schedules a ``cancel``
    callback on Ctrl-C that reads a future not yet assigned when the interrupt arrives before
    the call started, and tornado logs that NameError with its traceback. The interrupt itself
    is handled (the run cancels its tasks and returns what finished); the record is noise."""
    exc = record.exc_info[1] if record.exc_info else None
    if not isinstance(exc, NameError) or exc.__traceback__ is None:
        return True
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return not (code.co_name == "cancel" and code.co_filename.endswith("utils.py")
                and "distributed" in code.co_filename)


def _drive(client: Any, tasks: Sequence[Task], engine: Engine, on_done: OnDone | None,
           notice: OnNotice, start: float, notices: list[str], follow: Follow | None) -> EngineRun:
    import queue

    import distributed

    by_key = {t.key: t for t in tasks}
    keys = _Keys(tasks)
    # a run's own prefix: two runs on one shared cluster never share a key
    prefix = f"odyssey-{time.time_ns():x}-"
    # the scheduler's "remove-worker" events (on the client's event-loop thread): a worker
    # that left unexpectedly, and the tasks it was running
    removed: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
    client.subscribe_topic("all", lambda event: removed.put(event[1])
                           if event[1].get("action") == "remove-worker" else None)
    futures = {client.submit(_located, t.fn, *t.args, key=prefix + t.key, pure=False,
                             retries=RETRIES, priority=-n): t.key for n, t in enumerate(tasks)}
    ran_on: dict[str, str] = {}  # key -> address of the worker that ran it
    pending = set(futures)
    results: dict[str, Any] = {}
    failed: dict[str, str] = {}
    finished = distributed.as_completed(list(futures), loop=client.loop)
    total = len(tasks)
    ahead = 0  # follow-up tasks go before the waiting ones, the first added first

    def submit_more(key: str, value: Any) -> None:
        nonlocal total, ahead
        if follow is None:
            return
        for t in keys.add(follow(key, value)):
            ahead += 1
            by_key[t.key] = t
            where = [ran_on[t.near]] if t.near in ran_on else None
            fut = client.submit(_located, t.fn, *t.args, key=prefix + t.key, pure=False,
                                retries=RETRIES, priority=(1 << 30) - ahead, workers=where,
                                allow_other_workers=where is not None)
            futures[fut] = t.key
            pending.add(fut)
            finished.add(fut)
            total += 1

    interrupted = False
    try:
        with _interrupt_flag() as ctrl_c:
            while pending and not ctrl_c.is_set():
                done = finished.next_batch(block=False) if finished.has_ready() else []
                if not done:
                    time.sleep(WAIT_S)
                while done:  # each future dropped once read: the cluster forgets it then
                    fut = done.pop()
                    pending.discard(fut)
                    key = futures.pop(fut)
                    if fut.status == "finished":
                        ran_on[key], results[key] = fut.result()
                        submit_more(key, results[key])
                        if on_done is not None:
                            on_done(key, results[key], len(results) + len(failed), total)
                    else:
                        exc = fut.exception()
                        failed[key] = f"{type(exc).__name__}: {exc}"
                        notice(f"task {key} failed on the cluster: {failed[key]}")
                        submit_more(key, None)
                    del fut
                while not removed.empty():
                    _worker_left(removed.get(), prefix, by_key, notice)
            interrupted = ctrl_c.is_set()
    except KeyboardInterrupt:  # where the flag is not in use (see _interrupt_flag)
        interrupted = True
    if interrupted:
        client.cancel(list(pending))
    with contextlib.suppress(Exception):  # the scheduler may be gone already
        client.unsubscribe_topic("all")
    return EngineRun(results, failed, interrupted, tuple(notices), time.perf_counter() - start,
                     engine.describe())


@contextlib.contextmanager
def _interrupt_flag() -> Iterator[threading.Event]:
    """While the run waits for its tasks, Ctrl-C (SIGINT) sets the event it yields instead of
    raising KeyboardInterrupt wherever the main thread happens to be: raised inside a
    finalizer (a Dask ``Future.__del__`` runs on every result read) it is printed as
    "Exception ignored" and lost, and the run went on to the end
    (:func:`odyssey.runtime.deferred_interrupt`: only in the main thread, where SIGINT has
    Python's default handler)."""
    with deferred_interrupt(threading.Event()) as hit:
        yield hit


def _located(fn: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """``fn(*args)`` on a Dask worker, and the worker's address (where a follow-up task with
    this task's key as its ``near`` is sent)."""
    from distributed import get_worker

    value = fn(*args)
    return get_worker().address, value


def _worker_left(event: dict[str, Any], prefix: str, by_key: dict[str, Task],
                 notice: OnNotice) -> None:
    """Tell about a worker that left the cluster unexpectedly while running tasks of this
    run (the scheduler runs them again on another worker)."""
    keys = [str(k).removeprefix(prefix) for k in event.get("processing-tasks", ())
            if str(k).startswith(prefix) and str(k).removeprefix(prefix) in by_key]
    if event.get("expected") or not keys:
        return
    notice(f"worker {event.get('worker', '?')} died with {', '.join(keys)} assigned to it; "
           "the scheduler runs them again on another worker")
