// hls_stream.h -- odyssey stand-in for the Vitis HLS `hls::stream` API.
//
// Only for building generated designs with a plain C++17 compiler (g++ -pthread).
// Vitis builds use the vendor header of the same name instead.
//
// Semantics
//   * `hls::stream<T, DEPTH>` derives from `hls::stream<T>` (== `hls::stream<T, 0>`), exactly
//     as in Vitis 2021.1+, so module functions take `hls::stream<T>&`. Generated top functions
//     declare `hls::stream<T> s("name");` with `#pragma HLS STREAM variable=s depth=D` (what
//     every Vitis version accepts).
//   * With ODYSSEY_CSIM defined (concurrent C simulation: one thread per dataflow process) a
//     stream is a bounded, thread-safe FIFO of capacity DEPTH, or else the depth of its STREAM
//     pragma (odyssey_stream_depth), or else 2 (the Vitis default). A blocking read on an
//     empty / write on a full stream waits.
//   * Without ODYSSEY_CSIM (sequential execution, like Vitis C simulation) streams are
//     unbounded, so writes never block.
//   * Deadlock rule: a blocking read/write that has waited while no stream in the whole
//     process made progress for longer than ODYSSEY_CSIM_TIMEOUT seconds (read once from the
//     environment, default 10) prints
//         ODYSSEY DEADLOCK: blocked on read|write of stream '<name>' for N s
//     to stderr (followed by the other blocked operations) and ends the process with
//     std::_Exit(3).
//   * odyssey::csim::stream_traffic() counts every completed transfer in the process.
//   * With ODYSSEY_TIMED also defined (timed simulation, `odyssey sim`) every item carries the
//     cycle from which its reader may take it, and blocking reads/writes advance the calling
//     task's clock as specified in odyssey_timed.h; the non-timed behaviour is unchanged.
//     Tasks are then fibers of one OS thread (odyssey_fiber.h) unless ODYSSEY_TIMED_THREADS is
//     defined: a blocked operation parks its task, and the deadlock rule becomes "every task is
//     blocked" (reported at once, same first words, same exit code).
#ifndef ODYSSEY_HLS_STREAM_H
#define ODYSSEY_HLS_STREAM_H

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#ifndef ODYSSEY_CSIM_SPIN
#define ODYSSEY_CSIM_SPIN 64
#endif

// Marks set-up and tear-down code that a generated top function would otherwise inline once
// per stream or task (hundreds of times), for compile time only.
#ifndef ODYSSEY_CSIM_OUTLINE
#define ODYSSEY_CSIM_OUTLINE __attribute__((noinline))
#endif
// Marks the small per-item steps of a read or write: inlined into the stream's member
// functions (compiled once per item type) even in an -Og build.
#define ODYSSEY_CSIM_HOT inline __attribute__((always_inline))

#ifdef ODYSSEY_TIMED
#include "odyssey_timed.h"
#endif

