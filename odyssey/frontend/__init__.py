"""odyssey.frontend: C source -> polyhedral scops."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from odyssey.errors import KernelParseError
from odyssey.frontend.cparse import parse_kernel
from odyssey.frontend.source import decode_source, read_source
from odyssey.polyhedral.scop import Scop

__all__ = ["decode_source", "load_scop", "parse_kernel", "read_source"]


def load_scop(path: str | Path, defines: Mapping[str, str] | None = None, *, index: int = 0) -> Scop:
    """Read the C file ``path`` (encoding detected: :func:`read_source`) and return its
    ``index``-th scop."""
    p = Path(path)
    text = read_source(p)
    scops = parse_kernel(p, text, defines)
    if not 0 <= index < len(scops):
        raise KernelParseError(f"{p}: has {len(scops)} scop region(s); scop {index} does not exist")
    return scops[index]
