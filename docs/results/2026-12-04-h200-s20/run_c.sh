#!/usr/bin/env bash
# GPU call c of 2026-12-04 s20: longer holds of a stream found busy (steal_busy_hold) in
# serve/mixed, after call b: stream (50 us), stream-hold500us, stream-hold2ms, stream-holdinf
# (never asked again) and lockfree;
# 16 and 64 threads, each in its own process per round, 6 rounds, the order rotating, 3 x 0.5 s.
bash "$(dirname "$0")/ab_rounds.sh" c "bench stream" "bench stream-hold500us" "bench lockfree" "bench stream-hold2ms" "bench stream-holdinf"
