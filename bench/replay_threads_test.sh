#!/usr/bin/env bash
# CTest `replay_threads`: bench's `replay/<pool>/<trace>/threads` makes each operation of a trace
# on the host thread its thread column names (trace_writer records it), in the trace's order. A
# made-up trace of three threads (thread 1 frees what thread 0 allocated, thread 2 allocates
# too) replays twice on the sim for every variant; ops_on_other_threads must be exactly the
# operations of threads 1 and 2, and the replay must not fail. A one-thread trace registers no
# threads replay (the ordered one is it).
#   replay_threads_test.sh BENCH WORK_DIR
set -u
bench=$1 work=$2
rm -rf "$work"; mkdir -p "$work"
fail() { echo "replay_threads: $*"; cat "$work/log" 2> /dev/null; exit 1; }
/usr/bin/env python3 - "$work" <<'PY' || fail "cannot write the traces"
import random, sys
work = sys.argv[1]
rng = random.Random(7)
lines, live, next_id = [], [], 1
for i in range(3000):
    if live and (len(live) > 40 or rng.random() < 0.45):
        id_, size, stream = live.pop(rng.randrange(len(live)))
        lines.append(f"f,{id_},{size},{stream},{1 if rng.random() < 0.6 else 0}")
    else:
        size = rng.choice([256, 4096, 65536, 1 << 20, 3 << 20, 8 << 20])
        stream = rng.randrange(2)
        lines.append(f"a,{next_id},{size},{stream},{2 if rng.random() < 0.3 else 0}")
        live.append((next_id, size, stream))
        next_id += 1
open(f"{work}/three.csv", "w").write("# op,id,bytes,stream,thread\n" + "\n".join(lines) + "\n")
other = sum(1 for l in lines if not l.endswith(",0"))
# Appended frees of what is still live run on the allocating thread.
other += sum(1 for l in lines if l.startswith("a,") and l.endswith(",2") and
             int(l.split(",")[1]) in {i for i, _, _ in live})
open(f"{work}/other.txt", "w").write(f"{other} {len(lines) + len(live)}\n")
open(f"{work}/one.csv", "w").write("a,1,512,0,0\nf,1,512,0,0\n")
PY
read -r other ops < "$work/other.txt"
"$bench" --backend=sim --traces= --trace="$work/three.csv" --benchmark_filter='^replay/(mutex|lockfree|tls|stream)/three/threads' \
  --replay-passes=2 --benchmark_format=json > "$work/out.json" 2> "$work/log" || fail "bench exit $?"
/usr/bin/env python3 - "$work/out.json" "$other" "$ops" <<'PY' || fail "the threads replays"
import json, sys
d = json.load(open(sys.argv[1]))
other, ops = int(sys.argv[2]), int(sys.argv[3])
runs = [b for b in d["benchmarks"] if "/threads" in b["name"]]
assert sorted(b["name"].split("/")[1] for b in runs) == ["lockfree", "mutex", "stream", "tls"], [b["name"] for b in runs]
for b in runs:
    assert "error_occurred" not in b, b
    assert b["iterations"] == 2 * ops, (b["name"], b["iterations"], ops)
    assert b["ops_on_other_threads"] == 2 * other, (b["name"], b["ops_on_other_threads"], 2 * other)
    assert b["reserved_over_live"] >= 1.0, b
PY
"$bench" --backend=sim --traces= --trace="$work/one.csv" --benchmark_list_tests > "$work/list" 2> "$work/log" || fail "bench --benchmark_list_tests exit $?"
grep -q '^replay/tls/one/' "$work/list" || fail "no replay of the one-thread trace"
! grep -q '^replay/.*/one/threads' "$work/list" || fail "a one-thread trace registered a threads replay"
echo "replay_threads: ok ($other of $ops operations on threads 1 and 2)"
