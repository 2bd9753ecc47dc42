// odyssey_timed.h -- cycle accounting of the timed C simulation (`odyssey sim`).
//
// Not a Vitis header. Included by hls_stream.h and odyssey_dataflow.h when both ODYSSEY_CSIM
// and ODYSSEY_TIMED are defined; the generated HLS sources never name it. The analytic latency
// model (odyssey.model) reproduces exactly the contract below, so change both together.
//
// Timing contract (all times in cycles, signed 64-bit)
//   Clock. Every dataflow task (ODYSSEY_TASK) runs on its own thread with a thread-local clock
//     `t` starting at its region's start: 0 for the first call of a dataflow region, and for a
//     later call (the next pass of a design with pass loops) the largest end time so far plus
//     ODYSSEY_REGION_RESTART. Only the operations below move it; plain C++ statements take no
//     time.
//   Stall. Waiting for something in simulated time moves `t` to the later time `w` and adds
//     `w - t` to the task's stall count. If a pipeline is active (between ODYSSEY_PIPE_BEGIN and
//     ODYSSEY_PIPE_END) it also sets `last_issue = t`: the iteration issues late and the next
//     one issues at least II cycles after it.
//   Pipelines. ODYSSEY_PIPE_BEGIN(ii, depth) opens a pipeline record with no iteration yet.
//     ODYSSEY_PIPE_ITER() issues an iteration: the first at `t`, a later one at
//     `max(t, last_issue + ii)`; then `t = last_issue = issue`. ODYSSEY_PIPE_END() sets
//     `t = last_issue + depth` if at least one iteration issued, else leaves `t` alone.
//     Pipelines never nest within one thread (nesting, or ITER/END outside a pipeline, aborts
//     with an "ODYSSEY TIMED ERROR" message: it is a generator bug).
//   FIFO write (hls::stream<T, D>::write, D <= 0 means 2). The k-th write (k from 0) at `t`:
//     if k >= D it needs the slot freed by the (k-D)-th read, done at read time r, so the write
//     happens at `tw = max(t, r + 1)` (a stall if tw > t), else at `tw = t`. The item is stamped
//     `tw + 1`: the reader can take it from that cycle on.
//     Between ODYSSEY_WRITE_LAG(n) and ODYSSEY_WRITE_LAG(0) the stamp is `tw + 1 + n`: a
//     pipeline writes a value it computes in its last stage, `n = depth - 1` cycles after the
//     iteration issues (a PE that packs its own results), while its clock stays at the issue.
//   FIFO read (hls::stream::read). A read at `t` of an item stamped `s` stalls to `max(t, s)`;
//     that time is the read time used by the writer's slot accounting above.
//   Blocks (hls::stream_of_blocks<B, D>, D blocks in the ring, default 2). The k-th write_lock
//     acquire at `t` reuses the block freed by the (k-D)-th read_lock release at time r (k >= D):
//     stall to `max(t, r)`. The write_lock release publishes the block stamped with the
//     writer's `t`. A read_lock acquire stalls to `max(t, stamp)`; its release frees the block
//     at the reader's `t`.
//   DRAM. ODYSSEY_DRAM(run) follows every DRAM access; a per-call-site, per-thread counter makes
//     the first access of every `run` consecutive accesses at that site cost a burst overhead:
//     `t += ODYSSEY_DRAM_BURST_OVERHEAD` (default 20). That delay updates `last_issue` like a
//     stall but is not counted as stall.
//   DRAM bandwidth. ODYSSEY_DRAM_PORT(run, P) is ODYSSEY_DRAM(run) on port P, then paces P at
//     its share of its DRAM channel: ODYSSEY_DRAM_PACE_P cycles per word (a real number from
//     kernel.h: the word's bytes over the port's share of the channel's bytes per cycle, see
//     odyssey/codegen/channels.py). Each task keeps, per port (ODYSSEY_DRAM_PORT_P, an index),
//     the fractional time `free` from which the channel can move the port's next word,
//     starting at 0. A burst overhead delays `free` by the same overhead (the channel does
//     not move the port's words while the burst is set up). The access then starts at
//     `s = max(free, t - 1)` (the request goes out one cycle ahead of the iteration that
//     consumes it, so rounding to whole cycles does not lose the fraction), `free = s + pace`,
//     and the task waits to `ceil(s)` if that is later than `t` (counted as stall). A pipelined
//     loop of n accesses then issues its last access after (n - 1) * max(II, pace) cycles plus
//     its bursts' overheads, up to the rounding to a whole cycle.
//   Untimed operations: read_nb, write_nb, empty, full and size never move the caller's clock
//     (the generated code does not use them). read_nb/write_nb still count as a read (at the
//     caller's `t`) / write (stamped as a blocking write would be, without stalling) so that the
//     slot accounting of later blocking operations stays aligned.
//   Report. When a task returns, its final `t` (end time) and stall count are recorded under
//     its name: the task call up to its '(' (e.g. `PE<0, 1>`; once per pass). ODYSSEY_TIMED_REPORT() prints
//         ODYSSEY TIMED CYCLES <max end time over all tasks>
//         ODYSSEY TIMED MODULE <name> <end> <stall>        (one line per task, spawn order)
//     to stdout. The design latency is the maximum end time (the DRAM writer finishes last).
//     Every task finished since the program started is reported (see reset()).
//   Trace (compiled with -DODYSSEY_TRACE, `odyssey sim --trace`). Every stall is also kept as
//     a span of its task, with what it waited for: `r` an item of an empty FIFO, `w` a slot of
//     a full FIFO, `b` a block (acquire), `d` its DRAM channel's pace; spans of one kind that
//     touch are merged, and past ODYSSEY_TRACE_SPANS (default 20000) spans a task's later
//     stalls extend its last span (the count of such merges is reported). The report then also
//     prints, per finished task,
//         ODYSSEY TIMED START <start> <merged> <name>
//         ODYSSEY TIMED SPAN <from> <to> <kind> <name>       (one line per span)
//   Progress. From the first dataflow region on, at a pipeline iteration or a FIFO or block read
//     (at most every ODYSSEY_TIMED_PROGRESS_MS of wall time, default 1000) the program prints
//         ODYSSEY TIMED PROGRESS <wall seconds> <cycle reached> <tasks finished> <tasks started>
//     to stderr. <cycle reached> is the latest clock of any task started so far (a finished
//     task's end; with fibers also a running task's clock; with threads only finished tasks
//     count): clocks only move forward, so it is a lower bound of the latency, not the latency.
//   Ctrl-C. The first dataflow region installs a SIGINT handler that only sets a flag; the next
//     pipeline iteration or read (of any task) prints to stdout
//         ODYSSEY TIMED INTERRUPTED <cycle reached> <tasks finished> <tasks started>
//         ODYSSEY TIMED TASK <name> done|running <clock> <stall>   (spawn order; clock -1: unknown)
//     and exits with status 130. ODYSSEY_TIMED_REPORT() restores the default SIGINT action
//     (after the kernel, the host's own checks stop at Ctrl-C as any program does; a Ctrl-C
//     flagged but not yet seen ends the program right after the report, by SIGINT).
//
// The results depend only on each thread's program order and the item / block indices, never
// on how the operating system interleaves the threads, so they are deterministic. Bookkeeping is
// task-local; the per-stream part runs under the stream's own lock.
//
// Execution engine (not part of the contract: both give the same cycles for the same program).
// By default every task is a fiber of one OS thread (odyssey_fiber.h): a task runs until a
// stream or block operation cannot proceed, and a deadlock is reported as soon as every task
// is blocked. With -DODYSSEY_TIMED_THREADS every task is a std::thread, as in the untimed
// concurrent C simulation (slower by one to two orders of magnitude on large arrays: the
// threads hand over control through the kernel scheduler every FIFO item or two). "Thread"
// above means task in either engine.
#ifndef ODYSSEY_TIMED_H
#define ODYSSEY_TIMED_H

