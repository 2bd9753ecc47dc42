// odyssey_fiber.h -- cooperative tasks for the timed C simulation (`odyssey sim`).
//
// Not a Vitis header; the generated sources never name it. odyssey_timed.h includes it unless
// ODYSSEY_TIMED_THREADS is defined, and then hls_stream.h, hls_streamofblocks.h and
// odyssey_dataflow.h run every dataflow task as a fiber of one OS thread instead of a
// std::thread of its own.
//
// Why: a timed simulation's result depends only on each task's program order (odyssey_timed.h),
// not on how tasks interleave, so nothing is gained from real threads, and with hundreds of
// tasks (one per PE, I/O module and drain module) on a few cores the threaded build spends
// most of its time in the kernel scheduler: a depth-2 FIFO hands over control every item or
// two. Here a task runs until a stream or block operation cannot proceed, then parks on that
// stream's wait queue and the next ready task runs; a switch is a few instructions.
//
// Rules
//   * spawn() only queues a task; tasks run while the spawning context waits in join() (or
//     blocks on a stream), in spawn order, each until it blocks or returns.
//   * Every context (the program's main stack and each task) may block; a block with no task
//     ready to run is a deadlock: it is reported at once as
//         ODYSSEY DEADLOCK: blocked on read|write of stream '<name>' (every task is blocked)
//     followed by the other blocked operations, and the process ends with std::_Exit(3) (the
//     rule of hls_stream.h, without its time-out: nothing else can make progress).
//   * Task stacks are ODYSSEY_FIBER_STACK bytes (default: the size a new thread would get,
//     RLIMIT_STACK, at least 8 MiB), reserved but committed only when touched, with a guard
//     page below; they are recycled between tasks.
//   * Context switch: a hand-written x86-64 routine, or POSIX ucontext on other machines (and
//     with -DODYSSEY_FIBER_UCONTEXT). Not thread-safe: every task and the spawning context must
//     run on the same OS thread.
#ifndef ODYSSEY_FIBER_H
#define ODYSSEY_FIBER_H

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#if !defined(__x86_64__) || defined(ODYSSEY_FIBER_UCONTEXT)
#define ODYSSEY_FIBER_USE_UCONTEXT 1
#include <ucontext.h>
#endif

#ifndef ODYSSEY_FIBER_STACK
#define ODYSSEY_FIBER_STACK 0  // 0: as a new thread (RLIMIT_STACK, at least 8 MiB)
#endif

#ifndef ODYSSEY_FIBER_USE_UCONTEXT
// odyssey_fiber_switch(save, load): pushes the callee-saved registers, the SSE and x87
// control words, stores the stack pointer in *save, loads `load` and pops the same.
// odyssey_fiber_start: first return target of a new fiber; calls r13(r12) (never returns).
// Weak symbols: every translation unit that includes this header defines them.
extern "C" void odyssey_fiber_switch(void** save, void* load);
extern "C" void odyssey_fiber_start();
__asm__(
    ".text\n"
    ".weak odyssey_fiber_switch\n"
    ".type odyssey_fiber_switch,@function\n"
    "odyssey_fiber_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  subq $16, %rsp\n"
    "  stmxcsr (%rsp)\n"
    "  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n"
    "  fldcw 4(%rsp)\n"
    "  addq $16, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size odyssey_fiber_switch, .-odyssey_fiber_switch\n"
    ".weak odyssey_fiber_start\n"
    ".type odyssey_fiber_start,@function\n"
    "odyssey_fiber_start:\n"
    "  movq %r12, %rdi\n"
    "  callq *%r13\n"
    "  ud2\n"
    ".size odyssey_fiber_start, .-odyssey_fiber_start\n");
#endif

