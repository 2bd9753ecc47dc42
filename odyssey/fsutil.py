"""Output files and directories, shared by every module that writes results.

* :func:`check_file_target` / :func:`check_dir_target`: can a result be written there?
  Called before any work starts, so a long search never ends in an unwritable path; they
  create missing parent folders and prove the parent writable by making (and removing) a
  temporary file in it.
* :func:`write_text_atomically`, :func:`write_bytes_atomically`,
  :func:`write_dir_atomically`: write to a temporary sibling, then rename into place, so a
  reader never sees a half-written result and a failure leaves the old one as it was.

Files and folders get the usual permissions (``0666`` / ``0777`` less the umask), not the
``0600`` / ``0700`` that :mod:`tempfile` gives its temporaries.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from odyssey.errors import OutputPathError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _check_parent(path: Path, option: str) -> None:
    """Create ``path``'s parent folder if missing, and prove it writable."""
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(f"{option} {path}: cannot create the folder {parent} "
                              f"({_why(exc)}); choose another path") from None
    if not parent.is_dir():
        raise OutputPathError(f"{option} {path}: {parent} is not a folder; choose another path")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        raise OutputPathError(f"{option} {path}: cannot write into {parent} ({_why(exc)}); "
                              "choose another path") from None
    os.close(fd)
    Path(probe).unlink(missing_ok=True)


def check_file_target(path: str | Path, option: str = "output") -> Path:
    """``path`` if a file can be written there (its folder is created if missing), else
    :class:`OutputPathError` naming the option, the path and why."""
    path = Path(path)
    if str(path) == "" or path.name in ("", ".", ".."):
        raise OutputPathError(f"{option} {str(path)!r}: expected a file name, e.g. {option} out.json")
    if path.is_dir():
        raise OutputPathError(f"{option} {path}: is a folder; give a file name inside it, e.g. "
                              f"{option} {path / 'out.json'}")
    if path.exists() and not path.is_file():
        raise OutputPathError(f"{option} {path}: exists and is not a regular file; choose another path")
    if path.is_file() and not os.access(path, os.W_OK):
        raise OutputPathError(f"{option} {path}: the file is not writable; choose another path")
    _check_parent(path, option)
    return path


def check_dir_target(path: str | Path, option: str = "--out",
                     replaceable: Callable[[Path], bool] | None = None) -> Path:
    """``path`` if a result folder can be written there: absent, or a folder that
    ``replaceable`` accepts (any folder when it is None). Else :class:`OutputPathError`."""
    path = Path(path)
    if str(path) == "" or path.name in ("", ".", ".."):
        raise OutputPathError(f"{option} {str(path)!r}: expected the name of a new folder, e.g. "
                              f"{option} out/design")
    if path.exists() and not path.is_dir():
        raise OutputPathError(f"{option} {path}: exists and is not a folder; choose another path")
    if path.is_dir() and replaceable is not None and not replaceable(path):
        raise OutputPathError(f"{option} {path}: exists and does not hold an earlier odyssey "
                              "result, so it is not replaced; choose another path or remove it")
    _check_parent(path, option)
    return path


def write_bytes_atomically(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to a temporary sibling of ``path``, then rename it over ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomically(path: str | Path, text: str) -> Path:
    return write_bytes_atomically(path, text.encode())


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
        os.chmod(tmp, 0o777 & ~_umask())
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
