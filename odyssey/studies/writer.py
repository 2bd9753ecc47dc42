"""The one module that writes a study's results to disk, atomically.

``write_study(study, result, out)`` puts in ``out``: ``NAME.csv`` (the main table),
``NAME-<table>.csv`` (the others), one PNG per plot, ``README.md`` (what was run, the
headline numbers next to the paper's, notes, the tables) and ``study.json`` (the same
as data). Files go to a temporary sibling directory renamed into place once all are
written, so a failure leaves nothing half-written; an existing directory is replaced
only when it holds an earlier study (``study.json``) or nothing.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from odyssey.errors import StudyError
from odyssey.fsutil import write_dir_atomically
from odyssey.plots import draw
from odyssey.studies.study import Cell, Headline, Study, StudyResult, Table

#: rows of a table shown in the README (the CSV has them all)
README_ROWS = 40


def check_out(out: str | Path) -> Path:
    """``out`` if a study may write there (absent, empty, or an earlier study's results),
    else StudyError: call it before a long run."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "study.json").is_file())):
        raise StudyError(f"{out}: exists and is not a study result directory; choose another "
                         "--out or remove it")
    return out


def write_study(study: Study, result: StudyResult, out: str | Path) -> Path:
    out = check_out(out)
    return write_dir_atomically(out, lambda tmp: _write_all(study, result, tmp))


def _write_all(study: Study, result: StudyResult, folder: Path) -> None:
    for table in (result.table, *result.tables):
        (folder / csv_name(study.name, table)).write_text(_csv(table))
    for plot in result.plots:
        fig = draw(plot)
        fig.savefig(folder / plot.filename, dpi=110)
    (folder / "README.md").write_text(readme(study, result))
    record = _finite(_record(study, result))
    (folder / "study.json").write_text(json.dumps(record, indent=1, default=str) + "\n")


def _finite(obj: Any) -> Any:
    """``obj`` with NaN and infinities as None (JSON has no such numbers)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def csv_name(name: str, table: Table) -> str:
    return f"{name}.csv" if not table.name else f"{name}-{table.name}.csv"


def _csv(table: Table) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(table.columns)
    for row in table.rows:
        w.writerow([_cell(c) for c in row])
    return buf.getvalue()


def _cell(c: Cell) -> str:
    if c is None:
        return ""
    if isinstance(c, float):
        if not math.isfinite(c):
            return ""
        return f"{c:.6g}" if abs(c) < 1e6 else f"{c:.0f}"
    return str(c)


def format_value(value: float | None, unit: str) -> str:
    """``0.61x``, ``60%``, ``568.7 GOP/s``, ``1.2 s`` ... (``-`` for None/NaN)."""
    if value is None or not math.isfinite(value):
        return "-"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "%":
        return f"{100 * value:.0f}%"
    if unit in ("cycles", "samples"):
        return f"{value:,.0f} {unit}"
    if unit == "":
        return f"{value:.3g}"
    return f"{value:,.1f} {unit}"


def readme(study: Study, result: StudyResult) -> str:
    preset = study.preset(result.preset)
    cmd = f"odyssey study {study.name}" + (" --quick" if result.preset == "quick" else "")
    if result.seed:
        cmd += f" --seed {result.seed}"
    lines = [
        f"# {study.title}", "",
        f"Reproduces the Odyssey paper's {study.paper}.", "",
        f"* kernel: {study.kernel}" + (f" at {_sizes(preset.sizes)}" if preset.sizes else ""),
        f"* designs: {study.designs}",
        f"* method: {study.method}",
        f"* platform: {result.platform}; preset `{result.preset}`, seed {result.seed}",
        f"* command: `{cmd}`; ran in {result.seconds:.0f} s (wall clock on the shared 2-core "
        "development machine, other jobs running)", "",
        "| quantity | ours | paper | paper's source |", "| --- | --: | --: | --- |",
    ]
    lines += [_headline_row(h) for h in result.headlines]
    if result.notes:
        lines += ["", "## Notes", ""] + [f"* {n}" for n in result.notes]
    if result.plots:
        lines += ["", "## Plots", ""] + [f"![{p.title}]({p.filename})" for p in result.plots]
    for table in (result.table, *result.tables):
        lines += ["", f"## `{csv_name(study.name, table)}`", "", *_markdown(table)]
    return "\n".join(lines) + "\n"


def _headline_row(h: Headline) -> str:
    return (f"| {h.label} | {format_value(h.value, h.unit)} | "
            f"{format_value(h.paper, h.unit) if h.paper is not None else '-'} | {h.source or '-'} |")


def _sizes(sizes: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _markdown(table: Table) -> list[str]:
    out = ["| " + " | ".join(table.columns) + " |", "|" + " --- |" * len(table.columns)]
    for row in table.rows[:README_ROWS]:
        out.append("| " + " | ".join(_cell(c) for c in row) + " |")
    if len(table.rows) > README_ROWS:
        out.append(f"\n{len(table.rows) - README_ROWS} more rows in the CSV file.")
    return out


def _record(study: Study, result: StudyResult) -> dict[str, Any]:
    return {
        "study": study.name, "title": study.title, "paper": study.paper,
        "preset": result.preset, "platform": result.platform, "seed": result.seed,
        "seconds": result.seconds, "settings": dict(result.settings),
        "headlines": [{"key": h.key, "label": h.label, "value": h.value, "unit": h.unit,
                       "paper": h.paper, "source": h.source} for h in result.headlines],
        "notes": list(result.notes),
        "files": [csv_name(study.name, t) for t in (result.table, *result.tables)]
        + [p.filename for p in result.plots] + ["README.md"],
    }
