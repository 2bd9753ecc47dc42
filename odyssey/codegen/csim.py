"""Compile and run a generated design's C simulation with a plain C++ compiler.

The design directory holds ``kernel.h``, ``kernel.cpp`` and ``host.cpp`` (every ``*.cpp`` is
compiled). Two modes:

* ``sequential`` (the default) runs the design the way Vitis HLS C simulation does: the
  processes of a dataflow region are called one after another, in the order of the top
  function, over unbounded streams; the vendor headers are **Xilinx's own** ``ap_int.h`` and
  ``hls_stream.h``, found in the installed ``hls4ml`` wheel (:func:`vendor_include_dir`), plus
  odyssey's ``include/vitis/`` for what they lack (``hls_streamofblocks.h``) and the error
  reports of ``odyssey_vitis_csim.h``: a process that reads a stream no earlier process wrote
  stops the run (``ODYSSEY EMPTY READ ...``, exit 4), and so does data left unread in a stream
  (``ODYSSEY LEFTOVER ...``, exit 5).
* ``concurrent`` runs every process as a thread (``-DODYSSEY_CSIM``) over FIFOs bounded by the
  depths of the printed ``#pragma HLS STREAM`` lines, with odyssey's stand-in headers
  (:func:`include_dir`): a design that deadlocks in hardware deadlocks here too. The timed
  simulation builds on this mode.

Protocol with the host program: it prints a line starting with ``ODYSSEY CSIM PASS`` and exits
0 on success, or prints ``ODYSSEY CSIM FAIL ...`` and exits 1 on a result mismatch. A stream
operation blocked without progress anywhere for ``ODYSSEY_CSIM_TIMEOUT`` seconds makes the
program print ``ODYSSEY DEADLOCK: ...`` on stderr and exit 3.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Literal

from odyssey.errors import SimulationError

CsimStatus = Literal["pass", "mismatch", "deadlock", "empty_read", "leftover", "timeout",
                     "compile_error", "runtime_error", "interrupted"]
CsimMode = Literal["sequential", "concurrent"]
MODES: tuple[CsimMode, ...] = ("sequential", "concurrent")

PASS_MARKER = "ODYSSEY CSIM PASS"
FAIL_MARKER = "ODYSSEY CSIM FAIL"
DEADLOCK_MARKER = "ODYSSEY DEADLOCK"
DEADLOCK_EXIT_CODE = 3
EMPTY_READ_MARKER = "ODYSSEY EMPTY READ"
EMPTY_READ_EXIT_CODE = 4
LEFTOVER_MARKER = "ODYSSEY LEFTOVER"
LEFTOVER_EXIT_CODE = 5

BASE_FLAGS: tuple[str, ...] = ("-std=c++17", "-O1", "-pthread", "-DODYSSEY_CSIM")
SEQUENTIAL_FLAGS: tuple[str, ...] = ("-std=c++17", "-O1", "-include", "odyssey_vitis_csim.h")
_STREAM_PRAGMA = re.compile(r"^\s*#pragma\s+HLS\s+STREAM\s+variable=(\w+)\s+depth=(\d+)", re.M | re.I)
COMPILE_TIMEOUT_S = 600.0
MAX_DEADLOCK_TIMEOUT_S = 10.0
#: seconds the program may take to print its state and exit after Ctrl-C before it is killed
INTERRUPT_GRACE_S = 10.0
INTERRUPTED_EXIT_CODE = 130
COMPILER_LINES = 40
TAIL_LINES = 20


@dataclass(frozen=True)
class CsimResult:
    """Outcome of one C simulation."""

    passed: bool
    status: CsimStatus
    message: str
    stdout: str
    stderr: str
    compile_seconds: float
    run_seconds: float
    mode: CsimMode = "concurrent"
    headers: str = ""  # the directory of the vendor headers compiled against


def include_dir() -> Path:
    """Directory of the stand-in vendor headers and ``odyssey_dataflow.h``."""
    return Path(__file__).resolve().parent / "include"


def vitis_include_dir() -> Path:
    """odyssey's additions to Xilinx's headers for sequential C simulation."""
    return include_dir() / "vitis"


def vendor_include_dir() -> Path:
    """Xilinx's C-simulation headers (``ap_int.h``, ``hls_stream.h``; Apache-2.0) as shipped in
    the installed ``hls4ml`` wheel, under ``hls4ml/templates/vivado/ap_types/``. Raises
    :class:`SimulationError` saying how to install them when they are missing."""
    spec = importlib.util.find_spec("hls4ml")  # locates the package without importing it
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in roots:
        d = Path(root) / "templates" / "vivado" / "ap_types"
        if (d / "hls_stream.h").is_file() and (d / "ap_int.h").is_file():
            return d
    raise SimulationError(
        "Xilinx's C-simulation headers were not found: they come with the hls4ml wheel "
        "(hls4ml/templates/vivado/ap_types/); install them with `pip install 'odyssey[csim]'` "
        "(or `pip install hls4ml`), or simulate with odyssey's stand-ins: `odyssey csim --concurrent`"
    )


def stream_depths(kernel_cpp: str) -> dict[str, int]:
    """FIFO depths declared by the ``#pragma HLS STREAM variable=X depth=D`` lines of printed
    C++ (what Vitis reads; the concurrent simulation bounds its FIFOs by them)."""
    return {m.group(1): int(m.group(2)) for m in _STREAM_PRAGMA.finditer(kernel_cpp)}


def _depth_table(depths: dict[str, int]) -> str:
    """A translation unit defining ``odyssey_stream_depth(name)`` for the stand-in streams."""
    rows = "\n".join(f'    {{"{n}", {d}}},' for n, d in sorted(depths.items()))
    return ("#include <cstring>\n"
            "namespace { struct row { const char* name; int depth; };\n"
            f"const row rows[] = {{\n{rows}\n    {{nullptr, 0}}}};\n}}\n"
            'extern "C" int odyssey_stream_depth(const char* name) {\n'
            "  for (const row* r = rows; r->name != nullptr; ++r)\n"
            "    if (std::strcmp(r->name, name) == 0) return r->depth;\n"
            "  return 0;\n}\n")


def deadlock_timeout(timeout_s: float) -> float:
    """In-process deadlock time-out used for a run limited to ``timeout_s`` seconds.

    Half the run budget, capped at 10 s, so a deadlock is reported by the program itself
    well before the subprocess time-out fires.
    """
    return min(MAX_DEADLOCK_TIMEOUT_S, timeout_s / 2.0)


def run_csim(
    design_dir: Path,
    *,
    mode: CsimMode = "sequential",
    timeout_s: float = 60.0,
    cxx: str = "g++",
    extra_flags: Sequence[str] = (),
    compile_timeout_s: float | None = None,
    interruptible: bool = False,
    on_stderr: Callable[[str], bool] | None = None,
) -> CsimResult:
    """Compile every ``*.cpp`` of ``design_dir`` for ``mode`` (see the module docstring), run
    it, classify.

    A KeyboardInterrupt (Ctrl-C) stops the compiler or the program (SIGINT, then after
    ``INTERRUPT_GRACE_S`` a kill) and keeps what it printed: with ``interruptible`` the result
    has status ``"interrupted"``; without it (a caller running several simulations, which must
    stop them all) the KeyboardInterrupt propagates once the child is gone. ``on_stderr`` sees
    each line the program writes to standard error as it comes (in the calling thread); a line
    for which it returns True is left out of the result's ``stderr``.

    The binary is built in a temporary directory, which is also the working directory of the
    run (``ODYSSEY_DESIGN_DIR`` points back at the design). ``extra_flags`` go last on the
    compiler command line (e.g. ``-UODYSSEY_CSIM`` for sequential execution over the stand-ins).
    Raises :class:`SimulationError` for unusable inputs (missing directory, no sources, no
    compiler, non-positive time-out, unknown mode, Xilinx's headers missing in sequential
    mode); problems of the design itself are reported in the result. ``compile_timeout_s``
    limits the compiler (default :func:`compile_timeout`, which grows with the design).
    """
    if mode not in MODES:
        raise SimulationError(f"C simulation mode must be one of {', '.join(MODES)}, got {mode!r}")
    design = Path(design_dir)
    if timeout_s <= 0:
        raise SimulationError(f"C simulation time-out must be positive, got {timeout_s}")
    if not design.is_dir():
        raise SimulationError(f"design directory {design} does not exist")
    sources = sorted(design.glob("*.cpp"))
    if not sources:
        raise SimulationError(f"no *.cpp files in design directory {design}")
    compiler = shutil.which(cxx)
    if compiler is None:
        raise SimulationError(f"C++ compiler '{cxx}' not found on PATH; install it or pass cxx=")

    if compile_timeout_s is not None and compile_timeout_s <= 0:
        raise SimulationError(f"--compile-timeout must be positive, got {compile_timeout_s}")
    limit = compile_timeout_s if compile_timeout_s is not None else compile_timeout(sources)
    headers = vendor_include_dir() if mode == "sequential" else include_dir()
    watch = _Watch(interruptible, on_stderr)
    result = _compile_and_run(design, sources, compiler, mode, headers, timeout_s, extra_flags, limit,
                              watch)
    return replace(result, mode=mode, headers=str(headers))


class _Watch:
    """How :func:`run_csim` treats Ctrl-C and the program's standard error."""

    def __init__(self, interruptible: bool, on_stderr: Callable[[str], bool] | None) -> None:
        self.interruptible = interruptible
        self.on_stderr = on_stderr

    def interrupted(self, result: CsimResult) -> CsimResult:
        """``result`` of a run stopped by Ctrl-C, or the KeyboardInterrupt again."""
        if not self.interruptible:
            raise KeyboardInterrupt
        return result


