"""Helpers for tests that press Ctrl-C: an odyssey command in a process of its own, SIGINT
to its process group once standard error shows a given line (or a given number of seconds
after its start), what it printed and wrote."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Interrupted:
    returncode: int
    stdout: str
    stderr: str
    answered_s: float  # from SIGINT to the process's exit


def _default_sigint() -> None:
    """In the child: Ctrl-C's default (a runner may start the tests with SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(argv: list[str], cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-m", "odyssey.cli", *argv], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env, cwd=cwd, start_new_session=True,
        preexec_fn=_default_sigint)


def _stop(proc: subprocess.Popen[str], *, group: bool) -> tuple[str, str, float]:
    """SIGINT (to the process group, or to odyssey alone); what it printed after, and the
    seconds it took to exit (killed after 60 s)."""
    sent = time.monotonic()
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    try:
        out, rest = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, rest = proc.communicate()
    return out, rest, time.monotonic() - sent


def interrupt_at(argv: list[str], cwd: Path, at_s: float) -> Interrupted:
    """Run ``odyssey argv`` and press Ctrl-C ``at_s`` seconds after its start (SIGINT to its
    process group). A command that ends before then fails the assertion: the test meant to
    interrupt it."""
    proc = _start(argv, cwd)
    try:
        out, err = proc.communicate(timeout=at_s)
    except subprocess.TimeoutExpired:  # still running: retrying communicate loses no output
        pass
    else:
        raise AssertionError(f"odyssey {' '.join(argv)} ended (exit {proc.returncode}) before "
                             f"{at_s} s:\n{out}\n{err}")
    out, err, answered = _stop(proc, group=True)
    return Interrupted(proc.returncode, out, err, answered)


def interrupt_after(argv: list[str], cwd: Path, *, when: str | tuple[str, ...], then_s: float = 0.0,
                    limit_s: float = 120.0, group: bool = True) -> Interrupted:
    """Run ``odyssey argv``; once a line of standard error contains ``when`` (or one of
    them), wait ``then_s`` seconds and send SIGINT (as Ctrl-C: to the process group; with
    ``group=False`` to odyssey alone, as ``kill -INT PID`` does)."""
    proc = _start(argv, cwd)
    assert proc.stderr is not None
    whens = (when,) if isinstance(when, str) else when
    err: list[str] = []
    deadline = time.monotonic() + limit_s
    for line in proc.stderr:
        err.append(line)
        if any(w in line for w in whens) or time.monotonic() > deadline:
            break
    time.sleep(then_s)
    out, rest, answered = _stop(proc, group=group)
    return Interrupted(proc.returncode, out, "".join(err) + rest, answered)
