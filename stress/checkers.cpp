// checkers.cpp - see checkers.hpp.
#include "checkers.hpp"

#include <cstdio>

#include "format.hpp"

namespace cudapool::stress {

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

// The pool's invalid-free hook. The harness never frees a block twice nor a pointer it did not get
// from the pool, so every report is a violation (or the consequence of one).
void on_invalid_free(const void* p, invalid_free_reason reason, void* context) {
  static_cast<violation_log*>(context)->add(
      violation_kind::invalid_free, "invalid free reported by the pool: " +
                                        format_pointer(reinterpret_cast<std::uintptr_t>(p)) + ": " + to_string(reason));
}

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

}  // namespace cudapool::stress
