// faults.hpp - pool decorators that break one thing each (--inject), so that the checkers are
// tested too: a run over a decorated pool must fail. Internal to the harness.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>

#include <cudapool/any_pool.hpp>

namespace cudapool::stress {

// Forwards every call to the real pool; the decorators below break one thing each.
class forwarding_pool : public any_pool {
 public:
  explicit forwarding_pool(std::unique_ptr<any_pool> inner) : inner_(std::move(inner)) {}
  [[nodiscard]] std::string_view variant() const noexcept override { return inner_->variant(); }
  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s) override { return inner_->allocate(bytes, s); }
  [[nodiscard]] void* try_allocate(std::size_t bytes, stream_ref s) noexcept override {
    return inner_->try_allocate(bytes, s);
  }
  void deallocate(void* p) noexcept override { inner_->deallocate(p); }
  void deallocate(void* p, stream_ref s) noexcept override { inner_->deallocate(p, s); }
  void flush_stream(stream_ref s) override { inner_->flush_stream(s); }
  void retire_stream(stream_ref s) override { inner_->retire_stream(s); }
  std::size_t trim() override { return inner_->trim(); }
  [[nodiscard]] pool_stats stats() const override { return inner_->stats(); }
  [[nodiscard]] pointer_info describe(const void* p) const override { return inner_->describe(p); }
  std::size_t check_guards() override { return inner_->check_guards(); }
  [[nodiscard]] backend& device() const noexcept override { return inner_->device(); }

 protected:
  [[nodiscard]] any_pool& inner() const noexcept { return *inner_; }

 private:
  std::unique_ptr<any_pool> inner_;
};

// --inject=early-reuse: a stream-ordered free becomes an immediate one, so the block can be handed
// out again while the verify (and spin) its owner enqueued before freeing it is still queued.
class early_reuse_pool final : public forwarding_pool {
 public:
  using forwarding_pool::forwarding_pool;
  void deallocate(void* p, stream_ref) noexcept override { inner().deallocate(p); }
};

// --inject=double-handout: every `period`-th allocation is answered, instead of by the pool, with a
// block that is live (handed out by the pool and not freed since) and large enough for the request.
// The pool never sees it, so its accounting stays balanced; the shadow map must catch it.
//
// Only the few most recently handed-out blocks are candidates (if none fits, the next request
// tries again): their owners are about to claim and stamp them, not to free them, so the double is
// caught by the shadow map at once, by whichever of the two claims second. An older block could be
// in the middle of being freed: its owner has released its shadow range but not yet called
// deallocate. The double would slip past the shadow map and be caught later, as an invalid free or
// an overlap with the block's next owner, with a device-side race in between that TSan reports.
// Rare (about 1 double in 100 with 8 candidates, in 64-thread runs), and still a violation.
class double_handout_pool final : public forwarding_pool {
 public:
  static constexpr std::uint64_t period = 256;

  using forwarding_pool::forwarding_pool;

  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s) override {
    if (void* live = maybe_double(bytes)) return live;
    void* p = inner().allocate(bytes, s);
    track(p, bytes);
    return p;
  }
  [[nodiscard]] void* try_allocate(std::size_t bytes, stream_ref s) noexcept override {
    if (void* live = maybe_double(bytes)) return live;
    void* p = inner().try_allocate(bytes, s);
    try {
      track(p, bytes);
    } catch (...) {  // out of host memory for the bookkeeping: this block just cannot be doubled
    }
    return p;
  }
  void deallocate(void* p) noexcept override {
    untrack(p);
    inner().deallocate(p);
  }
  void deallocate(void* p, stream_ref s) noexcept override {
    untrack(p);
    inner().deallocate(p, s);
  }

  [[nodiscard]] std::uint64_t injected() const {
    std::lock_guard lock(mutex_);
    return injected_;
  }

 private:
  // Once armed, the next request that a recently handed-out live block can hold gets that block.
  void* maybe_double(std::size_t bytes) noexcept {
    constexpr int candidates = 8;
    std::lock_guard lock(mutex_);
    if (++calls_ % period == 0) armed_ = true;
    if (!armed_) return nullptr;
    int looked = 0;
    for (auto it = live_.rbegin(); it != live_.rend() && looked < candidates; ++it, ++looked) {
      if (it->second.second >= bytes) {
        armed_ = false;
        ++injected_;
        return it->second.first;
      }
    }
    return nullptr;
  }

  void track(void* p, std::size_t bytes) {
    if (p == nullptr) return;
    std::lock_guard lock(mutex_);
    const std::uint64_t order = next_order_++;
    live_.emplace(order, std::pair{p, bytes});
    order_of_.emplace(p, order);
  }

  void untrack(void* p) noexcept {
    std::lock_guard lock(mutex_);
    const auto it = order_of_.find(p);
    if (it == order_of_.end()) return;
    live_.erase(it->second);
    order_of_.erase(it);
  }

  mutable std::mutex mutex_;
  std::uint64_t calls_ = 0;                                         // GUARDED_BY(mutex_)
  bool armed_ = false;                                              // GUARDED_BY(mutex_)
  std::uint64_t injected_ = 0;                                      // GUARDED_BY(mutex_)
  std::uint64_t next_order_ = 0;                                    // GUARDED_BY(mutex_)
  std::map<std::uint64_t, std::pair<void*, std::size_t>> live_;     // by hand-out order; GUARDED_BY(mutex_)
  std::map<void*, std::uint64_t> order_of_;                         // GUARDED_BY(mutex_)
};

}  // namespace cudapool::stress
