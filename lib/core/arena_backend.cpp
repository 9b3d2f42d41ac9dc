#include <cudapool/detail/core/arena_backend.hpp>

#include <algorithm>

#include <cudapool/detail/core/arith.hpp>
#include <cudapool/errors.hpp>

namespace cudapool::core {

namespace {
constexpr std::size_t directory_page = std::size_t{1} << page_map::page_shift;
}  // namespace

bool arena_directory::charge(std::size_t bytes) noexcept {
  std::size_t now = mapped_.load(std::memory_order_relaxed);
  do {
    if (limit_ != 0 && (bytes > limit_ || now > limit_ - bytes)) return false;
  } while (!mapped_.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed));
  return true;
}

void arena_directory::claim(const void* p, std::size_t bytes, std::uint32_t id) {
  const auto lo = round_down(reinterpret_cast<std::uintptr_t>(p), directory_page);
  const auto hi = round_up(reinterpret_cast<std::uintptr_t>(p) + bytes, directory_page);
  std::lock_guard lock(writer_);
  pages_.set(reinterpret_cast<const void*>(lo), hi - lo, id);
  // The peak counts what was mapped, not what a refused request charged for a moment.
  const std::size_t now = mapped_.load(std::memory_order_relaxed);
  if (now > peak_.load(std::memory_order_relaxed)) peak_.store(now, std::memory_order_relaxed);
}

void* arena_backend::allocate_chunk(std::size_t bytes) {
  if (!directory_->charge(bytes)) return nullptr;
  void* p = nullptr;
  try {
    p = device_->allocate_chunk(bytes);
    if (p != nullptr) directory_->claim(p, bytes, id_);
  } catch (...) {
    if (p != nullptr) device_->free_chunk(p, bytes);
    directory_->refund(bytes);
    throw;
  }
  if (p == nullptr) directory_->refund(bytes);
  return p;
}

void arena_backend::free_chunk(void* chunk, std::size_t bytes) noexcept {
  fence();
  device_->free_chunk(chunk, bytes);
  directory_->refund(bytes);
}

void* arena_backend::reserve_address(std::size_t bytes, std::size_t alignment) {
  // The directory's pages: no two arenas' reservations share one (bytes is a multiple of the page
  // size, itself a multiple of 64 KiB).
  return device_->reserve_address(bytes, std::max(alignment, directory_page));
}

bool arena_backend::map(void* p, std::size_t bytes) {
  if (!directory_->charge(bytes)) return false;
  bool mapped = false;
  try {
    mapped = device_->map(p, bytes);
    if (mapped) directory_->claim(p, bytes, id_);
  } catch (...) {
    if (mapped) device_->unmap(p, bytes);
    directory_->refund(bytes);
    throw;
  }
  if (!mapped) directory_->refund(bytes);
  return mapped;
}

void arena_backend::unmap(void* p, std::size_t bytes) noexcept {
  fence();
  device_->unmap(p, bytes);
  directory_->refund(bytes);
}

arena_backend::~arena_backend() {
  if (released_ != nullptr) device_->release_event(released_);
}

void arena_backend::release_owner() {
  void* const s = owner();
  if (s == nullptr) return;
  std::lock_guard lock(fence_mutex_);
  event_handle e = nullptr;
  try {
    e = device_->acquire_event();
    device_->record(e, stream_ref(s));
  } catch (...) {
    if (e != nullptr) device_->release_event(e);
    e = nullptr;
    device_->synchronize(stream_ref(s));  // no event to be had: wait now
  }
  if (released_ != nullptr) device_->release_event(released_);  // an older release, covered by this one
  released_ = e;
  owner_.store(nullptr, std::memory_order_release);
}

bool arena_backend::reusable() {
  if (owner() != nullptr) return false;
  std::lock_guard lock(fence_mutex_);
  if (released_ == nullptr) return true;
  if (!device_->query(released_)) return false;
  device_->release_event(released_);
  released_ = nullptr;
  return true;
}

void arena_backend::fence() noexcept {
  void* const s = owner();
  std::lock_guard lock(fence_mutex_);
  if (s == nullptr && released_ == nullptr) return;
  fences_.fetch_add(1, std::memory_order_relaxed);
  try {
    if (s != nullptr) {
      device_->synchronize(stream_ref(s));
    } else {
      device_->wait(released_);
      device_->release_event(released_);
      released_ = nullptr;
    }
  } catch (...) {
    try {
      device_->synchronize_device();
    } catch (...) {  // nothing left to order with: the device is gone
    }
  }
}

}  // namespace cudapool::core
