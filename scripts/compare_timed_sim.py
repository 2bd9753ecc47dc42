"""Check that the timed simulation gives the same cycles with the stand-in headers of two revisions.

Usage: python scripts/compare_timed_sim.py [--before HEAD] [--set shapes|large|all]
                                           [--before-flags "-O1"] [--engine fibers|threads]

Generates each design of the set once (with this checkout's generator), then simulates it
twice: with the stand-in headers (``odyssey/codegen/include``) of ``--before`` (built the way
``odyssey sim`` built designs then: ``--before-flags``, default ``-O1``, and the old
``odyssey_dataflow.h`` forced first) and with this checkout's ``odyssey sim``
(:func:`~odyssey.codegen.timedsim.run_timed_sim`, engine ``--engine``). Every report line must
agree: the latency and each task's end and stall cycles, in spawn order. Prints, per design and
side, the wall seconds of compile and run and the CPU seconds (user + system of the compiler and
the simulation: what counts on a shared machine), and exits 1 on any difference or failed run.

The ``shapes`` set covers the orderings that matter to the timing code: MM with output per PE
(``ij-ij.k``), through a chain (``k-ij.k``) and with partial sums through DRAM passes
(``ij-ik.j``, ``ij-jk.i``, ``ik-jk.i``), non-divisor and padded tilings, SIMD 1 and > 1, CNN
designs of the three orderings, an int16 FIR and MV. ``large`` is five arrays of 64-112 PEs
with SIMD 8-16 (MM 256^3 / 512^3, CNN with 128 and 256 channels).
"""

from __future__ import annotations

import argparse
import io
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = "odyssey/codegen/include"

MM64 = {"I": "64", "J": "64", "K": "64"}
CNN16 = {"I": "16", "O": "16", "H": "16", "W": "16", "P": "3", "Q": "3"}
#: (name, kernel, sizes, design, tiling)
SHAPES: list[tuple[str, str, dict[str, str], str, str]] = [
    ("mm64_ij-ij.k", "mm", MM64, "ij-ij.k", "T_i1=16,T_j1=16,T_k1=16,T_i2=4,T_j2=4,T_k2=4"),
    ("mm64_ij-ik.j_nondiv", "mm", MM64, "ij-ik.j", "T_i1=24,T_i2=8,T_j1=20,T_j2=5,T_k1=12,T_k2=4"),
    ("mm64_ij-jk.i", "mm", MM64, "ij-jk.i", "T_i1=32,T_i2=8,T_j1=16,T_j2=4,T_k1=16,T_k2=2"),
    ("mm64_k-ij.k", "mm", MM64, "k-ij.k", "T_i1=16,T_i2=4,T_j1=16,T_j2=4,T_k1=32,T_k2=8"),
    ("mm64_ik-jk.i_nondiv", "mm", MM64, "ik-jk.i", "T_i1=12,T_i2=3,T_j1=40,T_j2=1,T_k1=24,T_k2=6"),
    ("mm_padded_ij-ij.k", "mm", {"I": "37", "J": "41", "K": "43"}, "ij-ij.k",
     "T_i1=12,T_i2=4,T_j1=12,T_j2=3,T_k1=16,T_k2=4"),
    ("cnn16_oh-ohw.ipq", "cnn", CNN16, "oh-ohw.ipq",
     "T_o1=8,T_o2=2,T_h1=8,T_h2=2,T_w1=8,T_w2=4,T_i1=8,T_i2=4,T_p1=3,T_q1=3"),
    ("cnn16_hi-oipq.hw", "cnn", CNN16, "hi-oipq.hw",
     "T_o1=8,T_o2=4,T_h1=8,T_h2=2,T_w1=16,T_w2=4,T_i1=8,T_i2=2,T_p1=3,T_q1=3"),
    ("cnn16_w-hwipq.o_nondiv", "cnn", CNN16, "w-hwipq.o",
     "T_o1=6,T_o2=2,T_h1=5,T_h2=1,T_w1=12,T_w2=3,T_i1=16,T_i2=4,T_p1=3,T_q1=2"),
    ("cnn16_oi-oipq.hw_nondiv", "cnn", CNN16, "oi-oipq.hw",
     "T_o1=12,T_o2=4,T_h1=7,T_h2=1,T_w1=9,T_w2=3,T_i1=12,T_i2=3,T_p1=3,T_q1=3"),
    ("fir_i-i.j", "fir", {"N": "128", "T": "16"}, "i-i.j", "T_i1=32,T_i2=8,T_j1=16,T_j2=4"),
    ("mv_ij-j.i", "mv", {"N": "64", "M": "64"}, "ij-j.i", "T_i1=16,T_i2=4,T_j1=32,T_j2=8"),
]
LARGE: list[tuple[str, str, dict[str, str], str, str]] = [
    ("mm256_ij-ij.k_8x8s8", "mm", {"I": "256", "J": "256", "K": "256"}, "ij-ij.k",
     "T_i1=64,T_j1=64,T_k1=64,T_i2=8,T_j2=8,T_k2=8"),
    ("mm512_ij-ij.k_16x4s16", "mm", {"I": "512", "J": "512", "K": "512"}, "ij-ij.k",
     "T_i1=128,T_i2=8,T_j1=32,T_j2=8,T_k1=64,T_k2=16"),
    ("mm256_ij-ik.j_8x8s8", "mm", {"I": "256", "J": "256", "K": "256"}, "ij-ik.j",
     "T_i1=64,T_i2=8,T_j1=64,T_j2=8,T_k1=64,T_k2=8"),
    ("cnn128_oi-ohw.ipq_8x8s8", "cnn", {"I": "128", "O": "128", "H": "14", "W": "14", "P": "3", "Q": "3"},
     "oi-ohw.ipq", "T_o1=64,T_o2=8,T_i1=64,T_i2=8,T_h1=14,T_h2=2,T_w1=14,T_w2=7,T_p1=3,T_q1=3"),
    ("cnn256_oh-oipq.hw_16x7s8", "cnn", {"I": "256", "O": "256", "H": "14", "W": "14", "P": "3", "Q": "3"},
     "oh-oipq.hw", "T_o1=128,T_o2=8,T_h1=14,T_h2=2,T_w1=14,T_w2=2,T_i1=64,T_i2=8,T_p1=3,T_q1=3"),
]
SETS = {"shapes": SHAPES, "large": LARGE, "all": SHAPES + LARGE}


