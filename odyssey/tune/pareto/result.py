"""Objectives, front points and the result of a Pareto search (plain frozen records).

Every objective is minimised and is a count: ``latency`` (cycles), ``dsp`` (DSP slices),
``bram18k`` (18 Kb BRAM blocks), ``uram`` (URAM blocks), ``offchip`` (bytes moved to and
from DRAM). The hypervolume is reported *normalised*: each objective is divided by its
reference value, so the reference point is ``(1, ..., 1)`` and the hypervolume is the
fraction of the box ``[0, r_1] x ... x [0, r_M]`` that the front dominates. The reference
``r`` is the platform's usable budget for a resource and, for latency and off-chip bytes,
the largest value on the front (its nadir), unless the caller gives one.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from odyssey.errors import TunerError
from odyssey.tune.pareto.indicators import hypervolume

#: objective name -> (field of a point, unit)
OBJECTIVES: Mapping[str, tuple[str, str]] = {
    "latency": ("latency_cycles", "cycles"),
    "dsp": ("dsp", "DSP slices"),
    "bram18k": ("bram18k", "BRAM18K blocks"),
    "uram": ("uram", "URAM blocks"),
    "offchip": ("offchip_bytes", "bytes"),
}
#: the model outputs kept for every point, in this order
FIELDS = ("latency_cycles", "throughput_gops", "dsp", "bram18k", "uram", "offchip_bytes")
#: objectives whose reference value is the platform budget
BUDGETED = ("dsp", "bram18k", "uram")

Method = Literal["exact", "nsga2"]
#: ``complete``: every legal tiling of every design was evaluated (exact front);
#: ``exhausted``: the evolutionary search ran out of new tilings (so it too saw them all);
#: ``time`` / ``samples``: the budget ran out; ``interrupted``: Ctrl-C
Status = Literal["complete", "exhausted", "time", "samples", "interrupted"]


def parse_objectives(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"latency,dsp,bram18k"`` (or a sequence of names) as a tuple of objective names."""
    raw = spec.split(",") if isinstance(spec, str) else list(spec)
    names = tuple(n.strip() for n in raw if n.strip())
    valid = ", ".join(OBJECTIVES)
    for n in names:
        if n not in OBJECTIVES:
            raise TunerError(f"unknown objective {n!r}; valid objectives are {valid}")
    if len(set(names)) != len(names):
        raise TunerError(f"objectives {list(names)} name one objective twice")
    if len(names) < 2:
        raise TunerError(f"a Pareto front needs at least two objectives, got {list(names)}; "
                         f"choose from {valid}")
    return names


@dataclass(frozen=True, slots=True)
class ParetoPoint:
    """One design point: a design, its tiling, and the model's figures for it."""

    design_id: str
    dataflow: str
    ordering: str
    tiling: Mapping[str, int]
    latency_cycles: float
    throughput_gops: float
    dsp: float
    bram18k: float
    uram: float
    offchip_bytes: float
    feasible: bool = True

    def value(self, objective: str) -> float:
        return float(getattr(self, OBJECTIVES[objective][0]))

    def to_json(self) -> dict[str, Any]:
        return {"design": self.design_id, "dataflow": self.dataflow, "ordering": self.ordering,
                "tiling": dict(self.tiling), "latency_cycles": self.latency_cycles,
                "throughput_gops": self.throughput_gops, "dsp": self.dsp, "bram18k": self.bram18k,
                "uram": self.uram, "offchip_bytes": self.offchip_bytes, "feasible": self.feasible}


@dataclass(frozen=True, slots=True)
class DesignStats:
    """What the search did with one design: its legal tilings, how many were evaluated,
    and how many points of the final front are its."""

    design_id: str
    dataflow: str
    ordering: str
    legal_tilings: int
    evaluated: int
    on_front: int

    def to_json(self) -> dict[str, Any]:
        return {"design": self.design_id, "dataflow": self.dataflow, "ordering": self.ordering,
                "legal_tilings": self.legal_tilings, "evaluated": self.evaluated,
                "on_front": self.on_front}


def reference_point(objectives: Sequence[str], front: Sequence[ParetoPoint],
                    budget: Mapping[str, float]) -> tuple[float, ...]:
    """The default reference: the usable budget of each resource, the largest value on the
    front of any other objective (each at least 1, so normalising never divides by 0)."""
    ref = []
    for o in objectives:
        if o in BUDGETED:
            ref.append(float(budget[o]))
        else:
            ref.append(max((p.value(o) for p in front), default=1.0))
    return tuple(max(r, 1.0) for r in ref)


