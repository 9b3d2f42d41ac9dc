#include <cudapool/lockfree_pool.hpp>

#include <cudapool/detail/testing/conformance.hpp>

namespace cudapool::testing {

using lockfree_configs = ::testing::Types<on_sim<lockfree_pool>, on_cuda<lockfree_pool>>;
INSTANTIATE_TYPED_TEST_SUITE_P(lockfree, conformance, lockfree_configs);

}  // namespace cudapool::testing
