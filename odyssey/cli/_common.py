"""Helpers shared by the subcommands: argument types, -D parsing, kernels by name, full
tilings, progress lines, plain-text tables."""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from odyssey.errors import OdysseyError, TilingError

if TYPE_CHECKING:
    from odyssey.codegen.geometry import Layout

DEFINE_HELP = ("set a size parameter of the kernel (a `#define NAME <integer>` in it) to a "
               "positive integer; repeatable, e.g. -D I=1024")
KERNEL_HELP = ("C file with a #pragma scop region, or the name of a bundled kernel (mm, cnn, "
               "dwconv, mv, fir, lu, mttkrp, syrk, ttmc) usable from any folder")
PLATFORM_HELP = "bundled platform name (u250, ...) or a platform JSON file (default u250)"
SEED_HELP = "random seed, a non-negative integer (default 0)"


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
    from odyssey.codegen.geometry import LAYOUTS

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
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return value


def seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer below 2**63, got {text!r}")
    return value


def kernel_file(text: str) -> str:
    """A kernel argument: an existing C file, or the name of a bundled kernel (``mm``)."""
    from odyssey.frontend.bundled import bundled_kernel, bundled_kernels

    path = Path(text)
    if path.is_file():
        return text
    if path.exists():
        raise argparse.ArgumentTypeError(f"{text}: is not a file; give a C file or a bundled "
                                         f"kernel ({', '.join(bundled_kernels())})")
    bundled = bundled_kernel(text)
    if bundled is not None:
        return str(bundled)
    raise argparse.ArgumentTypeError(f"{text}: no such file, and no bundled kernel of that name; "
                                     f"the bundled kernels are {', '.join(bundled_kernels())} "
                                     "(e.g. mm)")


def full_tiling(design: Any, text: str) -> dict[str, int]:
    """``--tiling`` text with every tiling parameter of ``design`` given, else TilingError
    naming the missing ones (nothing is filled in silently)."""
    from odyssey.codegen.tiling import parse_tiling_text

    values = parse_tiling_text(text)
    missing = [p.name for p in design.params if p.name not in values]
    if missing:
        raise TilingError(f"--tiling: design {design.id} also needs {', '.join(missing)} "
                          f"(its parameters are {', '.join(p.name for p in design.params)}; "
                          "1 means no tiling at that level; `odyssey designs KERNEL --json -` "
                          "lists their ranges)")
    return values


#: seconds between two progress lines when standard error is not a terminal
PROGRESS_EVERY_S = 5.0


class ProgressLine:
    """A progress line on standard error: rewritten in place on a terminal; elsewhere (a
    log, a pipe) printed as a new line at once, then at most every ``every`` seconds, so a
    long search is never silent (its first line comes as it starts) and a log never floods."""

    def __init__(self, every: float | None = None, live: bool | None = None) -> None:
        self.live = sys.stderr.isatty() if live is None else live
        self.every = PROGRESS_EVERY_S if every is None else every
        self._last = -math.inf
        self._shown = False

    def __call__(self, text: str, *, force: bool = False) -> None:
        if self.live:
            print(f"\r{text}\x1b[K", end="", file=sys.stderr, flush=True)
            self._shown = True
            return
        now = time.perf_counter()
        if force or now - self._last >= self.every:
            self._last = now
            print(text, file=sys.stderr, flush=True)

    def clear(self) -> None:
        """Remove the live line (nothing to do in a log)."""
        if self.live and self._shown:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
            self._shown = False


def add_clock(parser: Any) -> None:
    """``--clock MHZ``: the kernel clock (default: the platform's)."""
    parser.add_argument("--clock", type=positive_float, default=None, metavar="MHZ",
                        help="kernel clock in MHz (default: the platform's, 300 on the U250); GOP/s "
                             "and each DRAM channel's bytes per cycle follow it")


def share(used: float, of: float, label: str) -> str:
    """``used`` as a labelled share: ``"95.8% of usable"``."""
    return f"{100 * used / of:.1f}% of {label}" if of else f"- of {label}"




def lut_percents(text: str) -> tuple[int, ...]:
    """``--lut-mul``: comma-separated percents 0-100 of each PE's multiply lanes in LUT fabric."""
    out = []
    for part in text.split(","):
        try:
            value = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected percents 0-100 separated by commas (e.g. 0,25,50), "
                                             f"got {text!r}") from None
        if not 0 <= value <= 100:
            raise argparse.ArgumentTypeError(f"a percent is 0-100, got {value} in {text!r}")
        out.append(value)
    return tuple(dict.fromkeys(out))


LUT_MUL_HELP = ("also try each design with P percent of each PE's multiply lanes in LUT fabric, for each P of "
                "a comma list (e.g. 0,25,50: designs ID, ID+lut25, ID+lut50; integer kernels)")


def with_lut_variants(ks: Any, designs: Any, percents: tuple[int, ...] | None) -> tuple[Any, ...]:
    """``designs`` and, for each percent P > 0 of ``percents``, their ``ID+lutP`` variants
    (the designs themselves only when 0 is among them); ``designs`` when ``percents`` is None."""
    if not percents:
        return tuple(designs)
    return tuple(d if p == 0 else ks.design(f"{d.id}+lut{p}") for d in designs for p in percents)


WORD_DRAIN_HELP = ("also try `ID+wd` (PE drains that move a word per cycle) for each design whose output "
                   "is accumulated in its PEs with no chain through them, where the default drains "
                   "stream one element per cycle (`generate --design ID+wd`)")


def with_word_drain(designs: Any, ks: Any, on: bool) -> tuple[Any, ...]:
    """``designs`` and, when ``on``, after each one whose output has no chain through the PEs
    and stays on chip (the designs whose PE drains stream one element per cycle by default;
    a kernel whose output starts from DRAM reads partial sums and moves words anyway), its
    ``ID+wd`` variant."""
    out: list[Any] = []
    for d in designs:
        out.append(d)
        out_op = next(o for o in d.operands if o.role == "output")
        if on and not d.word_drain and out_op.chain_loop is None and d.output_accumulation == "on_chip":
            out.append(ks.design(f"{d.id}+wd"))
    return tuple(out)


BINDING_HELP = ("also try each design with its buffers bound otherwise, for each binding of a comma list: "
                "`bram` (ID+bram: every buffer in block RAM however shallow, as AutoSA binds them), `uram` "
                "(ID+uram: the I/O modules' blocks in UltraRAM), `rule` (the design itself; the default)")


def bindings(text: str) -> tuple[str, ...]:
    """``--binding``: comma-separated buffer bindings (``rule``, ``bram``, ``uram``)."""
    out = [p.strip() for p in text.split(",")]
    bad = [p for p in out if p not in ("rule", "bram", "uram")]
    if bad or not out:
        raise argparse.ArgumentTypeError(f"expected bindings from rule, bram, uram separated by commas "
                                         f"(e.g. rule,bram), got {text!r}")
    return tuple(dict.fromkeys(out))


def with_bindings(designs: Any, ks: Any, storages: tuple[str, ...] | None) -> tuple[Any, ...]:
    """``designs`` bound each way of ``storages`` (``rule``: the design; ``bram``, ``uram``:
    its ``ID+bram``, ``ID+uram``), design by design; ``designs`` when ``storages`` is None."""
    if not storages:
        return tuple(designs)
    return tuple(d if s == "rule" or d.storage != "rule" else ks.design(f"{d.id}+{s}")
                 for d in designs for s in storages)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value
