"""Timed C simulation: the C simulation of :mod:`odyssey.codegen.csim` with cycle accounting.

The same sources are compiled with ``-DODYSSEY_TIMED`` on top of the C-simulation flags. Each
dataflow task then keeps a clock that pipelines (``ODYSSEY_PIPE_*`` hooks), DRAM bursts
(``ODYSSEY_DRAM``) and waits on streams and blocks advance; the exact contract is documented
at the top of ``include/odyssey_timed.h``. After the kernel returns, the host's
``ODYSSEY_TIMED_REPORT()`` prints::

    ODYSSEY TIMED CYCLES <latency>
    ODYSSEY TIMED MODULE <name> <end cycle> <stall cycles>     (one line per task)

The latency is the largest end cycle over all tasks. This module parses those lines into a
:class:`TimedResult`; the pass/mismatch/deadlock classification is the C simulation's.

While the kernel runs, the program writes a progress line to stderr about once a second::

    ODYSSEY TIMED PROGRESS <wall seconds> <cycle reached> <tasks finished> <tasks started>

and on Ctrl-C (SIGINT) it prints its state instead of a report, and exits with status 130::

    ODYSSEY TIMED INTERRUPTED <cycle reached> <tasks finished> <tasks started>
    ODYSSEY TIMED TASK <name> done|running <clock> <stall>     (one line per task started)

The cycle reached is the latest clock of any task so far: a lower bound of the latency, not the
latency (``include/odyssey_timed.h``, "Progress" and "Ctrl-C").

Engines (same cycles for the same program; the contract depends only on each task's program
order): ``"fibers"`` (default) runs every task as a fiber of one OS thread that yields only when
a stream or block operation cannot proceed (``include/odyssey_fiber.h``); ``"threads"``
(``-DODYSSEY_TIMED_THREADS``) runs one ``std::thread`` per task, like the untimed concurrent C
simulation, and is kept as a cross-check. Timed builds use ``-Og``: on arrays of 64-112 PEs it
compiles in about half the time of ``-O1`` and the whole compile-and-run is shorter
(``docs/validation.md``, "Large arrays").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from odyssey.codegen.csim import CsimResult, CsimStatus, run_csim
from odyssey.errors import SimulationError

TimedEngine = Literal["fibers", "threads"]
ENGINES: tuple[TimedEngine, ...] = ("fibers", "threads")
# After the C simulation's own flags, so -Og replaces its -O1.
TIMED_FLAGS: tuple[str, ...] = ("-DODYSSEY_TIMED", "-Og")
ENGINE_FLAGS: dict[TimedEngine, tuple[str, ...]] = {
    "fibers": (),
    "threads": ("-DODYSSEY_TIMED_THREADS",),
}
CYCLES_MARKER = "ODYSSEY TIMED CYCLES"
MODULE_MARKER = "ODYSSEY TIMED MODULE"
PROGRESS_MARKER = "ODYSSEY TIMED PROGRESS"
INTERRUPTED_MARKER = "ODYSSEY TIMED INTERRUPTED"
TASK_MARKER = "ODYSSEY TIMED TASK"
START_MARKER = "ODYSSEY TIMED START"
SPAN_MARKER = "ODYSSEY TIMED SPAN"
#: what a stall waited for, by its trace letter (``include/odyssey_timed.h``, "Trace")
STALL_KINDS: dict[str, str] = {"r": "empty FIFO", "w": "full FIFO", "b": "block", "d": "DRAM pace"}


@dataclass(frozen=True, slots=True)
class TimedProgress:
    """How far a running (or interrupted) timed simulation got.

    ``cycle`` is the latest clock of any task started so far (a finished task's end, a running
    task's clock): a lower bound of the latency, in cycles. ``seconds`` is the wall time since
    the kernel started (None in the state printed at Ctrl-C)."""

    cycle: int
    finished: int
    started: int
    seconds: float | None = None


@dataclass(frozen=True, slots=True)
class TaskState:
    """One task at Ctrl-C: ``clock`` is its end cycle when ``done``, else the cycle it reached
    (None when the engine cannot tell: threads); ``stall`` likewise."""

    name: str
    done: bool
    clock: int | None
    stall: int | None


@dataclass(frozen=True, slots=True)
class TaskTrace:
    """One finished task of a traced run (``trace=True``): it ran from ``start`` to ``end``
    (cycles) and stalled ``stall`` cycles, in ``spans`` ``(from, to, kind)`` (kind a letter of
    :data:`STALL_KINDS`); ``merged`` stalls past the program's span limit extended its last
    span."""

    name: str
    start: int
    end: int
    stall: int
    merged: int
    spans: tuple[tuple[int, int, str], ...]


@dataclass(frozen=True, slots=True)
class TimedResult:
    """Outcome of one timed simulation.

    ``cycles`` is the simulated latency (max end cycle over all tasks), ``modules`` holds
    ``(name, end cycle, stall cycles)`` per task in spawn order; both are empty / ``None`` when
    the program did not print a report. ``stdout``/``stderr`` are the program's output.
    """

    status: CsimStatus
    cycles: int | None
    modules: tuple[tuple[str, int, int], ...]
    message: str
    compile_seconds: float
    run_seconds: float
    stdout: str = ""
    stderr: str = ""
    reached: TimedProgress | None = None  # with status "interrupted": the state at Ctrl-C
    tasks: tuple[TaskState, ...] = ()  # likewise, per task started, in spawn order
    traces: tuple[TaskTrace, ...] = ()  # with trace=True: per finished task, in spawn order

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass(frozen=True, slots=True)
class TimedReport:
    """The parsed ``ODYSSEY TIMED`` lines of a program's output."""

    cycles: int | None
    modules: tuple[tuple[str, int, int], ...]
    reached: TimedProgress | None = None
    tasks: tuple[TaskState, ...] = ()
    traces: tuple[TaskTrace, ...] = ()


def run_timed_sim(
    design_dir: Path,
    *,
    timeout_s: float = 300.0,
    cxx: str = "g++",
    extra_flags: Sequence[str] = (),
    engine: TimedEngine = "fibers",
    interruptible: bool = False,
    progress: Callable[[TimedProgress], None] | None = None,
    trace: bool = False,
) -> TimedResult:
    """Compile ``design_dir`` with ``-DODYSSEY_CSIM -DODYSSEY_TIMED``, run it, parse the report.

    ``extra_flags`` go last on the compiler command line (e.g.
    ``-DODYSSEY_DRAM_BURST_OVERHEAD=30``). ``engine`` picks how tasks run (module docstring).
    Raises :class:`~odyssey.errors.SimulationError` for unusable inputs, like
    :func:`~odyssey.codegen.csim.run_csim`, and for an unknown engine. A run that passes its
    output check but prints no usable report is a ``"runtime_error"`` whose message says why.
    ``progress`` hears of the program's progress lines (about one a second while the kernel
    runs). Ctrl-C: with ``interruptible`` the result has status ``"interrupted"`` and, when the
    program could print it, the state it reached (``reached``, ``tasks``); without it the
    KeyboardInterrupt propagates once the program is stopped (see
    :func:`~odyssey.codegen.csim.run_csim`). ``trace``: compiled with ``-DODYSSEY_TRACE``, the
    result also holds every finished task's stalls (``traces``).
    """
    if engine not in ENGINES:
        raise SimulationError(f"timed simulation engine must be one of {', '.join(ENGINES)}, got {engine!r}")

    def on_stderr(line: str) -> bool:
        if not line.startswith(PROGRESS_MARKER):
            return False
        fields = line[len(PROGRESS_MARKER):].split()
        if progress is not None and len(fields) == 4 and all(_is_int(f) for f in fields[1:]):
            try:
                seconds = float(fields[0])
            except ValueError:
                return True
            progress(TimedProgress(int(fields[1]), int(fields[2]), int(fields[3]), seconds))
        return True

    csim = run_csim(
        design_dir, mode="concurrent", timeout_s=timeout_s, cxx=cxx,
        extra_flags=(*TIMED_FLAGS, *ENGINE_FLAGS[engine], *(("-DODYSSEY_TRACE",) if trace else ()),
                     *extra_flags),
        interruptible=interruptible, on_stderr=on_stderr,
    )
    return timed_result(csim)


def timed_result(csim: CsimResult) -> TimedResult:
    """Combine a finished (timed) C simulation with the timing report in its output."""
    report = parse_report(csim.stdout)
    status: CsimStatus = csim.status
    message = csim.message
    if report.reached is not None and status != "interrupted":  # SIGINT sent to it alone
        status, message = "interrupted", "interrupted (the program was sent SIGINT)"
    if status == "interrupted" and report.reached is None and report.cycles is not None:
        message += "; the kernel had finished (its output was not checked)"
    if status == "pass" and report.cycles is None:
        status = "runtime_error"
        message = (
            f"the program passed but printed no '{CYCLES_MARKER}' line; the host must call "
            "ODYSSEY_TIMED_REPORT() after kernel0 returns"
        )
    elif status == "pass" and not report.modules:
        status = "runtime_error"
        message = (
            "the timing report lists no dataflow task; the design's odyssey_dataflow.h predates "
            "timed simulation (regenerate the design with `odyssey generate`)"
        )
    return TimedResult(
        status=status,
        cycles=report.cycles,
        modules=report.modules,
        message=message,
        compile_seconds=csim.compile_seconds,
        run_seconds=csim.run_seconds,
        stdout=csim.stdout,
        stderr=csim.stderr,
        reached=report.reached,
        tasks=report.tasks,
        traces=report.traces,
    )


def parse_report(stdout: str) -> TimedReport:
    """Parse the ``ODYSSEY TIMED`` lines; a task name may contain blanks (``PE<0, 1>``).

    The last ``CYCLES`` line wins; malformed lines are ignored.
    """
    cycles: int | None = None
    modules: list[tuple[str, int, int]] = []
    reached: TimedProgress | None = None
    tasks: list[TaskState] = []
    starts: list[tuple[str, int, int]] = []  # (name, start, merged) per traced task
    spans: list[list[tuple[int, int, str]]] = []
    last: dict[str, int] = {}  # a name's latest traced task
    for raw in stdout.splitlines():
        line = raw.strip()
        if line.startswith(INTERRUPTED_MARKER):
            numbers = line[len(INTERRUPTED_MARKER):].split()
            if len(numbers) == 3 and all(_is_int(n) for n in numbers):
                reached = TimedProgress(int(numbers[0]), int(numbers[1]), int(numbers[2]))
        elif line.startswith(TASK_MARKER):
            fields = line[len(TASK_MARKER):].strip().rsplit(maxsplit=3)
            if (len(fields) == 4 and fields[1] in ("done", "running") and _is_int(fields[2])
                    and _is_int(fields[3])):
                clock, stall = int(fields[2]), int(fields[3])
                tasks.append(TaskState(fields[0], fields[1] == "done", None if clock < 0 else clock,
                                       None if stall < 0 else stall))
        elif line.startswith(CYCLES_MARKER):
            value = line[len(CYCLES_MARKER) :].strip()
            if _is_int(value):
                cycles = int(value)
        elif line.startswith(MODULE_MARKER):
            fields = line[len(MODULE_MARKER) :].strip().rsplit(maxsplit=2)
            if len(fields) == 3 and _is_int(fields[1]) and _is_int(fields[2]):
                modules.append((fields[0], int(fields[1]), int(fields[2])))
        elif line.startswith(START_MARKER):
            fields = line[len(START_MARKER):].strip().split(maxsplit=2)
            if len(fields) == 3 and _is_int(fields[0]) and _is_int(fields[1]):
                last[fields[2]] = len(starts)
                starts.append((fields[2], int(fields[0]), int(fields[1])))
                spans.append([])
        elif line.startswith(SPAN_MARKER):
            fields = line[len(SPAN_MARKER):].strip().split(maxsplit=3)
            if (len(fields) == 4 and _is_int(fields[0]) and _is_int(fields[1]) and fields[2] in STALL_KINDS
                    and fields[3] in last):
                spans[last[fields[3]]].append((int(fields[0]), int(fields[1]), fields[2]))
    # the START lines follow the MODULE lines' order (finished tasks, spawn order)
    traces = tuple(TaskTrace(name, start, m[1], m[2], merged, tuple(sp))
                   for (name, start, merged), sp, m in zip(starts, spans, modules, strict=False) if m[0] == name)
    return TimedReport(cycles=cycles, modules=tuple(modules), reached=reached, tasks=tuple(tasks), traces=traces)


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()
