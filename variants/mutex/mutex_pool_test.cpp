#include <cudapool/mutex_pool.hpp>

#include <cudapool/detail/testing/conformance.hpp>

namespace cudapool::testing {

using mutex_configs = ::testing::Types<on_sim<mutex_pool>, on_cuda<mutex_pool>>;
INSTANTIATE_TYPED_TEST_SUITE_P(mutex, conformance, mutex_configs);

}  // namespace cudapool::testing
