"""Atomic directory output, shared by every module that writes a result directory."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_dir_atomically(out: Path, fill: Callable[[Path], None]) -> Path:
    """Call ``fill(tmp)`` on a fresh temporary sibling of ``out``, then swap it into place.

    An existing ``out`` is replaced (the caller decides whether it may be); on any
    error, also KeyboardInterrupt, the temporary directory is removed and ``out`` is
    left as it was.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        fill(tmp)
        if out.exists():
            old = out.with_name(f".{out.name}.old")
            if old.exists():
                shutil.rmtree(old)
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old)
        else:
            tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
