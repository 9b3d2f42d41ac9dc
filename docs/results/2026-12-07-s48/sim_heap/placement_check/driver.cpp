// Differential placement check: a random op sequence on one segment_heap (sim, 2 MiB pages);
// prints every returned offset (relative to the first segment's base) and outcome. Two builds of
// segment_heap.cpp must print the same.
#include <cudapool/detail/core/segment_heap.hpp>
#include <atomic>
#include <cstdio>
#include <random>
#include <vector>
using namespace cudapool; using namespace cudapool::core;
int main(int argc, char** argv) {
  const unsigned seed = argc > 1 ? std::atoi(argv[1]) : 1;
  const int vm = argc > 2 ? std::atoi(argv[2]) : 1;
  sim_options o; o.page_bytes = vm ? (std::size_t{2} << 20) : 0; o.memory_bytes = std::size_t{4} << 30;
  auto dev = make_sim_backend(o);
  segment_heap::config c; c.reservation_bytes = std::size_t{8} << 30; c.remap_ratio = (seed % 3 == 0) ? 1.5 : 0.0;
  segment_heap heap(*dev, c);
  std::mt19937_64 rng(seed);
  constexpr int S = 3;
  std::atomic<std::uint64_t> completed[S]; std::uint64_t epoch[S]; int dummy[S];
  for (int s = 0; s < S; ++s) { completed[s] = 0; epoch[s] = 1; }
  struct live { void* p; segment_heap::kind k; int s; };
  std::vector<live> lives;
  std::uintptr_t base = 0; unsigned long long h = 1469598103934665603ull;
  auto mix = [&](unsigned long long v) { h = (h ^ v) * 1099511628211ull; };
  for (int i = 0; i < 200000; ++i) {
    const unsigned r = rng() % 100;
    if ((r < 50 && lives.size() < 300) || lives.size() < 20) {
      const int s = rng() % S;
      std::size_t bytes;
      const unsigned z = rng() % 10;
      if (z < 4) bytes = 256 * (1 + rng() % 1024); else if (z < 8) bytes = (256 << 10) + rng() % (8u << 20); else bytes = (1u << 20) * (1 + rng() % 64);
      const std::size_t al = (rng() % 8 == 0) ? (std::size_t{64} << 10) : 256;
      const auto k = (rng() % 4 == 0) ? segment_heap::kind::slab : segment_heap::kind::large;
      stream_use use{&dummy[s], rng() % 8 != 0};
      const void* behind = nullptr; bool wait_own = false;
      void* p = heap.allocate(bytes, al, k, use, true, (rng() % 2) ? &behind : nullptr, (rng() % 2) ? &wait_own : nullptr);
      if (p == nullptr) { mix(behind != nullptr ? 2 : wait_own ? 3 : 1); continue; }
      if (base == 0) base = reinterpret_cast<std::uintptr_t>(p);
      mix(reinterpret_cast<std::uintptr_t>(p) - base);
      lives.push_back({p, k, s});
    } else if (r < 97) {
      const std::size_t j = rng() % lives.size();
      const live l = lives[j]; lives[j] = lives.back(); lives.pop_back();
      stream_tag t;
      if (rng() % 3 != 0) { t.completed = &completed[l.s]; t.epoch = epoch[l.s]; t.stream = &dummy[l.s]; t.same_stream = true; }
      std::size_t req = 0;
      mix(static_cast<unsigned long long>(heap.free(l.p, l.k, t, &req)) * 7 + req);
    } else if (r < 99) {
      const int s = rng() % S;
      completed[s].store(epoch[s]); ++epoch[s]; heap.note_completion();
    } else {
      mix(heap.trim());
    }
  }
  const auto st = heap.stats();
  std::printf("hash %016llx mapped %zu peak %zu\n", h, heap.mapped_bytes(), heap.peak_mapped_bytes());
  for (auto& l : lives) heap.free(l.p, l.k, {}, nullptr);
  (void)st;
}
