#!/bin/bash
# pertest.sh : for each commit of heap2 since 9bfb08d, default-preset build of the tests and runs them
cd /work/wt-heap2
for c in $(git rev-list --reverse 9bfb08d..heap2); do
  git checkout -q $c
  if nice cmake --build build/default -j2 --target core_test stream_arenas_conformance_test segment_heap_model > build/pertest_build.log 2>&1; then
    a=$(ctest --test-dir build/default -R "segment_heap|SegmentHeap|PoolCore" 2>&1 | grep "tests passed")
    b=$(build/default/lib/core_test 2>&1 | grep -E "^\[  (PASSED|FAILED) " | tr '\n' ' ')
    s=$(build/default/lib/adapters/stream_arenas_conformance_test 2>&1 | grep -E "^\[  (PASSED|FAILED) " | tr '\n' ' ')
    echo "$(git log -1 --format=%h) ctest: $a | core_test: $b | stream_arenas_conformance_test: $s"
  else
    echo "$(git log -1 --format=%h) BUILD FAILED"
  fi
done
git checkout -q heap2
echo ALLDONE
