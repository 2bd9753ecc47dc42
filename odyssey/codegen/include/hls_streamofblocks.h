// hls_streamofblocks.h -- odyssey stand-in for Vitis HLS `hls::stream_of_blocks` (2021.1+).
//
// Only for building generated designs with a plain C++17 compiler (g++ -pthread).
// Vitis builds use the vendor header of the same name instead.
//
// API (as in Vitis):
//     typedef float blk_t[4][8];
//     hls::stream_of_blocks<blk_t, 3> s;          // DEPTH blocks in total (default 2: ping-pong)
//     void producer(hls::stream_of_blocks<blk_t>& s) {
//       hls::write_lock<blk_t> w(s);              // acquire a free block (blocks when none)
//       w[i][j] = x;                              // fill it
//     }                                           // destructor publishes the block
//     void consumer(hls::stream_of_blocks<blk_t>& s) {
//       hls::read_lock<blk_t> r(s);               // acquire the oldest published block
//       x = r[i][j];
//     }                                           // destructor frees the block
//   s.empty(): a read_lock would block now; s.full(): a write_lock would block now.
//
// With ODYSSEY_CSIM defined the ring holds DEPTH blocks (DEPTH <= 0 means 2), counting the
// blocks held by the producer and the consumer. Without ODYSSEY_CSIM (sequential execution)
// the ring grows on demand so write locks never block. Blocked acquisitions follow the
// deadlock rule of hls_stream.h (message names the stream and "read"/"write").
// With ODYSSEY_TIMED also defined, lock acquisitions and releases advance the calling task's
// clock as specified in odyssey_timed.h (blocks); the non-timed behaviour is unchanged (tasks
// are fibers then, see hls_stream.h).
#ifndef ODYSSEY_HLS_STREAMOFBLOCKS_H
#define ODYSSEY_HLS_STREAMOFBLOCKS_H

#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hls_stream.h"

namespace hls {

template <typename B, int DEPTH = 2>
class stream_of_blocks;

template <typename B>
class read_lock;

template <typename B>
class write_lock;

template <typename B>
class stream_of_blocks<B, 2> {
  static_assert(std::is_array<B>::value, "hls::stream_of_blocks<B>: B must be an array type");

 public:
  stream_of_blocks() : stream_of_blocks(2, nullptr) {}
  ODYSSEY_CSIM_OUTLINE explicit stream_of_blocks(int depth, const char* name = nullptr)
      : name_(name != nullptr ? std::string(name)
                              : odyssey::csim::default_stream_name("hls_stream_of_blocks")),
        capacity_(odyssey::csim::fifo_capacity(depth))
#ifdef ODYSSEY_TIMED
        ,
        timing_(capacity_)
#endif
  {
  }
  explicit stream_of_blocks(const char* name) : stream_of_blocks(2, name) {}
  stream_of_blocks(const stream_of_blocks&) = delete;
  stream_of_blocks& operator=(const stream_of_blocks&) = delete;

  ODYSSEY_CSIM_OUTLINE ~stream_of_blocks() {
    if (!ready_.empty()) {
      std::fprintf(stderr,
                   "ODYSSEY WARNING: stream_of_blocks '%s' destroyed with %zu unread block(s)\n",
                   name_.c_str(), ready_.size());
    }
  }

  bool empty() {
    channel::hold lock(sync_);
    return ready_.empty();
  }

  bool full() {
    channel::hold lock(sync_);
    return !can_write_locked();
  }

  const std::string& name() const { return name_; }

 private:
  friend class read_lock<B>;
  friend class write_lock<B>;

  struct slot {
    B data;
#ifdef ODYSSEY_TIMED
    // Writer's clock when the block was published (odyssey_timed.h).
    odyssey::timed::cycles ready_cycle = 0;
#endif
  };

  bool can_write_locked() const { return !free_.empty() || storage_.size() < capacity_; }

  B& write_acquire() {
    channel::hold lock(sync_);
    sync_.wait(lock, kCanWrite, [this] { return can_write_locked(); }, "write", name_);
    slot* block;
    if (!free_.empty()) {
      block = free_.back();
      free_.pop_back();
    } else {
      storage_.push_back(std::unique_ptr<slot>(new slot()));
      block = storage_.back().get();
    }
    writing_.push_back(block);
#ifdef ODYSSEY_TIMED
    timing_.on_write_acquire();
#endif
    return block->data;
  }

  void write_release() {
    {
      channel::hold lock(sync_);
#ifdef ODYSSEY_TIMED
      writing_.front()->ready_cycle = odyssey::timed::blocks_timing::on_write_release();
#endif
      ready_.push_back(writing_.front());  // locks are released in acquisition order
      writing_.pop_front();
      odyssey::csim::note_traffic();
    }
    sync_.notify(kCanRead);
  }

  B& read_acquire() {
    channel::hold lock(sync_);
    sync_.wait(lock, kCanRead, [this] { return !ready_.empty(); }, "read", name_);
    slot* block = ready_.front();
    ready_.pop_front();
    reading_.push_back(block);
#ifdef ODYSSEY_TIMED
    odyssey::timed::blocks_timing::on_read_acquire(block->ready_cycle);
#endif
    return block->data;
  }

  void read_release() {
    {
      channel::hold lock(sync_);
      free_.push_back(reading_.front());
      reading_.pop_front();
#ifdef ODYSSEY_TIMED
      timing_.on_read_release();
#endif
      odyssey::csim::note_traffic();
    }
    sync_.notify(kCanWrite);
  }

  using channel = odyssey::csim::channel;
  static constexpr int kCanRead = 0;  // wait queues of sync_
  static constexpr int kCanWrite = 1;

  std::string name_;
  std::size_t capacity_;
  std::vector<std::unique_ptr<slot>> storage_;  // owns every block ever allocated
  std::vector<slot*> free_;
  std::deque<slot*> writing_;  // held by write locks
  std::deque<slot*> ready_;    // published, oldest first
  std::deque<slot*> reading_;  // held by read locks
  channel sync_;
#ifdef ODYSSEY_TIMED
  odyssey::timed::blocks_timing timing_;  // guarded by sync_
#endif
};

template <typename B, int DEPTH>
class stream_of_blocks : public stream_of_blocks<B, 2> {
 public:
  stream_of_blocks() : stream_of_blocks<B, 2>(DEPTH) {}
  explicit stream_of_blocks(const char* name) : stream_of_blocks<B, 2>(DEPTH, name) {}
};

template <typename B>
class write_lock {
 public:
  write_lock(stream_of_blocks<B>& s) : stream_(s), block_(s.write_acquire()) {}
  ~write_lock() { stream_.write_release(); }
  write_lock(const write_lock&) = delete;
  write_lock& operator=(const write_lock&) = delete;

  operator B&() { return block_; }

  template <typename I>
  auto operator[](I index) -> decltype(std::declval<B&>()[index]) {
    return block_[index];
  }

 private:
  stream_of_blocks<B>& stream_;
  B& block_;
};

template <typename B>
class read_lock {
 public:
  read_lock(stream_of_blocks<B>& s) : stream_(s), block_(s.read_acquire()) {}
  ~read_lock() { stream_.read_release(); }
  read_lock(const read_lock&) = delete;
  read_lock& operator=(const read_lock&) = delete;

  operator B&() { return block_; }

  template <typename I>
  auto operator[](I index) -> decltype(std::declval<B&>()[index]) {
    return block_[index];
  }

 private:
  stream_of_blocks<B>& stream_;
  B& block_;
};

}  // namespace hls

#endif  // ODYSSEY_HLS_STREAMOFBLOCKS_H
