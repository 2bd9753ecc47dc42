"""A traced timed simulation (:func:`odyssey.codegen.timedsim.run_timed_sim` with
``trace=True``) as a Chrome / Perfetto trace (the Trace Event Format's JSON object form:
``traceEvents`` of complete events, ``ph: "X"``), and as the per-process timeline the design's
report draws.

One thread per process of the dataflow region, in spawn order: a ``run`` event from its start
to its end, and inside it one event per stall, named by what the process waited for (an empty
FIFO, a full FIFO, a block, its DRAM channel's pace). Times are microseconds at the design's
clock (``cycles / MHz``); every event's ``args`` holds its cycles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from odyssey.codegen.timedsim import STALL_KINDS, TaskTrace


def chrome_trace(traces: Sequence[TaskTrace], clock_mhz: float, *, design: str = "") -> dict[str, Any]:
    """The Trace Event Format object of ``traces`` at ``clock_mhz``."""
    def us(c: int) -> float:
        return c / clock_mhz

    events: list[dict[str, Any]] = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0,
                                     "args": {"name": f"odyssey timed simulation {design}".strip()}}]
    for tid, t in enumerate(traces, start=1):
        events.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "args": {"name": t.name}})
        events.append({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": tid, "args": {"sort_index": tid}})
        events.append({"ph": "X", "name": "run", "cat": "process", "pid": 1, "tid": tid, "ts": us(t.start),
                       "dur": us(t.end - t.start),
                       "args": {"start_cycle": t.start, "end_cycle": t.end, "stall_cycles": t.stall,
                                "busy_cycles": t.end - t.start - t.stall, "merged_stalls": t.merged}})
        for a, b, kind in t.spans:
            events.append({"ph": "X", "name": f"stalled: {STALL_KINDS[kind]}", "cat": "stall", "pid": 1,
                           "tid": tid, "ts": us(a), "dur": us(b - a),
                           "args": {"from_cycle": a, "to_cycle": b}})
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"generator": "odyssey", "clock_mhz": clock_mhz, "time_unit": "us at the clock",
                          "design": design}}


def timeline(traces: Sequence[TaskTrace], *, most: int = 40) -> list[dict[str, Any]]:
    """Per process (at most ``most``: the longest stalled first, in spawn order among them):
    its start, end, stall cycles and its stalled cycles by kind, for the report."""
    keep = sorted(range(len(traces)), key=lambda k: -traces[k].stall)[:most]
    out = []
    for k in sorted(keep):
        t = traces[k]
        by_kind: dict[str, int] = {}
        for a, b, kind in t.spans:
            by_kind[STALL_KINDS[kind]] = by_kind.get(STALL_KINDS[kind], 0) + b - a
        out.append({"name": t.name, "start": t.start, "end": t.end, "stall": t.stall,
                    "stalled_by": by_kind, "spans": [[a, b, kind] for a, b, kind in t.spans[:2000]]})
    return out


__all__ = ["chrome_trace", "timeline"]
