// backend_checks.hpp - contract checks that hold for every backend, shared by the sim and cuda
// backend tests (both are in backend_test).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <cudapool/backend.hpp>

namespace cudapool::checks {

// One recorded guard failure: its tag, the first damaged byte and what it read.
inline void expect_failure(const guard_failure& f, std::uint64_t tag, std::size_t byte_offset, std::uint8_t found) {
  EXPECT_EQ(f.tag, tag);
  EXPECT_EQ(f.byte_offset, byte_offset);
  EXPECT_EQ(f.found, found);
}

// Guard operations on a null range throw; on an empty one they do nothing and report nothing.
inline void expect_null_guard_ranges_rejected(backend& b) {
  EXPECT_THROW(b.fill_guard({}, nullptr, 8, 0xCD), std::invalid_argument);
  EXPECT_THROW(b.check_guard({}, nullptr, 8, 0xCD, 1), std::invalid_argument);
  b.fill_guard({}, nullptr, 0, 0xCD);
  b.check_guard({}, nullptr, 0, 0xCD, 1);
  b.synchronize({});
  EXPECT_TRUE(b.take_guard_failures().empty());
}

}  // namespace cudapool::checks
