// allocator_under_test.cpp - see allocator_under_test.hpp.
#include "allocator_under_test.hpp"

#include <stdexcept>
#include <string>

namespace cudapool::stress {

namespace {

[[noreturn]] void throw_peer_error(const peers::peer& peer) {
  throw std::runtime_error(std::string(peer.name()) + ": " + peers::last_error());
}

}  // namespace

void peer_under_test::attach_thread() {
  if (!peer_.attach_thread()) throw_peer_error(peer_);
}

void* peer_under_test::allocate(std::size_t bytes, stream_ref s) {
  void* p = peer_.allocate(bytes, s);
  if (p == nullptr) throw_peer_error(peer_);
  return p;
}

void peer_under_test::deallocate(void* p, stream_ref alloc_stream, stream_ref free_stream) {
  if (!peer_.deallocate(p, alloc_stream, free_stream)) throw_peer_error(peer_);
}

void peer_under_test::deallocate_now(void* p, stream_ref alloc_stream) {
  if (!peer_.deallocate(p, alloc_stream)) throw_peer_error(peer_);
}

}  // namespace cudapool::stress
