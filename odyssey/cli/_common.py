"""Helpers shared by the subcommands: argument types, -D parsing, plain-text tables."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from odyssey.codegen.geometry import LAYOUTS, Layout
from odyssey.errors import OdysseyError


def defines(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise OdysseyError(f"-D {item}: expected NAME=VALUE, e.g. -D I=1024")
        out[name] = value
    return out


def layouts(items: Sequence[str]) -> dict[str, Layout]:
    """``--layout ARRAY=row_major`` (repeatable, or comma-separated) as a mapping; the
    generator checks the array names and the layouts against the kernel."""
    out: dict[str, Layout] = {}
    for item in (x for group in items for x in group.split(",") if x):
        name, sep, value = item.partition("=")
        lay = next((x for x in LAYOUTS if x == value), None)
        if not sep or not name.isidentifier() or lay is None:
            raise OdysseyError(f"--layout {item}: expected ARRAY=LAYOUT with LAYOUT one of "
                               f"{', '.join(LAYOUTS)}, e.g. --layout A=row_major")
        out[name] = lay
    return out


def table(rows: list[list[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value
