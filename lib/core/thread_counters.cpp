#include <cudapool/detail/core/thread_counters.hpp>

#include <mutex>
#include <vector>

namespace cudapool::core {

namespace {

struct slot_registry {
  std::mutex mutex;
  std::vector<unsigned> free;  // GUARDED_BY(mutex)
  unsigned next = 0;           // GUARDED_BY(mutex)
};

slot_registry& registry() {
  // Never destroyed: threads may exit after static destruction. The free list never reallocates,
  // so giving a slot back at thread exit cannot throw.
  static slot_registry* r = [] {
    auto* p = new slot_registry;
    p->free.reserve(max_thread_slots);
    return p;
  }();
  return *r;
}

// Takes a slot when a thread first asks, gives it back when the thread exits. The mutex orders the
// previous owner's last counter stores before the next owner's first load.
struct slot_holder {
  unsigned slot = shared_thread_slot;
  slot_holder() {
    slot_registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (!r.free.empty()) {
      slot = r.free.back();
      r.free.pop_back();
    } else if (r.next < max_thread_slots) {
      slot = r.next++;
    }
  }
  ~slot_holder() {
    detail::thread_slot_plus_one = 0;  // a pool used later in this thread's exit takes a new one
    for (detail::last_counters& l : detail::last_used_counters) l = {0, nullptr};  // the slot's blocks may get another owner
    if (slot == shared_thread_slot) return;
    slot_registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.free.push_back(slot);
  }
};

}  // namespace

namespace detail {

std::uint64_t next_counters_id() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

unsigned take_thread_slot() noexcept {
  thread_local const slot_holder holder;  // gives the slot back when the thread exits
  thread_slot_plus_one = holder.slot + 1;
  return holder.slot;
}

}  // namespace detail

}  // namespace cudapool::core
