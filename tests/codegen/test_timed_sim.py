"""Timed C simulation: hand-derived cycle counts for the contract of ``odyssey_timed.h``.

Every C++ case is compiled with ``-DODYSSEY_CSIM -DODYSSEY_TIMED`` and run once by a
module-scoped fixture (in parallel); each test then checks the reported cycles against the
derivation in its docstring. Notation: a pipeline (II, depth) issues iteration n at ``i_n``;
a FIFO write at ``tw`` stamps its item ``tw + 1``; the k-th write into a depth-D FIFO happens
no earlier than ``r_{k-D} + 1`` (``r`` = read times).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from odyssey.codegen.csim import CsimResult, CsimStatus
from odyssey.codegen.generate import generate
from odyssey.codegen.timedsim import (
    TaskState,
    TimedEngine,
    TimedProgress,
    TimedResult,
    parse_report,
    run_timed_sim,
    timed_result,
)
from odyssey.codegen.writer import write_design
from odyssey.errors import SimulationError
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = r"""
#include <cstdio>
#include "hls_stream.h"
#include "hls_streamofblocks.h"
#include "odyssey_dataflow.h"
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::printf("ODYSSEY CSIM FAIL line %d: %s\n", __LINE__, #cond);         \
      return 1;                                                                \
    }                                                                          \
  } while (0)
"""

# (a) and (b): producer pipeline (II=1, depth 3) -> depth-2 FIFO -> consumer (II=CONSUMER_II).
FIFO_HOST = r"""
const int N = 100;

void producer(hls::stream<int>& out) {
  ODYSSEY_PIPE_BEGIN(1, 3);
  for (int i = 0; i < N; ++i) {
    ODYSSEY_PIPE_ITER();
    out.write(i);
  }
  ODYSSEY_PIPE_END();
}

void consumer(hls::stream<int>& in, long& sum) {
  ODYSSEY_PIPE_BEGIN(CONSUMER_II, 3);
  for (int i = 0; i < N; ++i) {
    ODYSSEY_PIPE_ITER();
    sum += in.read();
  }
  ODYSSEY_PIPE_END();
}

