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

from odyssey.errors import KernelParseError

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


def preprocess(path: Path, source: str, defines: Mapping[str, str]) -> Preprocessed:
    """Preprocess ``source`` (read from ``path``) with ``-D`` overrides ``defines``."""
    sizes: dict[str, int] = {}
    lines = source.splitlines()
    for n, line in enumerate(lines):
        if _SYS_INCLUDE.match(line):
            lines[n] = ""
            continue
        m = _SIZE_DEFINE.match(line)
        if m:
            sizes.setdefault(m.group(1), int(m.group(2)))
            lines[n] = ""
    for name, value in defines.items():
        if name in sizes:
            try:
                sizes[name] = int(value)
            except ValueError:
                raise KernelParseError(
                    f"{path}: -D {name}={value}: `{name}` is a size parameter of the kernel and "
                    "needs an integer value"
                ) from None
    args: list[str] = []
    for name in sizes:
        args.append(f"-D{name}={name}")
    for name, value in defines.items():
        if name not in sizes:
            args.append(f"-D{name}={value}")
    with tempfile.TemporaryDirectory(prefix="odyssey-cpp-") as tmp:
        prelude = Path(tmp) / "odyssey_prelude.h"
        prelude.write_text(_PRELUDE)
        src = Path(tmp) / "kernel.c"
        src.write_text(f'#line 1 "{path}"\n' + "\n".join(lines) + "\n")
        cmd = [
            *_cpp_command(), "-nostdinc", "-undef", "-std=c99", "-include", str(prelude),
            f"-I{path.parent}", *args, str(src),
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KernelParseError(f"{path}: the C preprocessor failed to run: {exc}") from None
    if proc.returncode != 0:
        first = "\n".join(proc.stderr.strip().splitlines()[:5])
        raise KernelParseError(f"{path}: the C preprocessor rejected the file:\n{first}")
    return Preprocessed(proc.stdout, tuple(sizes.items()))
