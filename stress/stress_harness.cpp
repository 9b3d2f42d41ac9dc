// stress_harness.cpp - see stress_harness.hpp for the glossary.
//
// Layout: configuration parsing; deterministic random numbers; the checkers (violation log, shadow
// map); the fault decorators; the host thread (`worker`); run_stress, which sets up, monitors, tears
// down and does the end-of-run accounting; the report.
//
// Why the end of a run is ordered the way it is: every thread verifies and frees what it holds, the
// main thread frees what is still in the hand-off queues, every stream is flushed (the pool records
// the event of its open epoch), the device is synchronized, trim() reclaims the completed epochs.
// Only then is "nothing in use, nothing pending, the class equations hold" a fair check. Streams are
// destroyed after they were flushed (the pool's stream contract), the pool after that, and then the
// backend must hold no device memory at all.

#include "stress_harness.hpp"

#include <concurrentqueue/concurrentqueue.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <thread>
#include <utility>

#include "cudapool/any_pool.hpp"
#include "cudapool/backend.hpp"
#include "cudapool/errors.hpp"
#include "cudapool/options.hpp"
#include "cudapool/types.hpp"
#include "registry.hpp"

namespace cudapool::stress {

// ---- configuration ------------------------------------------------------------------------------

namespace {

constexpr unsigned max_threads = 4095;  // (thread + 1) fits the tag's 12 high bits
constexpr unsigned max_streams = 1024;
constexpr double default_duration_seconds = 10.0;

std::string format_double(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

bool is_fraction(double v) noexcept { return v >= 0.0 && v <= 1.0; }  // false for NaN

template <class T>
bool parse_number(std::string_view text, T& value) noexcept {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc{} && ptr == end;
}

}  // namespace

std::string_view to_string(backend_choice b) noexcept {
  switch (b) {
    case backend_choice::automatic:
      return "auto";
    case backend_choice::cuda:
      return "cuda";
    case backend_choice::sim:
      return "sim";
  }
  return "?";
}

std::string_view to_string(fault f) noexcept {
  switch (f) {
    case fault::none:
      return "none";
    case fault::early_reuse:
      return "early-reuse";
    case fault::double_handout:
      return "double-handout";
  }
  return "?";
}

backend_choice parse_backend_choice(std::string_view text) {
  for (backend_choice b : {backend_choice::automatic, backend_choice::cuda, backend_choice::sim}) {
    if (text == to_string(b)) return b;
  }
  throw config_error("--backend: unknown backend '" + std::string(text) + "' (expected auto, cuda or sim)");
}

std::string_view to_string(pool_options::transfer_layer l) noexcept {
  switch (l) {
    case pool_options::transfer_layer::concurrent_queue:
      return "queue";
    case pool_options::transfer_layer::mutex_batches:
      return "mutex";
    case pool_options::transfer_layer::lockfree_stack:
      return "stack";
  }
  return "?";
}

pool_options::transfer_layer parse_transfer_layer(std::string_view text) {
  using layer = pool_options::transfer_layer;
  for (layer l : {layer::concurrent_queue, layer::mutex_batches, layer::lockfree_stack}) {
    if (text == to_string(l)) return l;
  }
  throw config_error("--tls-transfer: unknown layer '" + std::string(text) + "' (expected queue, mutex or stack)");
}

fault parse_fault(std::string_view text) {
  for (fault f : {fault::none, fault::early_reuse, fault::double_handout}) {
    if (text == to_string(f)) return f;
  }
  throw config_error("--inject: unknown fault '" + std::string(text) +
                     "' (expected none, early-reuse or double-handout)");
}

std::vector<trace_record> load_trace(const std::string& path) {
  const std::string where = "--sizes=trace:" + path;
  std::ifstream in(path);
  if (!in) throw config_error(where + ": cannot read the file: " + std::strerror(errno));
  std::vector<trace_record> records;
  bool any_allocation = false;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::vector<std::string_view> fields;
    for (std::string_view rest(line.data() + first, line.size() - first);;) {
      const std::size_t comma = rest.find(',');
      fields.push_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (fields.size() == 4 && fields[0] == "op") continue;  // the CSV header
    const auto bad = [&](const std::string& why) {
      return config_error(where + ": line " + std::to_string(number) + ": " + why + ": '" + line + "'");
    };
    if (fields.size() != 4) throw bad("expected op,id,bytes,stream");
    trace_record r;
    if (fields[0] == "a") {
      r.allocate = true;
    } else if (fields[0] != "f") {
      throw bad("op must be a or f");
    }
    if (!parse_number(fields[1], r.id)) throw bad("id is not a number");
    if (!parse_number(fields[2], r.bytes)) throw bad("bytes is not a number");
    if (!parse_number(fields[3], r.stream)) throw bad("stream is not a number");
    if (r.allocate && r.bytes == 0) throw bad("an allocation of 0 bytes");
    any_allocation = any_allocation || r.allocate;
    records.push_back(r);
  }
  if (in.bad()) throw config_error(where + ": reading the file failed");
  if (!any_allocation) throw config_error(where + ": the trace has no allocations");
  return records;
}

size_spec parse_size_spec(std::string_view text) {
  size_spec spec;
  spec.text = std::string(text);
  if (text == "classes") return spec;
  if (text == "mixed") {
    spec.what = size_spec::kind::mixed;
    return spec;
  }
  if (text.starts_with("fixed:")) {
    std::string_view number = text.substr(6);
    std::size_t unit = 1;
    if (!number.empty()) {
      switch (number.back()) {
        case 'K': case 'k': unit = std::size_t{1} << 10; break;
        case 'M': case 'm': unit = std::size_t{1} << 20; break;
        case 'G': case 'g': unit = std::size_t{1} << 30; break;
        default: break;
      }
      if (unit != 1) number.remove_suffix(1);
    }
    std::size_t count = 0;
    if (!parse_number(number, count) || count > (std::size_t{1} << 40) / unit) {
      throw config_error("--sizes=" + spec.text + ": '" + std::string(text.substr(6)) +
                         "' is not a byte count (a number, optionally followed by K, M or G)");
    }
    spec.what = size_spec::kind::fixed;
    spec.fixed_bytes = count * unit;
    return spec;
  }
  if (text.starts_with("trace:")) {
    spec.what = size_spec::kind::trace;
    spec.trace_path = std::string(text.substr(6));
    if (spec.trace_path.empty()) throw config_error("--sizes=trace:FILE: the file name is missing");
    spec.trace = load_trace(spec.trace_path);
    return spec;
  }
  throw config_error("--sizes: unknown size spec '" + spec.text + "' (expected fixed:BYTES, classes, mixed or trace:FILE)");
}

void validate(const stress_config& c) {
  const std::vector<std::string> variants = available_variants();
  if (std::find(variants.begin(), variants.end(), c.variant) == variants.end()) {
    std::string list;
    for (const std::string& v : variants) list += (list.empty() ? "" : ", ") + v;
    throw config_error("--variant: unknown or unbuilt variant '" + c.variant + "'; available: " + list);
  }
  if (c.threads < 1 || c.threads > max_threads) {
    throw config_error("--threads must be in [1, " + std::to_string(max_threads) + "], got " + std::to_string(c.threads));
  }
  if (c.streams < 1 || c.streams > max_streams) {
    throw config_error("--streams must be in [1, " + std::to_string(max_streams) + "], got " + std::to_string(c.streams));
  }
  if (c.duration_seconds && c.ops) throw config_error("--duration and --ops are mutually exclusive");
  if (c.duration_seconds && !(*c.duration_seconds > 0.0 && std::isfinite(*c.duration_seconds))) {
    throw config_error("--duration must be a positive number of seconds, got " + format_double(*c.duration_seconds));
  }
  if (c.ops && *c.ops == 0) throw config_error("--ops must be at least 1");
  if (!is_fraction(c.handoff)) throw config_error("--handoff must be a fraction in [0, 1], got " + format_double(c.handoff));
  if (!is_fraction(c.cross_stream)) {
    throw config_error("--cross-stream must be a fraction in [0, 1], got " + format_double(c.cross_stream));
  }
  if (c.sizes.what == size_spec::kind::fixed && c.sizes.fixed_bytes < 4) {
    throw config_error("--sizes=fixed:BYTES needs at least 4 bytes (blocks are stamped in 32-bit words)");
  }
  if (c.sizes.what == size_spec::kind::trace &&
      std::none_of(c.sizes.trace.begin(), c.sizes.trace.end(), [](const trace_record& r) { return r.allocate; })) {
    throw config_error("--sizes=trace:" + c.sizes.trace_path + ": the trace has no allocations");
  }
  if (c.max_live_blocks < 1) throw config_error("max_live_blocks must be at least 1");
  if (c.sim_max_latency.count() < 0) throw config_error("sim_max_latency must not be negative");
}

namespace {

// ---- deterministic random numbers ---------------------------------------------------------------

std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__extension__ using uint128 = unsigned __int128;  // GCC and Clang; __extension__: not ISO C++

// xoshiro256** with our own uniform draws: the std distributions differ between standard
// libraries, and a failing seed must replay the same decisions wherever it is rerun.
class rng {
 public:
  explicit rng(std::uint64_t seed) noexcept {
    for (std::uint64_t& w : s_) w = splitmix64(seed);
  }

