"""Run the C preprocessor while keeping integer size macros as named parameters.

``#define I 64`` lines are recognised as *size parameters*: their line is
blanked (so line numbers do not move) and the preprocessor is given
``-D I=I``, so ``I`` survives as an identifier that the front end treats as a
parameter with value 64 (or the ``-D I=VALUE`` override). System includes
(``#include <...>``) are blanked too: nothing from them may appear in a scop.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from odyssey.errors import KernelParseError, UnknownSizeError

#: the largest size parameter: products of two sizes stay exact in 64-bit integers only
#: when each is small, and isl's integers and the models' int64 arithmetic are checked
#: below this bound (``docs/architecture.md``, "Front end")
MAX_SIZE = 2**62

_SIZE_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)\s+\(?\s*(-?\d+)\s*\)?\s*(//.*|/\*.*\*/\s*)?$")
_SYS_INCLUDE = re.compile(r"^\s*#\s*include\s*<[^>]*>")

#: typedefs of common libc names, so code outside the scop may use them
_PRELUDE = """typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef signed char int8_t; typedef unsigned char uint8_t;
typedef short int16_t; typedef unsigned short uint16_t;
typedef int int32_t; typedef unsigned int uint32_t;
typedef long int64_t; typedef unsigned long uint64_t;
typedef struct _FILE FILE;
"""


@dataclass(frozen=True, slots=True)
class Preprocessed:
    text: str
    sizes: tuple[tuple[str, int], ...]  # size parameters in order of definition, with values


def _cpp_command() -> list[str]:
    override = os.environ.get("ODYSSEY_CPP")
    if override:
        return override.split()
    for cand in ("cpp", "gcc", "cc", "clang"):
        exe = shutil.which(cand)
        if exe:
            return [exe] if cand == "cpp" else [exe, "-E"]
    raise KernelParseError(
        "no C preprocessor found: install gcc (e.g. `apt-get install gcc`) or set ODYSSEY_CPP"
    )


def _apply_defines(path: Path, sizes: dict[str, int], defines: Mapping[str, str]) -> None:
    """Set ``sizes`` from the ``-D NAME=VALUE`` overrides, checked first: every NAME a size
    parameter of the kernel, every VALUE a positive integer (nothing is substituted into
    the source as a macro, and nothing is ignored)."""
    known = ", ".join(sizes) or "none"
    for name, value in defines.items():
        if name not in sizes:
            raise UnknownSizeError(
                f"{path}: -D {name}={value}: `{name}` is not a size parameter of the kernel (a "
                f"`#define {name} <integer>` line); its size parameters are: {known}"
            )
        try:
            number = int(value.strip())
        except ValueError:
            number = None
        if number is None or number < 1:
            raise KernelParseError(
                f"{path}: -D {name}={value}: a size must be a positive integer, e.g. "
                f"-D {name}={sizes[name] if sizes[name] > 0 else 64}"
            )
        if number > MAX_SIZE:
            raise KernelParseError(
                f"{path}: -D {name}={value}: a size must be at most 2**62 = {MAX_SIZE:,}; "
                f"{name} = {number:,} is beyond what odyssey computes exactly")
        sizes[name] = number


def preprocess(path: Path, source: str, defines: Mapping[str, str]) -> Preprocessed:
    """Preprocess ``source`` (read from ``path``) with ``-D`` overrides ``defines``."""
    sizes: dict[str, int] = {}
    where: dict[str, int] = {}
    lines = source.splitlines()
    for n, line in enumerate(lines):
        if _SYS_INCLUDE.match(line):
            lines[n] = ""
            continue
        m = _SIZE_DEFINE.match(line)
        if m:
            sizes.setdefault(m.group(1), int(m.group(2)))
            where.setdefault(m.group(1), n + 1)
            lines[n] = ""
    _apply_defines(path, sizes, defines)
    for name, value in sizes.items():
        if value < 1:
            raise KernelParseError(
                f"{path}:{where[name]}: size parameter {name} is {value}; sizes must be positive "
                f"integers: fix the #define or give -D {name}=VALUE"
            )
        if value > MAX_SIZE:
            raise KernelParseError(
                f"{path}:{where[name]}: size parameter {name} is {value:,}; sizes must be at most "
                f"2**62 = {MAX_SIZE:,}: fix the #define or give -D {name}=VALUE")
    args = [f"-D{name}={name}" for name in sizes]
    with tempfile.TemporaryDirectory(prefix="odyssey-cpp-") as tmp:
        prelude = Path(tmp) / "odyssey_prelude.h"
        prelude.write_text(_PRELUDE, encoding="utf-8")
        src = Path(tmp) / "kernel.c"
        src.write_text(f'#line 1 "{path}"\n' + "\n".join(lines) + "\n", encoding="utf-8")
        cmd = [
            *_cpp_command(), "-nostdinc", "-undef", "-std=c99", "-include", str(prelude),
            f"-I{path.parent}", *args, str(src),
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, encoding="utf-8",
                                  errors="replace", timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KernelParseError(f"{path}: the C preprocessor failed to run: {exc}") from None
    if proc.returncode != 0:
        first = "\n".join(proc.stderr.strip().splitlines()[:5])
        raise KernelParseError(f"{path}: the C preprocessor rejected the file:\n{first}")
    return Preprocessed(proc.stdout, tuple(sizes.items()))
