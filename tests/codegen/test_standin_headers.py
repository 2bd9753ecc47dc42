"""Stand-in HLS headers and the C-simulation runner, end to end with the system C++ compiler.

Every C++ case is compiled and run once by a module-scoped fixture (in parallel, to keep the
module fast); the tests then assert on the individual results.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from odyssey.codegen.csim import CsimResult, classify, include_dir, run_csim
from odyssey.errors import SimulationError

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

PRELUDE = r"""
#include <cstdio>
#include <cstring>
#include <cstdint>
#include "ap_int.h"
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

AP_INT_HOST = r"""
template <int W>
int round_trip() {
  ap_uint<W> v = 0;
  for (int i = 0; i < W; i += 3) v[i] = 1;                 // bit pattern 1001001...
  for (int i = 0; i < W; ++i) CHECK(v[i] == (i % 3 == 0));
  ap_uint<W> copy = 0;
  for (int lo = 0; lo < W; lo += 16) {                      // 16-bit slices via range get/set
    const int hi = lo + 15 < W ? lo + 15 : W - 1;
    ap_uint<16> slice = v(hi, lo);
    copy.range(hi, lo) = slice;
  }
  CHECK(copy == v);
  ap_uint<W> shifted = (v << 5) >> 5;                       // top 5 bits fall off
  for (int i = 0; i < W - 5; ++i) CHECK(shifted[i] == v[i]);
  for (int i = W - 5; i < W; ++i) CHECK(!shifted[i]);
  return 0;
}

int main() {
  // 16 floats packed into one ap_uint<512> with range set, unpacked with range get.
  float in[16];
  for (int i = 0; i < 16; ++i) in[i] = 0.75f * i - 5.5f;
  in[3] = -0.0f;
  ap_uint<512> word = 0;
  for (int i = 0; i < 16; ++i) {
    union { float f; unsigned int u; } cast;
    cast.f = in[i];
    word(32 * i + 31, 32 * i) = cast.u;
  }
  for (int i = 0; i < 16; ++i) {
    unsigned int bits = word.range(32 * i + 31, 32 * i).to_uint();
    float out;
    std::memcpy(&out, &bits, sizeof out);
    CHECK(std::memcmp(&out, &in[i], sizeof out) == 0);
    CHECK(odyssey::bits_to_float(word(32 * i + 31, 32 * i)) == in[i]);
    ap_uint<32> lane = word(32 * i + 31, 32 * i);
    CHECK(lane.to_uint() == odyssey::float_to_bits(in[i]));
  }
  // The same word built by shift-or, and drained by shift-right.
  ap_uint<512> built = 0;
  for (int i = 15; i >= 0; --i) built = (built << 32) | ap_uint<32>(odyssey::float_to_bits(in[i]));
  CHECK(built == word);
  ap_uint<512> drain = word;
  for (int i = 0; i < 16; ++i) {
    CHECK(odyssey::bits_to_float((unsigned int)drain(31, 0)) == in[i]);
    drain = drain >> 32;
  }
  CHECK(drain == 0);
  CHECK(word(511, 480).to_uint() == odyssey::float_to_bits(in[15]));

  // ap_int sign semantics.
  ap_int<8> a = -3;
  CHECK(a.to_int() == -3 && a.to_int64() == -3 && a < 0 && a == -3);
  CHECK(a.to_uint64() == 0xFFFFFFFFFFFFFFFDull);
  ap_uint<8> b = -3;
  CHECK(b.to_int() == 253 && b > 0 && b != a);
  ap_int<8> c = b;                                          // reinterpret the same 8 bits
  CHECK(c == -3);
  ap_int<96> d = -5;
  CHECK(d.to_int64() == -5 && d(95, 64).to_uint() == 0xFFFFFFFFu && d[95] == 1);
  CHECK((d >> 1).to_int() == -3);                           // arithmetic shift
  ap_int<96> e = ap_int<16>(-7) * ap_int<16>(3);
  CHECK(e == -21);
  ap_uint<96> f = ap_int<8>(-1);                            // sign-extends, then wraps
  CHECK(f(95, 64).to_uint() == 0xFFFFFFFFu && f > 0);
  ap_int<32> g = 0x7FFFFFFF;
  CHECK((g + 1) == 0x80000000ll);                           // + widens by one bit
  ap_int<32> h = g + 1;
  CHECK(h.to_int() == INT32_MIN);
  ap_uint<64> u64 = 0xFFFFFFFFFFFFFFFFull;
  CHECK(u64.to_uint64() == 0xFFFFFFFFFFFFFFFFull && u64.to_int64() == -1 && u64 > 0);
  long long native = ap_int<40>(-12345);
  CHECK(native == -12345);
  ap_uint<256> wide = 0;
  wide(200, 70) = ap_int<8>(-1);                            // range set sign-extends
  CHECK(wide[200] && wide[70] && !wide[69] && !wide[201]);
  wide(200, 70) = 0;
  CHECK(wide == 0);
  ap_uint<32> counter = 7;
  counter += 5;
  counter <<= 2;
  counter[0] = 1;
  counter++;
  CHECK(counter == 50);

  // Range <- C integer (at most 64 bits go straight into the words) and range -> 64 bits.
  ap_uint<96> r = 0;
  r(75, 60) = -1;                                           // int, sign-extended, 16 bits kept
  CHECK(r(75, 60).to_uint64() == 0xFFFFull && !r[76] && !r[59] && r[60] && r[75]);
  r(71, 8) = -2ll;                                          // 64 bits across a word boundary
  CHECK(r(71, 8).to_uint64() == 0xFFFFFFFFFFFFFFFEull && !r[8] && r[9] && r[71] && r[75]);
  r(95, 90) = 0x7Fu;                                        // unsigned, truncated to 6 bits
  CHECK(r(95, 90).to_uint64() == 0x3Full && (unsigned long long)r(95, 88) == 0xFCull);
  r(3, 3) = true;
  CHECK(r[3] && !r[2] && !r[4]);
  ap_uint<256> big = 0;
  big(200, 70) = ap_int<8>(-1);                             // 131 ones
  CHECK(big(200, 70).to_uint64() == ~0ull && big(200, 150).to_uint64() == (1ull << 51) - 1);
  ap_int<12> small = -5;
  small(11, 4) = 0x1FF;                                     // wider than the value: low 8 bits
  CHECK(small(11, 4).to_uint64() == 0xFFu && small == -5);

  CHECK(round_trip<32>() == 0);
  CHECK(round_trip<64>() == 0);
  CHECK(round_trip<96>() == 0);
  CHECK(round_trip<256>() == 0);
  CHECK(round_trip<512>() == 0);
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

FIFO_HOST = r"""
const int N = 100000;

