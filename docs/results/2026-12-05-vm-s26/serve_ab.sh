#!/bin/bash
# serve on the sim backend, base against new: s22's ab.sh, unpinned (serve's threads need both
# vCPUs), 0.3 s a point, every variant, small and mixed, 1, 16 and 64 threads (the VM's 2 vCPUs are
# oversubscribed from 4 threads on: the heap's lock is contended there). SERVE_FILTER narrows it.
# Usage (from the repository root): [ROUNDS=N] serve_ab.sh BASE_BENCH NEW_BENCH OUT_DIR; then
# serve_ab.py OUT_DIR.
export ROUNDS=${ROUNDS:-3} PIN= MIN_TIME=0.3
export FILTER=${SERVE_FILTER:-'serve/(mutex|lockfree|tls|stream)/(small|mixed)/real_time/threads:(1|16|64)$'}
exec bash "$(dirname "$0")/../2026-12-04-vm-s22/ab.sh" "$@"
