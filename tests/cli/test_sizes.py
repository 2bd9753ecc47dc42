"""Large problem sizes: every search keeps its time budget in bounded memory, numbers never
wrap around, and sizes beyond 2**62 are refused (exit 2)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MM = str(ROOT / "kernels" / "mm.c")

#: runs odyssey in this process, then reports its wall time and peak memory on stderr. The
#: peak is Linux's VmHWM, this program's own: ``ru_maxrss`` keeps the larger of the image
#: before ``exec`` and after, and before it is the parent's (pytest's, which some tests grow
#: past 3 GB: in random order this read 3.2 GB at 2**32)
_DRIVER = """
import resource, sys, time
from odyssey.cli import main
start = time.perf_counter()
code = main(sys.argv[1:])
try:
    with open("/proc/self/status") as f:
        rss = next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:"))
except (OSError, StopIteration):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"@@ {time.perf_counter() - start:.3f} s {rss} KB", file=sys.stderr)
sys.exit(code)
"""


def _sized(command: str, n: int, budget_s: float, tmp_path: Path) -> tuple[str, float, float, int]:
    """``odyssey COMMAND mm`` at ``n`` per dimension: its output, the search's own seconds
    (from its JSON), the whole process's wall seconds and its peak memory in KB."""
    size = [f"-D{name}={n}" for name in "IJK"]
    out = tmp_path / f"{command}.json"
    stdout, wall, kb = _measured([command, MM, *size, "--design", "ij-ij.k", "--time",
                                  str(budget_s), "--json", str(out)], tmp_path)
    rec = json.loads(out.read_text())
    search = rec["seconds"] if command == "optimum" else rec["designs"][0]["seconds"]
    return stdout, float(search), wall, kb


def _measured(argv: list[str], cwd: Path) -> tuple[str, float, int]:
    """``odyssey argv`` in a process of its own (exit 0): its output, wall seconds and peak KB."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _DRIVER, *argv], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"@@ ([\d.]+) s (\d+) KB", proc.stderr)
    assert m is not None, proc.stderr
    return proc.stdout, float(m.group(1)), int(m.group(2))


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="Linux's VmHWM")
def test_the_memory_measured_is_the_commands_own(tmp_path: Path) -> None:
    """Run from a large process (pytest, after tests that grew it), a command's peak is its
    own: read as ``ru_maxrss`` it was the parent's 3.2 GB in a random-order run."""
    ballast = b"\x01" * 800_000_000  # written, so resident
    _, _, kb = _measured(["designs", MM], tmp_path)
    assert len(ballast) and kb < 400_000, kb  # some 150 MB


@pytest.mark.parametrize("command", ["optimum", "tune"])
def test_2_to_the_32_plans_within_budget_and_memory(command: str, tmp_path: Path) -> None:
    out, search, wall, kb = _sized(command, 2**32, 1.0, tmp_path)
    assert search <= 1.0 * 1.1 + 1.0, out  # the budget plus 10% and a second
    assert wall < search + 10.0, out  # reading the kernel and building the model, loaded
    assert kb < 1_000_000, kb  # under 1 GB (the arrays as long as a loop took 32 GiB)
    # the best tiling's latency (not a lower bound): no wrapped, negative or tiny value
    m = re.search(r"(?:latency: |best: .*\()([\d,]+) cycles", out)
    assert m is not None and int(m.group(1).replace(",", "")) > (2**32) ** 3 // 8600, out


@pytest.mark.slow
@pytest.mark.parametrize("exp", [20, 24, 48, 62])
@pytest.mark.parametrize("command", ["optimum", "tune"])
def test_sizes_up_to_2_to_the_62_keep_budget_and_memory(command: str, exp: int, tmp_path: Path) -> None:
    out, search, wall, kb = _sized(command, 2**exp, 5.0, tmp_path)
    assert search <= 5.0 * 1.1 + 1.0, out
    assert wall < search + 10.0, out
    assert kb < 1_000_000, kb


