"""ruff and mypy are part of the test run (so CI runs them): the code base stays clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False, timeout=600)


@pytest.mark.skipif(shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists(),
                    reason="ruff is not installed (pip install '.[dev]')")
def test_ruff_is_clean() -> None:
    ruff = str(Path(sys.executable).parent / "ruff") if (Path(sys.executable).parent / "ruff").exists() else "ruff"
    res = _run(ruff, "check", "odyssey", "tests", "scripts")
    assert res.returncode == 0, res.stdout + res.stderr


def test_mypy_is_clean() -> None:
    pytest.importorskip("mypy")
    res = _run(sys.executable, "-m", "mypy", "odyssey")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
