"""Compile and run a generated design's C simulation with a plain C++ compiler.

The design directory holds ``kernel.h``, ``kernel.cpp`` and ``host.cpp`` (every ``*.cpp`` is
compiled). Vendor headers (``hls_stream.h``, ``hls_streamofblocks.h``, ``ap_int.h``) resolve to
odyssey's stand-ins in :func:`include_dir`, and ``ODYSSEY_CSIM`` makes every dataflow process a
thread over bounded FIFOs, so a design that deadlocks in hardware deadlocks here too.

Protocol with the host program: it prints a line starting with ``ODYSSEY CSIM PASS`` and exits
0 on success, or prints ``ODYSSEY CSIM FAIL ...`` and exits 1 on a result mismatch. A stream
operation blocked without progress anywhere for ``ODYSSEY_CSIM_TIMEOUT`` seconds makes the
program print ``ODYSSEY DEADLOCK: ...`` on stderr and exit 3.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from odyssey.errors import SimulationError

CsimStatus = Literal["pass", "mismatch", "deadlock", "timeout", "compile_error", "runtime_error"]

PASS_MARKER = "ODYSSEY CSIM PASS"
FAIL_MARKER = "ODYSSEY CSIM FAIL"
DEADLOCK_MARKER = "ODYSSEY DEADLOCK"
DEADLOCK_EXIT_CODE = 3

BASE_FLAGS: tuple[str, ...] = ("-std=c++17", "-O1", "-pthread", "-DODYSSEY_CSIM")
COMPILE_TIMEOUT_S = 600.0
MAX_DEADLOCK_TIMEOUT_S = 10.0
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


def include_dir() -> Path:
    """Directory of the stand-in vendor headers and ``odyssey_dataflow.h``."""
    return Path(__file__).resolve().parent / "include"


def deadlock_timeout(timeout_s: float) -> float:
    """In-process deadlock time-out used for a run limited to ``timeout_s`` seconds.

    Half the run budget, capped at 10 s, so a deadlock is reported by the program itself
    well before the subprocess time-out fires.
    """
    return min(MAX_DEADLOCK_TIMEOUT_S, timeout_s / 2.0)


def run_csim(
    design_dir: Path,
    *,
    timeout_s: float = 60.0,
    cxx: str = "g++",
    extra_flags: Sequence[str] = (),
) -> CsimResult:
    """Compile every ``*.cpp`` of ``design_dir`` with the stand-in headers, run it, classify.

    The binary is built in a temporary directory, which is also the working directory of the
    run (``ODYSSEY_DESIGN_DIR`` points back at the design). ``extra_flags`` go last on the
    compiler command line (e.g. ``-UODYSSEY_CSIM`` for sequential execution). Raises
    :class:`SimulationError` for unusable inputs (missing directory, no sources, no compiler,
    non-positive time-out); problems of the design itself are reported in the result.
    """
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

    with tempfile.TemporaryDirectory(prefix="odyssey-csim-") as build:
        binary = Path(build) / "csim"
        command = [
            compiler,
            *BASE_FLAGS,
            f"-I{design.resolve()}",
            f"-I{include_dir()}",
            *(str(s.resolve()) for s in sources),
            "-o",
            str(binary),
            *extra_flags,
        ]
        start = time.monotonic()
        try:
            compiled = subprocess.run(
                command, capture_output=True, timeout=COMPILE_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            return _result(
                "compile_error",
                f"compiler did not finish within {COMPILE_TIMEOUT_S:.0f} s",
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
        try:
            ran = subprocess.run(
                [str(binary)],
                capture_output=True,
                timeout=timeout_s,
                cwd=build,
                env=env,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired as expired:
            return _result(
                "timeout",
                f"simulation did not finish within {timeout_s:g} s",
                stdout=_text(expired.stdout),
                stderr=_text(expired.stderr),
                compile_seconds=compile_seconds,
                run_seconds=time.monotonic() - start,
            )
        run_seconds = time.monotonic() - start
        return classify(
            ran.returncode,
            _text(ran.stdout),
            _text(ran.stderr),
            compile_seconds=compile_seconds,
            run_seconds=run_seconds,
        )


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