namespace odyssey {
namespace fiber {

struct fiber;

// FIFO of parked fibers (intrusive, through fiber::next).
struct wait_queue {
  fiber* head = nullptr;
  fiber* tail = nullptr;
  bool empty() const { return head == nullptr; }
};

struct group;

struct fiber {
#ifdef ODYSSEY_FIBER_USE_UCONTEXT
  ucontext_t context;
#else
  void* sp = nullptr;  // saved stack pointer while not running
#endif
  char* stack = nullptr;  // mapping base (guard page first); null for the main context
  // The task: body(arg), then drop(arg). Two plain function pointers per task type instead of
  // a std::function: a top function spawns hundreds of distinct lambdas, and each
  // std::function instantiation (manager, invoker, typeinfo) costs compile time.
  void (*body)(void*) = nullptr;
  void (*drop)(void*) = nullptr;
  void* arg = nullptr;
  group* owner = nullptr;
  fiber* next = nullptr;  // link in the ready queue or in one wait queue
  void* locals = nullptr;  // task-local storage (odyssey_timed.h's clock)
  const char* wait_op = nullptr;  // while parked on a stream: "read" / "write"
  const std::string* wait_name = nullptr;
  std::size_t live_index = 0;  // position in scheduler::live
  bool done = false;
};

// The tasks spawned by one dataflow region; join() waits for all of them.
struct group {
  std::size_t running = 0;
  wait_queue joiners;
};

[[noreturn]] inline void fatal(const char* what) {
  std::fflush(stdout);
  std::fprintf(stderr, "ODYSSEY FIBER ERROR: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

inline __attribute__((always_inline)) void push(wait_queue& q, fiber* f) {
  f->next = nullptr;
  if (q.tail != nullptr) {
    q.tail->next = f;
  } else {
    q.head = f;
  }
  q.tail = f;
}

inline __attribute__((always_inline)) fiber* pop(wait_queue& q) {
  fiber* f = q.head;
  if (f != nullptr) {
    q.head = f->next;
    if (q.head == nullptr) q.tail = nullptr;
    f->next = nullptr;
  }
  return f;
}

class scheduler {
 public:
  __attribute__((always_inline)) static scheduler& instance() {
    static scheduler s;
    return s;
  }

  fiber* current() const { return current_; }
  __attribute__((always_inline)) void* locals() const { return locals_; }
  void set_locals(void* p) {
    current_->locals = p;
    locals_ = p;
  }

  // Queues `task()` as a new task of `g`; it first runs when the caller blocks.
  template <typename Task>
  void spawn(group& g, Task&& task) {
    using stored = std::decay_t<Task>;
    spawn_erased(g, new stored(std::forward<Task>(task)),
                 [](void* p) { (*static_cast<stored*>(p))(); },
                 [](void* p) { delete static_cast<stored*>(p); });
  }

  // The part of spawn() that does not depend on the task's type, compiled once.
  __attribute__((noinline)) void spawn_erased(group& g, void* arg, void (*body)(void*),
                                              void (*drop)(void*)) {
    reap();
    fiber* f = new fiber();
    f->arg = arg;
    f->body = body;
    f->drop = drop;
    f->owner = &g;
    f->stack = take_stack();
    f->live_index = live_.size();
    live_.push_back(f);
    ++g.running;
    prepare(f);
    push(ready_, f);
  }

  // Parks the running context on `q` until wake_one/wake_all picks it; `op`/`name` describe
  // the operation for deadlock reports.
  void block(wait_queue& q, const char* op, const std::string* name) {
    fiber* self = current_;
    self->wait_op = op;
    self->wait_name = name;
    push(q, self);
    fiber* next = pop(ready_);
    if (next == nullptr) report_deadlock(self);
    switch_to(self, next);
    self->wait_op = nullptr;
    self->wait_name = nullptr;
  }

  __attribute__((always_inline)) void wake_one(wait_queue& q) {
    fiber* f = pop(q);
    if (f != nullptr) push(ready_, f);
  }

  void wake_all(wait_queue& q) {
    while (fiber* f = pop(q)) push(ready_, f);
  }

  // Waits until every task of `g` has returned.
  void join(group& g) {
    static const std::string region = "(dataflow region)";
    while (g.running != 0) block(g.joiners, "join", &region);
    reap();
  }

 private:
  scheduler() : current_(&main_), locals_(nullptr) {
    main_.live_index = 0;
    live_.push_back(&main_);
  }
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  static std::size_t page_size() {
    static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return size;
  }

  static std::size_t stack_bytes() {
    static const std::size_t bytes = [] {
      std::size_t want = static_cast<std::size_t>(ODYSSEY_FIBER_STACK);
      if (want == 0) {
        want = std::size_t{8} << 20;
        rlimit limit{};
        if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
            limit.rlim_cur > want) {
          want = static_cast<std::size_t>(limit.rlim_cur);
        }
      }
      const std::size_t page = page_size();
      return (want + page - 1) / page * page;
    }();
    return bytes;
  }

  // A stack mapping: one guard page, then stack_bytes() usable bytes.
  char* take_stack() {
    if (!spare_stacks_.empty()) {
      char* s = spare_stacks_.back();
      spare_stacks_.pop_back();
      return s;
    }
    const std::size_t total = stack_bytes() + page_size();
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) fatal("cannot map a task stack (raise the address-space limit)");
    if (mprotect(p, page_size(), PROT_NONE) != 0) fatal("cannot protect a task stack's guard page");
    return static_cast<char*>(p);
  }

  // Frees the fibers that finished (never the running one: its stack is in use).
  void reap() {
    for (fiber* f : finished_) {
      spare_stacks_.push_back(f->stack);
      delete f;
    }
    finished_.clear();
  }

  static void run(fiber* self) {
    self->body(self->arg);
    self->drop(self->arg);  // the captures go while the task's stack still exists
    self->arg = nullptr;
    instance().finish(self);
  }

  [[noreturn]] void finish(fiber* self) {
    self->done = true;
    group& g = *self->owner;
    if (--g.running == 0) wake_all(g.joiners);
    fiber* last = live_.back();  // unlist in O(1)
    live_[self->live_index] = last;
    last->live_index = self->live_index;
    live_.pop_back();
    finished_.push_back(self);
    fiber* next = pop(ready_);
    if (next == nullptr) report_deadlock(nullptr);
    switch_to(self, next);
    fatal("a finished task was resumed");
  }

#ifdef ODYSSEY_FIBER_USE_UCONTEXT
  static void trampoline(unsigned hi, unsigned lo) {
    const std::uintptr_t bits = (static_cast<std::uintptr_t>(hi) << 32) | lo;
    run(reinterpret_cast<fiber*>(bits));
  }

  void prepare(fiber* f) {
    if (getcontext(&f->context) != 0) fatal("getcontext failed");
    f->context.uc_stack.ss_sp = f->stack + page_size();
    f->context.uc_stack.ss_size = stack_bytes();
    f->context.uc_link = nullptr;
    const std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(f);
    makecontext(&f->context, reinterpret_cast<void (*)()>(&scheduler::trampoline), 2,
                static_cast<unsigned>(bits >> 32), static_cast<unsigned>(bits & 0xffffffffu));
  }

  void switch_to(fiber* from, fiber* to) {
    current_ = to;
    locals_ = to->locals;
    if (swapcontext(&from->context, &to->context) != 0) fatal("swapcontext failed");
  }
#else
  void prepare(fiber* f) {
    // Initial frame, popped by odyssey_fiber_switch: control words, r15, r14, r13 = entry,
    // r12 = fiber, rbx, rbp, return address = odyssey_fiber_start, which then calls
    // entry(fiber) with a 16-byte aligned stack.
    char* top = f->stack + page_size() + stack_bytes();
    top -= reinterpret_cast<std::uintptr_t>(top) % 16;
    void** frame = reinterpret_cast<void**>(top - 88);
    std::uint32_t mxcsr = 0;
    std::uint16_t fpu_control = 0;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpu_control));
    const std::uint64_t words = (static_cast<std::uint64_t>(fpu_control) << 32) | mxcsr;
    frame[0] = reinterpret_cast<void*>(words);
    frame[1] = nullptr;  // padding of the 16-byte control area
    frame[2] = nullptr;  // r15
    frame[3] = nullptr;  // r14
    frame[4] = reinterpret_cast<void*>(&scheduler::run);  // r13
    frame[5] = f;  // r12
    frame[6] = nullptr;  // rbx
    frame[7] = nullptr;  // rbp
    frame[8] = reinterpret_cast<void*>(&odyssey_fiber_start);  // return address
    f->sp = frame;
  }