  std::uint64_t next() noexcept {
    const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), n > 0: Lemire's multiply-shift with rejection, unbiased.
  std::uint64_t below(std::uint64_t n) noexcept {
    uint128 m = static_cast<uint128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<uint128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Uniform in [lo, hi].
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi) noexcept { return lo + below(hi - lo + 1); }
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) noexcept { return unit() < p; }

 private:
  std::uint64_t s_[4];
};

// ---- tags ---------------------------------------------------------------------------------------

constexpr unsigned tag_counter_bits = 20;
constexpr std::uint32_t tag_counter_mask = (std::uint32_t{1} << tag_counter_bits) - 1;

// The counter wraps after 2^20 allocations of one thread; a tag then repeats, but never while the
// allocation that first had it could still be verified (a thread holds at most a few hundred blocks).
std::uint32_t make_tag(unsigned thread, std::uint64_t counter) noexcept {
  return (static_cast<std::uint32_t>(thread) + 1) << tag_counter_bits |
         (static_cast<std::uint32_t>(counter) & tag_counter_mask);
}

std::string describe_tag(std::uint32_t tag, unsigned threads) {
  char text[96];
  const std::uint32_t owner = tag >> tag_counter_bits;
  if (owner >= 1 && owner <= threads) {
    std::snprintf(text, sizeof text, "0x%08x (thread %u, allocation #%u)", tag, owner - 1, tag & tag_counter_mask);
  } else {
    std::snprintf(text, sizeof text, "0x%08x (not a stress tag)", tag);
  }
  return text;
}

std::size_t round_down4(std::size_t bytes) noexcept { return bytes & ~std::size_t{3}; }

std::string format_bytes(double bytes) {
  char text[32];
  if (bytes >= double(1 << 30)) {
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(1 << 30));
  } else if (bytes >= double(1 << 20)) {
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / double(1 << 20));
  } else if (bytes >= double(1 << 10)) {
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / double(1 << 10));
  } else {
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  }
  return text;
}

std::string format_pointer(std::uintptr_t p) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%012llx", static_cast<unsigned long long>(p));
  return text;
}

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

