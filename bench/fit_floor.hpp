// fit_floor.hpp - the memory floor of a trace for allocators that never move a block.
//
// An ideal offline-free best fit, replayed over the trace with immediate frees: every request
// (256 B granules) takes the smallest free hole that holds it (the lowest address among equal
// ones), holes coalesce at once, and the top of the address space (the "wilderness") serves only
// what fits no hole. It has no size classes, no slabs, no stream order, and unbounded search
// time; its peak footprint, rounded up to the page, is what a best-fit heap at that page can hope
// for on the trace. replay reports it beside each pool's peak reserved bytes (`floor_over_live`),
// so that a target below it reads as what it is: a request for blocks that move (virtual-memory
// remapping, remap_ratio).
#pragma once

#include <cstddef>

#include "trace.hpp"

namespace bench {

// Peak bytes of the ideal best fit over `passes` passes of t (leftovers freed between passes),
// rounded up to `page`.
[[nodiscard]] std::size_t best_fit_floor(const trace& t, std::size_t page, int passes = 2);

}  // namespace bench
