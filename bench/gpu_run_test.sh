#!/usr/bin/env bash
# CTest `gpu_run`: .ci/gpu-run (gpu-suite's parts in one call's time) with a stand-in gpu-suite, so
# that its own logic is what runs: the parts in the order given, each packed as it ends; a part
# whose estimate no longer fits skipped; a part that overruns cut at the call's end and still
# packed; PART_DEADLINE handed to the parts; soak_tests running both parts.
#   gpu_run_test.sh GPU_RUN WORK_DIR
set -u
run=$1 work=$2
rm -rf "$work"; mkdir -p "$work"
cat > "$work/suite" <<'SH'
#!/usr/bin/env bash
# The stand-in: records the part, its PART_DEADLINE and the order; sleeps STANDIN_SLEEP_<part>.
out=$1 part=$2
mkdir -p "$out"
echo "$part ${PART_DEADLINE:-none}" >> "$STANDIN_ORDER"
var=STANDIN_SLEEP_$part
sleep "${!var:-0}"
echo "$part output" > "$out/$part.json"
SH
chmod +x "$work/suite"
fail() { echo "gpu_run: $*"; exit 1; }
export GPU_SUITE=$work/suite STANDIN_ORDER=$work/order.txt

# Three short parts in order, then one whose estimate (100 s) does not fit a 20 s call.
start=$(date +%s)
GPU_SUITE=$work/suite bash "$run" "$work/a" 20 torch:1 replay:1 soak_tests:1 spread:100 > "$work/a.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$work/a.log")"
# soak_tests starts both at once: their two lines come in either order.
[ "$(cut -d' ' -f1 "$work/order.txt" | head -2 | tr '\n' ' ')" = "torch replay " ] || fail "order: $(cat "$work/order.txt")"
[ "$(cut -d' ' -f1 "$work/order.txt" | tail -n +3 | sort | tr '\n' ' ')" = "soak tests " ] || fail "soak_tests: $(cat "$work/order.txt")"
deadline=$(head -1 "$work/order.txt" | cut -d' ' -f2)
[[ $deadline =~ ^[0-9]+$ ]] || fail "no PART_DEADLINE handed to the part ($deadline)"
(( deadline >= start + 20 && deadline <= start + 22 )) || fail "PART_DEADLINE $deadline, the call began at $start with 20 s"
for p in torch replay soak_tests; do
  [ -s "$work/a/$p.tar.xz" ] || fail "no $p.tar.xz"
  [ -d "$work/a/$p" ] && fail "$p's directory left beside its archive"
done
tar -tJf "$work/a/soak_tests.tar.xz" | grep -q "soak_tests/soak.json" || fail "soak_tests.tar.xz lacks the soak's output"
tar -tJf "$work/a/soak_tests.tar.xz" | grep -q "soak_tests/tests.json" || fail "soak_tests.tar.xz lacks the tests' output"
grep -q "spread: skipped, needs about 100 s" "$work/a/gpu-run.log" || fail "spread not skipped: $(cat "$work/a/gpu-run.log")"
[ -e "$work/a/spread.tar.xz" ] && fail "a skipped part left an archive"
grep -q "torch: done in" "$work/a/gpu-run.log" || fail "no 'torch: done' line"

# A part that overruns the call is cut at its end, packed with what it wrote, and the exit is 1.
rm -f "$work/order.txt"
STANDIN_SLEEP_serve=30 bash "$run" "$work/b" 3 serve:1 > "$work/b.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "an overrun part: exit $rc, want 1: $(cat "$work/b.log")"
grep -q "serve: cut at" "$work/b/gpu-run.log" || fail "no 'serve: cut' line: $(cat "$work/b/gpu-run.log")"
[ -s "$work/b/serve.tar.xz" ] || fail "the cut part was not packed"
(( $(date +%s) - start < 20 + 10 )) || fail "the overrun part was not cut at the call's end"

# An estimate of 0 with no time left: skipped, never run without a limit (timeout 0 has none).
rm -f "$work/order.txt"
bash "$run" "$work/d" 0 torch:0 > /dev/null 2>&1
grep -q "torch: skipped" "$work/d/gpu-run.log" || fail "a part ran with no time left: $(cat "$work/d/gpu-run.log")"
[ -e "$work/order.txt" ] && fail "the part ran with no time left"

# Bad input.
bash "$run" "$work/c" soon torch > /dev/null 2>&1 && fail "SECONDS 'soon' accepted"
bash "$run" "$work/c" 10 > /dev/null 2>&1 && fail "no part accepted"
echo "gpu_run: pass"