def test_memory_error_is_an_error_not_a_bug(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from odyssey.cli import design_cmds, main

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError("Unable to allocate 32.0 GiB for an array")

    monkeypatch.setattr(design_cmds, "_cmd_designs", exhausted)
    rc = main(["designs", "mm"])
    err = capsys.readouterr().err
    assert rc == 2 and "out of memory (Unable to allocate 32.0 GiB" in err
    assert "internal error" not in err


def test_a_triangular_kernel_too_big_to_count_is_a_clear_error() -> None:
    """SYRK (j <= i) at N = 8.8e11: counting its iterations hung (isl scanned every i); now
    exit 2 naming the statement and what to do, at once. At N = K = 4096 its model is built
    (the free loop k counts as a factor: 16 s of counting before, now well under a second)."""
    import time

    from tests.cli.fuzz import run

    start = time.perf_counter()
    o = run(["tune", "polybench/syrk", "-DN=875387115520", "-DM=1", "--design", "0", "--time", "0.3"])
    assert o.code == 2 and "is not a box" in o.err and "give them smaller sizes" in o.err, o.describe()
    assert time.perf_counter() - start < 30
    o = run(["model", "syrk", "-DN=4096", "-DK=4096", "--design", "0", "--tiling",
             "T_i1=1,T_j1=1,T_k1=1,T_i2=1,T_j2=1,T_k2=1", "--json", "-"])
    assert o.code == 0, o.describe()


def test_the_optimum_never_proves_a_negative_lower_bound() -> None:
    """PolyBench TRMM at N = 697,094,648,759: the interval bounds (rounded outward) dipped
    below zero and the optimum said "no tiling is faster than -45,456,268,172,671 cycles"
    when its time ran out; a latency is never negative (found by the size fuzzer, seed 25)."""
    from tests.cli.fuzz import run

    o = run(["optimum", "polybench/trmm_oop", "-DM=61", "-DN=697094648759", "--design", "i-ik.j",
             "--time", "0.3", "--json", "-"])
    assert o.code == 0, o.describe()
    rec = json.loads(o.out)
    assert 0 <= rec["lower_bound_cycles"] <= rec["latency_cycles"], rec
    assert not re.search(r"-[\d,]{2,} cycles", o.out + o.err), o.out


def test_generate_refuses_what_its_32_bit_ints_cannot_count(tmp_path: Path) -> None:
    """The printed C++ counts loops and indexes DRAM words with `int`: TTMC with T_l1 =
    3,412,550,078,520,395,160 was printed (its counters wrapped; `check` then disagreed with
    the model, found by the size fuzzer, seed 1906). Now exit 2 naming the loop and the
    limit, and nothing is written; just under the limit the design is written."""
    from tests.cli.fuzz import run

    out = tmp_path / "t"
    o = run(["generate", "ttmc", "-DI=1", "-DJ=907494936682", "-DK=38", "-DL=3412550078520395160",
             "-DM=12", "--design", "k-jl.ikm", "--tiling", "T_i1=1,T_j1=1,T_k1=7,"
             "T_l1=3412550078520395160,T_m1=2,T_i2=1,T_j2=1,T_k2=7,T_l2=8", "--out", str(out)])
    assert o.code == 2 and "32-bit `int` (at most 2,147,483,647)" in o.err, o.describe()
    assert "loop l spans 3,412,550,078,520,395,160 iterations" in o.err and not out.exists()
    # C of 32,768 x 65,535 one-element words: 2,147,450,880, just under 2**31
    o = run(["generate", "mm", "-DI=32768", "-DJ=65535", "-DK=4", "--design", "ij-ij.k", "--tiling",
             "T_i1=4,T_j1=5,T_k1=4,T_i2=2,T_j2=1,T_k2=1", "--out", str(out)])
    assert o.code == 0 and (out / "kernel.cpp").is_file(), o.describe()


def _answers_ctrl_c(command: str, exp: int, tmp_path: Path) -> None:
    """Ctrl-C 2 s into a search of 10 minutes at 2**exp per dimension: exit 130 within 2 s
    with the best tiling so far."""
    from tests.cli.interrupt import interrupt_after

    n = 2**exp
    run = interrupt_after([command, MM, f"-DI={n}", f"-DJ={n}", f"-DK={n}", "--design",
                           "ij-ij.k", "--time", "600"], tmp_path, when="ij-ij.k", then_s=2.0)
    assert run.returncode == 130, run.stderr
    assert run.answered_s < 2.0, run.answered_s
    assert "Traceback" not in run.stderr and "T_i1=" in run.stdout, run.stdout + run.stderr


def test_tune_at_2_to_the_32_answers_ctrl_c_within_2_s(tmp_path: Path) -> None:
    _answers_ctrl_c("tune", 32, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("exp", [20, 24, 32, 48, 62])
@pytest.mark.parametrize("command", ["optimum", "tune"])
def test_sizes_up_to_2_to_the_62_answer_ctrl_c_within_2_s(command: str, exp: int,
                                                          tmp_path: Path) -> None:
    _answers_ctrl_c(command, exp, tmp_path)


@pytest.mark.parametrize("size", [2**62 + 1, 2**63, 10**20])
@pytest.mark.parametrize("command", ["optimum", "tune"])
def test_sizes_beyond_2_to_the_62_are_a_clear_exit_2(command: str, size: int) -> None:
    from tests.cli.fuzz import run

    o = run([command, "mm", f"-DI={size}", "-DJ=8", "-DK=8", "--design", "ij-ij.k", "--time", "1"])
    assert o.code == 2 and f"-D I={size}: a size must be at most 2**62" in o.err, o.describe()
