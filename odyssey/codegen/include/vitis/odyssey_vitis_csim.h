// odyssey_vitis_csim.h -- error reporting of `odyssey csim` in its sequential (Vitis) mode.
//
// Forced into every translation unit (`-include`) when a design is simulated the way Vitis HLS
// C simulation runs it: dataflow processes called one after another in call order, over
// Xilinx's own unbounded `hls::stream` (hls_stream.h of the hls4ml wheel). Xilinx's stream
// prints "WARNING: Hls::stream '<name>' is read while empty" and returns a default value when a
// process reads data that no earlier process produced; its destructor prints "... contains
// leftover data" for data that no process consumed. Both mean the design cannot run in Vitis
// (C simulation reads garbage; co-simulation hangs), so this header watches standard output
// for the two warnings and turns them into a report naming the stream and the process being
// run (ODYSSEY_TASK records it), then exits:
//     ODYSSEY EMPTY READ: stream '<name>' read while empty in process <call>           (exit 4)
//     ODYSSEY LEFTOVER: stream '<name>' holds unread data (last process run: <call>)  (exit 5)
// Not a Vitis header; never included by a Vitis build.
#ifndef ODYSSEY_VITIS_CSIM_H
#define ODYSSEY_VITIS_CSIM_H

#ifdef __cplusplus
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>
#include <streambuf>
#include <string>

namespace odyssey {
namespace vitis {

constexpr int EMPTY_READ_EXIT = 4;
constexpr int LEFTOVER_EXIT = 5;

using release_fn = std::function<void()>;

inline std::string& current_task() {
  static std::string task = "(outside any dataflow process)";
  return task;
}

[[noreturn]] inline void fail(const char* kind, const std::string& what, int code) {
  std::fprintf(stderr, "%s: %s\n", kind, what.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  std::_Exit(code);
}

inline void empty_blocks(const std::string& name) {
  fail("ODYSSEY EMPTY READ",
       "stream_of_blocks '" + name + "' read while empty in process " + current_task(), EMPTY_READ_EXIT);
}

inline void leftover_blocks(const std::string& name, std::size_t count) {
  fail("ODYSSEY LEFTOVER",
       "stream_of_blocks '" + name + "' holds " + std::to_string(count) +
           " unread block(s) (last process run: " + current_task() + ")",
       LEFTOVER_EXIT);
}

inline std::string next_blocks_name() {
  static int counter = 0;
  return "stream_of_blocks." + std::to_string(++counter);
}

// Passes standard output through, line by line, and stops the program at Xilinx's warnings.
class warning_watch : public std::streambuf {
 public:
  explicit warning_watch(std::streambuf* target) : target_(target) {}

 protected:
  int overflow(int ch) override {
    if (ch == traits_type::eof()) return sync() == 0 ? 0 : traits_type::eof();
    line_.push_back(static_cast<char>(ch));
    if (ch == '\n') check_line();
    return target_->sputc(static_cast<char>(ch)) == traits_type::eof() ? traits_type::eof() : ch;
  }
  int sync() override { return target_->pubsync(); }

 private:
  void check_line() {
    std::string line;
    line.swap(line_);
    const std::size_t open = line.find("Hls::stream '");
    if (open == std::string::npos) return;
    const std::size_t start = open + 13;
    const std::size_t close = line.find('\'', start);
    const std::string name = line.substr(start, close == std::string::npos ? 0 : close - start);
    if (line.find("is read while empty") != std::string::npos)
      fail("ODYSSEY EMPTY READ", "stream '" + name + "' read while empty in process " + current_task(),
           EMPTY_READ_EXIT);
    if (line.find("leftover data") != std::string::npos)
      fail("ODYSSEY LEFTOVER",
           "stream '" + name + "' holds unread data (last process run: " + current_task() + ")",
           LEFTOVER_EXIT);
  }
  std::streambuf* target_;
  std::string line_;
};

inline bool install_watch() {
  static warning_watch watch(std::cout.rdbuf());
  std::cout.rdbuf(&watch);
  return true;
}

// Installed before main() runs in every program that includes this header.
static const bool watch_installed = install_watch();

}  // namespace vitis
}  // namespace odyssey

// The process being run, for the reports above (odyssey_dataflow.h's sequential ODYSSEY_TASK).
#define ODYSSEY_VITIS_ENTER(call) (::odyssey::vitis::current_task() = (call))
#endif  // __cplusplus

#endif  // ODYSSEY_VITIS_CSIM_H
