#!/bin/bash
# series.sh TAG COMMIT : build bench from COMMIT's segment_heap.{cpp,hpp} + stream_tag.hpp, callgrind, placement driver
set -eu
B=/work/wt-heap2/build T=$1 C=$2
mkdir -p $B/s$T
for f in segment_heap.cpp segment_heap.hpp stream_tag.hpp; do
  git -C /work/wt-heap2 show $C:lib/core/$f > $B/s$T/$f
  cmp -s $B/s$T/$f $B/src-base/lib/core/$f || cp $B/s$T/$f $B/src-base/lib/core/$f
done
nice cmake --build $B/rwd-base -j2 --target bench > $B/s$T/build.log 2>&1 || { tail -30 $B/s$T/build.log; exit 1; }
cp $B/rwd-base/bench/bench $B/bin/bench.$T
$B/tools/m.sh $B/bin/bench.$T $T
mkdir -p $B/drv/$T/inc/cudapool/detail/core; cp $B/s$T/stream_tag.hpp $B/drv/$T/inc/cudapool/detail/core/
$B/tools/drv.sh $B/s$T $B/drv/$T > /dev/null 2>&1
if diff -q $B/drv/base/hashes.txt $B/drv/$T/hashes.txt > /dev/null; then echo "$T placement_check seeds 1-16: IDENTICAL"; else echo "$T placement_check: DIFFER"; fi