  void switch_to(fiber* from, fiber* to) {
    current_ = to;
    locals_ = to->locals;
    odyssey_fiber_switch(&from->sp, to->sp);
  }
#endif

  [[noreturn]] void report_deadlock(const fiber* self) {
    const fiber* first = (self != nullptr && self->wait_name != nullptr && self != &main_) ? self : nullptr;
    for (const fiber* f : live_) {
      if (first == nullptr && f != &main_ && f->wait_op != nullptr) first = f;
    }
    if (first == nullptr) first = self != nullptr ? self : &main_;
    std::fflush(stdout);
    const char* op = first->wait_op != nullptr ? first->wait_op : "join";
    const char* name = first->wait_name != nullptr ? first->wait_name->c_str() : "?";
    std::fprintf(stderr, "ODYSSEY DEADLOCK: blocked on %s of stream '%s' (every task is blocked)\n",
                 op, name);
    const std::size_t limit = 32;
    std::size_t listed = 0;
    std::size_t skipped = 0;
    for (const fiber* f : live_) {
      if (f == first || f == &main_ || f->wait_op == nullptr) continue;
      if (listed == limit) {
        ++skipped;
        continue;
      }
      std::fprintf(stderr, "ODYSSEY DEADLOCK:   also blocked on %s of stream '%s'\n", f->wait_op,
                   f->wait_name->c_str());
      ++listed;
    }
    if (skipped != 0) std::fprintf(stderr, "ODYSSEY DEADLOCK:   ... and %zu more\n", skipped);
    std::fflush(stderr);
    std::_Exit(3);
  }

  fiber main_;  // the program's own stack
  fiber* current_;
  void* locals_;  // current_->locals, kept at hand for the timing hooks
  wait_queue ready_;
  std::vector<fiber*> live_;  // main context and every unfinished task
  std::vector<fiber*> finished_;
  std::vector<char*> spare_stacks_;
};

inline __attribute__((always_inline)) void* current_locals() { return scheduler::instance().locals(); }

}  // namespace fiber
}  // namespace odyssey

#endif  // ODYSSEY_FIBER_H
