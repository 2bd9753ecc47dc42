"""Compare the models (and the generated sources) of two odyssey revisions.

Usage: python scripts/compare_models.py --before REV [--after REV|worktree] [--tilings 1000] [--seed 0]
       python scripts/compare_models.py --before REV --sources

With ``--sources``: generates every MM, CNN, MV, FIR and SYRK design at small sizes with a
divisor, a non-divisor and a SIMD tiling in both revisions and lists every design whose
``kernel.cpp``, ``kernel.h``, ``host.cpp`` or descriptor (less its ``command``) differs.

Draws ``--tilings`` random legal tilings spread over the 18 MM designs (1024^3) and the 30 CNN
designs (VGG16 conv3-1: I=128, O=256, H=W=56, P=Q=3), evaluates latency, DSP, BRAM18K and off-chip bytes
with each revision's model (each in its own process, from a `git worktree` of the revision
or, for `worktree`, from this checkout) and prints every tiling where they differ, grouped by
design and figure, with the relative change (figures within a relative 1e-9 agree: the same
sums in another order). Exit 0 when identical, 1 otherwise.

The tilings are drawn by the checkout's own search space, so both revisions see the same
points.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = {"mm": ("kernels/mm.c", {"I": "1024", "J": "1024", "K": "1024"}),
           "cnn": ("kernels/cnn.c", {"I": "128", "O": "256", "H": "56", "W": "56", "P": "3", "Q": "3"})}
FIGURES = ("latency_cycles", "dsp", "bram18k", "offchip_bytes")
#: figures that agree to this relative tolerance are the same (sums in another order)
REL_TOL = 1e-9

_EVAL = r"""
import json, sys
import numpy as np
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.platforms import load_platform
work = json.load(open(sys.argv[1]))
FIGURES = json.loads(sys.argv[3])
out = []
plat = load_platform("u250")
for kernel, file, sizes, design, tilings in work:
    ks = analyse(load_scop(file, sizes))
    m = build_model(ks, ks.design(design), platform=plat)
    for t in tilings:
        r = m.evaluate_one(t)
        out.append([kernel, design, t, {f: float(r[f]) for f in FIGURES}])
json.dump(out, open(sys.argv[2], "w"))
"""


_SOURCES = r"""
import json, sys
from pathlib import Path
from odyssey.codegen.generate import generate
from odyssey.codegen.samples import sample_tiling
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
CASES = {"mm": {"I": "37", "J": "41", "K": "43"},
         "cnn": {"I": "5", "O": "7", "H": "9", "W": "11", "P": "3", "Q": "2"},
         "mv": {"N": "45", "M": "38"}, "fir": {"N": "100", "T": "13"}, "syrk": {"N": "23", "K": "17"}}
out = {}
for k, sizes in CASES.items():
    ks = analyse(load_scop(Path("kernels") / f"{k}.c", sizes))
    for d in ks.designs:
        for kind in ("divisor", "nondivisor", "simd"):
            files = dict(generate(ks, d, sample_tiling(d, kind)).files)
            desc = json.loads(files["descriptor.json"])
            desc["command"] = ""
            out[f"{k} {d.id} {kind}"] = {"descriptor.json": json.dumps(desc, sort_keys=True),
                                         **{f: files[f] for f in ("kernel.cpp", "kernel.h", "host.cpp")}}
