# CTest `results_page`: docs/make_results.py must still turn a committed run directory into a page
# with the replay table, so that the generator cannot rot between GPU runs. CTest
# `results_page_current` runs it on the run docs/results.md is generated from.
#   cmake -DPYTHON=... -DSCRIPT=docs/make_results.py -DRUN_DIR=docs/results/<run> -DOUT_DIR=... -P this
foreach(var PYTHON SCRIPT RUN_DIR OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "make_results_test.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}")
set(page "${OUT_DIR}/results.md")
execute_process(
  COMMAND "${PYTHON}" "${SCRIPT}" "${RUN_DIR}" --out "${page}" --date test --host test --command test
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_results.py exited ${rc}:\n${out}\n${err}")
endif()
file(READ "${page}" text)
foreach(needle
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
  string(FIND "${text}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${page} lacks '${needle}'")
  endif()
endforeach()
# -DEXTRA=... (a list, '|'-separated): more text the page must hold for this run directory.
if(DEFINED EXTRA)
  string(REPLACE "|" ";" extra "${EXTRA}")
  foreach(needle IN LISTS extra)
    string(FIND "${text}" "${needle}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${page} lacks '${needle}'")
    endif()
  endforeach()
endif()
if(NOT EXISTS "${OUT_DIR}/results/plots/replay_time_per_op.png")
  message(FATAL_ERROR "no replay plot in ${OUT_DIR}/results/plots")
endif()
message(STATUS "results page: ${page}")