def export_headers(rev: str, dest: Path) -> Path:
    """The stand-in headers of git revision ``rev``, written under ``dest``."""
    archive = subprocess.run(["git", "archive", rev, INCLUDE], cwd=ROOT, capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest)  # noqa: S202 -- our own repository's archive
    return dest / INCLUDE


def generate_design(kernel: str, sizes: dict[str, str], design: str, tiling: str, out: Path) -> Path:
    from odyssey.codegen.generate import generate
    from odyssey.codegen.writer import write_design
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse

    space = analyse(load_scop(ROOT / "kernels" / f"{kernel}.c", sizes))
    factors = {k: int(v) for k, v in (kv.split("=") for kv in tiling.split(","))}
    return write_design(generate(space, space.design(design), factors), out)


def children_cpu() -> float:
    """User + system seconds of every finished child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_before(design: Path, headers: Path, flags: list[str], work: Path,
               timeout_s: float) -> tuple[str, float, float]:
    """Build and run ``design`` against ``headers``; (stdout, compile s, run s) in wall time."""
    from odyssey.codegen.csim import _depth_table, stream_depths  # the table odyssey sim links

    table = work / "depths.cpp"
    table.write_text(_depth_table(stream_depths((design / "kernel.cpp").read_text())))
    binary = work / "sim_before"
    command = ["g++", "-std=c++17", *flags, "-pthread", "-DODYSSEY_CSIM", "-DODYSSEY_TIMED",
               "-include", str(headers / "odyssey_dataflow.h"), f"-I{design}", f"-I{headers}", "-w",
               *(str(s) for s in sorted(design.glob("*.cpp"))), str(table), "-o", str(binary)]
    start = time.monotonic()
    subprocess.run(command, check=True, capture_output=True)
    compiled = time.monotonic() - start
    start = time.monotonic()
    ran = subprocess.run([str(binary)], capture_output=True, text=True, timeout=timeout_s, cwd=work, check=False)
    return ran.stdout, compiled, time.monotonic() - start


def main() -> int:
    from odyssey.codegen.timedsim import ENGINES, parse_report, run_timed_sim

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default="HEAD", help="git revision of the reference headers")
    ap.add_argument("--set", choices=sorted(SETS), default="shapes")
    ap.add_argument("--before-flags", default="-O1", help="optimisation flags of the reference build")
    ap.add_argument("--engine", choices=ENGINES, default="fibers")
    ap.add_argument("--timeout", type=float, default=1200.0)
    args = ap.parse_args()

    differ = 0
    print(f"{'design':28s} {'cycles':>9s}  same  before: compile   run    cpu   after: compile   run    cpu")
    with tempfile.TemporaryDirectory(prefix="odyssey-cmp-sim-") as tmp:
        root = Path(tmp)
        headers = export_headers(args.before, root)
        for name, kernel, sizes, design_id, tiling in SETS[args.set]:
            design = generate_design(kernel, sizes, design_id, tiling, root / name)
            work = root / f"{name}.build"
            work.mkdir()
            cpu0 = children_cpu()
            stdout, b_compile, b_run = run_before(design, headers, args.before_flags.split(), work, args.timeout)
            cpu1 = children_cpu()
            before = parse_report(stdout)
            after = run_timed_sim(design, timeout_s=args.timeout, engine=args.engine)
            cpu2 = children_cpu()
            same = after.passed and before.cycles is not None and \
                (before.cycles, before.modules) == (after.cycles, after.modules)
            differ += 0 if same else 1
            print(f"{name:28s} {after.cycles or 0:9d}  {'yes' if same else 'NO ':4s}"
                  f"          {b_compile:6.1f} {b_run:6.2f} {cpu1 - cpu0:6.1f}          "
                  f"{after.compile_seconds:6.1f} {after.run_seconds:6.2f} {cpu2 - cpu1:6.1f}  "
                  f"({len(after.modules)} tasks)", flush=True)
            if not same:
                print(f"  before: {before.cycles} ({len(before.modules)} tasks); after: {after.status} "
                      f"{after.cycles} ({len(after.modules)} tasks) {after.message[:200]}")
    print(f"{len(SETS[args.set]) - differ} of {len(SETS[args.set])} designs identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
