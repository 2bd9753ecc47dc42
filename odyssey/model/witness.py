"""The resource model held against the witness that counts the printed code.

:func:`compare` evaluates a design directory's model (built from its ``descriptor.json``) at
its tiling and the witness of :mod:`odyssey.codegen.resource_check` (which reads only the
printed C++), and lists every figure on which they disagree: DSP, LUT and FF module by module,
and the totals of every resource. The two share the platform's cost tables, not their counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from odyssey.codegen.descriptor import load_descriptor
from odyssey.codegen.resource_check import ResourceWitness, witness
from odyssey.model.build import model_from_descriptor
from odyssey.platforms import Platform

#: figures closer than this are equal (sums of the same integers in another order)
TOLERANCE = 0.5


@dataclass(frozen=True, slots=True)
class Disagreement:
    where: str  # a module function, or "total"
    resource: str
    witness: float
    model: float

    def as_json(self) -> dict[str, object]:
        return {"where": self.where, "resource": self.resource, "witness": self.witness, "model": self.model}


def compare(design_dir: Path, platform: Platform) -> tuple[ResourceWitness, dict[str, float], list[Disagreement]]:
    """``(witness, model totals, disagreements)`` for the design in ``design_dir``."""
    d = Path(design_dir)
    w = witness(d)
    desc = load_descriptor(d / "descriptor.json")
    r = model_from_descriptor(desc, platform).evaluate_one(desc["tiling"])
    out: list[Disagreement] = []
    for name, u in w.modules.items():
        for res in ("dsp", "lut", "ff", "bram18k"):
            mine = float(r.get(f"{res}@{name}", 0.0))
            if abs(getattr(u, res) - mine) > TOLERANCE:
                out.append(Disagreement(name, res, getattr(u, res), mine))
    total = w.total
    totals = {res: float(r[res]) for res in ("dsp", "lut", "ff", "bram18k", "uram")}
    for res in ("dsp", "lut", "ff", "bram18k", "uram"):
        if abs(getattr(total, res) - totals[res]) > TOLERANCE:
            out.append(Disagreement("total", res, getattr(total, res), totals[res]))
    return w, totals, out


__all__ = ["TOLERANCE", "Disagreement", "compare", "witness"]