namespace odyssey {
namespace csim {

// Deadlock time-out in seconds (env ODYSSEY_CSIM_TIMEOUT, default 10), read once.
inline double timeout_seconds() {
  static const double value = [] {
    const char* text = std::getenv("ODYSSEY_CSIM_TIMEOUT");
    if (text != nullptr) {
      char* end = nullptr;
      const double parsed = std::strtod(text, &end);
      if (end != text && parsed > 0.0) return parsed;
    }
    return 10.0;
  }();
  return value;
}

inline std::atomic<unsigned long long>& traffic_counter() {
  static std::atomic<unsigned long long> counter{0};
  return counter;
}

// Number of completed stream transfers (writes, reads, block publishes and frees) so far.
inline unsigned long long stream_traffic() {
  return traffic_counter().load(std::memory_order_relaxed);
}

ODYSSEY_CSIM_HOT void note_traffic() {
#ifdef ODYSSEY_FIBERS
  // One OS thread: a plain increment, no locked read-modify-write.
  std::atomic<unsigned long long>& counter = traffic_counter();
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
#else
  traffic_counter().fetch_add(1, std::memory_order_relaxed);
#endif
}

inline std::string default_stream_name(const char* kind) {
  static std::atomic<unsigned> next{0};
  return std::string(kind) + "_" + std::to_string(next.fetch_add(1));
}

struct blocked_op {
  const char* op;
  std::string name;
};

struct blocked_registry {
  std::mutex mutex;
  std::list<blocked_op> ops;
};

inline blocked_registry& blocked() {
  static blocked_registry registry;
  return registry;
}

[[noreturn]] inline void report_deadlock(const char* op, const std::string& name, double seconds) {
  static std::atomic<bool> reporting{false};
  if (reporting.exchange(true)) {  // another thread is already reporting and exiting
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::fflush(stdout);
  std::fprintf(stderr, "ODYSSEY DEADLOCK: blocked on %s of stream '%s' for %.1f s\n", op,
               name.c_str(), seconds);
  {
    std::lock_guard<std::mutex> guard(blocked().mutex);
    const std::size_t limit = 32;
    std::size_t listed = 0;
    std::size_t skipped = 0;
    bool self_seen = false;
    for (const blocked_op& other : blocked().ops) {
      if (!self_seen && other.name == name && other.op == op) {
        self_seen = true;
        continue;
      }
      if (listed == limit) {
        ++skipped;
        continue;
      }
      std::fprintf(stderr, "ODYSSEY DEADLOCK:   also blocked on %s of stream '%s'\n", other.op,
                   other.name.c_str());
      ++listed;
    }
    if (skipped != 0) std::fprintf(stderr, "ODYSSEY DEADLOCK:   ... and %zu more\n", skipped);
  }
  std::fflush(stderr);
  std::_Exit(3);
}

// Waits on `cv` (with `lock` held) until `ready()`; enforces the deadlock rule above.
template <typename Ready>
inline void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                       Ready ready, const char* op, const std::string& name) {
  if (ready()) return;
  // Short optimistic phase: the partner thread usually unblocks us within microseconds, and
  // yielding is much cheaper than a futex sleep/wake pair per item.
  for (int spin = 0; spin < ODYSSEY_CSIM_SPIN; ++spin) {
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
    if (ready()) return;
  }
  using clock = std::chrono::steady_clock;
  const double limit = timeout_seconds();
  const auto slice = std::chrono::duration_cast<clock::duration>(
      std::chrono::duration<double>(std::min(0.25, std::max(0.005, limit / 8.0))));
  const auto start = clock::now();
  auto quiet_since = start;
  auto seen = stream_traffic();
  bool registered = false;
  std::list<blocked_op>::iterator entry;
  while (!ready()) {
    cv.wait_for(lock, slice);
    if (ready()) break;
    if (!registered) {  // only operations blocked for a whole slice are listed in reports
      std::lock_guard<std::mutex> guard(blocked().mutex);
      entry = blocked().ops.insert(blocked().ops.end(), blocked_op{op, name});
      registered = true;
    }
    const auto now = clock::now();
    const auto traffic = stream_traffic();
    if (traffic != seen) {
      seen = traffic;
      quiet_since = now;
    } else if (std::chrono::duration<double>(now - quiet_since).count() >= limit) {
      report_deadlock(op, name, std::chrono::duration<double>(now - start).count());
    }
  }
  if (registered) {
    std::lock_guard<std::mutex> guard(blocked().mutex);
    blocked().ops.erase(entry);
  }
}

// Synchronisation of one stream: a lock and two wait queues (0 and 1; for a FIFO "not empty"
// and "not full"). Usage: `channel::hold h(ch); ch.wait(h, q, ready, op, name); ...;
// h.unlock(); ch.notify(other_q);`.
#ifdef ODYSSEY_FIBERS
// Fibers of one OS thread: nothing to lock; a wait parks the running task on the queue.
class channel {
 public:
  class hold {
   public:
    explicit hold(const channel&) {}
    void unlock() {}
  };

  template <typename Ready>
  void wait(hold&, int queue, Ready ready, const char* op, const std::string& name) {
    while (!ready()) fiber::scheduler::instance().block(queues_[queue], op, &name);
  }

