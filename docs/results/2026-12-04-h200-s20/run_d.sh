#!/usr/bin/env bash
# GPU call d of 2026-12-04 s20: where the stream variant's gap in serve/mixed comes from, with the
# library as on main (s19's, the steal experiment of calls a-c reverted): stream, stream-nopoll
# (poll_before_growth 0), stream-batch16 (epoch_batch 16), lockfree and lockfree-nopoll;
# 16 and 64 threads, each in its own process per round, 6 rounds, the order rotating, 3 x 0.5 s.
bash "$(dirname "$0")/ab_rounds.sh" d "bench stream" "bench stream-nopoll" "bench lockfree" "bench stream-batch16" "bench lockfree-nopoll"
