"""odyssey: systolic-array generator and auto-tuner for FPGAs."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