  ODYSSEY_CSIM_HOT void notify(int queue) {
    if (!queues_[queue].empty()) fiber::scheduler::instance().wake_one(queues_[queue]);
  }

 private:
  fiber::wait_queue queues_[2];
};
#else
class channel {
 public:
  class hold {
   public:
    explicit hold(const channel& c) : lock_(c.mutex_) {}
    void unlock() { lock_.unlock(); }

   private:
    friend class channel;
    std::unique_lock<std::mutex> lock_;
  };

  template <typename Ready>
  void wait(hold& h, int queue, Ready ready, const char* op, const std::string& name) {
    wait_until(h.lock_, cvs_[queue], ready, op, name);
  }

  void notify(int queue) { cvs_[queue].notify_one(); }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cvs_[2];
};
#endif

// FIFO storage: a circular buffer that doubles when full, so it is unbounded in sequential
// mode and never grows past the FIFO's capacity in concurrent mode (a std::deque costs more
// per item). Needs a default-constructible item type, as Vitis's hls::stream does.
template <typename S>
class ring {
 public:
  ring() = default;
  ring(const ring&) = delete;
  ring& operator=(const ring&) = delete;
  ~ring() { delete[] slots_; }

  ODYSSEY_CSIM_HOT bool empty() const { return count_ == 0; }
  ODYSSEY_CSIM_HOT std::size_t size() const { return count_; }
  ODYSSEY_CSIM_HOT S& front() { return slots_[head_]; }

  ODYSSEY_CSIM_HOT void push_back(S&& item) {
    if (count_ == size_) grow();
    slots_[(head_ + count_) & (size_ - 1)] = std::move(item);
    ++count_;
  }

  ODYSSEY_CSIM_HOT void pop_front() {
    head_ = (head_ + 1) & (size_ - 1);
    --count_;
  }

 private:
  void grow() {
    const std::size_t bigger_size = size_ == 0 ? 2 : 2 * size_;
    S* bigger = new S[bigger_size];
    for (std::size_t i = 0; i < count_; ++i) bigger[i] = std::move(slots_[(head_ + i) & (size_ - 1)]);
    delete[] slots_;
    slots_ = bigger;
    size_ = bigger_size;
    head_ = 0;
  }

  // Plain array, not std::vector: its accessors are calls in an -Og build.
  S* slots_ = nullptr;
  std::size_t size_ = 0;  // a power of two
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace csim
}  // namespace odyssey

// Depth of a named FIFO as declared by a `#pragma HLS STREAM variable=<name> depth=<d>` line of
// the printed kernel (0 when none): `odyssey csim --concurrent` links a table built from those
// pragmas. A weak declaration, so programs without the table still link.
extern "C" int odyssey_stream_depth(const char* name) __attribute__((weak));

namespace odyssey {
namespace csim {

// Capacity of a FIFO declared with `depth` (its template argument) and `name` in the current
// simulation mode: the template depth, else the STREAM pragma's, else 2 (the Vitis default).
inline std::size_t fifo_capacity(int depth, const char* name = nullptr) {
#ifdef ODYSSEY_CSIM
  if (depth <= 0 && name != nullptr && odyssey_stream_depth != nullptr) depth = odyssey_stream_depth(name);
  return depth <= 0 ? 2u : static_cast<std::size_t>(depth);
#else
  (void)depth;
  (void)name;
  return std::numeric_limits<std::size_t>::max();
#endif
}

}  // namespace csim
}  // namespace odyssey

namespace hls {

template <typename T, int DEPTH = 0>
class stream;

template <typename T>
class stream<T, 0> {
 public:
  stream() : stream(0, nullptr) {}
  stream(const char* name) : stream(0, name) {}
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  // Constructors and destructor out of line: a top function declares hundreds of streams.
  ODYSSEY_CSIM_OUTLINE ~stream() {
    if (!items_.empty()) {
      std::fprintf(stderr, "ODYSSEY WARNING: stream '%s' destroyed with %zu unread item(s)\n",
                   name_.c_str(), items_.size());
    }
  }

