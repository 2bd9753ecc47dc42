// hls_streamofblocks.h -- `hls::stream_of_blocks` with Vitis C-simulation semantics.
//
// Used by `odyssey csim` in its default (sequential) mode, beside Xilinx's own `hls_stream.h`
// and `ap_int.h` (from the hls4ml wheel), which predate stream_of_blocks. Vitis HLS C
// simulation calls the processes of a DATAFLOW region one after another, in call order, and a
// stream never fills: so here a stream of blocks is an unbounded queue of blocks.
//   hls::write_lock<B> w(s);  // a new block; published when `w` goes out of scope
//   hls::read_lock<B> r(s);   // the oldest published block; freed when `r` goes out of scope
// Acquiring a read lock on a stream with no published block is the sequential counterpart of
// a read on an empty stream: the program reports it (naming the process being run, see
// odyssey_vitis_csim.h) and exits, since the data the process expects was never produced
// before it was called.
#ifndef ODYSSEY_VITIS_HLS_STREAMOFBLOCKS_H
#define ODYSSEY_VITIS_HLS_STREAMOFBLOCKS_H

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "hls_stream.h"
#include "odyssey_vitis_csim.h"

namespace hls {

namespace detail {
template <typename B, bool Write>
class block_lock;
}  // namespace detail

template <typename B, int DEPTH = 2>
class stream_of_blocks {
  static_assert(std::is_array<B>::value, "hls::stream_of_blocks<B>: B must be an array type");

 public:
  stream_of_blocks() : name_(odyssey::vitis::next_blocks_name()) {}
  explicit stream_of_blocks(const char* name) : name_(name) {}
  stream_of_blocks(const stream_of_blocks&) = delete;
  stream_of_blocks& operator=(const stream_of_blocks&) = delete;
  ~stream_of_blocks() {
    if (!ready_.empty()) odyssey::vitis::leftover_blocks(name_, ready_.size());
  }

  bool empty() const { return ready_.empty(); }
  bool full() const { return false; }
  const std::string& name() const { return name_; }

 private:
  friend class detail::block_lock<B, true>;
  friend class detail::block_lock<B, false>;
  struct slot {
    B data;
  };

  B& write_acquire() {
    writing_.push_back(std::unique_ptr<slot>(new slot()));
    return writing_.back()->data;
  }
  void write_release() {
    ready_.push_back(std::move(writing_.front()));
    writing_.pop_front();
  }
  B& read_acquire() {
    if (ready_.empty()) odyssey::vitis::empty_blocks(name_);
    reading_.push_back(std::move(ready_.front()));
    ready_.pop_front();
    return reading_.back()->data;
  }
  void read_release() { reading_.pop_front(); }

  std::string name_;
  std::deque<std::unique_ptr<slot>> writing_;
  std::deque<std::unique_ptr<slot>> ready_;
  std::deque<std::unique_ptr<slot>> reading_;
};

namespace detail {

// A block held for writing (Write) or reading: acquired on construction, released on
// destruction, indexed like the block itself.
template <typename B, bool Write>
class block_lock {
 public:
  template <int D>
  block_lock(stream_of_blocks<B, D>& s)
      : release_([&s] { Write ? s.write_release() : s.read_release(); }),
        block_(Write ? s.write_acquire() : s.read_acquire()) {}
  ~block_lock() { release_(); }
  block_lock(const block_lock&) = delete;
  block_lock& operator=(const block_lock&) = delete;
  operator B&() { return block_; }
  template <typename I>
  auto operator[](I index) -> decltype(std::declval<B&>()[index]) {
    return block_[index];
  }

 private:
  odyssey::vitis::release_fn release_;
  B& block_;
};

}  // namespace detail

template <typename B>
class write_lock : public detail::block_lock<B, true> {
 public:
  using detail::block_lock<B, true>::block_lock;
};

template <typename B>
class read_lock : public detail::block_lock<B, false> {
 public:
  using detail::block_lock<B, false>::block_lock;
};

}  // namespace hls

#endif  // ODYSSEY_VITIS_HLS_STREAMOFBLOCKS_H
