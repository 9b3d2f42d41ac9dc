#!/usr/bin/env bash
# s33 call C (device), the same bundle: pagebench (the page's microbenchmarks), peers through
# stress, the sanitizer demos, then one round of s32's replay A/B of the heap's walk for runs
# (a07f3fc: .bundle against .bundle_s32b, the same library without it).
#   OUT=... bash docs/results/2026-12-06-h200-s33/run_c.sh   (carry .bundle, .bundle_s32b)
set -u
out=${OUT:-/tmp/s33_c}
mkdir -p "$out/ab/traces"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
budget=${BUDGET:-400}
until=$(( $(date +%s) + budget ))
bash .bundle/gpu-run "$out" $(( budget - 70 )) pagebench peers sanitizer
for t in lm_infer_varseq transformer_lm_train; do cp .bundle/traces/$t.csv "$out/ab/traces/"; done
F='^replay/(lockfree|mutex|tls|stream)/(lm_infer_varseq|transformer_lm_train)(/elided)?/real_time$'
ROUNDS=1 REPS=3 MIN_TIME=0.3 TRACES="$out/ab/traces" timeout $(( until - $(date +%s) )) \
  bash bench/ab_bundles.sh "$out/ab" "$F" .bundle .bundle_s32b > "$out/ab/rounds.txt" 2>&1
echo "heap ab: exit $?" >> "$out/gpu-run.log"
rm -rf "$out/ab/traces"; tar -cJf "$out/ab.tar.xz" -C "$out" ab && rm -rf "$out/ab"
cat "$out/gpu-run.log"