int main() {
  hls::stream<int, 2> fifo("fifo");
  long sum = 0;
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(producer(fifo));
  ODYSSEY_TASK(consumer(fifo, sum));
  ODYSSEY_DATAFLOW_END
  ODYSSEY_TIMED_REPORT();
  CHECK(sum == (long)N * (N - 1) / 2);
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

# (c): 3 blocks through a ping-pong ring of 2; 16-iteration pipelines on both sides.
BLOCKS_HOST = r"""
typedef int blk_t[16];

void block_producer(hls::stream_of_blocks<blk_t>& out) {
  for (int b = 0; b < 3; ++b) {
    hls::write_lock<blk_t> blk(out);
    ODYSSEY_PIPE_BEGIN(1, 3);
    for (int i = 0; i < 16; ++i) {
      ODYSSEY_PIPE_ITER();
      blk[i] = 100 * b + i;
    }
    ODYSSEY_PIPE_END();
  }
}

void block_consumer(hls::stream_of_blocks<blk_t>& in, long& sum) {
  for (int b = 0; b < 3; ++b) {
    hls::read_lock<blk_t> blk(in);
    ODYSSEY_PIPE_BEGIN(2, 5);
    for (int i = 0; i < 16; ++i) {
      ODYSSEY_PIPE_ITER();
      sum += blk[i];
    }
    ODYSSEY_PIPE_END();
  }
}

int main() {
  hls::stream_of_blocks<blk_t> blocks("blocks");
  long sum = 0;
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(block_producer(blocks));
  ODYSSEY_TASK(block_consumer(blocks, sum));
  ODYSSEY_DATAFLOW_END
  ODYSSEY_TIMED_REPORT();
  CHECK(sum == 16L * (0 + 100 + 200) + 3L * (15 * 16 / 2));
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

# (d): 100 DRAM reads in one II=1, depth-3 pipeline; 25 consecutive reads form a burst.
DRAM_HOST = r"""
void dram_reader(const int* mem, long& sum) {
  ODYSSEY_PIPE_BEGIN(1, 3);
  for (int i = 0; i < 100; ++i) {
    ODYSSEY_PIPE_ITER();
    int w = mem[i];
    ODYSSEY_DRAM(25);
    sum += w;
  }
  ODYSSEY_PIPE_END();
}

int main() {
  int mem[100];
  for (int i = 0; i < 100; ++i) mem[i] = i;
  long sum = 0;
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(dram_reader(mem, sum));
  ODYSSEY_DATAFLOW_END
  ODYSSEY_TIMED_REPORT();
  CHECK(sum == 4950);
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

# (d'): the same reads on port A, paced at PACE cycles per word (its share of a DRAM channel).
PACED_DRAM_HOST = r"""
#define ODYSSEY_DRAM_PORT_A 0
void dram_reader(const int* A, long& sum) {
  ODYSSEY_PIPE_BEGIN(1, 3);
  for (int i = 0; i < 100; ++i) {
    ODYSSEY_PIPE_ITER();
    int w = A[i];
    ODYSSEY_DRAM_PORT(25, A);
    sum += w;
  }
  ODYSSEY_PIPE_END();
}

int main() {
  int mem[100];
  for (int i = 0; i < 100; ++i) mem[i] = i;
  long sum = 0;
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(dram_reader(mem, sum));
  ODYSSEY_DATAFLOW_END
  ODYSSEY_TIMED_REPORT();
  CHECK(sum == 4950);
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

# (e): a reader whose writer never writes: every task blocked.
DEADLOCK_HOST = r"""
void reader(hls::stream<int>& in, long& sink) { sink = in.read(); }
void idle(hls::stream<int>& out) { (void)out; }

int main() {
  hls::stream<int, 2> orphan("orphan_fifo");
  long sink = 0;
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(idle(orphan));
  ODYSSEY_TASK(reader(orphan, sink));
  ODYSSEY_DATAFLOW_END
  ODYSSEY_TIMED_REPORT();
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

# (f): a task with 4 MiB of locals (a std::thread has 8 MiB), then one timed write and read.
BIG_STACK_HOST = r"""
void big_frame(hls::stream<int>& out) {
  volatile char buf[4 << 20];
  for (unsigned i = 0; i < sizeof buf; i += 4096) buf[i] = static_cast<char>(i >> 12);
  ODYSSEY_PIPE_BEGIN(1, 2);
  ODYSSEY_PIPE_ITER();
  out.write(buf[4096 * 7]);
  ODYSSEY_PIPE_END();
}

void take(hls::stream<int>& in, int& got) { got = in.read(); }

int main() {
  hls::stream<int, 2> fifo("fifo");
  int got = -1;
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(big_frame(fifo));
  ODYSSEY_TASK(take(fifo, got));
  ODYSSEY_DATAFLOW_END
  ODYSSEY_TIMED_REPORT();
  CHECK(got == 7);
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

# A design directory's own copy of odyssey_dataflow.h that must not be used (odyssey sim forces
# the stand-in one first; the include guard then skips this copy).
STALE_DATAFLOW_H = """#ifndef ODYSSEY_DATAFLOW_H
#define ODYSSEY_DATAFLOW_H
#error "the design directory's copy of odyssey_dataflow.h was used"
#endif
"""

MM_SIZES = {"I": "16", "J": "16", "K": "16"}
MM_TILING = {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 2, "T_k2": 2}
KERNEL_CALL = re.compile(r"^(\s*kernel0\(.*\);)$", re.MULTILINE)
TASK_CALL = re.compile(r"ODYSSEY_TASK\((\w+)\(((?:-?\d+, )*)")


def _task_names(text: str) -> list[str]:
    """Each process call's name as the timed simulation records it: the function and its
    leading integer arguments (its position), ``PE(0, 1, fifo...)`` -> ``PE<0, 1>``."""
    return [f"{f}<{ids[:-2]}>" if ids else f for f, ids in TASK_CALL.findall(text)]


@dataclass(frozen=True)
class Case:
    files: Mapping[str, str]
    extra_flags: tuple[str, ...] = ()
    engine: TimedEngine = "fibers"


CASES: dict[str, Case] = {
    "fifo_ii1": Case({"host.cpp": PRELUDE + FIFO_HOST}, ("-DCONSUMER_II=1",)),
    "fifo_ii2": Case({"host.cpp": PRELUDE + FIFO_HOST}, ("-DCONSUMER_II=2",)),
    "fifo_ii2_ucontext": Case({"host.cpp": PRELUDE + FIFO_HOST}, ("-DCONSUMER_II=2", "-DODYSSEY_FIBER_UCONTEXT")),
    "fifo_ii2_threads": Case({"host.cpp": PRELUDE + FIFO_HOST}, ("-DCONSUMER_II=2",), engine="threads"),
    "blocks": Case({"host.cpp": PRELUDE + BLOCKS_HOST, "odyssey_dataflow.h": STALE_DATAFLOW_H}),
    "dram": Case({"host.cpp": PRELUDE + DRAM_HOST}),
    "dram_overhead_7": Case({"host.cpp": PRELUDE + DRAM_HOST}, ("-DODYSSEY_DRAM_BURST_OVERHEAD=7",)),
    "dram_threads": Case({"host.cpp": PRELUDE + DRAM_HOST}, engine="threads"),
    "dram_paced": Case({"host.cpp": PRELUDE + PACED_DRAM_HOST}, ("-DODYSSEY_DRAM_PACE_A=1.5",)),
    "dram_paced_threads": Case({"host.cpp": PRELUDE + PACED_DRAM_HOST}, ("-DODYSSEY_DRAM_PACE_A=1.5",),
                               engine="threads"),
    "dram_paced_fast": Case({"host.cpp": PRELUDE + PACED_DRAM_HOST}, ("-DODYSSEY_DRAM_PACE_A=0.5",)),
    "deadlock": Case({"host.cpp": PRELUDE + DEADLOCK_HOST}),
    "big_stack": Case({"host.cpp": PRELUDE + BIG_STACK_HOST}),
}


def _with_report(host: str) -> str:
    """Add ``ODYSSEY_TIMED_REPORT();`` after the kernel call unless the generator emits it."""
    if "ODYSSEY_TIMED_REPORT" in host:
        return host
    patched, count = KERNEL_CALL.subn(r"\1\n  ODYSSEY_TIMED_REPORT();", host, count=1)
    assert count == 1, "host.cpp has no `kernel0(...);` line"
    return patched


def _write_mm_design(root: Path) -> Path:
    space = analyse(load_scop(ROOT / "kernels" / "mm.c", MM_SIZES))
    out = write_design(generate(space, space.design("ij-ij.k"), MM_TILING), root / "mm")
    host = out / "host.cpp"
    host.write_text(_with_report(host.read_text()))
    return out


def _run_case(root: Path, name: str, case: Case) -> TimedResult:
    design = root / name
    design.mkdir()
    for filename, text in case.files.items():
        (design / filename).write_text(text)
    return run_timed_sim(design, timeout_s=60.0, extra_flags=case.extra_flags, engine=case.engine)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("timed")


@pytest.fixture(scope="module")
def results(root: Path) -> dict[str, TimedResult]:
    mm = _write_mm_design(root)
    workers = max(2, min(len(CASES) + 1, os.cpu_count() or 2))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {name: pool.submit(_run_case, root, name, case) for name, case in CASES.items()}
        futures["mm"] = pool.submit(run_timed_sim, mm, timeout_s=120.0)
        futures["mm_threads"] = pool.submit(run_timed_sim, mm, timeout_s=120.0, engine="threads")
        return {name: future.result() for name, future in futures.items()}


def _explain(result: TimedResult) -> str:
    return f"{result.status}: {result.message}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def _module(result: TimedResult, name: str) -> tuple[int, int]:
    """(end, stall) of the task called ``name``."""
    matches = [(end, stall) for n, end, stall in result.modules if n == name]
    assert len(matches) == 1, f"{name} in {result.modules}"
    return matches[0]


def test_fifo_at_full_rate(results: dict[str, TimedResult]) -> None:
    """Producer and consumer both II=1, depth 3, N = 100 items, FIFO depth 2.

    Producer: write i at i (stamp i+1); the slot of write k >= 2 was freed by read k-2 at
    r_{k-2} = k-1, so tw_k = max(k, k) = k: no stall. End = i_99 + 3 = 102.
    Consumer: iteration 0 issues at 0 but item 0 is stamped 1: one stall cycle, so
    r_0 = i_0 = 1; then i_j = j+1 >= stamp j+1. End = i_99 + 3 = 103, stall 1.
    Latency = max(102, 103) = 103.
    """
    result = results["fifo_ii1"]
    assert result.status == "pass", _explain(result)
    assert _module(result, "producer") == (102, 0)
    assert _module(result, "consumer") == (103, 1)
    assert result.cycles == 103


def test_fifo_back_pressure_from_a_slow_consumer(results: dict[str, TimedResult]) -> None:
    """As above but the consumer issues every 2 cycles (II=2), N = 100.

    Consumer: stalls 1 cycle on item 0 (stamp 1), then i_j = 2j+1 = r_j; every item is
    stamped tw_j + 1 <= 2j - 1 < i_j, so no further stall. End = i_99 + 3 = 202, stall 1.
    Producer: tw_0 = 0, tw_1 = 1, tw_2 = max(2, r_0 + 1 = 2) = 2; for k >= 3 the iteration
    issues at tw_{k-1} + 1 = 2k - 3 but the slot frees at r_{k-2} + 1 = 2k - 2: tw_k = 2k-2,
    one stall cycle per write k = 3..99, i.e. 97 stalls. End = tw_99 + 3 = 199.
    Latency = max(199, 202) = 202.
    """
    result = results["fifo_ii2"]
    assert result.status == "pass", _explain(result)
    assert _module(result, "producer") == (199, 97)
    assert _module(result, "consumer") == (202, 1)
    assert result.cycles == 202


def test_block_ping_pong_with_a_ring_of_two(results: dict[str, TimedResult]) -> None:
    """Producer: 3 blocks, each filled by a (II=1, depth 3) 16-iteration pipeline; consumer
    reads each with a (II=2, depth 5) 16-iteration pipeline; ring of 2 blocks.

    Producer: block 0 issues 0..15, ends 18, published at 18; block 1 (second free block)
    issues 18..33, ends 36, published at 36; block 2 reuses block 0, freed by the consumer
    at 53: stall 53 - 36 = 17, issues 53..68, ends 71.
    Consumer: block 0 acquired at max(0, 18) = 18 (stall 18), issues 18, 20, .., 48,
    ends 48 + 5 = 53 and frees it; block 1 at max(53, 36) = 53, ends 53 + 30 + 5 = 88;
    block 2 at max(88, 71) = 88, ends 88 + 30 + 5 = 123. Stall 18.
    Latency = 123.
    """
    result = results["blocks"]
    assert result.status == "pass", _explain(result)
    assert _module(result, "block_producer") == (71, 17)
    assert _module(result, "block_consumer") == (123, 18)
    assert result.cycles == 123


def test_dram_bursts_cost_a_fixed_overhead_per_run(results: dict[str, TimedResult]) -> None:
    """100 DRAM reads with ODYSSEY_DRAM(25) in a (II=1, depth 3) pipeline.

    Accesses 0, 25, 50, 75 start a burst: +20 cycles each, after their iteration issued,
    so the next iteration issues 21 cycles later. The 100 issues take 100 slots plus
    4 * 20 overhead cycles: i_99 = 99 + 4 * 20 = 179, end = 179 + 3 = 182. Burst overhead
    is not stall. With ODYSSEY_DRAM_BURST_OVERHEAD=7: 99 + 4 * 7 + 3 = 130.
    """
    result = results["dram"]
    assert result.status == "pass", _explain(result)
    assert result.modules == (("dram_reader", 182, 0),)
    assert result.cycles == 182
    cheaper = results["dram_overhead_7"]
    assert cheaper.status == "pass", _explain(cheaper)
    assert cheaper.cycles == 130


def test_dram_port_paced_at_its_channel_share(results: dict[str, TimedResult]) -> None:
    """The 100 reads of (d) on port A at 1.5 cycles per word (its share of its channel).

    The channel time ``s`` of access k is ``B_k * 20 + k * 1.5`` (``B_k`` the bursts opened so
    far, each delaying the channel by its overhead): the last access, k = 99 after 4 bursts,
    starts at 80 + 148.5 = 228.5, issues at cycle 229 and the pipeline ends at 229 + 3 = 232:
    ``(N - 1) * max(II, pace) + 4 * 20 + depth`` = 231.5, up to the whole cycle. The 50 cycles
    over the unpaced 182 are waits for the channel (stall). Both engines agree. At 0.5 cycles
    per word the port keeps up with II = 1: the unpaced 182, no stall.
    """
    for case in ("dram_paced", "dram_paced_threads"):
        result = results[case]
        assert result.status == "pass", _explain(result)
        assert result.modules == (("dram_reader", 232, 50),)
    fast = results["dram_paced_fast"]
    assert fast.status == "pass", _explain(fast)
    assert fast.modules == (("dram_reader", 182, 0),)


def test_generated_mm_design_runs_timed(results: dict[str, TimedResult], root: Path) -> None:
    """MM 16^3, design ij-ij.k, T1 = 8, T2 = 2: a 4 x 4 array of PEs with II = 2.

    Lower bound from the PEs alone: (16/8)^3 = 8 tiles x (T_k1/T_k2) * T_i2 * T_j2 = 16 PE
    iterations x II 2 = 256 cycles; the real latency adds pipeline depths, DRAM bursts and
    the drain, so it must exceed that. The DRAM writer of C writes the last output, so it
    finishes last and its end is the latency. Every ODYSSEY_TASK of kernel.cpp reports once,
    in spawn order, under its call's text up to '('.
    """
    result = results["mm"]
    assert result.status == "pass", _explain(result)
    assert "256 outputs match" in result.message
    assert result.cycles is not None and result.cycles > 8 * 16 * 2
    assert result.cycles == max(end for _, end, _ in result.modules)
    names = [name for name, _, _ in result.modules]
    assert names == _task_names((root / "mm" / "kernel.cpp").read_text())
    assert {"PE<0, 0>", "PE_Alast_Blast<3, 3>", "A_IO_L2_in_inter<2>"} <= set(names)
    assert max(result.modules, key=lambda m: m[1])[0] == "C_drain_IO_L3_out"
    assert all(0 <= stall <= end for _, end, stall in result.modules)


def test_engines_agree(results: dict[str, TimedResult]) -> None:
    """The contract depends only on each task's program order, so fibers (switched by hand or by
    ucontext) and one thread per task report the same cycles, task by task."""
    for name in ("fifo_ii2_ucontext", "fifo_ii2_threads"):
        assert results[name].status == "pass", _explain(results[name])
        assert results[name].modules == results["fifo_ii2"].modules
    assert results["dram_threads"].modules == results["dram"].modules
    threads = results["mm_threads"]
    assert threads.status == "pass", _explain(threads)
    assert (threads.cycles, threads.modules) == (results["mm"].cycles, results["mm"].modules)


def test_a_design_dir_copy_of_the_dataflow_header_is_not_used(results: dict[str, TimedResult]) -> None:
    """The blocks case ships an odyssey_dataflow.h that fails to compile: the stand-in one is
    included first and its guard skips the copy (a design keeps the copy it was generated
    with, which may predate the stream headers it would be built with)."""
    assert results["blocks"].status == "pass", _explain(results["blocks"])


def test_every_task_blocked_is_a_deadlock_at_once(results: dict[str, TimedResult]) -> None:
    """With fibers a deadlock is known as soon as no task can run: no time-out to wait for."""
    result = results["deadlock"]
    assert result.status == "deadlock", _explain(result)
    assert "blocked on read of stream 'orphan_fifo'" in result.message
    assert "ODYSSEY CSIM PASS" not in result.stdout
    assert result.run_seconds < 5.0  # the threaded engine would wait ODYSSEY_CSIM_TIMEOUT


def test_a_task_may_keep_megabytes_of_locals(results: dict[str, TimedResult]) -> None:
    """Fiber stacks are as large as a thread's (8 MiB here); 4 MiB of locals fit. The write
    issues at 0 and is stamped 1; the reader stalls 1 cycle; the writer ends at 0 + depth 2."""
    result = results["big_stack"]
    assert result.status == "pass", _explain(result)
    assert _module(result, "big_frame") == (2, 0)
    assert _module(result, "take") == (1, 1)


def test_unknown_engine_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "host.cpp").write_text("int main() { return 0; }\n")
    with pytest.raises(SimulationError, match="engine"):
        run_timed_sim(tmp_path, engine="processes")  # type: ignore[arg-type]


def test_parse_report_keeps_blanks_in_task_names() -> None:
    report = parse_report(
        "noise\nODYSSEY TIMED CYCLES 42\nODYSSEY TIMED MODULE PE<0, 1> 40 7\n"
        "ODYSSEY TIMED MODULE C_drain_IO_L3_out 42 0\nODYSSEY TIMED MODULE broken x 1\n"
    )
    assert report.cycles == 42
    assert report.modules == (("PE<0, 1>", 40, 7), ("C_drain_IO_L3_out", 42, 0))


def _csim(stdout: str, status: CsimStatus = "pass") -> CsimResult:
    return CsimResult(status == "pass", status, "ODYSSEY CSIM PASS", stdout, "", 1.0, 0.5)


def test_a_passing_run_without_report_is_an_error() -> None:
    missing = timed_result(_csim("ODYSSEY CSIM PASS\n"))
    assert missing.status == "runtime_error"
    assert missing.cycles is None
    assert "ODYSSEY_TIMED_REPORT()" in missing.message
    stale = timed_result(_csim("ODYSSEY TIMED CYCLES 0\nODYSSEY CSIM PASS\n"))
    assert stale.status == "runtime_error"
    assert "regenerate" in stale.message
    mismatch = timed_result(_csim("ODYSSEY TIMED CYCLES 9\nODYSSEY TIMED MODULE m 9 0\n", "mismatch"))
    assert mismatch.status == "mismatch"
    assert mismatch.cycles == 9


def test_the_state_printed_at_ctrl_c_is_parsed_and_is_no_latency() -> None:
    """The lines the program prints on SIGINT (odyssey_timed.h, "Ctrl-C"): an unknown clock
    (-1, the threads engine) is None; a run that printed them is "interrupted" whatever its
    exit path, and has no latency."""
    text = ("ODYSSEY TIMED INTERRUPTED 900 1 3\nODYSSEY TIMED TASK A_IO_L3_in done 500 20\n"
            "ODYSSEY TIMED TASK PE<0, 1> running 900 35\nODYSSEY TIMED TASK C_drain running -1 -1\n"
            "ODYSSEY TIMED TASK bad state 1 1\n")
    report = parse_report(text)
    assert report.cycles is None and report.reached == TimedProgress(900, 1, 3)
    assert report.tasks == (TaskState("A_IO_L3_in", True, 500, 20),
                            TaskState("PE<0, 1>", False, 900, 35),
                            TaskState("C_drain", False, None, None))
    res = timed_result(_csim(text, "runtime_error"))
    assert res.status == "interrupted" and res.cycles is None and res.reached is not None
    done = timed_result(_csim("ODYSSEY TIMED CYCLES 9\nODYSSEY TIMED MODULE m 9 0\n", "interrupted"))
    assert done.status == "interrupted" and "its output was not checked" in done.message
