#include <cudapool/detail/core/size_classes.hpp>

#include <stdexcept>
#include <string>

namespace cudapool::core {

namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("cudapool::pool_options: " + message);
}

}  // namespace

size_classes::size_classes(const pool_options& options) {
  if (options.fixed_block_bytes != 0) {
    require(options.fixed_block_bytes % min_alignment == 0,
            "fixed_block_bytes must be a multiple of 256, got " + std::to_string(options.fixed_block_bytes));
    sizes_.push_back(options.fixed_block_bytes);
    max_bytes_ = options.fixed_block_bytes;
    // Every request up to the one class maps to it: a bucket that always yields class 0.
    for (auto& b : buckets_) b = {0, 63};
    return;
  }
  const unsigned k = options.classes_per_doubling;
  require(k >= 1 && k <= 8 && std::has_single_bit(k),
          "classes_per_doubling must be 1, 2, 4 or 8, got " + std::to_string(k));
  require(options.max_class_bytes >= min_alignment && std::has_single_bit(options.max_class_bytes),
          "max_class_bytes must be a power of two >= 256, got " + std::to_string(options.max_class_bytes));
  require(options.max_class_bytes <= (std::size_t{1} << 29),
          "max_class_bytes must be <= 512 MiB, got " + std::to_string(options.max_class_bytes));

  const unsigned log_k = static_cast<unsigned>(std::countr_zero(k));
  sizes_.push_back(min_alignment);
  for (unsigned e = 8; (std::size_t{1} << e) < options.max_class_bytes; ++e) {
    const std::size_t base = std::size_t{1} << e;
    const unsigned shift = e >= 8 + log_k ? e - log_k : 8;  // spacing 2^shift, at least 256 B
    buckets_[e] = {static_cast<size_class>(sizes_.size()), shift};
    for (std::size_t s = base + (std::size_t{1} << shift); s <= 2 * base; s += std::size_t{1} << shift) {
      sizes_.push_back(s);
    }
  }
  require(sizes_.size() <= max_size_classes, "too many size classes");
  max_bytes_ = sizes_.back();
}

size_class size_classes::lookup(std::size_t bytes, std::size_t alignment) const noexcept {
  size_class c = lookup(bytes);
  if (alignment <= min_alignment || c == large_class) return c;
  if (alignment > slab_alignment) return large_class;  // slabs are only this aligned
  for (; c < sizes_.size(); ++c) {
    if (sizes_[c] % alignment == 0) return c;
  }
  return large_class;
}

}  // namespace cudapool::core
