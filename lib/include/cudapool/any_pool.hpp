// cudapool/any_pool.hpp - a pool of any variant behind one virtual interface, for tools (stress,
// bench) that pick the variant at run time. Code that knows its variant uses the concrete type:
// its hot path is not virtual.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cudapool/backend.hpp>
#include <cudapool/diagnostics.hpp>
#include <cudapool/options.hpp>
#include <cudapool/stats.hpp>

namespace cudapool {

class any_pool {
 public:
  virtual ~any_pool() = default;
  [[nodiscard]] virtual std::string_view variant() const noexcept = 0;
  [[nodiscard]] virtual void* allocate(std::size_t bytes, stream_ref s) = 0;
  [[nodiscard]] virtual void* try_allocate(std::size_t bytes, stream_ref s) noexcept = 0;
  virtual void deallocate(void* p) noexcept = 0;
  virtual void deallocate(void* p, stream_ref s) noexcept = 0;
  virtual void flush_stream(stream_ref s) = 0;
  // Before destroying s: the stream variant's retire_stream, flush_stream for the others.
  virtual void retire_stream(stream_ref s) = 0;
  virtual std::size_t trim() = 0;
  [[nodiscard]] virtual pool_stats stats() const = 0;
  [[nodiscard]] virtual pointer_info describe(const void* p) const = 0;
  virtual std::size_t check_guards() = 0;
  [[nodiscard]] virtual backend& device() const noexcept = 0;
};

template <class Pool>
class pool_model final : public any_pool {
 public:
  template <class... Args>
  explicit pool_model(Args&&... args) : pool_(std::forward<Args>(args)...) {}
  [[nodiscard]] std::string_view variant() const noexcept override { return pool_.variant(); }
  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s) override { return pool_.allocate(bytes, s); }
  [[nodiscard]] void* try_allocate(std::size_t bytes, stream_ref s) noexcept override {
    return pool_.try_allocate(bytes, s);
  }
  void deallocate(void* p) noexcept override { pool_.deallocate(p); }
  void deallocate(void* p, stream_ref s) noexcept override { pool_.deallocate(p, s); }
  void flush_stream(stream_ref s) override { pool_.flush_stream(s); }
  void retire_stream(stream_ref s) override {
    if constexpr (requires { pool_.retire_stream(s); }) {
      pool_.retire_stream(s);
    } else {
      pool_.flush_stream(s);
    }
  }
  std::size_t trim() override { return pool_.trim(); }
  [[nodiscard]] pool_stats stats() const override { return pool_.stats(); }
  [[nodiscard]] pointer_info describe(const void* p) const override { return pool_.describe(p); }
  std::size_t check_guards() override { return pool_.check_guards(); }
  [[nodiscard]] backend& device() const noexcept override { return pool_.device(); }
  [[nodiscard]] Pool& get() noexcept { return pool_; }

 private:
  Pool pool_;
};

}  // namespace cudapool
