"""Declarative architecture studies: what a study is, how it runs, what it returns.

A :class:`Study` names an experiment of the paper (a figure or table), the kernel or
network it runs on, the designs, the method and budget, and the paper's reference
values; its ``run`` callable takes a :class:`StudyContext` (preset, platform, seed,
optional time budget, progress callback) and returns a :class:`StudyResult`: plain data
(tables, headline numbers next to the paper's, plot specifications, notes). Nothing here
prints or writes files: :mod:`odyssey.studies.writer` turns a result into
``docs/results/NAME/`` and the CLI (``odyssey study NAME``) reports progress.

Each study has a ``full`` preset (the paper's sizes) and a ``quick`` one (small sizes, a
few seconds, run by the tests). The registry of every study is
:data:`odyssey.studies.registry.STUDIES`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from odyssey.errors import StudyError
from odyssey.frontend.bundled import KERNELS_DIR
from odyssey.platforms import DEFAULT_PLATFORM, Platform
from odyssey.plots import Plot
from odyssey.tune.engine import Engine

PresetName = Literal["full", "quick"]
Unit = Literal["x", "%", "GOP/s", "cycles", "s", "MB", "samples", ""]
Cell = str | int | float | None

#: where the bundled kernels live (package data) when the working directory has no ``kernels/``
_REPO_KERNELS = KERNELS_DIR


@dataclass(frozen=True, slots=True)
class Preset:
    """Settings of one run: the kernel's sizes, the designs (None: all of the space), and
    study-specific options (budgets, seeds, layers), read with :meth:`option`."""

    name: PresetName
    sizes: Mapping[str, int] = field(default_factory=dict)
    designs: tuple[str, ...] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def option(self, key: str) -> Any:
        if key not in self.options:
            raise StudyError(f"preset `{self.name}` has no option `{key}`; it has "
                             f"{', '.join(sorted(self.options)) or 'none'}")
        return self.options[key]

    @property
    def defines(self) -> dict[str, str]:
        """The sizes as ``-D NAME=VALUE`` overrides."""
        return {k: str(v) for k, v in self.sizes.items()}


@dataclass(frozen=True, slots=True)
class PaperValue:
    """A number the paper reports, compared with the headline of the same ``key``."""

    key: str
    value: float
    source: str  # e.g. "Table 3", "Figure 1"


@dataclass(frozen=True, slots=True)
class Headline:
    """One of our numbers; ``paper`` is filled from the study's :class:`PaperValue`."""

    key: str
    label: str
    value: float
    unit: Unit = ""
    paper: float | None = None
    source: str = ""


@dataclass(frozen=True, slots=True)
class Table:
    """Rows of a CSV file: ``name`` is the file's suffix (the main table's is empty)."""

    name: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]

    def __post_init__(self) -> None:
        for k, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise StudyError(f"table `{self.name or 'main'}` row {k} has {len(row)} cells "
                                 f"for {len(self.columns)} columns")

    def column(self, name: str) -> list[Cell]:
        j = self.columns.index(name)
        return [r[j] for r in self.rows]


@dataclass(frozen=True)
class StudyContext:
    """What a study's ``run`` gets: the preset, the platform, the random seed, an optional
    time budget per unit of work (``time_s``, the study says what a unit is), ``say`` to
    report progress (a no-op by default), and the ``engine`` the per-design optima run on
    (:func:`odyssey.studies._common.iter_optima`; None: one after another here)."""

    preset: Preset
    platform: Platform
    seed: int = 0
    time_s: float | None = None
    say: Callable[[str], None] = lambda _msg: None
    kernels: Path | None = None  # folder of mm.c, cnn.c; default ./kernels, else the repo's
    engine: Engine | None = None  # where per-design optima run (odyssey.tune.engine)
    #: set by a Ctrl-C: the per-design loops stop (:func:`odyssey.studies._common.iter_optima`)
    #: and the study's result is made of the designs that finished
    stop: threading.Event = field(default_factory=threading.Event)

    def kernel(self, name: str) -> Path:
        """Path of a bundled kernel (``mm.c``, ``cnn.c``)."""
        for folder in (self.kernels, Path("kernels"), _REPO_KERNELS):
            if folder is not None and (folder / name).is_file():
                return folder / name
        raise StudyError(f"kernel {name} not found in ./kernels or {_REPO_KERNELS}")

    def budget(self, default: float) -> float:
        """The time budget per unit: ``time_s`` when given, else ``default``."""
        return self.time_s if self.time_s is not None else default


