// limits.hpp - the limit/ benchmarks: what the bare mechanism of the per-thread-cache pool (tls)
// costs on this host, with no pool and no backend. See limits.cpp.
#pragma once

namespace bench {

// Registers limit/stack, limit/stack+state, limit/stack+state+lookup and limit/prodcons.
void register_limit_benchmarks();

}  // namespace bench
