#include <cudapool/detail/core/diagnostics.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

namespace cudapool {

void default_guard_handler(const guard_report& report, void*) {
  std::fprintf(stderr, "%s\n", to_string(report).c_str());
}

std::string to_string(const guard_report& r) {
  std::ostringstream out;
  out << "cudapool: guard damaged: " << r.pointer << " (" << r.bytes << " bytes requested): byte " << r.guard_offset
      << " past the end reads 0x" << std::hex << unsigned{r.found} << std::dec << "; allocated on stream "
      << r.alloc_stream_id << ", checked at its free on stream " << r.free_stream_id;
  if (!r.alloc_stack.empty()) out << "; allocated at:\n" << r.alloc_stack;
  return out.str();
}

namespace core {

namespace {

constexpr int instance_shift = 48;
constexpr std::uint64_t address_mask = (std::uint64_t{1} << instance_shift) - 1;

// Live debug layers by instance number, so that a failure taken by one pool reaches the pool
// whose check it was (several pools may share a backend).
std::mutex g_instances_mutex;
std::map<std::uint64_t, diagnostics*>& instances() {
  static std::map<std::uint64_t, diagnostics*> m;
  return m;
}
std::atomic<std::uint64_t> g_next_instance{1};

// CUDAPOOL_TRACE: one writer shared by every pool of the process while any of them lives.
std::shared_ptr<trace_writer> environment_trace() {
  static std::mutex m;
  static std::weak_ptr<trace_writer> shared;
  const char* path = std::getenv("CUDAPOOL_TRACE");
  if (path == nullptr || *path == '\0') return nullptr;
  std::lock_guard lock(m);
  if (auto t = shared.lock()) return t;
  auto t = std::make_shared<trace_writer>(path);
  shared = t;
  return t;
}

}  // namespace

void route_guard_failures(const std::vector<guard_failure>& failures) noexcept {
  std::lock_guard lock(g_instances_mutex);
  for (const guard_failure& f : failures) {
    auto it = instances().find(f.tag >> instance_shift);
    if (it != instances().end()) {
      it->second->report_failure(f);
    } else {
      guard_report r;
      r.pointer = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(f.tag & address_mask));
      r.guard_offset = f.byte_offset;
      r.found = f.found;
      default_guard_handler(r, nullptr);  // its pool is gone: say what is known
    }
  }
}

std::unique_ptr<diagnostics> diagnostics::make(const pool_options& options, backend& device) {
  const debug_options& d = options.debug;
  std::shared_ptr<trace_writer> trace;
  if (!d.trace_path.empty()) {
    trace = std::make_shared<trace_writer>(d.trace_path);
  } else if (d.trace_from_environment) {
    trace = environment_trace();
  }
  if (!d.sanitizer_regions && d.guard_bytes == 0 && !d.record_stacks && !trace) return nullptr;
  return std::make_unique<diagnostics>(d, device, std::move(trace));
}

diagnostics::diagnostics(const debug_options& options, backend& device, std::shared_ptr<trace_writer> trace)
    : options_(options),
      device_(device),
      instance_(g_next_instance.fetch_add(1, std::memory_order_relaxed) & 0xFFFF),
      trace_(std::move(trace)),
      shards_(std::make_unique<shard[]>(shard_count)) {
  if (options_.on_guard_damage == nullptr) throw std::invalid_argument("cudapool: debug.on_guard_damage is null");
  std::lock_guard lock(g_instances_mutex);
  instances()[instance_] = this;
}

diagnostics::~diagnostics() {
  std::lock_guard lock(g_instances_mutex);
  instances().erase(instance_);
}

diagnostics::shard& diagnostics::shard_of(const void* p) const noexcept {
  const auto h = reinterpret_cast<std::uintptr_t>(p);
  return shards_[((h >> 8) ^ (h >> 16)) % shard_count];
}

std::uint64_t diagnostics::stream_key(stream_ref s) const {
  return s.native() == nullptr ? 0 : device_.stream_id(s);
}

std::uint64_t diagnostics::tag_of(const void* p) const noexcept {
  return (instance_ << instance_shift) | (reinterpret_cast<std::uintptr_t>(p) & address_mask);
}

// ---- chunks ----------------------------------------------------------------------------------

void diagnostics::on_chunk_bound(void* base, std::size_t bytes) {
  if (!options_.sanitizer_regions) return;
  void* heap = device_.register_heap(base, bytes);
  if (heap == nullptr) return;
  std::lock_guard lock(heaps_mutex_);
  heaps_[reinterpret_cast<std::uintptr_t>(base)] = heap;
}

void diagnostics::on_chunk_released(void* base) noexcept {
  if (!options_.sanitizer_regions) return;
  void* heap = nullptr;
  {
    std::lock_guard lock(heaps_mutex_);
    auto it = heaps_.find(reinterpret_cast<std::uintptr_t>(base));
    if (it == heaps_.end()) return;
    heap = it->second;
    heaps_.erase(it);
  }
  device_.unregister_heap(heap);
}

// ---- allocations -----------------------------------------------------------------------------

void diagnostics::on_alloc(void* p, std::size_t bytes, void* chunk_base, std::size_t chunk_bytes, bool large,
                           stream_ref s) {
  live_record rec;
  rec.bytes = bytes;
  rec.stream_id = stream_key(s);
  if (options_.record_stacks) rec.stack = stacks_.intern(capture_stack(2));
  if (options_.guard_bytes != 0) {
    device_.fill_guard(s, static_cast<char*>(p) + bytes, options_.guard_bytes, options_.guard_pattern);
  }
  if (options_.sanitizer_regions) {
    if (large) {
      rec.heap = device_.register_heap(chunk_base, chunk_bytes);
      rec.own_heap = true;
    } else {
      std::lock_guard lock(heaps_mutex_);
      auto it = heaps_.find(reinterpret_cast<std::uintptr_t>(chunk_base));
      if (it != heaps_.end()) rec.heap = it->second;
    }
    if (rec.heap != nullptr) device_.register_region(rec.heap, p, bytes);
  }
  if (trace_) rec.trace_id = trace_->record_alloc(bytes, rec.stream_id);
  shard& sh = shard_of(p);
  std::lock_guard lock(sh.mutex);
  sh.live[reinterpret_cast<std::uintptr_t>(p)] = rec;
}

bool diagnostics::on_free(const void* p, stream_ref check_stream, bool stream_ordered) noexcept {
  // Failures of this address's previous check are in the backend by now (the block was reused only
  // after that check completed): take them before that check's record is replaced.
  if (options_.guard_bytes != 0) poll();
  shard& sh = shard_of(p);
  live_record rec;
  {
    std::lock_guard lock(sh.mutex);
    auto it = sh.live.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == sh.live.end()) return false;
    rec = it->second;
    sh.live.erase(it);
  }
  try {
    if (rec.heap != nullptr) {
      device_.unregister_region(rec.heap, p);
      if (rec.own_heap) device_.unregister_heap(rec.heap);
    }
    const std::uint64_t free_stream = stream_ordered ? stream_key(check_stream) : 0;
    if (trace_) trace_->record_free(rec.trace_id, rec.bytes, stream_ordered ? free_stream : rec.stream_id);
    if (options_.guard_bytes != 0) {
      {
        std::lock_guard lock(sh.mutex);
        sh.checks[reinterpret_cast<std::uintptr_t>(p)] = {rec.bytes, rec.stream_id, free_stream, rec.stack};
      }
      device_.check_guard(check_stream, static_cast<const char*>(p) + rec.bytes, options_.guard_bytes,
                          options_.guard_pattern, tag_of(p));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudapool: debug bookkeeping at free of %p failed: %s\n", p, e.what());
  }
  return true;
}

bool diagnostics::is_live(const void* p) const {
  shard& sh = shard_of(p);
  std::lock_guard lock(sh.mutex);
  return sh.live.contains(reinterpret_cast<std::uintptr_t>(p));
}

std::optional<diagnostics::live_info> diagnostics::live(const void* p) const {
  live_record rec;
  {
    shard& sh = shard_of(p);
    std::lock_guard lock(sh.mutex);
    auto it = sh.live.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == sh.live.end()) return std::nullopt;
    rec = it->second;
  }
  live_info info{rec.bytes, rec.stream_id, {}};
  if (rec.stack != 0) info.stack = stack_text(rec.stack);
  return info;
}

