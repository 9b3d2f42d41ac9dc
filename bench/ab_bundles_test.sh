#!/usr/bin/env bash
# CTest `ab_bundles`: bench/ab_bundles.sh on the simulated device with two bundles of this build's
# bench, one of them bin/bench alone (an older commit's bench: it runs with the first bundle's lib/).
# Every round writes each bundle's JSON with the filtered benchmark's median; a missing bench is
# refused (exit 2) before anything runs; a bench that fails makes the script exit 1; PIN=CPU runs
# every process on that CPU alone (a stand-in bench reports its affinity), and a PIN that taskset
# refuses fails the run.
#   ab_bundles_test.sh AB_BUNDLES BENCH WORK_DIR
set -u
script=$1 bench=$(realpath "$2") work=$3
rm -rf "$work"; mkdir -p "$work/a/bin" "$work/a/lib" "$work/b/bin" "$work/c"
ln -s "$bench" "$work/a/bin/bench"
ln -s "$bench" "$work/b/bin/bench"
fail() { echo "ab_bundles: $*"; cat "$work/log" 2> /dev/null; exit 1; }
F='^pair/mutex/4096/real_time/threads:1$'
BACKEND=sim ROUNDS=2 REPS=2 MIN_TIME=0.01 TRACES= bash "$script" "$work/out" "$F" "$work/a" "$work/b" > "$work/log" 2>&1 ||
  fail "exit $? with two good bundles"
for f in b0_1 b1_1 b0_2 b1_2; do
  /usr/bin/env python3 - "$work/out/$f.json" <<'PY' || fail "$f.json lacks the median of pair/mutex"
import json, sys
d = json.load(open(sys.argv[1]))
assert any(b["run_name"] == "pair/mutex/4096/real_time/threads:1" and b.get("aggregate_name") == "median"
           for b in d["benchmarks"]), d["benchmarks"]
PY
done
BACKEND=sim ROUNDS=1 bash "$script" "$work/out2" "$F" "$work/a" "$work/c" > "$work/log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "a bundle without bin/bench: exit $rc, not 2"
[ ! -e "$work/out2/b0_1.json" ] || fail "a bundle without bin/bench: a process ran anyway"
BACKEND=nonsense ROUNDS=1 bash "$script" "$work/out3" "$F" "$work/a" "$work/b" > "$work/log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "benches that fail: exit $rc, not 1"
# PIN: a stand-in bench that writes the CPUs it may run on, one line per process.
mkdir -p "$work/p/bin"
printf '%s\n' '#!/usr/bin/env bash' \
  "grep Cpus_allowed_list /proc/self/status | awk '{print \$2}' >> '$work/affinity'" \
  "echo '{\"benchmarks\": []}'" > "$work/p/bin/bench"
chmod +x "$work/p/bin/bench"
rm -f "$work/affinity"
PIN=0 BACKEND=sim ROUNDS=2 MIN_TIME=0.01 REPS=1 TRACES= bash "$script" "$work/out4" "$F" "$work/a" "$work/p" > "$work/log" 2>&1 ||
  fail "PIN=0: exit $?"
[ "$(cat "$work/affinity")" = "$(printf '0\n0')" ] || fail "PIN=0: the processes ran on $(paste -sd' ' "$work/affinity")"
if [ "$(nproc)" -gt 1 ]; then  # unpinned, the stand-in may run on any CPU
  rm -f "$work/affinity"
  BACKEND=sim ROUNDS=1 MIN_TIME=0.01 REPS=1 TRACES= bash "$script" "$work/out5" "$F" "$work/a" "$work/p" > "$work/log" 2>&1 || fail "unpinned: exit $?"
  [ "$(cat "$work/affinity")" != 0 ] || fail "unpinned: the process ran on CPU 0 alone"
fi
PIN=99999 BACKEND=sim ROUNDS=1 TRACES= bash "$script" "$work/out6" "$F" "$work/a" "$work/p" > "$work/log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "PIN=99999 (no such CPU): exit $rc, not 1"
echo "ab_bundles: ok"
