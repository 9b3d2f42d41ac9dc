#include <cudapool/registry.hpp>

#include <stdexcept>

#include <cudapool/lockfree_pool.hpp>
#include <cudapool/mutex_pool.hpp>
#include <cudapool/stream_arenas.hpp>
#include <cudapool/stream_pool.hpp>
#include <cudapool/tls_pool.hpp>

namespace cudapool {

namespace {

using maker = std::unique_ptr<any_pool> (*)(std::shared_ptr<backend>, const pool_options&);
struct entry {
  std::string_view name;
  maker make;
  maker make_plain;  // without debug hooks
};

// options.stream_arenas: the variant's pool behind stream_arenas (cudapool/stream_arenas.hpp).
template <class Pool>
std::unique_ptr<any_pool> make(std::shared_ptr<backend> device, const pool_options& options) {
  if (options.stream_arenas != 0) return std::make_unique<pool_model<stream_arenas<Pool>>>(std::move(device), options);
  return std::make_unique<pool_model<Pool>>(std::move(device), options);
}
template <class FreeLists>
constexpr entry entry_of() {
  return {FreeLists::name, make<basic_pool<FreeLists>>, make<basic_pool<FreeLists, false>>};
}

constexpr entry variants[] = {
    entry_of<mutex_free_lists>(),
    entry_of<lockfree_free_lists>(),
    entry_of<tls_free_lists>(),
    entry_of<stream_free_lists>(),
};

const entry& find(std::string_view variant) {
  for (const entry& e : variants) {
    if (e.name == variant) return e;
  }
  std::string list;
  for (const entry& e : variants) list += (list.empty() ? "" : ", ") + std::string(e.name);
  throw std::invalid_argument("cudapool: unknown or unbuilt variant '" + std::string(variant) +
                              "'; available: " + list);
}

}  // namespace

std::vector<std::string> available_variants() {
  std::vector<std::string> names;
  for (const entry& e : variants) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<any_pool> make_pool(std::string_view variant, std::shared_ptr<backend> device,
                                    const pool_options& options) {
  return find(variant).make(std::move(device), options);
}

std::unique_ptr<any_pool> make_plain_pool(std::string_view variant, std::shared_ptr<backend> device,
                                          const pool_options& options) {
  return find(variant).make_plain(std::move(device), options);
}

}  // namespace cudapool