// The pool's invalid-free hook. The harness never frees a block twice nor a pointer it did not get
// from the pool, so every report is a violation (or the consequence of one).
void on_invalid_free(const void* p, invalid_free_reason reason, void* context) {
  static_cast<violation_log*>(context)->add(
      violation_kind::invalid_free, "invalid free reported by the pool: " +
                                        format_pointer(reinterpret_cast<std::uintptr_t>(p)) + ": " + to_string(reason));
}

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

std::string describe_thread(unsigned thread, unsigned threads) {
  return thread == threads ? "the main thread" : "thread " + std::to_string(thread);
}

std::string describe_retired(const block_record& r, unsigned threads) {
  std::string text = "allocated by thread " + std::to_string(r.thread) + " on stream #" + std::to_string(r.stream) +
                     ", freed by " + describe_thread(r.freed_by, threads) + " on stream #" + std::to_string(r.freed_on);
  switch (r.how) {
    case retire_kind::same_stream:
      break;
    case retire_kind::cross_stream:
      text += " (cross-stream free)";
      break;
    case retire_kind::handed_off:
      text += " (after a hand-off)";
      break;
    case retire_kind::immediate:
      text += " (immediate free after a host wait)";
      break;
  }
  return text;
}

// ---- the fault decorators -----------------------------------------------------------------------

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

// ---- sizes --------------------------------------------------------------------------------------

class size_source {
 public:
  size_source(const size_spec& spec, std::vector<std::size_t> class_bytes, double trace_scale)
      : spec_(spec), class_bytes_(std::move(class_bytes)), trace_scale_(trace_scale) {}

  // classes / fixed.
  std::size_t draw(rng& r) const {
    if (spec_.what == size_spec::kind::fixed) return spec_.fixed_bytes;
    if (spec_.what == size_spec::kind::mixed && r.below(64) == 0) {
      const std::size_t lo = std::size_t{1} << (20 + r.below(6));  // 1 .. 32 MiB, then up to twice that
      return r.between(lo, 2 * lo);
    }
    const std::size_t largest = class_bytes_.back();
    if (r.below(100) == 0) return r.between(2 * largest, 8 * largest);  // the large path
    const std::size_t c = r.below(class_bytes_.size());
    const std::size_t hi = class_bytes_[c];
    if (r.below(4) == 0) return hi;  // exactly at the class boundary
    const std::size_t lo = c == 0 ? 4 : class_bytes_[c - 1] + 1;
    return r.between(lo, hi);
  }

  // trace: scaled to the memory budget, never below one stamped word.
  [[nodiscard]] std::size_t scaled(std::size_t trace_bytes) const noexcept {
    if (trace_scale_ >= 1.0) return trace_bytes;
    return std::max<std::size_t>(4, static_cast<std::size_t>(static_cast<double>(trace_bytes) * trace_scale_));
  }

 private:
  const size_spec& spec_;
  const std::vector<std::size_t> class_bytes_;
  const double trace_scale_;
};

// The most bytes a trace holds live at once, replayed in order.
std::size_t trace_peak_live(const std::vector<trace_record>& trace) {
  std::map<std::uint64_t, std::size_t> live;
  std::size_t now = 0, peak = 0;
  for (const trace_record& r : trace) {
    if (r.allocate) {
      live[r.id] += r.bytes;
      now += r.bytes;
      peak = std::max(peak, now);
    } else if (const auto it = live.find(r.id); it != live.end()) {
      now -= it->second;
      live.erase(it);
    }
  }
  return peak;
}

// ---- the host threads ---------------------------------------------------------------------------

struct live_block {
  void* p = nullptr;
  std::size_t bytes = 0;
  std::uint32_t tag = 0;
  unsigned stream = 0;  // index into run_context::streams: where it was allocated and used
  bool traced = false;  // from a trace `a` line with this id
  std::uint64_t trace_id = 0;
};

struct handoff {
  live_block block;
  event_handle ready = nullptr;  // recorded on block.stream after the producer's last use
};
using inbox = moodycamel::ConcurrentQueue<handoff>;

struct run_context {
  const stress_config& config;
  any_pool& pool;
  backend& device;
  std::vector<stream_ref> streams;
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

