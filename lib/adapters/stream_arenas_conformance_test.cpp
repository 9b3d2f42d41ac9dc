// The conformance suite of every variant with stream arenas on (pool_options::stream_arenas = 16):
// stream_arenas<Pool> on the simulated device, and lockfree's on the GPU (skips without one). The two
// tests in which another stream takes a stream's freed memory skip (one_pool_for_all_streams);
// stream_arenas_test.cpp covers what arenas do instead.
#include <cudapool/stream_arenas.hpp>

#include <cudapool/detail/testing/conformance.hpp>
#include <cudapool/lockfree_pool.hpp>
#include <cudapool/mutex_pool.hpp>
#include <cudapool/stream_pool.hpp>
#include <cudapool/tls_pool.hpp>

namespace cudapool::testing {

struct sixteen_arenas {
  static void apply(pool_options& o) { o.stream_arenas = 16; }
};
template <class Pool>
using arenas_on_sim = with_options<on_sim<stream_arenas<Pool>>, sixteen_arenas>;
using arena_configs =
    ::testing::Types<arenas_on_sim<mutex_pool>, arenas_on_sim<lockfree_pool>, arenas_on_sim<tls_pool>,
                     arenas_on_sim<stream_pool>, with_options<on_cuda<stream_arenas<lockfree_pool>>, sixteen_arenas>>;
INSTANTIATE_TYPED_TEST_SUITE_P(arenas, conformance, arena_configs);

}  // namespace cudapool::testing
