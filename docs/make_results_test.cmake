# CTest `results_page`: docs/make_results.py must still turn a committed run directory into a page
# with the replay table, so that the generator cannot rot between GPU runs. CTest
# `results_page_current` runs it on the run docs/results.md is generated from.
#   cmake -DPYTHON=... -DSCRIPT=docs/make_results.py -DRUN_DIR=docs/results/<run> -DOUT_DIR=... -P this
# [-DWORKLOADS=FILE] [-DEXTRA=...]
foreach(var PYTHON SCRIPT RUN_DIR OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "make_results_test.cmake: -D${var}=... is required")
  endif()
endforeach()
include("${CMAKE_CURRENT_LIST_DIR}/results_page.cmake")
# -DWORKLOADS=FILE: the run directory with this workloads.json instead of its own (a copy).
if(DEFINED WORKLOADS)
  set(copy "${OUT_DIR}.run")
  file(REMOVE_RECURSE "${copy}")
  file(COPY "${RUN_DIR}/" DESTINATION "${copy}")
  file(COPY_FILE "${WORKLOADS}" "${copy}/workloads.json")
  set(RUN_DIR "${copy}")
endif()
cudapool_results_page("${PYTHON}" "${SCRIPT}" "${RUN_DIR}" "${OUT_DIR}")
cudapool_require_text("${page}" "${text}"
    "## Replay of recorded traces"
    "### ns per operation: stream-ordered (immediate)"
    "| allocator | cnn_varbatch | lm_infer_varseq | lm_train | mlp_4stream | transformer_lm_train |"
    "| cudaMallocAsync | "
    "### x cudaMallocAsync (stream-ordered)"
    "### peak reserved / peak live"
    "## Serve: "
    "## PyTorch workloads"
    "## Peers under stress"
    "### Single-thread spread between processes"
    "## Pool stress, soaks and correctness")
# -DEXTRA=... (a list, '|'-separated): more text the page must hold for this run directory.
if(DEFINED EXTRA)
  string(REPLACE "|" ";" extra "${EXTRA}")
  cudapool_require_text("${page}" "${text}" ${extra})
endif()
if(NOT EXISTS "${OUT_DIR}/results/plots/replay_time_per_op.png")
  message(FATAL_ERROR "no replay plot in ${OUT_DIR}/results/plots")
endif()
message(STATUS "results page: ${page}")