  static void bump(std::atomic<std::uint64_t>& c) noexcept {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

// Backpressure. Host threads enqueue device work much faster than the device (the sim device
// under TSan above all) runs it; unbounded, the queues and the blocks pending behind them grow
// without limit. Every `checkpoint_steps` steps a thread records an event on each stream it
// enqueued on since its last checkpoint, and waits for the checkpoints older than the last
// `checkpoints_ahead`. Its own work thus never runs more than ~3 x 16 steps ahead of the device:
// still far enough that every free is stream-ordered behind real, queued work.
constexpr std::uint64_t checkpoint_steps = 16;
constexpr std::size_t checkpoints_ahead = 2;
// One operation in 16 is preceded by a spin of 1..100 us on its stream, which holds back everything
// queued behind it there: blocks freed on that stream stay "in use" on the device for longer.
constexpr std::uint64_t spin_one_in = 16;
constexpr std::uint64_t max_spin_us = 100;
constexpr std::uint64_t immediate_free_one_in = 32;
constexpr std::size_t receive_batch = 8;

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
        touched_(ctx.streams.size(), false),
        cursor_(trace_offset) {}

  // The thread body. Nothing escapes: a failure is a violation, and the thread still gives back
  // what it holds.
  void run() noexcept {
    try {
      while (!done()) {
        if (ctx_.config.sizes.what == size_spec::kind::trace) {
          trace_step();
        } else {
          step();
        }
        receive();
        if (++steps_ % checkpoint_steps == 0) checkpoint();
      }
    } catch (const std::exception& e) {
      ctx_.violations.add(violation_kind::error, "thread " + std::to_string(index_) + " stopped: " + e.what());
    }
    try {
      while (!live_.empty()) retire(live_.size() - 1, /*may_transfer=*/false);
      while (!checkpoints_.empty()) wait_oldest_checkpoint();
    } catch (const std::exception& e) {
      ctx_.violations.add(violation_kind::error,
                          "thread " + std::to_string(index_) + " could not give back its blocks: " + e.what());
    }
    ctx_.finished.fetch_add(1, std::memory_order_relaxed);
  }

  worker_counters counters;

 private:
  [[nodiscard]] bool done() const noexcept {
    if (ctx_.config.ops) return allocated_ >= quota_;
    return ctx_.stop.load(std::memory_order_relaxed);
  }

  // classes / fixed: allocate with probability (max - held) / max, else retire a random block. A
  // thread therefore holds max/2 blocks on average and blocks live a random number of steps.
  void step() {
    const std::size_t held = live_.size();
    const std::size_t max = ctx_.config.max_live_blocks;
    if (held == 0 || (held < max && rng_.below(max) >= held)) {
      allocate(ctx_.sizes.draw(rng_), std::nullopt);
    } else {
      retire(rng_.below(held), /*may_transfer=*/true);
    }
  }

  // trace: one trace line. Each thread starts at its own offset and wraps around; what it still holds
  // at the end of a pass (allocations whose free it has not seen) is freed there.
  void trace_step() {
    const std::vector<trace_record>& trace = ctx_.config.sizes.trace;
    const trace_record& r = trace[cursor_];
    cursor_ = (cursor_ + 1) % trace.size();
    if (r.allocate) {
      allocate(ctx_.sizes.scaled(r.bytes), r.id);
    } else {
      const auto it = std::find_if(live_.begin(), live_.end(),
                                   [&](const live_block& b) { return b.traced && b.trace_id == r.id; });
      if (it != live_.end()) retire(static_cast<std::size_t>(it - live_.begin()), /*may_transfer=*/true);
    }
    if (cursor_ == 0) {
      while (!live_.empty()) retire(live_.size() - 1, /*may_transfer=*/true);
    }
  }

  void allocate(std::size_t bytes, std::optional<std::uint64_t> trace_id) {
    const auto s = static_cast<unsigned>(rng_.below(ctx_.streams.size()));
    const std::uint32_t tag = make_tag(index_, allocated_++);
    void* p = ctx_.pool.allocate(bytes, ctx_.streams[s]);
    worker_counters::bump(counters.allocations);
    if (p == nullptr) {
      ctx_.violations.add(violation_kind::error, "allocate(" + std::to_string(bytes) + ") returned nullptr");
      return;
    }
    const block_record mine{.start = reinterpret_cast<std::uintptr_t>(p), .bytes = bytes, .tag = tag,
                            .thread = index_, .stream = s};
    if (const std::optional<block_record> other = ctx_.shadow.claim(mine)) {
      // Neither stamp nor free it: the harness cannot tell which owner is the real one, and the
      // block it overlaps is still checked and freed by its owner. (The pool may then count this
      // one as in use at the end, a consequence of the violation already reported.)
      worker_counters::bump(counters.quarantined);
      ctx_.violations.add(violation_kind::overlap,
                          "overlapping hand-out: thread " + std::to_string(index_) + " got [" +
                              format_pointer(mine.start) + ", +" + std::to_string(bytes) + " B) on stream #" +
                              std::to_string(s) + " while [" + format_pointer(other->start) + ", +" +
                              std::to_string(other->bytes) + " B) is live: allocated by thread " +
                              std::to_string(other->thread) + " on stream #" + std::to_string(other->stream) +
                              ", tag " + describe_tag(other->tag, ctx_.config.threads));
      return;
    }
    if (mine.start % min_alignment != 0) {
      ctx_.violations.add(violation_kind::error, "misaligned block: thread " + std::to_string(index_) + " got " +
                                                     format_pointer(mine.start) + " for " + std::to_string(bytes) +
                                                     " B, not 256-byte aligned");
    }
    maybe_spin(s, rng_);
    ctx_.device.fill(ctx_.streams[s], p, round_down4(bytes), tag);
    touch(s);
    live_.push_back({p, bytes, tag, s, trace_id.has_value(), trace_id.value_or(0)});
  }

  // Retires live_[i]. At the end of a run (may_transfer false) every block is simply verified and
  // freed on its own stream.
  void retire(std::size_t i, bool may_transfer) {
    const live_block b = live_[i];
    live_[i] = live_.back();
    live_.pop_back();
    if (!may_transfer) {
      free_block(b, b.stream, retire_kind::same_stream, rng_);
      return;
    }
    if (rng_.chance(ctx_.config.handoff)) {
      hand_off(b);
      return;
    }
    if (ctx_.streams.size() > 1 && rng_.chance(ctx_.config.cross_stream)) {
      auto other = static_cast<unsigned>(rng_.below(ctx_.streams.size() - 1));
      if (other >= b.stream) ++other;
      declare_use(b.stream, other);
      free_block(b, other, retire_kind::cross_stream, rng_);
      worker_counters::bump(counters.cross_stream_frees);
      return;
    }
    if (rng_.below(immediate_free_one_in) == 0) {
      free_block_now(b);
      return;
    }
    free_block(b, b.stream, retire_kind::same_stream, rng_);
  }

  // The block was used on `used` and will be freed on `freeing`: make `freeing` wait for the use,
  // so that deallocate(p, freeing) covers it (the core contract orders a free only after work
  // enqueued on the freeing stream). A stream wait captures the event's latest record when it is
  // enqueued (cudaStreamWaitEvent; the sim backend copies the record), so the event can go back to
  // the backend's pool at once.
  void declare_use(unsigned used, unsigned freeing) {
    const event_handle e = ctx_.device.acquire_event();
    ctx_.device.record(e, ctx_.streams[used]);
    ctx_.device.stream_wait(ctx_.streams[freeing], e);
    ctx_.device.release_event(e);
    worker_counters::bump(counters.events);
    touch(used);
    touch(freeing);
  }

  // Verify the stamp on `s` in stream order, then free on `s`. The shadow range is released before
  // deallocate: once the pool has the block, another thread may get it and claim it.
  void free_block(const live_block& b, unsigned s, retire_kind how, rng& r) {
    maybe_spin(s, r);
    ctx_.device.verify(ctx_.streams[s], b.p, round_down4(b.bytes), b.tag);
    touch(s);
    if (!ctx_.shadow.release(reinterpret_cast<std::uintptr_t>(b.p), index_, s, how)) {
      ctx_.violations.add(violation_kind::error, "harness: " + format_pointer(reinterpret_cast<std::uintptr_t>(b.p)) +
                                                     " was not in the shadow map");
    }
    ctx_.pool.deallocate(b.p, ctx_.streams[s]);
    worker_counters::bump(counters.frees);
  }

  // Verify on the block's stream, wait on the host until the stream has passed the verify, then
  // free without a stream: nothing on the device uses the block any more.
  void free_block_now(const live_block& b) {
    const stream_ref s = ctx_.streams[b.stream];
    ctx_.device.verify(s, b.p, round_down4(b.bytes), b.tag);
    const event_handle done = ctx_.device.acquire_event();
    try {
      ctx_.device.record(done, s);
      worker_counters::bump(counters.events);
      ctx_.device.wait(done);
    } catch (...) {
      ctx_.device.release_event(done);
      throw;
    }
    ctx_.device.release_event(done);
    if (!ctx_.shadow.release(reinterpret_cast<std::uintptr_t>(b.p), index_, b.stream, retire_kind::immediate)) {
      ctx_.violations.add(violation_kind::error, "harness: " + format_pointer(reinterpret_cast<std::uintptr_t>(b.p)) +
                                                     " was not in the shadow map");
    }
    ctx_.pool.deallocate(b.p);
    worker_counters::bump(counters.frees);
    worker_counters::bump(counters.immediate_frees);
  }

  void hand_off(const live_block& b) {
    const std::size_t threads = ctx_.inboxes.size();
    std::size_t to = index_;  // a lone thread hands blocks to itself: same event + wait path
    if (threads > 1) {
      to = rng_.below(threads - 1);
      if (to >= index_) ++to;
    }
    const event_handle ready = ctx_.device.acquire_event();
    ctx_.device.record(ready, ctx_.streams[b.stream]);
    worker_counters::bump(counters.events);
    touch(b.stream);
    if (!ctx_.inboxes[to]->enqueue(handoff{b, ready})) {  // only when out of host memory
      ctx_.device.release_event(ready);
      free_block(b, b.stream, retire_kind::same_stream, rng_);
      return;
    }
    worker_counters::bump(counters.handoffs);
  }

  // Blocks handed to this thread: make a stream of ours wait for the producer's work, then verify
  // and free there.
  void receive() {
    handoff batch[receive_batch];
    const std::size_t n = ctx_.inboxes[index_]->try_dequeue_bulk(batch, receive_batch);
    for (std::size_t i = 0; i < n; ++i) {
      const auto s = static_cast<unsigned>(receive_rng_.below(ctx_.streams.size()));
      ctx_.device.stream_wait(ctx_.streams[s], batch[i].ready);
      ctx_.device.release_event(batch[i].ready);  // the wait holds the record (see declare_use)
      free_block(batch[i].block, s, retire_kind::handed_off, receive_rng_);
    }
  }

  void maybe_spin(unsigned s, rng& r) {
    if (r.below(spin_one_in) != 0) return;
    ctx_.device.spin(ctx_.streams[s], std::chrono::microseconds(r.between(1, max_spin_us)));
    touch(s);
  }

  void touch(unsigned s) {
    if (touched_[s]) return;
    touched_[s] = true;
    touched_list_.push_back(s);
  }

  void checkpoint() {
    std::vector<event_handle> group;
    group.reserve(touched_list_.size());
    try {
      for (const unsigned s : touched_list_) {
        group.push_back(ctx_.device.acquire_event());
        ctx_.device.record(group.back(), ctx_.streams[s]);
        worker_counters::bump(counters.events);
      }
    } catch (...) {
      // An event that was acquired but not recorded counts as complete (never recorded).
      checkpoints_.push_back(std::move(group));
      throw;
    }
    for (const unsigned s : touched_list_) touched_[s] = false;
    touched_list_.clear();
    checkpoints_.push_back(std::move(group));
    while (checkpoints_.size() > checkpoints_ahead) wait_oldest_checkpoint();
  }

  void wait_oldest_checkpoint() {
    for (const event_handle e : checkpoints_.front()) {
      ctx_.device.wait(e);
      ctx_.device.release_event(e);
    }
    checkpoints_.pop_front();
  }

  run_context& ctx_;
  const unsigned index_;
  const std::uint64_t quota_;  // allocations to make with --ops
  rng rng_;
  rng receive_rng_;
  std::uint64_t allocated_ = 0;  // also the tag counter
  std::uint64_t steps_ = 0;
  std::vector<live_block> live_;
  std::vector<bool> touched_;  // by stream, since the last checkpoint
  std::vector<unsigned> touched_list_;
  std::deque<std::vector<event_handle>> checkpoints_;
  std::size_t cursor_ = 0;  // next trace line
};

// ---- setup and the end-of-run checks ------------------------------------------------------------

struct opened_backend {
  std::shared_ptr<backend> device;
  std::string note;
};

opened_backend open_backend(const stress_config& c) {
  bool use_cuda = c.backend == backend_choice::cuda;
  std::string note;
  if (c.backend == backend_choice::automatic) {
    const int gpus = cuda_device_count();
    use_cuda = gpus > 0;
    note = use_cuda                ? "auto: " + std::to_string(gpus) + " CUDA device(s), using device 0"
           : cuda_backend_built() ? "auto: no CUDA device found, using the simulated device"
                                  : "auto: built without CUDA, using the simulated device";
  }
  if (use_cuda) {
    try {
      return {make_cuda_backend(0), note};
    } catch (const std::exception& e) {
      throw config_error(std::string("--backend=cuda: ") + e.what());
    }
  }
  sim_options options;
  options.seed = c.seed;
  options.max_latency = c.sim_max_latency;
  return {std::shared_ptr<backend>(make_sim_backend(options)), note};
}

// After every block was freed, every stream flushed, the device synchronized and trim(): nothing
// in use, nothing pending, and per class free + cached + pending + in_use == capacity.
void check_accounting(const pool_stats& st, violation_log& violations) {
  const auto fail = [&](const std::string& what) {
    violations.add(violation_kind::accounting, "accounting after every block was freed: " + what);
  };
  if (st.in_use_bytes != 0) fail("in_use_bytes = " + std::to_string(st.in_use_bytes) + ", expected 0 (a leak)");
  if (st.allocs != st.frees) {
    fail("allocs = " + std::to_string(st.allocs) + " but frees = " + std::to_string(st.frees));
  }
  if (st.pending_bytes != 0 || st.pending_epochs != 0) {
    fail("pending_bytes = " + std::to_string(st.pending_bytes) + ", pending_epochs = " +
         std::to_string(st.pending_epochs) + " after flushing every stream, synchronizing and trim()");
  }
  const heap_stats& h = st.heap;
  if (h.large_count != 0 || h.pending_bytes != 0) {
    fail("large allocations live = " + std::to_string(h.large_count) + ", heap bytes pending = " +
         std::to_string(h.pending_bytes));
  }
  if (h.mapped_bytes != h.slab_bytes + h.free_bytes + h.large_bytes) {
    fail("heap: mapped " + std::to_string(h.mapped_bytes) + " bytes but slabs " + std::to_string(h.slab_bytes) +
         " + free " + std::to_string(h.free_bytes) + " + large " + std::to_string(h.large_bytes));
  }
  for (std::size_t c = 0; c < st.classes.size(); ++c) {
    const class_stats& k = st.classes[c];
    if (k.free_blocks + k.cached_blocks + k.pending_blocks + k.in_use_blocks != k.capacity_blocks) {
      fail("class " + std::to_string(c) + " (" + std::to_string(k.block_bytes) + " B): free " +
           std::to_string(k.free_blocks) + " + cached " + std::to_string(k.cached_blocks) + " + pending " +
           std::to_string(k.pending_blocks) + " + in_use " + std::to_string(k.in_use_blocks) +
           " != capacity " + std::to_string(k.capacity_blocks));
    }
  }
}

void report_device_mismatches(const verify_report& report, const shadow_map& shadow, unsigned threads,
                              violation_log& violations) {
  for (const verify_mismatch& m : report.first) {
    std::string line = "device mismatch: verify of [" + format_pointer(m.block) + ", +" + std::to_string(m.bytes) +
                       " B) expected " + describe_tag(m.expected, threads) + " but word " +
                       std::to_string(m.word_offset) + " held " + describe_tag(m.found, threads);
    if (const auto mine = shadow.retired(m.expected)) line += "; the block was " + describe_retired(*mine, threads);
    if (const auto other = shadow.retired(m.found)) {
      line += "; the writer's block [" + format_pointer(other->start) + ", +" + std::to_string(other->bytes) +
              " B) was " + describe_retired(*other, threads);
    }
    violations.add(violation_kind::device_mismatch, std::move(line));
  }
  if (report.mismatched_ranges > report.first.size()) {
    violations.count_only(violation_kind::device_mismatch, report.mismatched_ranges - report.first.size());
  }
}

std::string progress_line(double elapsed, double ops_per_second, const shadow_map::totals& live,
                          std::size_t pending_epochs, std::uint64_t violations) {
  char text[160];
  std::snprintf(text, sizeof text, "[%7.1fs] %10.0f ops/s  live %6zu blocks %11s  pending epochs %5zu  violations %llu",
                elapsed, ops_per_second, live.blocks, format_bytes(double(live.bytes)).c_str(), pending_epochs,
                static_cast<unsigned long long>(violations));
  return text;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(ch));
          out += esc;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

}  // namespace

