from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"


@pytest.fixture
def kernels_dir() -> Path:
    return KERNELS
