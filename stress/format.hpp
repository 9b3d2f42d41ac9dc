// format.hpp - the few ways stress prints numbers and pointers, shared by its messages and report.
// Internal to the harness.
#pragma once

#include <cstdint>
#include <string>

namespace cudapool::stress {

// As an ostream prints it ("0.1", "10").
[[nodiscard]] std::string format_double(double v);
// "1.5 MiB", "12.0 KiB", "300 B".
[[nodiscard]] std::string format_bytes(double bytes);
// "0x7f0012345600": fixed width, so that pointers line up in a list of violations.
[[nodiscard]] std::string format_pointer(std::uintptr_t p);

}  // namespace cudapool::stress