def compile_timeout(sources: Sequence[Path]) -> float:
    """Seconds the compiler may take on ``sources``: ``COMPILE_TIMEOUT_S`` and 60 s more per
    MB of source beyond the first (a large array's kernel.cpp of a few MB takes minutes)."""
    size = sum(s.stat().st_size for s in sources)
    return COMPILE_TIMEOUT_S + 60.0 * max(0.0, size / 1e6 - 1.0)


def _compile_and_run(design: Path, sources: list[Path], compiler: str, mode: CsimMode, headers: Path,
                     timeout_s: float, extra_flags: Sequence[str], compile_limit: float,
                     watch: _Watch) -> CsimResult:
    with tempfile.TemporaryDirectory(prefix="odyssey-csim-") as build:
        binary = Path(build) / "csim"
        units = [str(s.resolve()) for s in sources]
        if mode == "sequential":
            flags = [*SEQUENTIAL_FLAGS, f"-I{design.resolve()}", f"-I{vitis_include_dir()}", f"-I{headers}"]
        else:
            # The stand-in odyssey_dataflow.h first: a design directory keeps the copy it was
            # generated with, and its include guard must not let an older copy pair with the
            # newer stream headers (the timed simulation runs tasks as fibers since 2026-11).
            flags = [*BASE_FLAGS, "-include", str(include_dir() / "odyssey_dataflow.h"),
                     f"-I{design.resolve()}", f"-I{include_dir()}"]
            kernel = design / "kernel.cpp"
            depths = stream_depths(kernel.read_text()) if kernel.is_file() else {}
            table = Path(build) / "odyssey_stream_depths.cpp"
            table.write_text(_depth_table(depths))
            units.append(str(table))
        command = [compiler, *flags, *units, "-o", str(binary), *extra_flags]
        start = time.monotonic()
        try:
            compiled = subprocess.run(
                command, capture_output=True, timeout=compile_limit, check=False
            )
        except KeyboardInterrupt:  # subprocess.run has killed the compiler
            return watch.interrupted(_result(
                "interrupted", f"interrupted while compiling (after {time.monotonic() - start:.1f} s)",
                compile_seconds=time.monotonic() - start))
        except subprocess.TimeoutExpired:
            return _result(
                "compile_error",
                f"compiler did not finish within {compile_limit:.0f} s; give it longer with "
                "--compile-timeout SECONDS",
                compile_seconds=time.monotonic() - start,
            )
        compile_seconds = time.monotonic() - start
        if compiled.returncode != 0 or not binary.exists():
            output = _text(compiled.stderr) + _text(compiled.stdout)
            return _result(
                "compile_error",
                _head(output, COMPILER_LINES) or f"compiler exited with {compiled.returncode}",
                stdout=_text(compiled.stdout),
                stderr=_text(compiled.stderr),
                compile_seconds=compile_seconds,
            )

        env = dict(os.environ)
        env["ODYSSEY_CSIM_TIMEOUT"] = f"{deadlock_timeout(timeout_s):g}"
        env["ODYSSEY_DESIGN_DIR"] = str(design.resolve())
        start = time.monotonic()
        ran = _run_program([str(binary)], cwd=build, env=env, timeout_s=timeout_s,
                           on_stderr=watch.on_stderr)
        run_seconds = time.monotonic() - start
        if ran.how == "timeout":
            return _result(
                "timeout",
                f"simulation did not finish within {timeout_s:g} s",
                stdout=ran.stdout,
                stderr=ran.stderr,
                compile_seconds=compile_seconds,
                run_seconds=run_seconds,
            )
        if ran.how == "interrupted":
            return watch.interrupted(_result(
                "interrupted", _interrupted_message(ran, run_seconds), stdout=ran.stdout,
                stderr=ran.stderr, compile_seconds=compile_seconds, run_seconds=run_seconds))
        return classify(
            ran.returncode,
            ran.stdout,
            ran.stderr,
            compile_seconds=compile_seconds,
            run_seconds=run_seconds,
        )