@dataclass(frozen=True)
class ParetoResult:
    """Outcome of :func:`odyssey.tune.pareto.pareto_front`.

    ``points``: the non-dominated feasible points found, one per distinct objective vector
    (the first found: designs in the given order, tilings in enumeration or evaluation
    order), sorted by the objectives. ``hypervolume`` is normalised by ``reference`` (see
    the module docstring). ``evaluations`` counts model evaluations over all designs.
    """

    objectives: tuple[str, ...]
    method: Method
    status: Status
    points: tuple[ParetoPoint, ...]
    reference: tuple[float, ...]
    hypervolume: float
    evaluations: int
    seconds: float
    seed: int | None
    budget: Mapping[str, float]
    platform: str
    designs: tuple[DesignStats, ...] = field(default=())

    @property
    def exact(self) -> bool:
        """Every legal tiling was evaluated, so ``points`` is the true front."""
        return self.status in ("complete", "exhausted")

    def matrix(self, objectives: Sequence[str] | None = None) -> np.ndarray:
        """``(len(points), M)`` objective values (this result's objectives by default)."""
        names = tuple(objectives or self.objectives)
        return np.array([[p.value(o) for o in names] for p in self.points],
                        dtype=np.float64).reshape(len(self.points), len(names))

    def hypervolume_at(self, reference: Sequence[float]) -> float:
        """Normalised hypervolume with another reference point (to compare two fronts)."""
        return normalised_hypervolume(self.matrix(), reference)

    def to_json(self) -> dict[str, Any]:
        return {
            "objectives": list(self.objectives), "method": self.method, "status": self.status,
            "exact": self.exact, "platform": self.platform, "budget": dict(self.budget),
            "reference": dict(zip(self.objectives, self.reference, strict=True)),
            "hypervolume": self.hypervolume, "evaluations": self.evaluations,
            "seconds": self.seconds, "seed": self.seed, "front_size": len(self.points),
            "designs": [d.to_json() for d in self.designs],
            "points": [p.to_json() for p in self.points],
        }


def normalised_hypervolume(points: np.ndarray, reference: Sequence[float]) -> float:
    """Hypervolume of ``points / reference`` with the reference point ``(1, ..., 1)``."""
    r = np.asarray(reference, dtype=np.float64)
    if r.ndim != 1 or not (r > 0).all() or not np.isfinite(r).all():
        raise TunerError(f"the reference point {list(reference)} must be finite and positive")
    f = np.asarray(points, dtype=np.float64).reshape(-1, len(r))
    return hypervolume(f / r, np.ones(len(r)))


def load_front(doc: Mapping[str, Any], csv_text: str | None = None) -> ParetoResult:
    """The result an ``odyssey pareto`` ``front.json`` document describes (its :meth:`to_json`
    with the command's metadata), to redraw its figure, recompute its hypervolume or report it.
    The points come from ``doc["points"]`` or, for a document stored without them, from the
    rows of its ``front.csv`` (``csv_text``), which hold every
    objective as a whole number (exact for counts) and the throughput to 3 decimals."""
    if "points" in doc:
        points = tuple(_point(p, p["tiling"]) for p in doc["points"])
    elif csv_text is not None:
        points = tuple(_point(r, {k: int(v) for k, v in (t.split("=") for t in r["tiling"].split())})
                       for r in csv.DictReader(io.StringIO(csv_text)))
    else:
        raise TunerError("the front.json document has no points; pass the text of its "
                         "front.csv as csv_text")
    objectives = tuple(doc["objectives"])
    designs = tuple(DesignStats(d["design"], d["dataflow"], d["ordering"], d["legal_tilings"],
                                d["evaluated"], d["on_front"]) for d in doc["designs"])
    return ParetoResult(objectives, doc["method"], doc["status"], points,
                        tuple(float(doc["reference"][o]) for o in objectives),
                        float(doc["hypervolume"]), int(doc["evaluations"]), float(doc["seconds"]),
                        doc["seed"], dict(doc["budget"]), str(doc["platform"]), designs)


def _point(row: Mapping[str, Any], tiling: Mapping[str, int]) -> ParetoPoint:
    """A point from a JSON point or a CSV row (the same keys; CSV values are text)."""
    lat, gops, dsp, bram, uram, offchip = (float(row[f]) for f in FIELDS)
    feasible = row["feasible"]
    return ParetoPoint(row["design"], row["dataflow"], row["ordering"], dict(tiling), lat, gops,
                       dsp, bram, uram, offchip,
                       feasible if isinstance(feasible, bool) else feasible == "true")
