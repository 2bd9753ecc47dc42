"""Vitis HLS synthesis of a generated design, for users who have the vendor tools.

:func:`run_hls_synthesis` runs ``vitis_hls -f csynth.tcl`` (synthesis only; every generated
design carries the script) in a design directory and parses the top-level report,
``<project>/solution1/syn/report/csynth.xml``, with :func:`parse_csynth_report`. The report's
layout (Vitis HLS 2020.2 and later, unchanged through 2024.x): ``PerformanceEstimates /
SummaryOfOverallLatency`` holds ``Best-caseLatency``, ``Worst-caseLatency`` (cycles, or
``undef`` when a trip count is unknown) and ``Interval-max``; ``SummaryOfTimingAnalysis /
EstimatedClockPeriod`` the clock in ns; ``AreaEstimates / Resources`` the ``BRAM_18K``,
``DSP``, ``FF``, ``LUT`` and ``URAM`` counts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from odyssey.errors import SimulationError

#: the executable run, unless ``$ODYSSEY_VITIS_HLS`` names another
VITIS_HLS = "vitis_hls"
SCRIPT = "csynth.tcl"
REPORT_GLOB = "*_prj/solution1/syn/report/csynth.xml"


@dataclass(frozen=True, slots=True)
class HlsReport:
    """The numbers of one ``csynth.xml``: latencies in cycles (None: ``undef``), the
    estimated clock period in ns, and the resource counts."""

    path: Path
    worst_cycles: int | None
    best_cycles: int | None
    interval: int | None
    clock_ns: float | None
    dsp: int
    bram18k: int
    lut: int
    ff: int
    uram: int


def vitis_hls() -> str | None:
    """The Vitis HLS executable to run (``$ODYSSEY_VITIS_HLS`` or ``vitis_hls`` on PATH),
    None if there is none."""
    exe = os.environ.get("ODYSSEY_VITIS_HLS", VITIS_HLS)
    return shutil.which(exe)


def parse_csynth_report(path: Path) -> HlsReport:
    """Parse a Vitis HLS ``csynth.xml``. Raises :class:`SimulationError` naming the file
    and the missing element if it is not a synthesis report."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise SimulationError(f"{path}: not a readable Vitis HLS report ({exc})") from exc

    def text(where: str, *, required: bool = True) -> str | None:
        node = root.find(where)
        if node is None or node.text is None:
            if required:
                raise SimulationError(f"{path}: no <{where}> in the report; is it the "
                                      "top-level csynth.xml of a finished synthesis?")
            return None
        return node.text.strip()

    def cycles(where: str) -> int | None:
        v = text(where, required=False)
        return int(v) if v is not None and v.isdigit() else None

    def count(name: str) -> int:
        v = text(f"AreaEstimates/Resources/{name}", required=False)
        return int(v) if v is not None and v.isdigit() else 0

    text("PerformanceEstimates/SummaryOfOverallLatency/Worst-caseLatency")  # must be present
    clock = text("PerformanceEstimates/SummaryOfTimingAnalysis/EstimatedClockPeriod",
                 required=False)
    lat = "PerformanceEstimates/SummaryOfOverallLatency/"
    try:
        clock_ns = float(clock) if clock is not None else None
    except ValueError:
        clock_ns = None
    return HlsReport(path, cycles(lat + "Worst-caseLatency"), cycles(lat + "Best-caseLatency"),
                     cycles(lat + "Interval-max"), clock_ns, count("DSP"), count("BRAM_18K"),
                     count("LUT"), count("FF"), count("URAM"))


@dataclass(frozen=True, slots=True)
class HlsRun:
    """One synthesis: ``report`` (None when it failed; ``message`` then says why), the
    wall ``seconds`` and the tool's output."""

    report: HlsReport | None
    message: str
    seconds: float
    log: str = ""


def run_hls_synthesis(design_dir: Path, *, timeout_s: float = 7200.0,
                      exe: str | None = None) -> HlsRun:
    """Run ``csynth.tcl`` in ``design_dir`` with Vitis HLS and parse its report. Raises
    :class:`SimulationError` if there is no Vitis HLS or no script; a synthesis that fails,
    times out or leaves no report is an :class:`HlsRun` without a report."""
    design_dir = Path(design_dir)
    tool = exe or vitis_hls()
    if tool is None:
        raise SimulationError(f"Vitis HLS (`{VITIS_HLS}`) is not on PATH: source Vitis's "
                              "settings64.sh, or name the executable in $ODYSSEY_VITIS_HLS")
    if not (design_dir / SCRIPT).is_file():
        raise SimulationError(f"{design_dir}: no {SCRIPT}; generate the design with this "
                              "version of odyssey")
    start = time.perf_counter()
    try:
        proc = subprocess.run([tool, "-f", SCRIPT], cwd=design_dir, capture_output=True,
                              text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return HlsRun(None, f"synthesis did not finish within {timeout_s:g} s",
                      time.perf_counter() - start)
    except OSError as exc:
        raise SimulationError(f"cannot run {tool}: {exc}") from exc
    seconds = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    reports = sorted(design_dir.glob(REPORT_GLOB))
    if proc.returncode != 0 or not reports:
        tail = "\n".join(log.strip().splitlines()[-5:])
        why = f"exit status {proc.returncode}" if proc.returncode else f"no {REPORT_GLOB}"
        return HlsRun(None, f"synthesis failed ({why}): {tail}", seconds, log)
    try:
        report = parse_csynth_report(reports[0])
    except SimulationError as exc:
        return HlsRun(None, str(exc), seconds, log)
    if report.worst_cycles is None:
        return HlsRun(report, "the report's worst-case latency is undef (a trip count HLS "
                      "cannot bound)", seconds, log)
    return HlsRun(report, "", seconds, log)
