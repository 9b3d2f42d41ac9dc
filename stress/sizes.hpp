// sizes.hpp - the request sizes of a run (--sizes): drawn over the pool's size classes, fixed, or
// a trace's, scaled to a memory budget. Internal to the harness.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "config.hpp"
#include "random.hpp"

namespace cudapool::stress {

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

// The most bytes a trace holds live at once, replayed in order. Throws config_error naming the
// record (comment, blank and header lines not counted) and its id where the ids do not pair
// (core::trace_live_ids): a trace this refuses does not run.
[[nodiscard]] std::size_t trace_peak_live(const std::vector<trace_record>& trace);

}  // namespace cudapool::stress
