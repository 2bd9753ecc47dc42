"""The kernels shipped with odyssey (``odyssey/kernels/*.c``, package data; ``kernels/`` at
the repository root links to them), usable by name from any working directory."""

from __future__ import annotations

from pathlib import Path

#: the folder of the bundled kernels
KERNELS_DIR = Path(__file__).resolve().parents[1] / "kernels"


def bundled_kernels() -> tuple[str, ...]:
    """Names of the bundled kernels (``mm``, ``cnn``, ..., ``sub/name`` in subfolders), sorted."""
    return tuple(sorted(p.relative_to(KERNELS_DIR).with_suffix("").as_posix()
                        for p in KERNELS_DIR.rglob("*.c")))


def bundled_kernel(name: str) -> Path | None:
    """The bundled kernel ``name`` (``mm``, ``mm.c``, or ``sub/name`` for one in a subfolder),
    or None if there is none."""
    stem = name[:-2] if name.endswith(".c") else name
    rel = Path(stem)
    if not stem or rel.is_absolute() or ".." in rel.parts or "\\" in stem:
        return None
    path = KERNELS_DIR / f"{stem}.c"
    return path if path.is_file() else None
