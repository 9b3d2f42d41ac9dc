#!/usr/bin/env bash
# GPU call b of 2026-12-04 s20: what the stream variant's stream queries cost in serve/mixed. The
# build of call a (s20's steal, steal_busy_hold 50 us) with stream, stream-hold0 (asks every
# time), stream-holdinf (a stream found busy never asked again: next to no queries) and lockfree;
# 16 and 64 threads, each in its own process per round, 6 rounds, the order rotating, 3 x 0.5 s.
bash "$(dirname "$0")/ab_rounds.sh" b "bench stream" "bench stream-holdinf" "bench lockfree" "bench stream-hold0"
