"""Compare several `odyssey pareto --out DIR` runs of one problem against their union.

NSGA-II proves nothing, so `docs/results/pareto/README.md` judges a front by runs with other
seeds and larger budgets. For each run this prints one row of that page's convergence table:

* the *union* is the non-dominated set of every run's points together (one point per
  distinct objective vector): the best front known, not a proven one;
* a union point is *covered* by a run when some point of the run equals or dominates it;
* ADRS is the average distance from the union to the run's front
  (`odyssey.tune.pareto.adrs`, `d` as in `docs/pareto.md`);
* HV (F x ref) is the normalised hypervolume with the latency reference at F times the
  union's fastest latency and the other objectives at the runs' reference (the usable
  budget for a resource); F is 10 and 2 unless `--factors` says otherwise.

Every run must have the same objectives and the same reference for the objectives other
than latency. A directory may hold `front.json` with its points or without them (then
`front.csv` holds them; `scripts/compact_pareto.py`).

Usage: ``python scripts/pareto_convergence.py [--factors 10,2] DIR [DIR ...]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from odyssey.tune.pareto import ParetoResult, adrs, load_front, nondominated


def load(out: Path) -> ParetoResult:
    doc = json.loads((out / "front.json").read_text())
    csv_path = out / "front.csv"
    return load_front(doc, csv_path.read_text() if "points" not in doc else None)


def union_front(runs: list[ParetoResult]) -> np.ndarray:
    """The non-dominated distinct objective vectors of all runs together."""
    allpts = np.unique(np.concatenate([r.matrix() for r in runs]), axis=0)
    return allpts[nondominated(allpts)]


def covered(union: np.ndarray, found: np.ndarray) -> int:
    """How many union points some point of ``found`` equals or dominates."""
    return int(sum(bool((found <= g).all(axis=1).any()) for g in union))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    ap.add_argument("--factors", default="10,2",
                    help="latency references, as multiples of the union's fastest latency")
    args = ap.parse_args(argv)
    runs = [load(d) for d in args.dirs]
    objectives = runs[0].objectives
    if objectives[0] != "latency":
        raise SystemExit("the first objective must be latency")
    for d, r in zip(args.dirs, runs, strict=True):
        if r.objectives != objectives or r.reference[1:] != runs[0].reference[1:]:
            raise SystemExit(f"{d}: other objectives or reference than {args.dirs[0]}")
    union = union_front(runs)
    fastest = float(union[:, 0].min())
    factors = [float(f) for f in args.factors.split(",")]
    refs = [(f * fastest, *runs[0].reference[1:]) for f in factors]
    print(f"union: {len(union)} points; fastest {fastest:,.0f} cycles; latency references "
          + ", ".join(f"{f:g} x = {ref[0]:,.0f}" for f, ref in zip(factors, refs, strict=True)))
    head = ["run", "evaluations", "seconds", "points", "union points covered",
            "ADRS to the union", *(f"HV ({f:g} x ref)" for f in factors)]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "--:|" * (len(head) - 1))
    for d, r in zip(args.dirs, runs, strict=True):
        m = r.matrix()
        row = [f"{d} (seed {r.seed})", f"{r.evaluations:,}", f"{r.seconds:.1f}",
               f"{len(m):,}", f"{covered(union, m):,} / {len(union):,}",
               f"{adrs(union, m):.1e}", *(f"{r.hypervolume_at(ref):.6f}" for ref in refs)]
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
