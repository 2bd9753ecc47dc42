// odyssey_dataflow.h -- launch dataflow processes of a generated top function.
//
// Not a Vitis header: ship it next to generated sources for both builds.
//
//     void kernel0(...) {
//     #pragma HLS DATAFLOW
//       hls::stream<ap_uint<512>, 2> fifo_A_L3_L2("fifo_A_L3_L2");  // streams first
//       ODYSSEY_DATAFLOW_BEGIN
//       ODYSSEY_TASK(A_IO_L3_in(A, fifo_A_L3_L2));
//       ODYSSEY_TASK(PE(0, 0, fifo_A_L3_L2, ...));  // position first; commas inside are fine
//       ODYSSEY_DATAFLOW_END
//     }
//
// With ODYSSEY_CSIM defined every task runs on its own std::thread (capturing by reference,
// so streams must be declared before ODYSSEY_DATAFLOW_BEGIN) and ODYSSEY_DATAFLOW_END joins
// them all, so processes run concurrently over bounded FIFOs as in hardware; the timed
// simulation (ODYSSEY_TIMED) runs them as fibers of the calling thread instead, switched when
// a stream operation blocks (odyssey_fiber.h, unless ODYSSEY_TIMED_THREADS). Without it the
// macros expand to the plain sequential calls that Vitis HLS sees in its DATAFLOW region (and
// that Vitis C simulation runs one after another, in call order); `odyssey csim` in its
// sequential mode also records which process runs (odyssey_vitis_csim.h).
// Module functions must not keep state in function-local statics and must not share plain
// arrays between tasks: in C simulation they run concurrently.
#ifndef ODYSSEY_DATAFLOW_H
#define ODYSSEY_DATAFLOW_H

#include "odyssey_bits.h"

#ifdef ODYSSEY_CSIM

#include <thread>
#include <utility>
#include <vector>

#ifdef ODYSSEY_TIMED
#include "odyssey_timed.h"
#endif

namespace odyssey {

constexpr bool in_csim = true;

// Owns the tasks of one dataflow region; joins them on join() or destruction. Tasks are
// threads, or in the timed simulation fibers of the calling thread (odyssey_fiber.h) that run
// while join() waits.
class dataflow_region {
 public:
#ifdef ODYSSEY_TIMED
  // A region's tasks start when every earlier task has ended (the top function calls the
  // region once per pass, each call returning before the next), see odyssey_timed.h.
  dataflow_region() { ::odyssey::timed::begin_region(); }
#else
  dataflow_region() = default;
#endif
  dataflow_region(const dataflow_region&) = delete;
  dataflow_region& operator=(const dataflow_region&) = delete;
  ~dataflow_region() { join(); }

#ifdef ODYSSEY_FIBERS
  template <typename Task>
  void spawn(Task&& task) {
    ::odyssey::fiber::scheduler::instance().spawn(tasks_, std::forward<Task>(task));
  }

  void join() { ::odyssey::fiber::scheduler::instance().join(tasks_); }

 private:
  ::odyssey::fiber::group tasks_;
#else
  template <typename Task>
  void spawn(Task&& task) {
    threads_.emplace_back(std::forward<Task>(task));
  }

  void join() {
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
    threads_.clear();
  }

 private:
  std::vector<std::thread> threads_;
#endif
};

}  // namespace odyssey

#define ODYSSEY_DATAFLOW_BEGIN ::odyssey::dataflow_region odyssey_dataflow_region_;
#ifdef ODYSSEY_TIMED
// Timed simulation: the task is registered (in spawn order) under its function's name and
// position (`PE(0, 1, ...)` is `PE<0, 1>`) and records its clock when it returns; see
// odyssey_timed.h.
#define ODYSSEY_TASK(...)                                                               \
  odyssey_dataflow_region_.spawn(                                                       \
      [&, odyssey_task_index_ = ::odyssey::timed::register_task(#__VA_ARGS__)]() {      \
        ::odyssey::timed::task_scope odyssey_task_scope_(odyssey_task_index_);          \
        __VA_ARGS__;                                                                    \
      })
#else
#define ODYSSEY_TASK(...) odyssey_dataflow_region_.spawn([&]() { __VA_ARGS__; })
#endif  // ODYSSEY_TIMED
#define ODYSSEY_DATAFLOW_END odyssey_dataflow_region_.join();

#else  // !ODYSSEY_CSIM: plain sequential calls (Vitis HLS synthesis / sequential simulation)

namespace odyssey {
constexpr bool in_csim = false;
}  // namespace odyssey

#ifdef ODYSSEY_VITIS_ENTER
// `odyssey csim` (sequential, Vitis semantics): record the process being run for the error
// reports of odyssey_vitis_csim.h
#define ODYSSEY_DATAFLOW_BEGIN
#define ODYSSEY_TASK(...)                 \
  do {                                    \
    ODYSSEY_VITIS_ENTER(#__VA_ARGS__);    \
    __VA_ARGS__;                          \
  } while (0)
#define ODYSSEY_DATAFLOW_END ODYSSEY_VITIS_ENTER("(end of the dataflow region)");
#else
#define ODYSSEY_DATAFLOW_BEGIN
#define ODYSSEY_TASK(...) __VA_ARGS__
#define ODYSSEY_DATAFLOW_END
#endif  // ODYSSEY_VITIS_ENTER

#endif  // ODYSSEY_CSIM

// Timing hooks of the timed simulation (`odyssey sim`): every pipelined loop nest is wrapped in
// ODYSSEY_PIPE_BEGIN(II, DEPTH) ... ODYSSEY_PIPE_END() with ODYSSEY_PIPE_ITER() at the start of
// each iteration, and each DRAM access is followed by ODYSSEY_DRAM_PORT(RUN, PORT) (RUN
// consecutive accesses form one burst; PORT's share of its DRAM channel paces the accesses,
// from the ODYSSEY_DRAM_PORT_<PORT> / ODYSSEY_DRAM_PACE_<PORT> macros of kernel.h) or, in
// hand-written code, ODYSSEY_DRAM(RUN) (no pace). Outside a timed build (Vitis HLS, plain C simulation) they vanish.
// The host calls ODYSSEY_TIMED_REPORT() after the kernel returns: in a timed build it prints
// the simulated cycles (odyssey_timed.h), otherwise it does nothing.
#ifdef ODYSSEY_TIMED
#include "odyssey_timed.h"
#else
#define ODYSSEY_PIPE_BEGIN(ii, depth) ((void)0)
#define ODYSSEY_PIPE_ITER() ((void)0)
#define ODYSSEY_PIPE_END() ((void)0)
#define ODYSSEY_WRITE_LAG(n) ((void)0)
#define ODYSSEY_DRAM(run) ((void)0)
#define ODYSSEY_DRAM_PORT(run, port) ((void)0)
#define ODYSSEY_TIMED_REPORT() ((void)0)
#endif  // ODYSSEY_TIMED

#endif  // ODYSSEY_DATAFLOW_H
