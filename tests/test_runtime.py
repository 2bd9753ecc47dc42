"""Process-wide settings of the `odyssey` command (:mod:`odyssey.runtime`)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_tune_malloc_applies_in_a_fresh_process() -> None:
    """In a process of its own (the settings are process-wide): every ``mallopt`` call is
    accepted, twice (idempotent), and a large array is still allocated and freed."""
    code = ("from odyssey.runtime import tune_malloc; import numpy as np; "
            "assert tune_malloc() and tune_malloc(); a = np.ones(1 << 24); assert a.sum() == 1 << 24")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
