"""Generate and C-simulate every design of the bundled kernels with three tilings each.

Usage: python scripts/csim_sweep.py [--jobs 2] [--kernels mm,cnn] [--quick] [--concurrent]

By default every design runs the way Vitis HLS C simulation runs it (processes called in order
over unbounded streams, Xilinx's own ap_int.h/hls_stream.h); `--concurrent` runs one thread per
process over FIFOs of their declared depths instead (the deadlock check).

For MM at 64x64x64 and 37x41x43 and CNN at [I,O,H,W,P,Q] = [16,16,16,16,3,3] and an odd
layer, every design gets a divisor tiling, a non-divisor tiling and a SIMD tiling
(`odyssey.codegen.samples`); the other kernels get their first designs. Each case passes when
its C simulation matches the loop nest and `odyssey check` finds no problem in its printed code
(status `check` otherwise). Prints a pass/fail table and a summary line; exits 1 if any case
fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES: dict[str, list[dict[str, str]]] = {
    "mm": [{"I": "64", "J": "64", "K": "64"}, {"I": "37", "J": "41", "K": "43"}],
    "cnn": [{"I": "16", "O": "16", "H": "16", "W": "16", "P": "3", "Q": "3"},
            {"I": "5", "O": "7", "H": "9", "W": "11", "P": "3", "Q": "2"}],
    "mv": [{"N": "45", "M": "38"}],
    "mttkrp": [{"I": "8", "J": "9", "K": "7", "L": "6"}],
    "ttmc": [{"I": "5", "J": "6", "K": "4", "L": "5", "M": "3"}],
    "dwconv": [{"C": "9", "H": "10", "W": "12", "P": "3", "Q": "3"}],
    "fir": [{"N": "100", "T": "13"}],
    "syrk": [{"N": "23", "K": "17"}],
    # PolyBench/C 4.2 forms and AutoSA's corpus forms (kernels/polybench, kernels/autosa)
    "polybench/gemm": [{"NI": "23", "NJ": "19", "NK": "17"}],
    "polybench/syrk": [{"N": "23", "M": "17"}],
    "polybench/syr2k": [{"N": "19", "M": "13"}],
    "polybench/trmm_oop": [{"M": "19", "N": "17"}],
    "polybench/gesummv_fused": [{"N": "37"}],
    "polybench/mvt_x1": [{"N": "37"}],
    "polybench/mvt_x2": [{"N": "37"}],
    "polybench/bicg_s": [{"N": "37", "M": "29"}],
    "polybench/bicg_q": [{"N": "37", "M": "29"}],
    "polybench/doitgen_oop": [{"NR": "5", "NQ": "7", "NP": "9"}],
    "autosa/ttm": [{"I": "5", "J": "6", "K": "7", "L": "9"}],
    "autosa/mm_int8": [{"I": "23", "J": "19", "K": "33"}],
    "autosa/pointwise": [{"O": "9", "I": "7", "R": "6", "C": "5", "K": "1"}],
    "autosa/depthwise": [{"O": "9", "R": "6", "C": "5", "K": "3"}],
    "autosa/fc": [{"I": "37", "J": "29"}],
    "autosa/mttkrp": [{"I": "8", "J": "9", "K": "7", "L": "6"}],
    # the quantized network kernels (int8 / int16 inputs and weights, int32 sums)
    "int8/mm": [{"I": "23", "J": "19", "K": "33"}],
    "int8/cnn": [{"I": "5", "O": "7", "H": "9", "W": "11", "P": "3", "Q": "2"}],
    "int8/dwconv": [{"C": "9", "H": "10", "W": "12", "P": "3", "Q": "3"}],
    "int16/mm": [{"I": "23", "J": "19", "K": "33"}],
    "int16/cnn": [{"I": "5", "O": "7", "H": "9", "W": "11", "P": "3", "Q": "2"}],
}

#: design id suffixes swept besides the plain designs (``ID+lutP``, ``ID@LOOP``)
VARIANTS: dict[str, tuple[str, ...]] = {
    "int8/mm": ("+lut50",), "int16/mm": ("+lut50",), "autosa/mm_int8": ("+lut100",),
    "autosa/mttkrp": ("@l",),
}


def run_case(args: tuple[str, dict[str, str], str, str, str]) -> tuple[str, str, str, str, str, float]:
    from odyssey.codegen.csim import run_csim
    from odyssey.codegen.generate import generate
    from odyssey.codegen.samples import sample_tiling
    from odyssey.codegen.writer import write_design
    from odyssey.errors import OdysseyError
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse

    kernel, defines, design_id, kind, mode = args
    t0 = time.perf_counter()
    ks = analyse(load_scop(ROOT / "kernels" / f"{kernel}.c", defines))
    d = ks.design(design_id)
    tiling = sample_tiling(d, kind)  # type: ignore[arg-type]
    label = ",".join(f"{k}={v}" for k, v in tiling.items())
    try:
        g = generate(ks, d, tiling)
    except OdysseyError as exc:
        return kernel, design_id, kind, "gen-error", f"{label}: {exc}", time.perf_counter() - t0
    from odyssey.codegen.static_check import check_design

    with tempfile.TemporaryDirectory() as tmp:
        out = write_design(g, Path(tmp) / "design")
        r = run_csim(out, mode=mode, timeout_s=120)  # type: ignore[arg-type]
        check = check_design(out, clock_mhz=300.0)
    status = r.status if check.ok or r.status != "pass" else "check"
    verdict = "check ok" if check.ok else "check: " + "; ".join(f"{p.where}: {p.what}" for p in check.problems)
    return kernel, design_id, kind, status, f"{label}: {r.message}; {verdict}", time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--kernels", default=",".join(CASES))
    ap.add_argument("--quick", action="store_true", help="first size only, divisor tiling only")
    ap.add_argument("--concurrent", action="store_true", help="threaded C simulation instead of Vitis semantics")
    args = ap.parse_args()
    mode = "concurrent" if args.concurrent else "sequential"
    from odyssey.codegen.csim import include_dir, vendor_include_dir

    headers = include_dir() if args.concurrent else vendor_include_dir()
    print(f"mode {mode}, headers {headers}", flush=True)
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse

    work = []
    for kernel in args.kernels.split(","):
        sizes = CASES[kernel][:1] if args.quick else CASES[kernel]
        for defines in sizes:
            ks = analyse(load_scop(ROOT / "kernels" / f"{kernel}.c", defines))
            designs = ks.designs if kernel in ("mm", "cnn") else ks.designs[:3]
            kinds = ("divisor",) if args.quick else ("divisor", "nondivisor", "simd")
            for d in designs:
                for did in (d.id, *(d.id + v for v in VARIANTS.get(kernel, ()))):
                    for kind in kinds:
                        work.append((kernel, defines, did, kind, mode))
    t0 = time.perf_counter()
    results = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for res in pool.map(run_case, work):
            kernel, did, kind, status, msg, secs = res
            results.append(res)
            print(f"{kernel:24s} {did:16s} {kind:10s} {status:12s} {secs:5.1f}s  {msg}", flush=True)
    passed = sum(1 for r in results if r[3] == "pass")
    print(f"{passed} passed, {len(results) - passed} failed  ({time.perf_counter() - t0:.0f} s, {mode})")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