@dataclass(frozen=True, slots=True)
class _Ran:
    """A finished, timed-out or interrupted run of the program."""

    how: Literal["exited", "timeout", "interrupted"]
    returncode: int
    stdout: str
    stderr: str
    killed: bool = False  # it did not stop within INTERRUPT_GRACE_S of Ctrl-C


def _run_program(argv: list[str], *, cwd: str, env: dict[str, str], timeout_s: float,
                 on_stderr: Callable[[str], bool] | None) -> _Ran:
    """Run ``argv``, reading both pipes as they fill (two threads) and handing each line of
    standard error to ``on_stderr`` in this thread. On Ctrl-C the program gets SIGINT (it may
    have had one already, as Ctrl-C signals the terminal's whole process group) and
    ``INTERRUPT_GRACE_S`` to print its state and exit; a second Ctrl-C kills it at once."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out: list[bytes] = []
    err: list[str] = []
    lines: queue.Queue[bytes | None] = queue.Queue()
    assert proc.stdout is not None and proc.stderr is not None
    stdout, stderr = proc.stdout, proc.stderr
    readers = [threading.Thread(target=lambda: out.append(stdout.read()), daemon=True),
               threading.Thread(target=_lines, args=(stderr, lines), daemon=True)]
    for r in readers:
        r.start()

    def take(line: bytes | None) -> None:
        if line is None:
            return
        text = _text(line)
        if on_stderr is None or not on_stderr(text.rstrip("\n")):
            err.append(text)

    deadline = time.monotonic() + timeout_s
    how: Literal["exited", "timeout", "interrupted"] = "exited"
    killed = False
    try:
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if line is None:  # standard error closed: the program is ending
                proc.wait(timeout=max(0.01, deadline - time.monotonic()))
                break
            take(line)
        else:
            raise subprocess.TimeoutExpired(argv, timeout_s)
    except subprocess.TimeoutExpired:
        how = "timeout"
        proc.kill()
    except KeyboardInterrupt:
        how = "interrupted"
        killed = _stop(proc)
    proc.wait()
    for r in readers:
        r.join()
    while not lines.empty():
        take(lines.get_nowait())
    return _Ran(how, proc.returncode, _text(b"".join(out)), "".join(err), killed)


def _lines(stream: IO[bytes], into: queue.Queue[bytes | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def _stop(proc: subprocess.Popen[bytes]) -> bool:
    """SIGINT to ``proc``, then a kill after ``INTERRUPT_GRACE_S`` or a second Ctrl-C; whether
    it had to be killed."""
    try:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=INTERRUPT_GRACE_S)
        return False
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        proc.kill()
        return True


def _interrupted_message(ran: _Ran, seconds: float) -> str:
    if ran.killed:
        return (f"interrupted after {seconds:.1f} s of simulation; the program did not stop within "
                f"{INTERRUPT_GRACE_S:g} s of Ctrl-C and was killed")
    if ran.returncode == -signal.SIGINT:
        return f"interrupted after {seconds:.1f} s of simulation, outside the kernel"
    return f"interrupted after {seconds:.1f} s of simulation"


def classify(
    returncode: int,
    stdout: str,
    stderr: str,
    *,
    compile_seconds: float = 0.0,
    run_seconds: float = 0.0,
) -> CsimResult:
    """Classify a finished simulation run from its exit code and output."""
    times = {"compile_seconds": compile_seconds, "run_seconds": run_seconds}
    fail_line = _marker_line(stdout, FAIL_MARKER)
    deadlock_line = _marker_line(stderr, DEADLOCK_MARKER)
    if returncode == DEADLOCK_EXIT_CODE and deadlock_line is not None:
        return _result("deadlock", deadlock_line, stdout=stdout, stderr=stderr, **times)
    empty_line = _marker_line(stderr, EMPTY_READ_MARKER)
    if returncode == EMPTY_READ_EXIT_CODE and empty_line is not None:
        return _result("empty_read", empty_line, stdout=stdout, stderr=stderr, **times)
    leftover_line = _marker_line(stderr, LEFTOVER_MARKER)
    if returncode == LEFTOVER_EXIT_CODE and leftover_line is not None:
        return _result("leftover", leftover_line, stdout=stdout, stderr=stderr, **times)
    if fail_line is not None:
        return _result("mismatch", fail_line, stdout=stdout, stderr=stderr, **times)
    if returncode == 0:
        pass_line = _marker_line(stdout, PASS_MARKER)
        if pass_line is not None:
            return _result("pass", pass_line, stdout=stdout, stderr=stderr, **times)
        message = f"program exited 0 without printing '{PASS_MARKER}'"
    elif returncode < 0:
        message = f"program killed by {_signal_name(-returncode)}"
    else:
        message = f"program exited with code {returncode}"
    tail = _tail(stderr, TAIL_LINES)
    if tail:
        message = f"{message}; stderr:\n{tail}"
    return _result("runtime_error", message, stdout=stdout, stderr=stderr, **times)


def _result(
    status: CsimStatus,
    message: str,
    *,
    stdout: str = "",
    stderr: str = "",
    compile_seconds: float = 0.0,
    run_seconds: float = 0.0,
) -> CsimResult:
    return CsimResult(
        passed=status == "pass",
        status=status,
        message=message,
        stdout=stdout,
        stderr=stderr,
        compile_seconds=compile_seconds,
        run_seconds=run_seconds,
    )


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="replace")
    return data


def _marker_line(text: str, marker: str) -> str | None:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(marker):
            return stripped
    return None


def _head(text: str, lines: int) -> str:
    return "\n".join(text.splitlines()[:lines])


def _tail(text: str, lines: int) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
