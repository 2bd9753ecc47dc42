"""The kernels shipped with odyssey (``odyssey/kernels/*.c``, package data; ``kernels/`` at
the repository root links to them), usable by name from any working directory."""

from __future__ import annotations

from pathlib import Path

#: the folder of the bundled kernels
KERNELS_DIR = Path(__file__).resolve().parents[1] / "kernels"


def bundled_kernels() -> tuple[str, ...]:
    """Names of the bundled kernels (``mm``, ``cnn``, ...), sorted."""
    return tuple(sorted(p.stem for p in KERNELS_DIR.glob("*.c")))


def bundled_kernel(name: str) -> Path | None:
    """The bundled kernel ``name`` (``mm`` or ``mm.c``), or None if there is none."""
    stem = name[:-2] if name.endswith(".c") else name
    if not stem or "/" in stem or "\\" in stem:
        return None
    path = KERNELS_DIR / f"{stem}.c"
    return path if path.is_file() else None