// ---- the run ------------------------------------------------------------------------------------

stress_result run_stress(const stress_config& config, std::ostream& progress) {
  using clock = std::chrono::steady_clock;
  validate(config);

  stress_result result;
  result.variant = config.variant;
  if (config.variant == "tls") result.tls_transfer = to_string(config.tls_transfer);
  result.threads = config.threads;
  result.streams = config.streams;
  result.seed = config.seed;
  result.sizes = config.sizes.text;
  result.inject = config.inject;

  opened_backend opened = open_backend(config);
  backend& device = *opened.device;
  result.backend = std::string(device.name());
  result.backend_note = opened.note;

  violation_log violations;  // outlives the pool, whose invalid-free hook writes to it
  shadow_map shadow;
  pool_options options;
  options.on_invalid_free = &on_invalid_free;
  options.invalid_free_context = &violations;
  options.tls_transfer = config.tls_transfer;
  std::unique_ptr<any_pool> pool = make_pool(config.variant, opened.device, options);
  double_handout_pool* doubler = nullptr;
  if (config.inject == fault::early_reuse) {
    pool = std::make_unique<early_reuse_pool>(std::move(pool));
  } else if (config.inject == fault::double_handout) {
    auto d = std::make_unique<double_handout_pool>(std::move(pool));
    doubler = d.get();
    pool = std::move(d);
  }

  std::vector<std::size_t> class_bytes;
  for (const class_stats& c : pool->stats().classes) class_bytes.push_back(c.block_bytes);
  if (class_bytes.empty()) class_bytes.push_back(min_alignment);  // every request takes the large path

  // Trace replay: each thread holds at most the trace's peak live bytes (it replays a subset of the
  // trace's allocations at each point), so scaling every size by budget / (threads x peak) bounds
  // the whole run's live memory while keeping the trace's size ratios and lifetimes.
  if (config.sizes.what == size_spec::kind::trace) {
    const std::size_t budget = config.trace_live_budget != 0 ? config.trace_live_budget
                               : result.backend == "sim"     ? std::size_t{1} << 30
                                                             : std::size_t{32} << 30;
    const double need = double(config.threads) * double(trace_peak_live(config.sizes.trace));
    result.trace_scale = need > double(budget) ? double(budget) / need : 1.0;
  }
  const size_source sizes(config.sizes, class_bytes, result.trace_scale);

  run_context ctx{.config = config, .pool = *pool, .device = device, .streams = {}, .sizes = sizes,
                  .shadow = shadow, .violations = violations, .inboxes = {}};
  for (unsigned i = 0; i < config.streams; ++i) ctx.streams.push_back(device.create_stream());
  for (unsigned i = 0; i < config.threads; ++i) ctx.inboxes.push_back(std::make_unique<inbox>());

  const std::uint64_t total_ops = config.ops.value_or(0);
  std::vector<std::unique_ptr<worker>> workers;
  for (unsigned i = 0; i < config.threads; ++i) {
    const std::uint64_t quota = total_ops / config.threads + (i < total_ops % config.threads ? 1 : 0);
    const std::size_t offset = config.sizes.trace.empty() ? 0 : std::size_t(i) * config.sizes.trace.size() / config.threads;
    workers.push_back(std::make_unique<worker>(ctx, i, quota, offset));
  }

  // The header is printed even without progress lines: it names the seed, and a run that a
  // sanitizer stops never reaches its summary.
  const double duration = config.duration_seconds.value_or(default_duration_seconds);
  {
    progress << "stress: variant " << config.variant << ", backend " << result.backend
             << (opened.note.empty() ? "" : " (" + opened.note + ")") << ", " << config.threads << " threads, "
             << config.streams << " streams, "
             << (config.ops ? std::to_string(*config.ops) + " allocations" : format_double(duration) + " s")
             << ", seed " << config.seed << ", sizes " << config.sizes.text
             << (config.inject != fault::none ? ", inject " + std::string(to_string(config.inject)) : "") << '\n';
    if (result.trace_scale < 1.0) {
      progress << "stress: trace sizes scaled by " << result.trace_scale << " to fit the memory budget\n";
    }
    progress << std::flush;
  }

  const auto total_ops_done = [&] {
    std::uint64_t n = 0;
    for (const auto& w : workers) {
      n += w->counters.allocations.load(std::memory_order_relaxed) + w->counters.frees.load(std::memory_order_relaxed);
    }
    return n;
  };

  // Run, and report progress from this thread.
  const clock::time_point start = clock::now();
  std::vector<std::thread> threads;
  threads.reserve(config.threads);
  for (const auto& w : workers) threads.emplace_back([&w] { w->run(); });
  const clock::time_point deadline =
      start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(duration));
  clock::time_point last_report = start;
  std::uint64_t ops_at_last_report = 0;
  while (ctx.finished.load(std::memory_order_relaxed) < config.threads) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const clock::time_point now = clock::now();
    if (!config.ops && now >= deadline) ctx.stop.store(true, std::memory_order_relaxed);
    if (config.progress && now - last_report >= std::chrono::seconds(1)) {
      const std::uint64_t ops = total_ops_done();
      const double interval = std::chrono::duration<double>(now - last_report).count();
      progress << progress_line(std::chrono::duration<double>(now - start).count(),
                                double(ops - ops_at_last_report) / interval, shadow.now(),
                                pool->stats().pending_epochs, violations.total())
               << '\n'
               << std::flush;
      last_report = now;
      ops_at_last_report = ops;
    }
  }
  for (std::thread& t : threads) t.join();
  result.seconds = std::chrono::duration<double>(clock::now() - start).count();

  // Blocks still in the hand-off queues: their event was recorded on the stream they were used on,
  // so verifying and freeing them on that same stream is in order without a wait.
  worker_counters drained;
  for (auto& box : ctx.inboxes) {
    handoff h;
    while (box->try_dequeue(h)) {
      const stream_ref s = ctx.streams[h.block.stream];
      device.verify(s, h.block.p, round_down4(h.block.bytes), h.block.tag);
      device.release_event(h.ready);
      if (!shadow.release(reinterpret_cast<std::uintptr_t>(h.block.p), config.threads, h.block.stream,
                          retire_kind::handed_off)) {
        violations.add(violation_kind::error, "harness: a handed-off block was not in the shadow map");
      }
      pool->deallocate(h.block.p, s);
      worker_counters::bump(drained.frees);
    }
  }
  if (const shadow_map::totals left = shadow.now(); left.blocks != 0) {
    violations.add(violation_kind::error, "harness: " + std::to_string(left.blocks) + " blocks still live after the drain");
  }

  for (const stream_ref s : ctx.streams) pool->retire_stream(s);  // the contract before destroying s
  device.synchronize_device();
  pool->trim();
  report_device_mismatches(device.verification_report(), shadow, config.threads, violations);
  result.final_stats = pool->stats();
  check_accounting(result.final_stats, violations);
  if (doubler != nullptr) result.faults_injected = doubler->injected();

  for (const stream_ref s : ctx.streams) device.destroy_stream(s);
  ctx.streams.clear();
  pool.reset();
  if (const std::size_t held = device.chunk_bytes(); held != 0) {
    violations.add(violation_kind::accounting, "device memory: " + std::to_string(held) +
                                                   " bytes still held in backend chunks after the pool was destroyed");
  }

  for (const auto& w : workers) {
    result.allocations += w->counters.allocations.load(std::memory_order_relaxed);
    result.frees += w->counters.frees.load(std::memory_order_relaxed);
    result.handoffs += w->counters.handoffs.load(std::memory_order_relaxed);
    result.cross_stream_frees += w->counters.cross_stream_frees.load(std::memory_order_relaxed);
    result.immediate_frees += w->counters.immediate_frees.load(std::memory_order_relaxed);
    result.stress_events_recorded += w->counters.events.load(std::memory_order_relaxed);
    result.quarantined += w->counters.quarantined.load(std::memory_order_relaxed);
  }
  result.frees += drained.frees.load(std::memory_order_relaxed);
  result.ops = result.allocations + result.frees;
  result.ops_per_second = result.seconds > 0 ? double(result.ops) / result.seconds : 0;
  const shadow_map::totals peak = shadow.now();
  result.peak_live_bytes = peak.peak_bytes;
  result.peak_live_blocks = peak.peak_blocks;
  result.violations = violations.total();
  result.overlaps = violations.of(violation_kind::overlap);
  result.device_mismatches = violations.of(violation_kind::device_mismatch);
  result.invalid_frees = violations.of(violation_kind::invalid_free);
  result.first_violations = violations.first();
  return result;
}

