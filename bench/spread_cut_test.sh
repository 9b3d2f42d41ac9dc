#!/usr/bin/env bash
# CTest `spread_part_cut`: gpu-suite's spread part cut short, as .ci/gpu-run's timeout cuts it when
# the call's time runs out (s29), keeps what ended: issue 15's target measure (`instances
# --processes`) runs first and spread_instances.json is rewritten as each instances run ends. A
# stand-in bench that never returns holds the part in its second phase until the timeout.
#   spread_cut_test.sh GPU_SUITE INSTANCES WORK_DIR
set -u
suite=$1 instances=$(realpath "$2") work=$3
rm -rf "$work"; mkdir -p "$work/bundle/bin"
cp "$suite" "$work/bundle/gpu-suite"
ln -s "$instances" "$work/bundle/bin/instances"
cat > "$work/bundle/bin/bench" <<SH
#!/bin/sh
echo \$\$ >> "$work/bench.pids"
exec sleep 300
SH
chmod +x "$work/bundle/bin/bench"
cleanup() { [ -f "$work/bench.pids" ] && xargs -r kill 2> /dev/null < "$work/bench.pids"; }
trap cleanup EXIT
fail() { echo "spread_part_cut: $*"; echo "--- spread.log:"; cat "$work/out/spread.log" 2> /dev/null; exit 1; }

SPREAD_BACKEND=sim SPREAD_PROCESSES=2 SPREAD_ROUNDS=3 SPREAD_CPU=0 \
  timeout 40 bash "$work/bundle/gpu-suite" "$work/out" spread mutex tls > "$work/log" 2>&1
rc=$?
[ $rc -eq 124 ] || fail "the part was to be cut by the timeout (124), exit $rc"
[ -s "$work/bench.pids" ] || fail "the part never reached bench's processes"
[ -s "$work/out/spread_instances.json" ] || fail "no spread_instances.json after the cut"
want=processes_free
command -v taskset > /dev/null && want="processes_pinned processes_free"
/usr/bin/env python3 - "$work/out/spread_instances.json" $want <<'PY' || fail "spread_instances.json lacks a run"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
missing = [r for r in sys.argv[2:] if r not in runs]
for r in sys.argv[2:]:
    if r in runs and not runs[r]:
        missing.append(r + " (empty)")
if missing:
    print("missing:", missing, "have:", sorted(runs))
    sys.exit(1)
PY
echo "spread_part_cut: cut in bench's phase, spread_instances.json kept: $want"