void producer(hls::stream<int>& out) {
  for (int i = 0; i < N; ++i) out.write(i);
}

void consumer(hls::stream<int>& in, int& errors) {
  for (int i = 0; i < N; ++i) {
    int v;
    in >> v;
    if (v != i) ++errors;
  }
}

int main() {
  CHECK(odyssey::in_csim);
  hls::stream<int, 2> fifo("fifo");
  CHECK(fifo.capacity() == 2);
  CHECK(fifo.empty() && !fifo.full());
  CHECK(fifo.write_nb(1) && fifo.write_nb(2) && !fifo.write_nb(3) && fifo.full());
  int v = 0;
  CHECK(fifo.size() == 2 && fifo.read_nb(v) && v == 1 && fifo.read() == 2 && !fifo.read_nb(v));
  hls::stream<int> plain;                                  // no depth: Vitis default 2
  CHECK(plain.capacity() == 2);

  unsigned long long before = odyssey::csim::stream_traffic();
  int errors = 0;
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(producer(fifo));                            // needs concurrency: N >> depth
  ODYSSEY_TASK(consumer(fifo, errors));
  ODYSSEY_DATAFLOW_END
  CHECK(errors == 0);
  CHECK(fifo.empty());
  CHECK(odyssey::csim::stream_traffic() - before == 2ull * N);
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

DEADLOCK_HOST = r"""
void reader(hls::stream<int>& in, int& sink) { sink = in.read(); }
void idle(hls::stream<int>& out) { (void)out; }

int main() {
  hls::stream<int, 2> orphan("orphan_fifo");
  int sink = 0;
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(idle(orphan));
  ODYSSEY_TASK(reader(orphan, sink));
  ODYSSEY_DATAFLOW_END
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

BLOCKS_DEADLOCK_HOST = r"""
typedef float block_t[4][4];

void writer(hls::stream_of_blocks<block_t>& out) {
  for (int b = 0; b < 3; ++b) {                            // third block: ring of 2 is full
    hls::write_lock<block_t> w(out);
    w[0][0] = b;
  }
}

int main() {
  hls::stream_of_blocks<block_t> unread("unread_blocks");
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(writer(unread));
  ODYSSEY_DATAFLOW_END
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

BLOCKS_HOST = r"""
typedef int block_t[16];
typedef float tile_t[4][8];
const int BLOCKS = 10;

void producer(hls::stream_of_blocks<block_t>& out) {
  for (int b = 0; b < BLOCKS; ++b) {
    hls::write_lock<block_t> w(out);
    for (int i = 0; i < 16; ++i) w[i] = 100 * b + i;
  }
}

void consumer(hls::stream_of_blocks<block_t>& in, int& errors, int& blocks) {
  for (int b = 0; b < BLOCKS; ++b) {
    hls::read_lock<block_t> r(in);
    for (int i = 0; i < 16; ++i) if (r[i] != 100 * b + i) ++errors;
    ++blocks;
  }
}

int main() {
  hls::stream_of_blocks<block_t> ping_pong;                // default depth 2
  int errors = 0, blocks = 0;
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(producer(ping_pong));
  ODYSSEY_TASK(consumer(ping_pong, errors, blocks));
  ODYSSEY_DATAFLOW_END
  CHECK(errors == 0 && blocks == BLOCKS && ping_pong.empty());

  // Ring of 3 two-dimensional blocks: full after 3 published, blocks come back in order.
  hls::stream_of_blocks<tile_t, 3> ring;
  CHECK(ring.empty() && !ring.full());
  for (int b = 0; b < 3; ++b) {
    hls::write_lock<tile_t> w(ring);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 8; ++j) w[i][j] = b + 0.5f * i + 0.25f * j;
  }
  CHECK(ring.full() && !ring.empty());
  for (int b = 0; b < 3; ++b) {
    hls::read_lock<tile_t> r(ring);
    tile_t& tile = r;
    CHECK(tile[3][7] == b + 1.5f + 1.75f && r[0][0] == b);
  }
  CHECK(ring.empty() && !ring.full());
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

SEQUENTIAL_HOST = r"""
#include <thread>

int order[4];
int next_slot = 0;

void producer(hls::stream<int>& out) {
  order[next_slot++] = 1;
  for (int i = 0; i < 10; ++i) out.write(i);               // must not block without CSIM
}

void consumer(hls::stream<int>& in, int& sum) {
  order[next_slot++] = 2;
  for (int i = 0; i < 10; ++i) sum += in.read();
}

int main() {
  CHECK(!odyssey::in_csim);
  const std::thread::id main_thread = std::this_thread::get_id();
  std::thread::id seen;
  hls::stream<int, 4> fifo("fifo");
  int sum = 0;
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(producer(fifo));
  ODYSSEY_TASK(seen = std::this_thread::get_id());
  ODYSSEY_TASK(consumer(fifo, sum));
  ODYSSEY_DATAFLOW_END
  CHECK(sum == 45 && next_slot == 2 && order[0] == 1 && order[1] == 2);
  CHECK(seen == main_thread);                              // plain calls, no threads
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

MISMATCH_HOST = r"""
#include <cstdio>
int main() {
  std::printf("computing\n");
  std::printf("ODYSSEY CSIM FAIL C[3][4] = 7 expected 8\n");
  return 1;
}
"""

HANG_HOST = r"""
#include <chrono>
#include <cstdio>
#include <thread>
int main() {
  std::this_thread::sleep_for(std::chrono::seconds(30));
  std::printf("ODYSSEY CSIM PASS\n");
  return 0;
}
"""

BROKEN_HOST = r"""
int main() {
  ap_uint<32> x = ;
  return 0;
}
"""

KERNEL_H = r"""
#pragma once
#include "ap_int.h"
#include "hls_stream.h"
void kernel0(const int* in, int* out, int n);
"""

KERNEL_CPP = r"""
#include "kernel.h"
#include "odyssey_dataflow.h"

static void load(const int* in, hls::stream<ap_uint<32>>& s, int n) {
  for (int i = 0; i < n; ++i) s.write(in[i]);
}
static void twice(hls::stream<ap_uint<32>>& a, hls::stream<ap_uint<32>>& b, int n) {
  for (int i = 0; i < n; ++i) b.write(a.read() * 2);
}
static void store(hls::stream<ap_uint<32>>& s, int* out, int n) {
  for (int i = 0; i < n; ++i) out[i] = s.read().to_int();
}

void kernel0(const int* in, int* out, int n) {
#pragma HLS DATAFLOW
  hls::stream<ap_uint<32>, 2> fifo_in("fifo_in");
  hls::stream<ap_uint<32>, 2> fifo_out("fifo_out");
  ODYSSEY_DATAFLOW_BEGIN
  ODYSSEY_TASK(load(in, fifo_in, n));
  ODYSSEY_TASK(twice(fifo_in, fifo_out, n));
  ODYSSEY_TASK(store(fifo_out, out, n));
  ODYSSEY_DATAFLOW_END
}
"""

KERNEL_HOST = r"""
#include <cstdio>
#include "kernel.h"
int main() {
  int in[64], out[64];
  for (int i = 0; i < 64; ++i) in[i] = i - 10;
  kernel0(in, out, 64);
  for (int i = 0; i < 64; ++i) {
    if (out[i] != 2 * in[i]) {
      std::printf("ODYSSEY CSIM FAIL out[%d] = %d expected %d\n", i, out[i], 2 * in[i]);
      return 1;
    }
  }
  std::printf("ODYSSEY CSIM PASS 64 values\n");
  return 0;
}
"""


@dataclass(frozen=True)
class Case:
    files: Mapping[str, str]
    timeout_s: float = 20.0
    extra_flags: tuple[str, ...] = ()


CASES: dict[str, Case] = {
    "ap_int": Case({"host.cpp": PRELUDE + AP_INT_HOST}),
    "fifo": Case({"host.cpp": PRELUDE + FIFO_HOST}),
    "deadlock": Case({"host.cpp": PRELUDE + DEADLOCK_HOST}, timeout_s=2.0),
    "blocks": Case({"host.cpp": PRELUDE + BLOCKS_HOST}),
    "blocks_deadlock": Case({"host.cpp": PRELUDE + BLOCKS_DEADLOCK_HOST}, timeout_s=2.0),
    "sequential": Case({"host.cpp": PRELUDE + SEQUENTIAL_HOST}, extra_flags=("-UODYSSEY_CSIM",)),
    "kernel": Case({"kernel.h": KERNEL_H, "kernel.cpp": KERNEL_CPP, "host.cpp": KERNEL_HOST}),
    "mismatch": Case({"host.cpp": MISMATCH_HOST}),
    "hang": Case({"host.cpp": HANG_HOST}, timeout_s=1.0),
    "broken": Case({"host.cpp": PRELUDE + BROKEN_HOST}),
}


def _run_case(root: Path, name: str, case: Case) -> CsimResult:
    design = root / name
    design.mkdir()
    for filename, text in case.files.items():
        (design / filename).write_text(text)
    return run_csim(design, mode="concurrent", timeout_s=case.timeout_s, extra_flags=case.extra_flags)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CsimResult]:
    root = tmp_path_factory.mktemp("csim")
    workers = max(2, min(len(CASES), os.cpu_count() or 2))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {name: pool.submit(_run_case, root, name, case) for name, case in CASES.items()}
        return {name: future.result() for name, future in futures.items()}


def _explain(result: CsimResult) -> str:
    return f"{result.status}: {result.message}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def test_include_dir_holds_the_standin_headers() -> None:
    names = {p.name for p in include_dir().glob("*.h")}
    assert {
        "hls_stream.h",
        "hls_streamofblocks.h",
        "ap_int.h",
        "odyssey_dataflow.h",
        "odyssey_bits.h",
    } <= names


def test_ap_uint_packing_and_ap_int_sign(results: dict[str, CsimResult]) -> None:
    result = results["ap_int"]
    assert result.status == "pass", _explain(result)
    assert result.passed
    assert result.compile_seconds > 0


def test_stream_transfers_100k_items_in_order_between_threads(
    results: dict[str, CsimResult],
) -> None:
    result = results["fifo"]
    assert result.status == "pass", _explain(result)


def test_reader_without_writer_is_reported_as_deadlock(results: dict[str, CsimResult]) -> None:
    result = results["deadlock"]
    assert result.status == "deadlock", _explain(result)
    assert not result.passed
    assert "blocked on read of stream 'orphan_fifo'" in result.message
    assert "ODYSSEY CSIM PASS" not in result.stdout
    assert result.run_seconds < 2.0  # reported by the program, not by the subprocess time-out


def test_stream_of_blocks_ping_pong_and_ring(results: dict[str, CsimResult]) -> None:
    result = results["blocks"]
    assert result.status == "pass", _explain(result)


def test_stream_of_blocks_without_free_block_is_reported_as_deadlock(
    results: dict[str, CsimResult],
) -> None:
    result = results["blocks_deadlock"]
    assert result.status == "deadlock", _explain(result)
    assert "blocked on write of stream 'unread_blocks'" in result.message


def test_dataflow_macros_without_csim_run_sequential_calls(results: dict[str, CsimResult]) -> None:
    result = results["sequential"]
    assert result.status == "pass", _explain(result)


def test_multi_file_design_with_kernel_header(results: dict[str, CsimResult]) -> None:
    result = results["kernel"]
    assert result.status == "pass", _explain(result)
    assert result.message == "ODYSSEY CSIM PASS 64 values"


def test_host_reported_mismatch(results: dict[str, CsimResult]) -> None:
    result = results["mismatch"]
    assert result.status == "mismatch", _explain(result)
    assert result.message == "ODYSSEY CSIM FAIL C[3][4] = 7 expected 8"
    assert "computing" in result.stdout


def test_hanging_program_hits_the_subprocess_timeout(results: dict[str, CsimResult]) -> None:
    result = results["hang"]
    assert result.status == "timeout", _explain(result)
    assert 1.0 <= result.run_seconds < 5.0


def test_compile_error_reports_compiler_output(results: dict[str, CsimResult]) -> None:
    result = results["broken"]
    assert result.status == "compile_error", _explain(result)
    assert "error" in result.message
    assert len(result.message.splitlines()) <= 40
    assert result.run_seconds == 0.0


def test_build_products_stay_out_of_the_design_dir(tmp_path: Path) -> None:
    design = tmp_path / "design"
    design.mkdir()
    (design / "host.cpp").write_text(MISMATCH_HOST)
    before = sorted(p.name for p in design.iterdir())
    result = run_csim(design, mode="concurrent", timeout_s=10.0)
    assert result.status == "mismatch", _explain(result)
    assert sorted(p.name for p in design.iterdir()) == before


def test_unusable_inputs_raise_simulation_error(tmp_path: Path) -> None:
    with pytest.raises(SimulationError, match="does not exist"):
        run_csim(tmp_path / "missing")
    with pytest.raises(SimulationError, match=r"no \*\.cpp"):
        run_csim(tmp_path)
    (tmp_path / "host.cpp").write_text("int main() { return 0; }\n")
    with pytest.raises(SimulationError, match="not found"):
        run_csim(tmp_path, cxx="odyssey-no-such-compiler")
    with pytest.raises(SimulationError, match="positive"):
        run_csim(tmp_path, timeout_s=0)


@pytest.mark.parametrize(
    ("returncode", "stdout", "stderr", "status"),
    [
        (0, "x\nODYSSEY CSIM PASS\n", "", "pass"),
        (0, "done\n", "", "runtime_error"),
        (1, "ODYSSEY CSIM FAIL y\n", "", "mismatch"),
        (0, "ODYSSEY CSIM PASS\nODYSSEY CSIM FAIL late\n", "", "mismatch"),
        (3, "", "ODYSSEY DEADLOCK: blocked on read of stream 's' for 1.0 s\n", "deadlock"),
        (3, "", "something else\n", "runtime_error"),
        (-11, "", "", "runtime_error"),
        (2, "", "boom\n", "runtime_error"),
    ],
)
def test_classify(returncode: int, stdout: str, stderr: str, status: str) -> None:
    result = classify(returncode, stdout, stderr)
    assert result.status == status
    assert result.passed == (status == "pass")


def test_classify_names_the_signal() -> None:
    assert "SIGSEGV" in classify(-11, "", "").message
