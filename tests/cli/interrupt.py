"""Helpers for tests that press Ctrl-C: an odyssey command in a process of its own, SIGINT
to its process group once standard error shows a given line, what it printed and wrote."""

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


def interrupt_after(argv: list[str], cwd: Path, *, when: str | tuple[str, ...], then_s: float = 0.0,
                    limit_s: float = 120.0, group: bool = True) -> Interrupted:
    """Run ``odyssey argv``; once a line of standard error contains ``when`` (or one of
    them), wait ``then_s`` seconds and send SIGINT (as Ctrl-C: to the process group; with
    ``group=False`` to odyssey alone, as ``kill -INT PID`` does)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "odyssey.cli", *argv], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env, cwd=cwd, start_new_session=True,
        preexec_fn=_default_sigint)
    assert proc.stderr is not None
    whens = (when,) if isinstance(when, str) else when
    err: list[str] = []
    deadline = time.monotonic() + limit_s
    for line in proc.stderr:
        err.append(line)
        if any(w in line for w in whens) or time.monotonic() > deadline:
            break
    time.sleep(then_s)
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
    return Interrupted(proc.returncode, out, "".join(err) + rest, time.monotonic() - sent)
