#!/bin/bash
# drv.sh VDIR OUT : the placement driver against VDIR/segment_heap.{cpp,hpp}; then seeds 1-16 -> OUT/hashes.txt
set -eu
V=$1 O=$2 B=/work/wt-heap2/build
mkdir -p $O/inc/cudapool/detail/core; cp $V/segment_heap.hpp $O/inc/cudapool/detail/core/
g++ -std=c++20 -O2 -DNDEBUG -DCUDAPOOL_HAS_CUDA=1 -I$O/inc -I$B/src-base/lib/include -I$B/rwd-base/include -isystem /usr/local/cuda/include \
  /work/wt-heap2/docs/results/2026-12-07-s48/sim_heap/placement_check/driver.cpp $V/segment_heap.cpp $(find $B/rwd-base -name 'libcudapool_core.a') -lpthread -ldl -o $O/driver ${EXTRA_LIBS:-}
for s in $(seq 1 16); do echo "seed $s $($O/driver $s 1)"; done > $O/hashes.txt
cat $O/hashes.txt