#ifndef ODYSSEY_CSIM
#error "ODYSSEY_TIMED needs ODYSSEY_CSIM (one thread per dataflow task): compile with -DODYSSEY_CSIM -DODYSSEY_TIMED"
#endif

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#ifndef ODYSSEY_TIMED_THREADS
#define ODYSSEY_FIBERS 1
#include "odyssey_fiber.h"
#endif

#ifndef ODYSSEY_DRAM_BURST_OVERHEAD
#define ODYSSEY_DRAM_BURST_OVERHEAD 20
#endif

// The per-iteration and per-item bookkeeping: inlined even in an -Og build (odyssey sim
// compiles with -Og, where small functions are otherwise called).
#define ODYSSEY_TIMED_HOT inline __attribute__((always_inline))

namespace odyssey {
namespace timed {

using cycles = long long;

#ifndef ODYSSEY_TRACE_SPANS
#define ODYSSEY_TRACE_SPANS 20000
#endif

// One stall of a task (the trace): [from, to), what it waited for (see "Trace").
struct stall_span {
  cycles from;
  cycles to;
  char kind;
};

// Timing state of the calling thread (one dataflow task).
struct thread_clock {
  cycles t = 0;
  cycles stall = 0;
  cycles last_issue = 0;
  cycles ii = 1;
  cycles depth = 0;
  bool in_pipeline = false;
  bool issued = false;
  cycles write_lag = 0;  // ODYSSEY_WRITE_LAG: a write's item leaves that many cycles after it
#ifdef ODYSSEY_TRACE
  cycles start = 0;  // the region's start, when the task began
  long long merged = 0;  // stalls merged into the last span past ODYSSEY_TRACE_SPANS
  std::vector<stall_span> spans;
#endif
};

#ifdef ODYSSEY_FIBERS
// Everything a task keeps to itself: its clock and its DRAM burst counters (one per
// ODYSSEY_DRAM call site, numbered by dram_site()). Owned by the task's task_scope.
struct task_state {
  thread_clock clock;
  std::vector<long long> dram_accesses;
  std::vector<double> dram_free;  // per port (ODYSSEY_DRAM_PORT_<P>): see "DRAM bandwidth"
};

// State of the running fiber; the main context (outside any task) has one of its own.
ODYSSEY_TIMED_HOT task_state& state() {
  void* locals = ::odyssey::fiber::current_locals();
  if (locals == nullptr) {
    static task_state main_state;
    ::odyssey::fiber::scheduler::instance().set_locals(&main_state);
    locals = &main_state;
  }
  return *static_cast<task_state*>(locals);
}

ODYSSEY_TIMED_HOT thread_clock& local() { return state().clock; }

// A new ODYSSEY_DRAM call site (each call site asks once).
inline std::size_t dram_site() {
  static std::size_t sites = 0;
  return sites++;
}

// The running task's access counter of DRAM call site `site`, starting at 0.
ODYSSEY_TIMED_HOT long long& dram_accesses(std::size_t site) {
  std::vector<long long>& counts = state().dram_accesses;
  if (site >= counts.size()) counts.resize(site + 1, 0);
  return counts[site];
}

// The running task's channel time of DRAM port `port` (see "DRAM bandwidth").
ODYSSEY_TIMED_HOT double& dram_free(std::size_t port) {
  std::vector<double>& free = state().dram_free;
  if (port >= free.size()) free.resize(port + 1, 0.0);
  return free[port];
}
#else
inline thread_clock& local() {
  static thread_local thread_clock clock;  // constant-initialised: no guard on access
  return clock;
}

// Per thread, reset when a task starts (task_scope): one thread runs one task.
inline std::vector<double>& thread_dram_free() {
  static thread_local std::vector<double> free;
  return free;
}

inline double& dram_free(std::size_t port) {
  std::vector<double>& free = thread_dram_free();
  if (port >= free.size()) free.resize(port + 1, 0.0);
  return free[port];
}
#endif

ODYSSEY_TIMED_HOT cycles now() { return local().t; }
// Cycles between a write and its item's departure (ODYSSEY_WRITE_LAG, 0 by default).
ODYSSEY_TIMED_HOT cycles write_lag() { return local().write_lag; }
inline void set_write_lag(cycles n) { local().write_lag = n; }

// ----- progress lines and Ctrl-C (see "Progress" and "Ctrl-C" above) ---------------------

// Set by the SIGINT handler (installed by the first dataflow region).
inline volatile std::sig_atomic_t& interrupt_flag() {
  static volatile std::sig_atomic_t flag = 0;
  return flag;
}

void service_poll();  // a progress line when one is due; the Ctrl-C stop when flagged

// Every timed operation that can run for long calls this: a flag test and, one call in 4096,
// a look at the wall clock.
ODYSSEY_TIMED_HOT void poll() {
  static thread_local unsigned calls = 0;
  if (__builtin_expect(interrupt_flag() != 0 || (++calls & 4095u) == 0, 0)) service_poll();
}

[[noreturn]] inline void contract_error(const char* what) {
  std::fflush(stdout);
  std::fprintf(stderr, "ODYSSEY TIMED ERROR: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

// Moves the clock to `when` (>= t); an active pipeline's current iteration issues late.
ODYSSEY_TIMED_HOT void delay_to(thread_clock& clock, cycles when) {
  clock.t = when;
  if (clock.in_pipeline) clock.last_issue = when;
}

#ifdef ODYSSEY_TRACE
// Keeps the stall [from, to) of kind `kind` in the task's trace (see "Trace").
inline void trace_stall(thread_clock& clock, cycles from, cycles to, char kind) {
  std::vector<stall_span>& spans = clock.spans;
  if (!spans.empty() && spans.back().kind == kind && spans.back().to == from) {
    spans.back().to = to;
  } else if (spans.size() < static_cast<std::size_t>(ODYSSEY_TRACE_SPANS)) {
    spans.push_back(stall_span{from, to, kind});
  } else {
    spans.back().to = to;
    ++clock.merged;
  }
}
#endif

// Waits in simulated time until `when`; the waited cycles count as stall (of kind `kind`, for
// the trace).
ODYSSEY_TIMED_HOT void stall_until(cycles when, char kind = 'r') {
  thread_clock& clock = local();
  if (when > clock.t) {
#ifdef ODYSSEY_TRACE
    trace_stall(clock, clock.t, when, kind);
#else
    (void)kind;
#endif
    clock.stall += when - clock.t;
    delay_to(clock, when);
  }
}

// First access of a DRAM burst: a fixed overhead, not counted as stall.
inline void dram_burst(cycles overhead) {
  thread_clock& clock = local();
  delay_to(clock, clock.t + overhead);
}

// A DRAM access of port `port` paced at `pace` cycles per word; `burst` when it opened a burst
// (whose overhead has just moved the clock). See "DRAM bandwidth" above.
inline void dram_pace(std::size_t port, double pace, bool burst, cycles overhead) {
  thread_clock& clock = local();
  double& free = dram_free(port);
  if (burst) free += static_cast<double>(overhead);
  const double early = static_cast<double>(clock.t - 1);
  const double start = free > early ? free : early;
  free = start + pace;
  const cycles when = static_cast<cycles>(std::ceil(start));
  if (when > clock.t) {
#ifdef ODYSSEY_TRACE
    trace_stall(clock, clock.t, when, 'd');
#endif
    clock.stall += when - clock.t;
    delay_to(clock, when);
  }
}

inline void pipe_begin(cycles ii, cycles depth) {
  thread_clock& clock = local();
  if (clock.in_pipeline) contract_error("ODYSSEY_PIPE_BEGIN inside an active pipeline");
  clock.in_pipeline = true;
  clock.issued = false;
  clock.ii = ii;
  clock.depth = depth;
}

inline void pipe_iter() {
  poll();
  thread_clock& clock = local();
  if (!clock.in_pipeline) contract_error("ODYSSEY_PIPE_ITER outside a pipeline");
  cycles issue = clock.t;
  if (clock.issued && clock.last_issue + clock.ii > issue) issue = clock.last_issue + clock.ii;
  clock.t = issue;
  clock.last_issue = issue;
  clock.issued = true;
}

inline void pipe_end() {
  thread_clock& clock = local();
  if (!clock.in_pipeline) contract_error("ODYSSEY_PIPE_END outside a pipeline");
  if (clock.issued) clock.t = clock.last_issue + clock.depth;
  clock.in_pipeline = false;
  clock.issued = false;
}

// Slot accounting of one FIFO of capacity D; every call is made under the FIFO's lock.
class fifo_timing {
 public:
  explicit fifo_timing(std::size_t capacity)
      : depth_(capacity == 0 ? 1 : capacity), read_times_(new cycles[depth_]()) {}
  fifo_timing(const fifo_timing&) = delete;
  fifo_timing& operator=(const fifo_timing&) = delete;
  ~fifo_timing() { delete[] read_times_; }

  // The k-th write, once the FIFO has room (so the (k-D)-th read is done). Returns the stamp.
  // The (k-D)-th read's time is at (k-D) % D == k % D == write_slot_.
  ODYSSEY_TIMED_HOT cycles on_write(bool timed) {
    cycles at = now();
    if (wrapped_) {
      const cycles freed = read_times_[write_slot_] + 1;
      if (freed > at) at = freed;
    }
    if (++write_slot_ == depth_) {
      write_slot_ = 0;
      wrapped_ = true;
    }
    if (timed) stall_until(at, 'w');
    return at + 1 + write_lag();
  }

  // The k-th read of an item stamped `stamp`.
  ODYSSEY_TIMED_HOT void on_read(cycles stamp, bool timed) {
    poll();
    if (timed) stall_until(stamp, 'r');
    read_times_[read_slot_] = now();
    if (++read_slot_ == depth_) read_slot_ = 0;
  }

 private:
  std::size_t depth_;
  cycles* read_times_;  // read time of read n at n % D (a plain array: see ring in hls_stream.h)
  std::size_t write_slot_ = 0;  // writes so far, modulo D
  std::size_t read_slot_ = 0;  // reads so far, modulo D
  bool wrapped_ = false;  // at least D writes so far
};

// Block accounting of one stream_of_blocks ring of D blocks; calls are made under its lock.
class blocks_timing {
 public:
  explicit blocks_timing(std::size_t capacity)
      : release_times_(capacity == 0 ? 1 : capacity, 0) {}

  // The k-th write_lock acquire, once a block is free (so the (k-D)-th release is done).
  void on_write_acquire() {
    const std::size_t depth = release_times_.size();
    if (acquires_ >= depth) stall_until(release_times_[(acquires_ - depth) % depth], 'b');
    ++acquires_;
  }

  // The write_lock release: the publish stamp.
  static cycles on_write_release() { return now(); }

  static void on_read_acquire(cycles stamp) {
    poll();
    stall_until(stamp, 'b');
  }

  // The k-th read_lock release frees its block at the reader's clock.
  void on_read_release() {
    release_times_[releases_ % release_times_.size()] = now();
    ++releases_;
  }

 private:
  std::vector<cycles> release_times_;  // free time of release n at n % D
  unsigned long long acquires_ = 0;
  unsigned long long releases_ = 0;
};

// ----- per-task records -------------------------------------------------------------------

struct task_record {
  std::string name;
  cycles end = 0;
  cycles stall = 0;
  bool done = false;
#ifdef ODYSSEY_TRACE
  cycles start = 0;
  long long merged = 0;
  std::vector<stall_span> spans;
#endif
  // While the task runs, with fibers: its clock (read only at a poll, when every other task is
  // parked). With threads it stays null: another thread's clock is not ours to read.
  const thread_clock* live = nullptr;
};

struct task_registry {
  std::mutex mutex;
  std::deque<task_record> tasks;  // spawn order
};

inline task_registry& registry() {
  static task_registry instance;
  return instance;
}

// Task name of a stringified call: the function's name, and its leading integer arguments (the
// process's position) as `<a, b>`: `PE(0, 1, fifo_A, ...)` is `PE<0, 1>`.
inline std::string task_name(const char* call) {
  std::string text(call);
  const std::size_t paren = text.find('(');
  std::string name = (paren != std::string::npos && paren != 0) ? text.substr(0, paren) : text;
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
  if (paren == std::string::npos) return name;
  std::string ids;
  std::size_t at = paren + 1;
  while (at < text.size()) {
    while (at < text.size() && text[at] == ' ') ++at;
    std::size_t end = at;
    if (end < text.size() && text[end] == '-') ++end;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    const bool digits = end > at && text[end - 1] != '-';
    std::size_t after = end;
    while (after < text.size() && text[after] == ' ') ++after;
    if (!digits || after >= text.size() || (text[after] != ',' && text[after] != ')')) break;
    ids += (ids.empty() ? "" : ", ") + text.substr(at, end - at);
    at = after + 1;
    if (text[after] == ')') break;
  }
  return ids.empty() ? name : name + "<" + ids + ">";
}

// Called by ODYSSEY_TASK in the spawning thread, so records keep the spawn order. Out of line,
// like the task_scope members: a top function has hundreds of ODYSSEY_TASK lines.
__attribute__((noinline)) inline std::size_t register_task(const char* call) {
  task_registry& reg = registry();
  std::lock_guard<std::mutex> guard(reg.mutex);
  task_record record;
  record.name = task_name(call);
  reg.tasks.push_back(std::move(record));
  return reg.tasks.size() - 1;
}

#ifndef ODYSSEY_REGION_RESTART
#define ODYSSEY_REGION_RESTART 0
#endif

// Start time of the tasks of the dataflow region being run: 0 for the first region, else the
// largest end time of every task so far plus ODYSSEY_REGION_RESTART (the top function calls
// the region again for the next pass once every task of this one has returned).
inline cycles& region_start() {
  static cycles start = 0;
  return start;
}

inline double wall_seconds() {
  static const auto start = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void on_sigint(int);

// Ctrl-C from now until ODYSSEY_TIMED_REPORT() stops the kernel with a report (once).
inline void catch_sigint() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  struct sigaction action {};
  action.sa_handler = &on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
}

inline void begin_region() {
  catch_sigint();
  wall_seconds();  // progress times count from the first region
  task_registry& reg = registry();
  std::lock_guard<std::mutex> guard(reg.mutex);
  cycles latest = 0;
  for (const task_record& task : reg.tasks) {
    if (task.done && task.end > latest) latest = task.end;
  }
  region_start() = reg.tasks.empty() ? 0 : latest + ODYSSEY_REGION_RESTART;
}

// Lives for the whole task body on the task's thread: clock set to the region's start, end
// time out.
class task_scope {
 public:
  __attribute__((noinline)) explicit task_scope(std::size_t index) : index_(index) {
#ifdef ODYSSEY_FIBERS
    ::odyssey::fiber::scheduler::instance().set_locals(&state_);
#endif
    local() = thread_clock{};
#ifndef ODYSSEY_FIBERS
    thread_dram_free().clear();
#endif
    local().t = region_start();
    local().last_issue = region_start();
#ifdef ODYSSEY_TRACE
    local().start = region_start();
#endif
#ifdef ODYSSEY_FIBERS
    task_registry& reg = registry();
    std::lock_guard<std::mutex> guard(reg.mutex);
    reg.tasks[index_].live = &state_.clock;
#endif
  }
  task_scope(const task_scope&) = delete;
  task_scope& operator=(const task_scope&) = delete;
  __attribute__((noinline)) ~task_scope() {
    const thread_clock& clock = local();
    task_registry& reg = registry();
    std::lock_guard<std::mutex> guard(reg.mutex);
    task_record& record = reg.tasks[index_];
    record.end = clock.t;
    record.stall = clock.stall;
    record.done = true;
    record.live = nullptr;
#ifdef ODYSSEY_TRACE
    record.start = clock.start;
    record.merged = clock.merged;
    record.spans = clock.spans;
#endif
  }

 private:
  std::size_t index_;
#ifdef ODYSSEY_FIBERS
  task_state state_;  // the task's clock and DRAM counters, on its own stack
#endif
};

inline void on_sigint(int) { interrupt_flag() = 1; }

// What the tasks started so far have reached; the caller holds the registry's lock.
struct reached {
  cycles cycle = 0;
  std::size_t finished = 0;
  std::size_t started = 0;
};

inline reached progress_of(const task_registry& reg) {
  reached r;
  for (const task_record& task : reg.tasks) {
    ++r.started;
    cycles at = -1;
    if (task.done) {
      ++r.finished;
      at = task.end;
    } else if (task.live != nullptr) {
      at = task.live->t;
    }
    if (at > r.cycle) r.cycle = at;
  }
  return r;
}

#ifndef ODYSSEY_TIMED_PROGRESS_MS
#define ODYSSEY_TIMED_PROGRESS_MS 1000
#endif

// Prints the Ctrl-C report (see "Ctrl-C" above) and ends the program with status 130.
[[noreturn]] inline void stop_interrupted() {
  static std::atomic_flag claimed = ATOMIC_FLAG_INIT;
  if (claimed.test_and_set()) {  // threads: another task is printing; wait for its exit
    for (;;) pause();
  }
  {
    task_registry& reg = registry();
    std::lock_guard<std::mutex> guard(reg.mutex);
    const reached r = progress_of(reg);
    std::fflush(stdout);
    std::printf("ODYSSEY TIMED INTERRUPTED %lld %zu %zu\n", r.cycle, r.finished, r.started);
    for (const task_record& task : reg.tasks) {
      const bool running = !task.done;
      const cycles clock = task.done ? task.end : (task.live != nullptr ? task.live->t : -1);
      const cycles stall = task.done ? task.stall : (task.live != nullptr ? task.live->stall : -1);
      std::printf("ODYSSEY TIMED TASK %s %s %lld %lld\n", task.name.c_str(),
                  running ? "running" : "done", clock, stall);
    }
    std::fflush(stdout);
  }
  std::_Exit(130);
}

inline void service_poll() {
  if (interrupt_flag() != 0) stop_interrupted();
  static std::atomic<long long> next_ms{ODYSSEY_TIMED_PROGRESS_MS};
  const double seconds = wall_seconds();
  const long long now_ms = static_cast<long long>(seconds * 1000.0);
  long long due = next_ms.load(std::memory_order_relaxed);
  if (now_ms < due) return;
  if (!next_ms.compare_exchange_strong(due, now_ms + ODYSSEY_TIMED_PROGRESS_MS)) return;
  task_registry& reg = registry();
  std::lock_guard<std::mutex> guard(reg.mutex);
  const reached r = progress_of(reg);
  std::fprintf(stderr, "ODYSSEY TIMED PROGRESS %.1f %lld %zu %zu\n", seconds, r.cycle, r.finished,
               r.started);
  std::fflush(stderr);
}

// Prints the report described at the top of this file (finished tasks only).
inline void report() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  task_registry& reg = registry();
  std::unique_lock<std::mutex> guard(reg.mutex);
  cycles latency = 0;
  for (const task_record& task : reg.tasks) {
    if (task.done && task.end > latency) latency = task.end;
  }
  std::printf("ODYSSEY TIMED CYCLES %lld\n", latency);
  for (const task_record& task : reg.tasks) {
    if (!task.done) continue;
    std::printf("ODYSSEY TIMED MODULE %s %lld %lld\n", task.name.c_str(), task.end, task.stall);
  }
#ifdef ODYSSEY_TRACE
  for (const task_record& task : reg.tasks) {
    if (!task.done) continue;
    std::printf("ODYSSEY TIMED START %lld %lld %s\n", task.start, task.merged, task.name.c_str());
    for (const stall_span& s : task.spans) {
      std::printf("ODYSSEY TIMED SPAN %lld %lld %c %s\n", s.from, s.to, s.kind, task.name.c_str());
    }
  }
#endif
  std::fflush(stdout);
  guard.unlock();
  if (interrupt_flag() != 0) std::raise(SIGINT);  // Ctrl-C came as the kernel ended
}

// Forgets every task record (e.g. between two kernel runs in one program).
inline void reset() {
  task_registry& reg = registry();
  std::lock_guard<std::mutex> guard(reg.mutex);
  reg.tasks.clear();
}

}  // namespace timed
}  // namespace odyssey

#define ODYSSEY_PIPE_BEGIN(ii, depth) ::odyssey::timed::pipe_begin((ii), (depth))
#define ODYSSEY_PIPE_ITER() ::odyssey::timed::pipe_iter()
#define ODYSSEY_PIPE_END() ::odyssey::timed::pipe_end()
#define ODYSSEY_WRITE_LAG(n) ::odyssey::timed::set_write_lag(n)
#ifdef ODYSSEY_FIBERS
// Per call site and per task, as the thread-local counter below is per call site and thread.
#define ODYSSEY_DRAM(run)                                                               \
  do {                                                                                  \
    static const std::size_t odyssey_dram_site_ = ::odyssey::timed::dram_site();        \
    if (::odyssey::timed::dram_accesses(odyssey_dram_site_)++ % (run) == 0)             \
      ::odyssey::timed::dram_burst(ODYSSEY_DRAM_BURST_OVERHEAD);                        \
  } while (0)
#else
#define ODYSSEY_DRAM(run)                                                  \
  do {                                                                     \
    static thread_local long long odyssey_dram_accesses_ = 0;              \
    if (odyssey_dram_accesses_++ % (run) == 0)                             \
      ::odyssey::timed::dram_burst(ODYSSEY_DRAM_BURST_OVERHEAD);           \
  } while (0)
#endif
// ODYSSEY_DRAM(run) on port P, then P's pace (see "DRAM bandwidth"): the burst test is the
// same counter's, so both macros charge the same bursts.
#ifdef ODYSSEY_FIBERS
#define ODYSSEY_DRAM_PORT(run, port)                                                    \
  do {                                                                                  \
    static const std::size_t odyssey_dram_site_ = ::odyssey::timed::dram_site();        \
    const bool odyssey_burst_ = ::odyssey::timed::dram_accesses(odyssey_dram_site_)++ % (run) == 0; \
    if (odyssey_burst_) ::odyssey::timed::dram_burst(ODYSSEY_DRAM_BURST_OVERHEAD);      \
    ::odyssey::timed::dram_pace(ODYSSEY_DRAM_PORT_##port, ODYSSEY_DRAM_PACE_##port,     \
                                odyssey_burst_, ODYSSEY_DRAM_BURST_OVERHEAD);           \
  } while (0)
#else
#define ODYSSEY_DRAM_PORT(run, port)                                                    \
  do {                                                                                  \
    static thread_local long long odyssey_dram_accesses_ = 0;                           \
    const bool odyssey_burst_ = odyssey_dram_accesses_++ % (run) == 0;                  \
    if (odyssey_burst_) ::odyssey::timed::dram_burst(ODYSSEY_DRAM_BURST_OVERHEAD);      \
    ::odyssey::timed::dram_pace(ODYSSEY_DRAM_PORT_##port, ODYSSEY_DRAM_PACE_##port,     \
                                odyssey_burst_, ODYSSEY_DRAM_BURST_OVERHEAD);           \
  } while (0)
#endif
#define ODYSSEY_TIMED_REPORT() ::odyssey::timed::report()

#endif  // ODYSSEY_TIMED_H