@dataclass(frozen=True)
class StudyResult:
    """Everything a study found, as data: ``table`` is written as ``NAME.csv``, every
    other table as ``NAME-<table.name>.csv``; ``plots`` as PNG files; ``headlines`` and
    ``notes`` go to the README."""

    study: str
    preset: PresetName
    platform: str
    seed: int
    table: Table
    headlines: tuple[Headline, ...]
    plots: tuple[Plot, ...] = ()
    tables: tuple[Table, ...] = ()
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    settings: Mapping[str, Any] = field(default_factory=dict)

    def headline(self, key: str) -> Headline:
        for h in self.headlines:
            if h.key == key:
                return h
        raise KeyError(key)


@dataclass(frozen=True)
class Study:
    """One experiment of the paper. ``run`` does the work; ``paper_values`` are matched to
    the result's headlines by key when the study runs (:meth:`execute`)."""

    name: str
    title: str
    paper: str  # the figures and tables it reproduces
    kernel: str  # kernel file or networks
    designs: str  # which designs, in words
    method: str  # search method and budget, in words
    full: Preset
    quick: Preset
    run: Callable[[StudyContext], StudyResult]
    paper_values: tuple[PaperValue, ...] = ()
    platform: str = DEFAULT_PLATFORM

    def preset(self, name: PresetName) -> Preset:
        if name not in ("full", "quick"):
            raise StudyError(f"preset must be `full` or `quick`, got {name!r}")
        return self.full if name == "full" else self.quick

    def execute(self, ctx: StudyContext) -> StudyResult:
        """Run the study and attach the paper's values to the headlines."""
        if ctx.time_s is not None and not (ctx.time_s > 0 and math.isfinite(ctx.time_s)):
            raise StudyError(f"`time_s` must be a positive number of seconds, got {ctx.time_s!r}")
        start = time.perf_counter()
        try:
            result = self.run(ctx)
        except Exception:
            if ctx.stop.is_set():  # what finished before Ctrl-C makes no result of this study
                raise KeyboardInterrupt from None
            raise
        paper = {p.key: p for p in self.paper_values}
        heads = tuple(_with_paper(h, paper.get(h.key)) for h in result.headlines)
        notes, settings = result.notes, result.settings
        if ctx.stop.is_set():
            notes = ("Interrupted (Ctrl-C): the results of the designs that finished before it "
                     "only.", *notes)
            settings = {**settings, "interrupted": True}
        return StudyResult(
            study=result.study, preset=result.preset, platform=result.platform, seed=result.seed,
            table=result.table, headlines=heads, plots=result.plots, tables=result.tables,
            notes=notes, seconds=time.perf_counter() - start, settings=settings)


def _with_paper(h: Headline, p: PaperValue | None) -> Headline:
    if p is None:
        return h
    return Headline(h.key, h.label, h.value, h.unit, p.value, p.source)


def result(ctx: StudyContext, name: str, table: Table, headlines: Sequence[Headline], *,
           plots: Sequence[Plot] = (), tables: Sequence[Table] = (), notes: Sequence[str] = (),
           settings: Mapping[str, Any] | None = None) -> StudyResult:
    """A :class:`StudyResult` stamped with the context's preset, platform and seed."""
    return StudyResult(study=name, preset=ctx.preset.name, platform=ctx.platform.name,
                       seed=ctx.seed, table=table, headlines=tuple(headlines), plots=tuple(plots),
                       tables=tuple(tables), notes=tuple(notes), settings=dict(settings or {}))