  void write(const T& value) {
    channel::hold lock(sync_);
    if (items_.size() >= capacity_) {  // the waiting path, out of the common one
      sync_.wait(lock, kNotFull, [this] { return items_.size() < capacity_; }, "write", name_);
    }
    push_locked(value, true);
    lock.unlock();
    sync_.notify(kNotEmpty);
  }

  T read() {
    channel::hold lock(sync_);
    if (items_.empty()) sync_.wait(lock, kNotEmpty, [this] { return !items_.empty(); }, "read", name_);
    T value = pop_locked(true);
    lock.unlock();
    sync_.notify(kNotFull);
    return value;
  }

  void read(T& out) { out = read(); }

  bool read_nb(T& out) {
    channel::hold lock(sync_);
    if (items_.empty()) return false;
    out = pop_locked(false);
    lock.unlock();
    sync_.notify(kNotFull);
    return true;
  }

  bool write_nb(const T& value) {
    channel::hold lock(sync_);
    if (items_.size() >= capacity_) return false;
    push_locked(value, false);
    lock.unlock();
    sync_.notify(kNotEmpty);
    return true;
  }

  void operator<<(const T& value) { write(value); }
  void operator>>(T& out) { read(out); }

  bool empty() const {
    channel::hold lock(sync_);
    return items_.empty();
  }

  bool full() const {
    channel::hold lock(sync_);
    return items_.size() >= capacity_;
  }

  std::size_t size() const {
    channel::hold lock(sync_);
    return items_.size();
  }

  std::size_t capacity() const { return capacity_; }

  void set_name(const char* name) {
    channel::hold lock(sync_);
    if (name != nullptr) name_ = name;
  }

  const std::string& name() const { return name_; }

 protected:
  ODYSSEY_CSIM_OUTLINE stream(int depth, const char* name)
      : name_(name != nullptr ? std::string(name)
                              : odyssey::csim::default_stream_name("hls_stream")),
        capacity_(odyssey::csim::fifo_capacity(depth, name))
#ifdef ODYSSEY_TIMED
        ,
        timing_(capacity_)
#endif
  {
  }

 private:
  // One FIFO entry. Wrapping T leaves room for per-item metadata without touching the API.
  struct slot {
    T value;
#ifdef ODYSSEY_TIMED
    // Cycle from which the reader may take the item (odyssey_timed.h: write stamp tw + 1).
    odyssey::timed::cycles ready_cycle = 0;
#endif
  };

  // `timed`: a blocking operation (moves the caller's clock in a timed build).
  ODYSSEY_CSIM_HOT void push_locked(const T& value, bool timed) {
#ifdef ODYSSEY_TIMED
    items_.push_back(slot{value, timing_.on_write(timed)});
#else
    (void)timed;
    items_.push_back(slot{value});
#endif
    odyssey::csim::note_traffic();
  }

  ODYSSEY_CSIM_HOT T pop_locked(bool timed) {
#ifdef ODYSSEY_TIMED
    timing_.on_read(items_.front().ready_cycle, timed);
#else
    (void)timed;
#endif
    T value = std::move(items_.front().value);
    items_.pop_front();
    odyssey::csim::note_traffic();
    return value;
  }

  using channel = odyssey::csim::channel;
  static constexpr int kNotEmpty = 0;  // wait queues of sync_
  static constexpr int kNotFull = 1;

  std::string name_;
  std::size_t capacity_;
  odyssey::csim::ring<slot> items_;
  mutable channel sync_;
#ifdef ODYSSEY_TIMED
  odyssey::timed::fifo_timing timing_;  // guarded by sync_
#endif
};

template <typename T, int DEPTH>
class stream : public stream<T, 0> {
 public:
  stream() : stream<T, 0>(DEPTH, nullptr) {}
  stream(const char* name) : stream<T, 0>(DEPTH, name) {}
};

}  // namespace hls

#endif  // ODYSSEY_HLS_STREAM_H
