from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"


@pytest.fixture
def kernels_dir() -> Path:
    return KERNELS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """In random order (``-p randomly``), the seed that reproduces the order: the configured
    ``-q`` hides the header where pytest-randomly prints it."""
    if config.pluginmanager.hasplugin("randomly"):
        seed = config.getoption("randomly_seed", None)
        terminalreporter.write_line(f"random order: reproduce it with -p randomly --randomly-seed={seed}")
