#!/usr/bin/env bash
# CTest `torch_part_rounds`: gpu-suite's torch part without PyTorch. A stand-in for python writes
# each script's --out file, so that the part's own logic is what runs: workloads.json summarised
# after every round (a part cut by an outer timeout keeps its whole rounds), and PART_DEADLINE
# stopping before the next round and skipping the library-default runs; train_compare's pairs in
# alternating order, all compared at once, and PART_DEADLINE stopping before the second pair.
#   torch_part_test.sh GPU_SUITE WORK_DIR
set -u
suite=$1 work=$2
rm -rf "$work"; mkdir -p "$work/bundle/lib" "$work/bundle/bin"
cp "$suite" "$work/bundle/gpu-suite"
touch "$work/bundle/lib/libcudapool_torch.so" "$work/bundle/train_compare.py" "$work/bundle/workloads.py"
cat > "$work/python" <<'PY'
#!/usr/bin/env bash
out=; for a in "$@"; do case "$a" in --out=*) out=${a#--out=} ;; esac; done
[ "$1" = -c ] && { echo "torch (stand-in)"; exit 0; }
[ -n "$out" ] && printf '{"args": "%s"}\n' "$*" > "$out"
exit 0
PY
chmod +x "$work/python"
fail() { echo "torch_part_rounds: $*"; exit 1; }
# Two rounds, no deadline: a summary after each, then the library-default run and the last summary.
log=$(PYTHON="$work/python" TORCH_ROUNDS=2 bash "$work/bundle/gpu-suite" "$work/two" torch 2>&1) || fail "exit $?: $log"
for want in "workloads: rounds 1-1 summarised into workloads.json" "workloads: rounds 1-2 summarised into workloads.json" \
            "--max-class-bytes=1m"; do
  grep -qF -- "$want" <<< "$log" || fail "no '$want' in: $log"
done
grep -q "workloads_cudapool-stream_r2.json" "$work/two/workloads.json" || fail "round 2 not in workloads.json"
# train_compare: pair 1 torch first, pair 2 torch last; one compare of both pairs into torch.json.
order=$(grep -E '^-- (torch|cudapool .*) \(pair [0-9]\)$' <<< "$log" | tr '\n' '|')
[ "$order" = "-- torch (pair 1)|-- cudapool (default variant) (pair 1)|-- cudapool (default variant) (pair 2)|-- torch (pair 2)|" ] ||
  fail "train_compare's order: $order"
grep -q "torch_p1.json [^ ]*cudapool_p1.json [^ ]*torch_p2.json [^ ]*cudapool_p2.json" "$work/two/torch.json" ||
  fail "torch.json does not compare both pairs: $(cat "$work/two/torch.json")"
# A deadline already passed: round 1 runs and is summarised, then the part stops (status 0).
log=$(PYTHON="$work/python" TORCH_ROUNDS=3 PART_DEADLINE=$(date +%s) bash "$work/bundle/gpu-suite" "$work/cut" torch 2>&1) ||
  fail "exit $? with PART_DEADLINE: $log"
for want in "workloads: rounds 1-1 summarised into workloads.json" "workloads: stopped before round 2" \
            "workloads: the library-default runs skipped (PART_DEADLINE)" "train_compare: stopped before round 2"; do
  grep -qF -- "$want" <<< "$log" || fail "no '$want' in: $log"
done
grep -q "_r2.json" "$work/cut/workloads.json" && fail "a round after the deadline ran"
grep -q "_p2.json" "$work/cut/torch.json" && fail "a pair after the deadline ran"
grep -q "cudapool_p1.json" "$work/cut/torch.json" || fail "pair 1 not compared: $(cat "$work/cut/torch.json")"
grep -q "workloads_cudapool-tls_r1.json" "$work/cut/workloads.json" || fail "round 1 not in workloads.json"
# TORCH_STREAM_ARENAS: every variant once more with arenas, in the same round, its own row's runs;
# TORCH_TRAIN_PAIRS=0: no pair and no compare (status 0).
log=$(PYTHON="$work/python" TORCH_STREAM_ARENAS=16 TORCH_TRAIN_PAIRS=0 TORCH_LIBRARY_DEFAULT_VARIANTS= \
      bash "$work/bundle/gpu-suite" "$work/arenas" torch 2>&1) || fail "exit $? with TORCH_STREAM_ARENAS: $log"
for v in mutex lockfree tls stream; do
  grep -qF -- "-- workloads.py --allocator=cudapool --variant=$v --stream-arenas=16 (round 1)" <<< "$log" ||
    fail "no arena run of $v in: $log"
  grep -q "workloads_arenas-${v}_r1.json" "$work/arenas/workloads.json" ||
    fail "$v's arena run not summarised: $(cat "$work/arenas/workloads.json")"
done
grep -qF "train_compare: no pair ran (TORCH_TRAIN_PAIRS=0)" <<< "$log" || fail "pairs ran with TORCH_TRAIN_PAIRS=0: $log"
[ -e "$work/arenas/torch.json" ] && fail "a compare without pairs"
echo "torch_part_rounds: pass"