// ---- the report ---------------------------------------------------------------------------------

void print_summary(const stress_result& r, std::ostream& out) {
  const auto row = [&](std::string_view name, const std::string& value) {
    out << "  " << name << std::string(name.size() < 20 ? 20 - name.size() : 1, ' ') << value << '\n';
  };
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.0f", r.ops_per_second);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", r.seconds);
  out << "stress summary\n";
  row("variant", r.variant + (r.tls_transfer.empty() ? "" : " (transfer layer: " + r.tls_transfer + ")"));
  row("backend", r.backend + (r.backend_note.empty() ? "" : " (" + r.backend_note + ")"));
  row("threads", std::to_string(r.threads));
  row("streams", std::to_string(r.streams));
  row("seed", std::to_string(r.seed));
  row("sizes", r.sizes + (r.trace_scale < 1.0 ? " (scaled by " + format_double(r.trace_scale) + ")" : ""));
  if (r.inject != fault::none) row("inject", std::string(to_string(r.inject)));
  row("time", seconds);
  row("ops", std::to_string(r.ops) + " (" + std::to_string(r.allocations) + " allocations, " +
                 std::to_string(r.frees) + " frees)");
  row("ops/s", rate);
  row("handoffs", std::to_string(r.handoffs));
  row("cross-stream frees", std::to_string(r.cross_stream_frees));
  row("immediate frees", std::to_string(r.immediate_frees));
  row("peak live", format_bytes(double(r.peak_live_bytes)) + " in " + std::to_string(r.peak_live_blocks) + " blocks");
  row("reserved peak", format_bytes(double(r.final_stats.peak_reserved_bytes)));
  row("events recorded", std::to_string(r.final_stats.events_recorded) + " by the pool (one per epoch), " +
                             std::to_string(r.stress_events_recorded) + " by stress");
  if (r.inject == fault::double_handout) row("faults injected", std::to_string(r.faults_injected));
  row("violations", std::to_string(r.violations) + " (overlaps " + std::to_string(r.overlaps) +
                        ", device mismatches " + std::to_string(r.device_mismatches) + ", invalid frees " +
                        std::to_string(r.invalid_frees) + ")");
  row("result", r.passed() ? "PASS" : "FAIL");
  if (!r.first_violations.empty()) {
    out << "first violations:\n";
    for (const std::string& v : r.first_violations) out << "  " << v << '\n';
    if (r.violations > r.first_violations.size()) {
      out << "  ... and " << r.violations - r.first_violations.size() << " more\n";
    }
  }
}

