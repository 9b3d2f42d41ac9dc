// core/json.hpp - the one way cudapool writes JSON (nlohmann-json): the stats (to_json in
// cudapool/stats.hpp), the out-of-memory report (cudapool/diagnostics.hpp) and the PyTorch
// plug-in's stats build documents with these and print them with to_text. Not installed
// (lib/cmake/install.cmake excludes it): nlohmann-json is needed to build cudapool, not to use it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include <cudapool/stats.hpp>

namespace cudapool::detail {

// Keys stay in the order they were added, as a reader of the file expects them.
using json = nlohmann::ordered_json;

// The document cudapool::to_json(stats) prints.
[[nodiscard]] json to_json_value(const pool_stats& stats);

// Compact JSON. Strings are escaped as JSON requires (quotes, backslashes, control characters);
// bytes that are not UTF-8 become U+FFFD: valid JSON for any string.
[[nodiscard]] std::string to_text(const json& doc);

}  // namespace cudapool::detail
