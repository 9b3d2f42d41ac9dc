// checkers.hpp - what finds a broken pool: the tags blocks are stamped with on the device, the
// violation log, the host shadow map of live ranges (and the history of retired ones that explains
// a device mismatch), and the end-of-run checks of the pool's accounting and of the device's
// verify report. Internal to the harness.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cudapool/backend.hpp>
#include <cudapool/errors.hpp>
#include <cudapool/stats.hpp>

namespace cudapool::stress {

// ---- tags ---------------------------------------------------------------------------------------

inline constexpr unsigned tag_counter_bits = 20;
inline constexpr std::uint32_t tag_counter_mask = (std::uint32_t{1} << tag_counter_bits) - 1;

// The counter wraps after 2^20 allocations of one thread; a tag then repeats, but never while the
// allocation that first had it could still be verified (a thread holds at most a few hundred blocks).
inline std::uint32_t make_tag(unsigned thread, std::uint64_t counter) noexcept {
  return (static_cast<std::uint32_t>(thread) + 1) << tag_counter_bits |
         (static_cast<std::uint32_t>(counter) & tag_counter_mask);
}

// "0x00300007 (thread 2, allocation #7)", or "(not a stress tag)".
[[nodiscard]] std::string describe_tag(std::uint32_t tag, unsigned threads);

// ---- the checkers ---------------------------------------------------------------------------------

enum class violation_kind { overlap, device_mismatch, invalid_free, accounting, error };

// Every violation of the run. Thread-safe: add() is called by host threads, by the pool's invalid-free
// hook (on the freeing thread) and by the end-of-run checks.
class violation_log {
 public:
  static constexpr std::size_t kept = 16;

  void add(violation_kind kind, std::string line) {
    std::lock_guard lock(mutex_);
    ++total_;
    ++by_kind_[static_cast<std::size_t>(kind)];
    if (first_.size() < kept) first_.push_back(std::move(line));
  }
  // Counts violations whose description is added separately (device mismatches beyond the
  // backend's first few).
  void count_only(violation_kind kind, std::uint64_t n) {
    std::lock_guard lock(mutex_);
    total_ += n;
    by_kind_[static_cast<std::size_t>(kind)] += n;
  }

  [[nodiscard]] std::uint64_t total() const {
    std::lock_guard lock(mutex_);
    return total_;
  }
  [[nodiscard]] std::uint64_t of(violation_kind kind) const {
    std::lock_guard lock(mutex_);
    return by_kind_[static_cast<std::size_t>(kind)];
  }
  [[nodiscard]] std::vector<std::string> first() const {
    std::lock_guard lock(mutex_);
    return first_;
  }

 private:
  mutable std::mutex mutex_;
  std::uint64_t total_ = 0;              // GUARDED_BY(mutex_)
  std::uint64_t by_kind_[5] = {};        // GUARDED_BY(mutex_)
  std::vector<std::string> first_;       // GUARDED_BY(mutex_)
};

enum class retire_kind : std::uint8_t { same_stream, cross_stream, handed_off, immediate };

// One allocation as the shadow map and its history know it.
struct block_record {
  std::uintptr_t start = 0;
  std::size_t bytes = 0;
  std::uint32_t tag = 0;
  unsigned thread = 0;  // allocated by
  unsigned stream = 0;  // allocated on, and used on until retired
  // Set when released.
  unsigned freed_by = 0;  // a thread index, or `threads` for the main thread's final drain
  unsigned freed_on = 0;
  retire_kind how = retire_kind::same_stream;
};

// Live [start, start + bytes) ranges, and a history of retired ones to describe device mismatches,
// which are only read back at the end (reading them during the run would synchronize the device).
// The history keeps the first `history_size` retired blocks, because the device reports its first
// mismatches and a broken pool usually shows early, and the latest `history_size`. A mismatch whose
// block is in neither is still described by its pointer, size and the two tags' threads.
// One mutex: correctness before speed; pool calls happen outside it, so it does not serialize the pool.
class shadow_map {
 public:
  static constexpr std::size_t history_size = std::size_t{1} << 16;

