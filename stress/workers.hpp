// workers.hpp - the host threads of a run: each allocates, stamps, hands off, verifies and frees
// blocks on the run's streams (the glossary in stress_harness.hpp names the steps), throttled to the
// device's pace. run_context is what they share. Internal to the harness.
//
// Devices (--devices): each device is a lane, its backend, the allocator on it and its streams.
// Thread t works on lane t % devices: it allocates from that device's allocator on that device's
// streams. A block handed to a thread of another lane is verified and freed by the receiver through
// the block's own lane (its device's pool, on a stream of its device, stream-ordered behind the
// producer's event): a free from a thread that works on another device.
#pragma once

#include <concurrentqueue/concurrentqueue.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "allocator_under_test.hpp"
#include "checkers.hpp"
#include "config.hpp"
#include <cudapool/backend.hpp>
#include "random.hpp"
#include "sizes.hpp"

namespace cudapool::stress {

// The device operations stamp and verify whole 32-bit words.
[[nodiscard]] inline std::size_t round_down4(std::size_t bytes) noexcept { return bytes & ~std::size_t{3}; }

struct live_block {
  void* p = nullptr;
  std::size_t bytes = 0;
  std::uint32_t tag = 0;
  unsigned lane = 0;    // the device (index into run_context::lanes) whose allocator made it
  unsigned stream = 0;  // index into that lane's streams: where it was allocated and used
  bool traced = false;  // from a trace `a` line with this id
  std::uint64_t trace_id = 0;
};

struct handoff {
  live_block block;
  event_handle ready = nullptr;  // recorded on block.stream after the producer's last use
};
using inbox = moodycamel::ConcurrentQueue<handoff>;

struct device_lane {
  allocator_under_test& allocator;  // a pool or a peer of this device
  backend& device;
  std::vector<stream_ref> streams;  // config.streams of them, made on `device`
};

struct run_context {
  const stress_config& config;
  std::vector<device_lane> lanes;  // one per device
  const size_source& sizes;
  shadow_map& shadow;
  violation_log& violations;
  std::vector<std::unique_ptr<inbox>> inboxes;  // one per thread: blocks handed to it
  // Relaxed, both: they order nothing (the join does). stop is set by the monitor when --duration
  // has passed and ends the workers' loops; finished counts the workers done, for the monitor.
  std::atomic<bool> stop{false};
  std::atomic<unsigned> finished{0};
};

// Read by the monitor while the workers run. One writer each (the worker that owns them, or the
// main thread after the join); relaxed, since they order nothing and are only summed for reports.
struct alignas(64) worker_counters {
  std::atomic<std::uint64_t> allocations{0};
  std::atomic<std::uint64_t> frees{0};
  std::atomic<std::uint64_t> handoffs{0};
  std::atomic<std::uint64_t> cross_stream_frees{0};
  std::atomic<std::uint64_t> immediate_frees{0};
  std::atomic<std::uint64_t> events{0};
  std::atomic<std::uint64_t> quarantined{0};
  std::atomic<std::uint64_t> cross_device_handoffs{0};  // received from a thread of another device

  static void bump(std::atomic<std::uint64_t>& c) noexcept {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

class worker {
 public:
  worker(run_context& ctx, unsigned index, std::uint64_t quota, std::size_t trace_offset)
      : ctx_(ctx),
        index_(index),
        quota_(quota),
        // Decisions about received blocks come from their own generator, so that when and what a
        // thread receives (a matter of timing) never shifts this thread's own decisions.
        rng_(ctx.config.seed + index),
        receive_rng_((ctx.config.seed + index) ^ 0x5EC0'0D5E'ED00'0000ull),
        lane_(index % static_cast<unsigned>(ctx.lanes.size())),
        touched_(ctx.lanes.size() * ctx.config.streams, false),
        cursor_(trace_offset) {}

  // The thread body. Nothing escapes: a failure is a violation, and the thread still gives back
  // what it holds.
  void run() noexcept;

  worker_counters counters;

 private:
  [[nodiscard]] bool done() const noexcept;

  // classes / fixed: allocate with probability (max - held) / max, else retire a random block. A
  // thread therefore holds max/2 blocks on average and blocks live a random number of steps.
  void step();

  // trace: one trace line. Each thread starts at its own offset and wraps around; what it still holds
  // at the end of a pass (allocations whose free it has not seen) is freed there.
  void trace_step();

  void allocate(std::size_t bytes, std::optional<std::uint64_t> trace_id);

  // Retires live_[i]. At the end of a run (may_transfer false) every block is simply verified and
  // freed on its own stream.
  void retire(std::size_t i, bool may_transfer);

  // The block was used on `used` and will be freed on `freeing`: make `freeing` wait for the use,
  // so that deallocate(p, freeing) covers it (the core contract orders a free only after work
  // enqueued on the freeing stream). A stream wait captures the event's latest record when it is
  // enqueued (cudaStreamWaitEvent; the sim backend copies the record), so the event can go back to
  // the backend's pool at once.
  void declare_use(unsigned used, unsigned freeing);

  // Verify the stamp on `s` in stream order, then free on `s`. The shadow range is released before
  // deallocate: once the pool has the block, another thread may get it and claim it.
  void free_block(const live_block& b, unsigned s, retire_kind how, rng& r);

  // Verify on the block's stream, wait on the host until the stream has passed the verify, then
  // free without a stream: nothing on the device uses the block any more.
  void free_block_now(const live_block& b);

  void hand_off(const live_block& b);

  // Blocks handed to this thread: make a stream of ours wait for the producer's work, then verify
  // and free there.
  void receive();

  [[nodiscard]] device_lane& home() const noexcept { return ctx_.lanes[lane_]; }
  // A stream by lane and index; a run-wide number for it (the shadow map's and the reports').
  [[nodiscard]] stream_ref stream(unsigned lane, unsigned s) const noexcept { return ctx_.lanes[lane].streams[s]; }
  [[nodiscard]] unsigned global_stream(unsigned lane, unsigned s) const noexcept {
    return lane * ctx_.config.streams + s;
  }

  void maybe_spin(unsigned lane, unsigned s, rng& r);

  void touch(unsigned lane, unsigned s);

  void checkpoint();

  void wait_oldest_checkpoint();

  run_context& ctx_;
  const unsigned index_;
  const std::uint64_t quota_;  // allocations to make with --ops
  const unsigned lane_;        // the device this thread allocates on
  rng rng_;
  rng receive_rng_;
  std::uint64_t allocated_ = 0;  // also the tag counter
  std::uint64_t steps_ = 0;
  std::vector<live_block> live_;
  std::vector<bool> touched_;  // by global_stream, since the last checkpoint
  std::vector<unsigned> touched_list_;  // global stream numbers
  struct checkpoint_event {
    backend* device;  // the backend the event came from (the lane of its stream)
    event_handle event;
  };
  std::deque<std::vector<checkpoint_event>> checkpoints_;
  std::size_t cursor_ = 0;  // next trace line
};

}  // namespace cudapool::stress
