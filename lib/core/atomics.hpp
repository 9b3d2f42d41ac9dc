// atomics.hpp - the atomics policy of the lock-free protocols.
//
// A protocol that is model-checked (tagged_stack, retire_meta in block_table.hpp) names its atomic
// type through a policy, `typename Atomics::template atomic<T>`, and calls it with the std::atomic
// interface (load, store, compare_exchange_*, with std::memory_order arguments). Every build uses
// std_atomics, so the code is exactly std::atomic's. The model tests (core/model/) pass
// relacy_atomics instead, whose atomic<T> forwards each call to Relacy's rl::atomic<T>: the
// algorithm is written once and checked as compiled.
#pragma once

#include <atomic>

namespace cudapool::core {

struct std_atomics {
  template <class T>
  using atomic = std::atomic<T>;
};

}  // namespace cudapool::core
