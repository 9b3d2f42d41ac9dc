# CTest `serve_rounds`: gpu-suite's serve part (each allocator in its own processes, round by round)
# on the simulated device, merge_rounds.py and docs/make_results.py's reading of its serve.json: the
# page must take each round's ratios before the median over the rounds, so that the part cannot rot
# between GPU runs.
#   cmake -DPYTHON=... -DBENCH=<bench binary> -DSOURCE_DIR=<repo> -DOUT_DIR=... -P this
foreach(var PYTHON BENCH SOURCE_DIR OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "serve_rounds_test.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}/bundle/bin")
# The bundle's layout, as .ci/gpu-bundle makes it.
file(COPY "${SOURCE_DIR}/.ci/gpu-suite" "${SOURCE_DIR}/bench/merge_rounds.py" DESTINATION "${OUT_DIR}/bundle")
file(CREATE_LINK "${BENCH}" "${OUT_DIR}/bundle/bin/bench" SYMBOLIC)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env SERVE_BACKEND=sim SERVE_ROUNDS=2 "SERVE_ALLOCATORS=mutex lockfree none"
          SERVE_THREADS=4 SERVE_MIN_TIME=0.001 SERVE_REPS=2
          bash "${OUT_DIR}/bundle/gpu-suite" "${OUT_DIR}/run" serve
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpu-suite serve exited ${rc}:\n${out}\n${err}")
endif()
foreach(a mutex lockfree none)
  foreach(r 1 2)
    if(NOT EXISTS "${OUT_DIR}/run/serve_rounds/${a}_r${r}.json")
      message(FATAL_ERROR "no serve_rounds/${a}_r${r}.json:\n${out}")
    endif()
  endforeach()
endforeach()
include("${SOURCE_DIR}/docs/results_page.cmake")
file(READ "${OUT_DIR}/run/serve.json" merged)
cudapool_require_text("serve.json" "${merged}"
    "\"round_medians\"" "\"rounds\": 2" "serve/lockfree/mixed/real_time/threads:4_median")
cudapool_results_page("${PYTHON}" "${SOURCE_DIR}/docs/make_results.py" "${OUT_DIR}/run" "${OUT_DIR}/page")
cudapool_require_text("${page}" "${text}"
    "### serve/mixed" "with rounds: the median of each round's ratio"
    "The rounds' spread (cv of the 2 rounds' medians" "| lockfree | " "| none | ")
message(STATUS "serve rounds page: ${page}")
