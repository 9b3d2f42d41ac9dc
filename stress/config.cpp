// config.cpp - parsing and validation of a stress configuration (see config.hpp).
#include "config.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>

#include "format.hpp"
#include <cudapool/detail/peers/peers.hpp>
#include <cudapool/registry.hpp>

namespace cudapool::stress {

namespace {

constexpr unsigned max_threads = 4095;  // (thread + 1) fits the tag's 12 high bits
constexpr unsigned max_streams = 1024;
constexpr unsigned max_devices = 16;
constexpr double max_duration_seconds = 1e9;  // 31 years; the deadline's clock overflows past 9.2e9
constexpr std::uint64_t max_ops = std::uint64_t{1} << 50;

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
  std::ifstream in;
  try {
    in = core::open_trace_file(path);
  } catch (const core::trace_file_error& e) {
    throw config_error(where + ": " + e.what());
  }
  std::vector<trace_record> records;
  core::trace_live_ids<bool> live;  // the ids pair (refused here, where the line is known)
  bool any_allocation = false;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    std::optional<trace_record> r;
    try {
      r = core::parse_trace_line(line);
      if (r && r->allocate) live.allocate(r->id, true);
      if (r && !r->allocate) (void)live.free(r->id);
    } catch (const core::trace_line_error& e) {
      throw config_error(where + ": line " + std::to_string(number) + ": " + e.what() + ": '" + line + "'");
    }
    if (!r) continue;
    any_allocation = any_allocation || r->allocate;
    records.push_back(*r);
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

namespace {

// A peer runs where it has a device (the CUDA backend) and as it is (no fault decorators).
void validate_peer(const stress_config& c) {
  const std::vector<std::string> names = peers::peer_names();
  if (std::find(names.begin(), names.end(), c.allocator) == names.end()) {
    std::string list(pool_allocator);
    for (const std::string& n : names) list += ", " + n;
    throw config_error("--allocator: unknown allocator '" + c.allocator + "'; available: " + list +
                       (names.empty() ? " (the peers need a build with the CUDA toolkit)" : ""));
  }
  if (c.backend == backend_choice::sim) {
    throw config_error("--allocator=" + c.allocator + " runs on the CUDA backend only, not on --backend=sim");
  }
  if (c.inject != fault::none) {
    throw config_error("--inject decorates a cudapool pool; it does not apply to --allocator=" + c.allocator);
  }
}

}  // namespace

pool_options pool_options_of(const stress_config& c) {
  pool_options options;
  options.tls_transfer = c.tls_transfer;
  if (c.first_slab_bytes != 0) options.first_slab_bytes = c.first_slab_bytes;
  options.remap_ratio = c.remap_ratio;
  options.stream_arenas = c.stream_arenas;
  return options;
}

void validate(const stress_config& c) {
  try {
    cudapool::validate(pool_options_of(c));
  } catch (const std::invalid_argument& e) {
    // The options come from --first-slab-bytes (first_slab_bytes, 0: the default), --remap-ratio
    // and --stream-arenas.
    throw config_error(std::string("--first-slab-bytes, --remap-ratio or --stream-arenas: ") + e.what());
  }
  const std::vector<std::string> variants = available_variants();
  if (std::find(variants.begin(), variants.end(), c.variant) == variants.end()) {
    std::string list;
    for (const std::string& v : variants) list += (list.empty() ? "" : ", ") + v;
    throw config_error("--variant: unknown or unbuilt variant '" + c.variant + "'; available: " + list);
  }
  if (c.allocator != pool_allocator) validate_peer(c);
  if (c.threads < 1 || c.threads > max_threads) {
    throw config_error("--threads must be in [1, " + std::to_string(max_threads) + "], got " + std::to_string(c.threads));
  }
  if (c.devices < 1 || c.devices > max_devices) {
    throw config_error("--devices must be in [1, " + std::to_string(max_devices) + "], got " + std::to_string(c.devices));
  }
  if (c.streams < 1 || c.streams > max_streams) {
    throw config_error("--streams must be in [1, " + std::to_string(max_streams) + "], got " + std::to_string(c.streams));
  }
  if (c.duration_seconds && c.ops) throw config_error("--duration and --ops are mutually exclusive");
  // At most max_duration_seconds: the deadline is a steady_clock time point, whose nanoseconds
  // overflow past about 9.2e9 s (a run that asked for more ended at once and passed).
  if (c.duration_seconds && !(*c.duration_seconds > 0.0 && *c.duration_seconds <= max_duration_seconds)) {
    throw config_error("--duration must be a positive number of seconds up to " + format_double(max_duration_seconds) +
                       ", got " + format_double(*c.duration_seconds));
  }
  if (c.ops && (*c.ops == 0 || *c.ops > max_ops)) {
    throw config_error("--ops must be in [1, " + std::to_string(max_ops) + "], got " + std::to_string(*c.ops));
  }
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

}  // namespace cudapool::stress