json.dump(out, open(sys.argv[1], "w"))
"""


def sources(tree: Path) -> dict[str, dict[str, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        o, script = Path(tmp) / "out.json", Path(tmp) / "sources.py"
        script.write_text(_SOURCES)
        subprocess.run([sys.executable, str(script), str(o)], cwd=tree, check=True,
                       env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})
        result: dict[str, dict[str, str]] = json.loads(o.read_text())
        return result


def draw(n: int, seed: int) -> list[list[object]]:
    import numpy as np

    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse
    from odyssey.model import build_model
    from odyssey.platforms import load_platform
    from odyssey.tune.space import SearchSpace

    rng = np.random.default_rng(seed)
    plat = load_platform("u250")
    designs = []
    for kernel, (file, sizes) in KERNELS.items():
        ks = analyse(load_scop(ROOT / file, sizes))
        designs += [(kernel, file, sizes, d.id, ks, d) for d in ks.designs]
    per = -(-n // len(designs))
    work = []
    for kernel, file, sizes, did, ks, d in designs:
        space = SearchSpace(build_model(ks, d, platform=plat).params)
        points = space.to_points(space.sample(rng, per))
        work.append([kernel, file, sizes, did, [{k: int(v) for k, v in p.items()} for p in points]])
    return work


def evaluate(tree: Path, work: list[list[object]]) -> list[list[object]]:
    with tempfile.TemporaryDirectory() as tmp:
        w, o, script = Path(tmp) / "work.json", Path(tmp) / "out.json", Path(tmp) / "eval.py"
        w.write_text(json.dumps(work))
        script.write_text(_EVAL)
        subprocess.run([sys.executable, str(script), str(w), str(o), json.dumps(FIGURES)], cwd=tree, check=True,
                       env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})
        result: list[list[object]] = json.loads(o.read_text())
        return result


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="git revision of the reference model")
    ap.add_argument("--after", default="worktree", help="git revision, or `worktree` (this checkout)")
    ap.add_argument("--tilings", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sources", action="store_true", help="compare the generated sources instead")
    args = ap.parse_args()
    work = [] if args.sources else draw(args.tilings, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for label, rev in (("before", args.before), ("after", args.after)):
            if rev == "worktree":
                trees[label] = ROOT
                continue
            path = Path(tmp) / label
            subprocess.run(["git", "worktree", "add", "--detach", "-q", str(path), rev], cwd=ROOT, check=True)
            trees[label] = path
        try:
            if args.sources:
                return _report_sources(sources(trees["before"]), sources(trees["after"]), args)
            before, after = evaluate(trees["before"], work), evaluate(trees["after"], work)
        finally:
            for path in trees.values():
                if path != ROOT:
                    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False)
    diffs: dict[tuple[str, str], list[tuple[dict[str, int], float, float]]] = {}
    for (kernel, design, tiling, fb), (_, _, _, fa) in zip(before, after, strict=True):
        for f in FIGURES:
            if not math.isclose(fb[f], fa[f], rel_tol=REL_TOL):  # type: ignore[index]
                diffs.setdefault((f"{kernel} {design}", f), []).append((tiling, fb[f], fa[f]))  # type: ignore[arg-type, index]
    print(f"{len(before)} tilings over {len({(r[0], r[1]) for r in before})} designs, "
          f"{args.before} -> {args.after}")
    if not diffs:
        print("identical: latency, DSP, BRAM18K and off-chip bytes agree on every tiling")
        return 0
    for (design, fig), rows in sorted(diffs.items()):
        ratios = [a / b if b else float("inf") for _, b, a in rows]
        print(f"{design:16s} {fig:15s} {len(rows):4d} tilings differ, after/before "
              f"{min(ratios):.3f} .. {max(ratios):.3f}  e.g. {rows[0][0]}: {rows[0][1]:.0f} -> {rows[0][2]:.0f}")
    return 1


def _report_sources(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]],
                    args: argparse.Namespace) -> int:
    changed = {k: [f for f in before[k] if before[k][f] != after.get(k, {}).get(f)] for k in before}
    changed = {k: v for k, v in changed.items() if v}
    print(f"{len(before)} designs generated, {args.before} -> {args.after}")
    if not changed and before.keys() == after.keys():
        print("identical: kernel.cpp, kernel.h, host.cpp and descriptor.json of every design")
        return 0
    for k, files in sorted(changed.items()):
        print(f"{k}: {', '.join(files)} differ")
    return 1


if __name__ == "__main__":
    sys.exit(main())
