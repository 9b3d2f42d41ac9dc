#!/bin/bash
# s25's A/B on the sim backend: s22's ab.sh with 5 rounds and mutex's pair too.
# Usage (from the repository root): ab.sh BASE_BENCH NEW_BENCH OUT_DIR
# base: a worktree of 36b6a7f (the library of s24, 218df46); new: the marks rule (epoch_table::full).
export ROUNDS=${ROUNDS:-5}
export FILTER='replay/(lockfree|tls|stream|mutex)/(transformer_lm_train|cnn_varbatch|mlp_4stream|lm_train|lm_infer_varseq)(/elided|/immediate)?/real_time$|pair/(tls|lockfree|stream|mutex)/4096/real_time/threads:1$'
exec bash "$(dirname "$0")/../2026-12-04-vm-s22/ab.sh" "$@"
