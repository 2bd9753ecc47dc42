"""Store a committed `odyssey pareto --out DIR` result without duplicating its points.

`front.json` repeats every point of `front.csv` (1,360 points: 510 KB against 150 KB for
MM 1024^3). This drops the `points` array from `front.json` once the rows of `front.csv`
are checked to give the same points (tilings and every objective) and to redraw
`front.png` byte for byte; `odyssey.tune.pareto.load_front` then rebuilds the
result from the two files. With `--check`, nothing is written: the files are only checked
(the figure redrawn, the hypervolume recomputed), for a directory in either form.

Usage: ``python scripts/compact_pareto.py [--check] DIR [DIR ...]``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from odyssey.studies.pareto_report import figure_png, front_title, plot_front
from odyssey.tune.pareto import OBJECTIVES, load_front


def check(out: Path) -> dict[str, Any]:
    """The directory's `front.json` document, after checking that its `front.csv` and
    `front.png` are what the command writes for it; raises SystemExit on a mismatch."""
    doc = json.loads((out / "front.json").read_text())
    csv_text = (out / "front.csv").read_text()
    from_csv = load_front({k: v for k, v in doc.items() if k != "points"}, csv_text)
    if "points" in doc:
        full = load_front(doc)
        if ([(p.design_id, dict(p.tiling)) for p in full.points]
                != [(p.design_id, dict(p.tiling)) for p in from_csv.points]
                or not np.array_equal(full.matrix(list(OBJECTIVES)),
                                      from_csv.matrix(list(OBJECTIVES)))):
            raise SystemExit(f"{out}: front.csv does not hold the points of front.json")
    if len(from_csv.points) != doc["front_size"]:
        raise SystemExit(f"{out}: front.csv has {len(from_csv.points)} points, "
                         f"front.json says {doc['front_size']}")
    hv = from_csv.hypervolume_at(from_csv.reference)
    if not math.isclose(hv, from_csv.hypervolume, rel_tol=1e-12):
        raise SystemExit(f"{out}: the hypervolume of the points is {hv}, "
                         f"front.json says {from_csv.hypervolume}")
    png = figure_png(plot_front(from_csv, title=front_title(from_csv, doc)))
    if png != (out / "front.png").read_bytes():
        raise SystemExit(f"{out}: front.png differs from the figure redrawn from front.csv")
    return doc


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    ap.add_argument("--check", action="store_true", help="only check, write nothing")
    args = ap.parse_args(argv)
    for out in args.dirs:
        doc = check(out)
        if args.check or "points" not in doc:
            print(f"{out}: ok ({doc['front_size']} points in front.csv)")
            continue
        doc = {k: v for k, v in doc.items() if k != "points"}
        doc["points_in"] = "front.csv"
        _write_atomic(out / "front.json", json.dumps(doc, indent=1, allow_nan=False) + "\n")
        print(f"{out}: front.json without its {doc['front_size']} points (they are in front.csv)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
