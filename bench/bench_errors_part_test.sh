#!/usr/bin/env bash
# CTest `bench_errors_part`: how gpu-suite takes bench's exit status, with a stand-in bench (no GPU,
# so that the peers' case runs too). In the serve part (run_rounds): a peer's benchmark that ended in
# an error (bench exits 3) is recorded and the part passes; a pool's (bench exits 1) fails it.
#   bench_errors_part_test.sh GPU_SUITE WORK_DIR
set -u
suite=$1 work=$2
rm -rf "$work"; mkdir -p "$work/bundle/bin"
cp "$suite" "$work/bundle/gpu-suite"
cp "$(dirname "$0")/merge_rounds.py" "$work/bundle/"
# The stand-in: mutex measures, cub (a peer) ends in an error and exits 3, lockfree (a pool) ends in
# an error and exits 1; each writes its --benchmark_out as bench does.
cat > "$work/bundle/bin/bench" <<'SH'
#!/usr/bin/env bash
out=; filter=
for a in "$@"; do case "$a" in --benchmark_out=*) out=${a#*=} ;; --benchmark_filter=*) filter=${a#*=} ;; esac; done
alloc=$(sed -E 's|^\^serve/([^/]+)/.*|\1|' <<< "$filter")
name="serve/$alloc/small/real_time/threads:1"
case $alloc in
mutex) row="{\"name\": \"${name}_median\", \"run_name\": \"$name\", \"aggregate_name\": \"median\", \"real_time\": 1.0, \"items_per_second\": 1000.0}"; rc=0 ;;
cub) row="{\"name\": \"$name\", \"run_name\": \"$name\", \"error_occurred\": true, \"error_message\": \"set-up of cub: failed\"}"; rc=3 ;;
*) row="{\"name\": \"$name\", \"run_name\": \"$name\", \"error_occurred\": true, \"error_message\": \"allocate failed\"}"; rc=1 ;;
esac
printf '{"context": {}, "benchmarks": [%s]}\n' "$row" > "$out"
[ $rc -eq 0 ] || echo "bench: $name ended in an error: (stand-in)" >&2
exit $rc
SH
chmod +x "$work/bundle/bin/bench"
fail() { echo "bench_errors_part: $*"; exit 1; }
log=$(SERVE_ALLOCATORS="mutex cub" SERVE_ROUNDS=1 bash "$work/bundle/gpu-suite" "$work/peer" serve 2>&1) ||
  fail "a peer's error failed the part (exit $?): $log"
for want in "serve allocator=cub round=1 exit=3" "serve allocator=cub round=1: only peers' benchmarks ended in an error" \
            "== done: status 0"; do
  grep -qF -- "$want" <<< "$log" || fail "no '$want' in: $log"
done
grep -q '"error_message": "set-up of cub: failed"' "$work/peer/serve.json" || fail "the peer's error row is not in serve.json"
log=$(SERVE_ALLOCATORS="mutex lockfree" SERVE_ROUNDS=1 bash "$work/bundle/gpu-suite" "$work/pool" serve 2>&1) &&
  fail "a pool's error did not fail the part: $log"
grep -qF "== done: status 1" <<< "$log" || fail "no '== done: status 1' in: $log"
echo "bench_errors_part: pass"