// The symbolized stack from the caller of the pool on: the pool's own frames on top (whatever the
// compiler inlined) are dropped.
std::string diagnostics::stack_text(std::uint32_t id) const {
  const std::string all = symbolize(stacks_.get(id));
  std::size_t start = 0;
  while (start < all.size()) {
    const std::size_t end = all.find('\n', start);
    const std::string_view line(all.data() + start, (end == std::string::npos ? all.size() : end) - start);
    const bool ours = line.find(" cudapool::basic_pool<") != std::string_view::npos ||
                      line.find(" cudapool::pool_model<") != std::string_view::npos ||
                      line.find(" cudapool::core::") != std::string_view::npos;
    if (!ours || end == std::string::npos) break;
    start = end + 1;
  }
  return all.substr(start);
}

// ---- guard failures --------------------------------------------------------------------------

std::size_t diagnostics::poll() noexcept {
  try {
    std::vector<guard_failure> failures = device_.take_guard_failures();
    if (!failures.empty()) route_guard_failures(failures);
    return failures.size();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudapool: reading guard-check results failed: %s\n", e.what());
    return 0;
  }
}

void diagnostics::report_failure(const guard_failure& f) noexcept {
  guard_report r;
  const auto addr = static_cast<std::uintptr_t>(f.tag & address_mask);
  r.pointer = reinterpret_cast<const void*>(addr);
  r.guard_offset = f.byte_offset;
  r.found = f.found;
  try {
    shard& sh = shard_of(r.pointer);
    std::uint32_t stack = 0;
    {
      std::lock_guard lock(sh.mutex);
      auto it = sh.checks.find(addr);
      if (it != sh.checks.end()) {
        r.bytes = it->second.bytes;
        r.alloc_stream_id = it->second.alloc_stream_id;
        r.free_stream_id = it->second.free_stream_id;
        stack = it->second.stack;
      }
    }
    if (stack != 0) r.alloc_stack = stack_text(stack);
  } catch (...) {  // report what is known
  }
  options_.on_guard_damage(r, options_.guard_context);
}

