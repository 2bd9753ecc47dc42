"""Benchmark: how long `odyssey --help` (and `--version`) take, whole process, against a bare
interpreter start, and which heavy libraries a command's import loads.

Usage: python scripts/bench_cli_start.py [--repeat N]
The target (issue 19) is `odyssey --help` under 0.5 s: the CLI imports no numerical library
until a command runs, and the tuner registry imports scikit-learn, Optuna and Pyomo only for
the methods that use them.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

HEAVY = ("numpy", "islpy", "scipy", "sklearn", "optuna", "pyomo", "casadi", "matplotlib")


def _wall(cmd: list[str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return times


def _loaded(code: str) -> list[str]:
    probe = f"import sys; {code}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return out.stdout.split()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rows = [("python -c pass", [sys.executable, "-c", "pass"]),
            ("odyssey --help", [sys.executable, "-m", "odyssey.cli", "--help"]),
            ("odyssey --version", [sys.executable, "-m", "odyssey.cli", "--version"])]
    print(f"{'command':20s} {'median s':>9s} {'best s':>7s}")
    for label, cmd in rows:
        t = _wall(cmd, args.repeat)
        print(f"{label:20s} {statistics.median(t):9.3f} {min(t):7.3f}")
    for label, code in (("import odyssey.cli", "import odyssey.cli"),
                        ("import odyssey.tune", "import odyssey.tune"),
                        ("tuner 'odyssey'", "from odyssey.tune import TUNERS; TUNERS['odyssey']")):
        print(f"{label:20s} loads: {', '.join(_loaded(code)) or 'none of ' + ', '.join(HEAVY)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
