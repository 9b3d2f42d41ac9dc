#include "registry.hpp"

#include <stdexcept>

#include "lockfree/lockfree_pool.hpp"
#include "mutex/mutex_pool.hpp"
#include "stream/stream_pool.hpp"
#include "tls/tls_pool.hpp"

namespace cudapool {

namespace {

struct entry {
  std::string_view name;
  std::unique_ptr<any_pool> (*make)(std::shared_ptr<backend>, const pool_options&);
};

template <class Pool>
std::unique_ptr<any_pool> make(std::shared_ptr<backend> device, const pool_options& options) {
  return std::make_unique<pool_model<Pool>>(std::move(device), options);
}

constexpr entry variants[] = {
    {mutex_pool::variant(), make<mutex_pool>},
    {lockfree_pool::variant(), make<lockfree_pool>},
    {tls_pool::variant(), make<tls_pool>},
    {stream_pool::variant(), make<stream_pool>},
};

}  // namespace

std::vector<std::string> available_variants() {
  std::vector<std::string> names;
  for (const entry& e : variants) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<any_pool> make_pool(std::string_view variant, std::shared_ptr<backend> device,
                                    const pool_options& options) {
  for (const entry& e : variants) {
    if (e.name == variant) return e.make(std::move(device), options);
  }
  std::string list;
  for (const entry& e : variants) list += (list.empty() ? "" : ", ") + std::string(e.name);
  throw std::invalid_argument("cudapool: unknown or unbuilt variant '" + std::string(variant) +
                              "'; available: " + list);
}

}  // namespace cudapool