// ---- reports ---------------------------------------------------------------------------------

bool diagnostics::report_leaks_by_stack(std::string_view variant) const {
  if (!options_.record_stacks) return false;
  struct group {
    std::size_t count = 0;
    std::size_t bytes = 0;
    std::vector<std::uintptr_t> examples;
  };
  std::map<std::uint32_t, group> groups;
  for (std::size_t i = 0; i < shard_count; ++i) {
    std::lock_guard lock(shards_[i].mutex);
    for (const auto& [addr, rec] : shards_[i].live) {
      group& g = groups[rec.stack];
      ++g.count;
      g.bytes += rec.bytes;
      if (g.examples.size() < 4) g.examples.push_back(addr);
    }
  }
  if (groups.empty()) return false;
  std::vector<std::pair<std::uint32_t, group>> sorted(groups.begin(), groups.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  std::size_t total = 0;
  std::size_t bytes = 0;
  for (const auto& [id, g] : sorted) {
    total += g.count;
    bytes += g.bytes;
  }
  std::fprintf(stderr,
               "cudapool: leak report: the %.*s pool was destroyed with %zu live allocation%s (%zu bytes requested) "
               "from %zu call stack%s:\n",
               static_cast<int>(variant.size()), variant.data(), total, total == 1 ? "" : "s", bytes, sorted.size(),
               sorted.size() == 1 ? "" : "s");
  for (const auto& [id, g] : sorted) {
    std::fprintf(stderr, "cudapool: %zu allocation%s, %zu bytes, e.g.", g.count, g.count == 1 ? "" : "s", g.bytes);
    for (std::uintptr_t a : g.examples) std::fprintf(stderr, " %p", reinterpret_cast<void*>(a));
    std::fprintf(stderr, ", allocated at:\n%s\n", id == 0 ? "  (no stack)" : stack_text(id).c_str());
  }
  std::fprintf(stderr, "cudapool: all device memory of the pool is released regardless.\n");
  return true;
}

void diagnostics::release_all() noexcept {
  for (std::size_t i = 0; i < shard_count; ++i) {
    std::lock_guard lock(shards_[i].mutex);
    for (auto& [addr, rec] : shards_[i].live) {
      if (rec.heap == nullptr) continue;
      device_.unregister_region(rec.heap, reinterpret_cast<const void*>(addr));
      if (rec.own_heap) device_.unregister_heap(rec.heap);
      rec.heap = nullptr;
    }
  }
  std::lock_guard lock(heaps_mutex_);
  for (const auto& [base, heap] : heaps_) device_.unregister_heap(heap);
  heaps_.clear();
  if (trace_) {
    try {
      trace_->flush();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cudapool: writing the allocation trace failed: %s\n", e.what());
    }
  }
}

}  // namespace core
}  // namespace cudapool