  // Claims b's range. On overlap the range is not claimed and the live record in the way is returned.
  std::optional<block_record> claim(const block_record& b) {
    std::lock_guard lock(mutex_);
    const std::uintptr_t end = b.start + b.bytes;
    auto next = live_.upper_bound(b.start);  // first live range starting after b.start
    if (next != live_.end() && next->first < end) return next->second;
    if (next != live_.begin()) {
      const block_record& before = std::prev(next)->second;
      if (before.start + before.bytes > b.start) return before;
    }
    live_.emplace_hint(next, b.start, b);
    live_bytes_ += b.bytes;
    peak_bytes_ = std::max(peak_bytes_, live_bytes_);
    peak_blocks_ = std::max(peak_blocks_, live_.size());
    return std::nullopt;
  }

  // Releases the range starting at `start` and files it in the history; false if it was not live
  // (a harness bug: only claimed ranges are released).
  bool release(std::uintptr_t start, unsigned freed_by, unsigned freed_on, retire_kind how) {
    std::lock_guard lock(mutex_);
    const auto it = live_.find(start);
    if (it == live_.end()) return false;
    block_record& r = it->second;
    r.freed_by = freed_by;
    r.freed_on = freed_on;
    r.how = how;
    live_bytes_ -= r.bytes;
    if (first_retired_.size() < history_size) {
      first_retired_.push_back(r);
    } else if (latest_retired_.size() < history_size) {
      latest_retired_.push_back(r);
    } else {
      latest_retired_[latest_next_] = r;
      latest_next_ = (latest_next_ + 1) % history_size;
    }
    live_.erase(it);
    return true;
  }

  struct totals {
    std::size_t blocks = 0, bytes = 0, peak_blocks = 0, peak_bytes = 0;
  };
  [[nodiscard]] totals now() const {
    std::lock_guard lock(mutex_);
    return {live_.size(), live_bytes_, peak_blocks_, peak_bytes_};
  }

  // The most recent retired allocation with this tag that the history still holds.
  [[nodiscard]] std::optional<block_record> retired(std::uint32_t tag) const {
    std::lock_guard lock(mutex_);
    const std::size_t n = latest_retired_.size();
    for (std::size_t i = 0; i < n; ++i) {
      const block_record& r = latest_retired_[(latest_next_ + n - 1 - i) % n];
      if (r.tag == tag) return r;
    }
    for (auto r = first_retired_.rbegin(); r != first_retired_.rend(); ++r) {
      if (r->tag == tag) return *r;
    }
    return std::nullopt;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, block_record> live_;  // by start; GUARDED_BY(mutex_)
  std::size_t live_bytes_ = 0;                   // GUARDED_BY(mutex_)
  std::size_t peak_bytes_ = 0;                   // GUARDED_BY(mutex_)
  std::size_t peak_blocks_ = 0;                  // GUARDED_BY(mutex_)
  std::vector<block_record> first_retired_;      // GUARDED_BY(mutex_)
  std::vector<block_record> latest_retired_;     // a ring once full; GUARDED_BY(mutex_)
  std::size_t latest_next_ = 0;                  // oldest entry of the full ring; GUARDED_BY(mutex_)
};

// "thread 3", or "the main thread" for index `threads`.
[[nodiscard]] std::string describe_thread(unsigned thread, unsigned threads);
// Who allocated and freed a retired block, where, and how it was retired.
[[nodiscard]] std::string describe_retired(const block_record& r, unsigned threads);

// The pool's invalid-free hook (pool_options::on_invalid_free); context is the violation_log.
void on_invalid_free(const void* p, invalid_free_reason reason, void* context);

// After every block was freed, every stream flushed, the device synchronized and trim(): nothing
// in use, nothing pending, and per class free + cached + pending + in_use == capacity.
void check_accounting(const pool_stats& st, violation_log& violations);

// Each mismatch the device saw, described with the history of the two tags' blocks.
void report_device_mismatches(const verify_report& report, const shadow_map& shadow, unsigned threads,
                              violation_log& violations);

}  // namespace cudapool::stress