std::string to_json(const stress_result& r) {
  std::ostringstream out;
  out.precision(6);
  out << "{\"variant\":" << json_string(r.variant) << ",\"tls_transfer\":" << json_string(r.tls_transfer)
      << ",\"backend\":" << json_string(r.backend)
      << ",\"backend_note\":" << json_string(r.backend_note) << ",\"threads\":" << r.threads
      << ",\"streams\":" << r.streams << ",\"seed\":" << r.seed << ",\"sizes\":" << json_string(r.sizes)
      << ",\"trace_scale\":" << r.trace_scale << ",\"inject\":" << json_string(to_string(r.inject))
      << ",\"seconds\":" << r.seconds << ",\"ops\":" << r.ops << ",\"allocations\":" << r.allocations
      << ",\"frees\":" << r.frees << ",\"ops_per_second\":" << std::llround(r.ops_per_second)
      << ",\"handoffs\":" << r.handoffs << ",\"cross_stream_frees\":" << r.cross_stream_frees
      << ",\"immediate_frees\":" << r.immediate_frees
      << ",\"peak_live_bytes\":" << r.peak_live_bytes << ",\"peak_live_blocks\":" << r.peak_live_blocks
      << ",\"peak_reserved_bytes\":" << r.final_stats.peak_reserved_bytes
      << ",\"pool_events_recorded\":" << r.final_stats.events_recorded
      << ",\"stress_events_recorded\":" << r.stress_events_recorded << ",\"faults_injected\":" << r.faults_injected
      << ",\"violations\":" << r.violations << ",\"overlaps\":" << r.overlaps
      << ",\"device_mismatches\":" << r.device_mismatches << ",\"invalid_frees\":" << r.invalid_frees
      << ",\"quarantined\":" << r.quarantined << ",\"result\":" << json_string(r.passed() ? "pass" : "fail")
      << ",\"first_violations\":[";
  for (std::size_t i = 0; i < r.first_violations.size(); ++i) {
    out << (i ? "," : "") << json_string(r.first_violations[i]);
  }
  out << "],\"pool_stats\":" << cudapool::to_json(r.final_stats) << "}";
  return out.str();
}

}  // namespace cudapool::stress
