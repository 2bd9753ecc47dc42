"""Where the commands' results go: checked before any work, written atomically, kept when
the write still fails.

Each parser declares its outputs with :func:`outputs` (``set_defaults(outputs=...)``);
:func:`check_outputs` validates them before the command runs (exit 2 with the path and
why). At the end :func:`emit_json` and :func:`emit_dir` write the results; if writing
fails anyway (a disk filled up, a folder removed meanwhile), the result goes to a fallback
file or folder in the working directory (or the temporary folder), the message names it,
and the command exits with 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TextIO

from odyssey.errors import OdysseyError

Kind = Literal["file", "design", "folder", "study", "history", "report"]

JSON_HELP = ("(`-`, or --json with no FILE: standard output, and the report goes to standard "
             "error)")

#: messages of the outputs that could not be written where asked (reset by ``main``)
FAILED: list[str] = []

#: the real standard output, while ``--json -`` sends the report to standard error
_JSON_STREAM: list[TextIO] = []
#: each output file's modification time and size when the command started (None: absent)
_STARTED: dict[Path, tuple[int, int] | None] = {}


def add_json(parser: Any, what: str) -> None:
    """``--json [FILE]`` on ``parser``: ``what`` as JSON to FILE, or to standard output."""
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE",
                        help=f"write {what} as JSON to FILE {JSON_HELP}")


def add_report(parser: Any, what: str) -> None:
    """``--report DIR`` on ``parser``: an offline HTML page of ``what`` at the end of the run
    (``odyssey report`` of the command's ``--json`` record; its outputs kind is ``report``)."""
    parser.add_argument("--report", metavar="DIR",
                        help=f"also write an offline HTML page of {what} into DIR (report.html, and its "
                             "figures as report.json): `odyssey report` of the --json record")


def is_report_dir(p: Path) -> bool:
    """A folder a report may be written into: empty, an earlier report's, or a generated design."""
    return not any(p.iterdir()) or (p / "report.html").is_file() or (p / "descriptor.json").is_file()


def outputs(*items: tuple[str, Kind]) -> tuple[tuple[str, Kind], ...]:
    """The (argument dest, kind) pairs of a command's outputs, for ``set_defaults``."""
    return items


def _option(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _is_design(p: Path) -> bool:
    return (p / "descriptor.json").is_file()


def _is_study(p: Path) -> bool:
    return not any(p.iterdir()) or (p / "study.json").is_file()


def check_outputs(args: argparse.Namespace) -> None:
    """Validate every output the command declared, before it does any work."""
    from odyssey.fsutil import check_dir_target, check_file_target

    _STARTED.clear()
    for dest, kind in getattr(args, "outputs", ()):
        value = getattr(args, dest, None)
        if value is None or (dest == "json" and value == "-"):
            continue
        option = _option(dest)
        if kind in ("file", "history"):
            check_file_target(value, option)
            _STARTED[Path(value).resolve()] = _stamp(Path(value))
        elif kind == "design":
            check_dir_target(value, option, replaceable=_is_design)
        elif kind == "study":
            check_dir_target(value, option, replaceable=_is_study)
        elif kind == "report":
            check_dir_target(value, option, replaceable=is_report_dir)
        else:
            check_dir_target(value, option)


def json_to_stdout(args: argparse.Namespace) -> bool:
    return getattr(args, "json", None) == "-"


def set_json_stream(stream: TextIO | None) -> None:
    _JSON_STREAM.clear()
    if stream is not None:
        _JSON_STREAM.append(stream)


def _fallback(name: str) -> Path:
    """A fresh path for a result that could not be written where asked: in the working
    directory, else in the temporary folder."""
    import tempfile
    import time

    stamp = time.strftime("%Y%m%d-%H%M%S")
    for folder in (Path.cwd(), Path(tempfile.gettempdir())):
        candidate = folder / f"odyssey-{stamp}-{os.getpid()}-{name}"
        try:
            fd, probe = tempfile.mkstemp(dir=folder, prefix=".odyssey-probe-")
        except OSError:
            continue
        os.close(fd)
        Path(probe).unlink(missing_ok=True)
        return candidate
    raise OdysseyError("cannot write a fallback copy in the working directory nor in the "
                       f"temporary folder {tempfile.gettempdir()}")


def _failed(option: str, target: Path, exc: BaseException, kept: Path) -> None:
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    msg = f"cannot write {option} {target} ({why}); the result is kept in {kept}"
    FAILED.append(msg)
    print(f"odyssey: error: {msg}", file=sys.stderr)


def emit_json(target: str | None, doc: Any, option: str = "--json") -> None:
    """Write ``doc`` as JSON to ``target`` (``-``: standard output; None: nowhere)."""
    if target is None:
        return
    import json

    text = json.dumps(doc, indent=1, allow_nan=False, default=str) + "\n"
    if target == "-":
        stream = _JSON_STREAM[0] if _JSON_STREAM else sys.stdout
        stream.write(text)
        stream.flush()
        return
    emit_text(target, text, option)


def emit_report(target: str | None, doc: Any) -> None:
    """Write the report of record ``doc`` (the command's ``--json`` document) into folder
    ``target`` (None: nowhere); where that fails, into a fallback folder that the message names."""
    if target is None:
        return
    from odyssey.report import from_record, write_report

    rep = from_record(doc, "this run")
    try:
        page, _ = write_report(rep, Path(target))
    except OSError as exc:
        kept = _fallback("report")
        page, _ = write_report(rep, kept)
        _failed("--report", Path(target), exc, kept)
        return
    print(f"report: {page}")


def _stamp(path: Path) -> tuple[int, int] | None:
    """The file's modification time and size, None if it does not exist."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def emit_text(target: str | Path, text: str, option: str) -> None:
    """Write ``text`` to the file ``target`` atomically, or to a fallback file. A target
    that changed since the command started (another run wrote it) is replaced all the same,
    with a note saying so."""
    from odyssey.fsutil import write_text_atomically

    path = Path(target)
    seen = _STARTED.get(path.resolve(), _stamp(path))
    if _stamp(path) != seen:
        print(f"odyssey: note: {option} {path} was written by another run while this one ran; "
              "it now holds this run's result", file=sys.stderr)
    try:
        write_text_atomically(path, text)
    except OSError as exc:
        kept = _fallback(path.name or "result.json")
        try:
            write_text_atomically(kept, text)
        except OSError as again:
            raise _lost(option, path, exc, kept, again) from None
        _failed(option, path, exc, kept)


def emit_dir(target: str | Path, write: Callable[[Path], Path], option: str = "--out") -> Path:
    """``write(target)`` (a function that writes a result folder and returns it), or, when
    that fails with an OSError, ``write(fallback)``; the folder written."""
    path = Path(target)
    try:
        return write(path)
    except OSError as exc:
        fallback = _fallback(path.name or "result")
        try:
            kept = write(fallback)
        except OSError as again:
            raise _lost(option, path, exc, fallback, again) from None
        _failed(option, path, exc, kept)
        return kept


def _lost(option: str, target: Path, exc: OSError, fallback: Path, again: OSError) -> OdysseyError:
    return OdysseyError(f"cannot write {option} {target} ({exc.strerror or exc}), nor the "
                        f"fallback copy {fallback} ({again.strerror or again})")
