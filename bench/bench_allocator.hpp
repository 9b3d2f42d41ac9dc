// bench_allocator.hpp - one handle for every allocator under test: a pool of any variant (through
// cudapool::any_pool) or a peer (peers::peer, lib/peers). The workloads are written once against this
// handle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <cudapool/any_pool.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/detail/peers/peers.hpp>
#include <cudapool/registry.hpp>

namespace bench {

// The peers are a library shared with stress (lib/peers); bench names them as before.
using cudapool::peers::last_error;
using cudapool::peers::make_peer;
using cudapool::peers::peer;
using cudapool::peers::peer_names;
using cudapool::peers::set_last_error;

// An allocator under test, as configured: a variant with options, or a peer, under a label.
// kind::none is no allocator at all: serve's ceiling (serve/none, serve.cpp), which serves its
// memory itself and is registered for serve only; its handle holds nothing and allocates nothing.
struct allocator_config {
  enum class kind { pool, peer, none };
  std::string label;     // the <allocator> part of benchmark names
  kind what = kind::pool;
  std::string name;      // variant or peer name
  cudapool::pool_options options;
  bool all_workloads = true;  // false: an option sweep, measured on pair/4096 only
  int max_threads = 64;       // thread counts above this are not registered for this allocator
  int max_larson_threads = 64;
  bool plain = false;         // the variant built without debug hooks (make_plain_pool)
  bool serve = false;         // an option variant registered in serve too (serve.cpp: serves)
};

class bench_allocator {
 public:
  // Throws (std::exception) when the pool or the peer cannot be made.
  static std::unique_ptr<bench_allocator> make(const allocator_config& config,
                                               const std::shared_ptr<cudapool::backend>& device) {
    auto a = std::unique_ptr<bench_allocator>(new bench_allocator);
    if (config.what == allocator_config::kind::pool) {
      a->pool_ = config.plain ? cudapool::make_plain_pool(config.name, device, config.options)
                              : cudapool::make_pool(config.name, device, config.options);
    } else if (config.what == allocator_config::kind::peer) {
      a->peer_ = make_peer(config.name, device->device());
    }
    return a;
  }

  [[nodiscard]] bool is_pool() const noexcept { return pool_ != nullptr; }
  // Peers allocate on a stream of their own per thread in the workloads without streams.
  [[nodiscard]] bool wants_home_streams() const noexcept { return peer_ != nullptr; }

  [[nodiscard]] bool attach_thread() noexcept { return peer_ == nullptr || peer_->attach_thread(); }
  void detach_thread() noexcept {
    if (peer_ != nullptr) peer_->detach_thread();
  }

  // nullptr on failure, with the reason in last_error().
  [[nodiscard]] void* allocate(std::size_t bytes, cudapool::stream_ref s) noexcept {
    if (pool_ != nullptr) [[likely]] {
      try {
        return pool_->allocate(bytes, s);
      } catch (const std::exception& e) {
        set_last_error(std::string("pool allocate(") + std::to_string(bytes) + " B): " + e.what());
        return nullptr;
      }
    }
    if (peer_ == nullptr) return no_allocator();
    return peer_->allocate(bytes, s);
  }
  // Immediate free (no device work on p is pending); p was allocated on alloc_stream.
  [[nodiscard]] bool deallocate(void* p, cudapool::stream_ref alloc_stream) noexcept {
    if (pool_ != nullptr) [[likely]] {
      pool_->deallocate(p);
      return true;
    }
    if (peer_ == nullptr) return no_allocator() != nullptr;
    return peer_->deallocate(p, alloc_stream);
  }
  // Stream-ordered free on free_stream; p was allocated on alloc_stream.
  [[nodiscard]] bool deallocate(void* p, cudapool::stream_ref alloc_stream, cudapool::stream_ref free_stream) noexcept {
    if (pool_ != nullptr) [[likely]] {
      pool_->deallocate(p, free_stream);
      return true;
    }
    if (peer_ == nullptr) return no_allocator() != nullptr;
    return peer_->deallocate(p, alloc_stream, free_stream);
  }

  // Before a stream given to deallocate(p, a, s) is destroyed. Throws on backend failure.
  void flush_stream(cudapool::stream_ref s) {
    if (pool_ != nullptr) pool_->flush_stream(s);
  }

  void track_reserved() noexcept {
    if (peer_ != nullptr) peer_->track_reserved(true);
  }
  [[nodiscard]] std::optional<std::size_t> peak_reserved_bytes() {
    if (pool_ != nullptr) return pool_->stats().peak_reserved_bytes;
    if (peer_ == nullptr) return std::nullopt;
    return peer_->peak_reserved_bytes();
  }
  [[nodiscard]] std::optional<cudapool::pool_stats> stats() const {
    if (pool_ != nullptr) return pool_->stats();
    return std::nullopt;
  }

 private:
  bench_allocator() = default;
  // kind::none: nothing to allocate from (serve/none never calls allocate or deallocate).
  static void* no_allocator() noexcept {
    set_last_error("no allocator (kind none)");
    return nullptr;
  }
  std::unique_ptr<cudapool::any_pool> pool_;

 public:
  // The pool as its concrete type, when it is one (pair_direct: no virtual call in the loop).
  template <class Pool>
  [[nodiscard]] Pool* concrete() const noexcept {
    auto* model = dynamic_cast<cudapool::pool_model<Pool>*>(pool_.get());
    return model != nullptr ? &model->get() : nullptr;
  }

 private:
  std::unique_ptr<peer> peer_;
};

}  // namespace bench
