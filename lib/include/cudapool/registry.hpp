// registry.hpp - make a pool by variant name (for stress, bench and the conformance suite).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <cudapool/any_pool.hpp>

namespace cudapool {

// The variants built into this library, in the order they are documented.
[[nodiscard]] std::vector<std::string> available_variants();

// Throws std::invalid_argument naming the available variants when `variant` is not one of them.
[[nodiscard]] std::unique_ptr<any_pool> make_pool(std::string_view variant, std::shared_ptr<backend> device,
                                                  const pool_options& options = {});
// The same variant built without debug hooks (basic_pool<FreeLists, false>): for bench, to measure
// what the debug branch costs when every debug option is off. Throws std::invalid_argument for
// options that turn a debug feature on.
[[nodiscard]] std::unique_ptr<any_pool> make_plain_pool(std::string_view variant, std::shared_ptr<backend> device,
                                                        const pool_options& options = {});

}  // namespace cudapool
