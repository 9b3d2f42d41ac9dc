# CTests `serve_rounds` and `replay_rounds`: gpu-suite's serve or replay part (each allocator in its
# own processes, round by round; run_rounds) on the simulated device, merge_rounds.py and
# docs/make_results.py's reading of its serve.json or replay.json. The serve page must take each
# round's ratios before the median over the rounds; the replay page must say where its figures come
# from and show the rounds' spread; so that neither part can rot between GPU runs. CTest
# `spread_part` runs the spread part the same way (bench's fresh processes and the instances probe,
# -DINSTANCES=<instances binary>), and the page must show both. CTest `pagebench_part` runs the
# pagebench part (the page's pair, prodcons and limit benchmarks, merged into one bench.json).
#   cmake -DPART=serve|replay|spread|pagebench -DPYTHON=... -DBENCH=<bench binary> -DSOURCE_DIR=<repo> -DOUT_DIR=... -P this
foreach(var PART PYTHON BENCH SOURCE_DIR OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "rounds_test.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}/bundle/bin" "${OUT_DIR}/bundle/traces")
# The bundle's layout, as .ci/gpu-bundle makes it.
file(COPY "${SOURCE_DIR}/.ci/gpu-suite" "${SOURCE_DIR}/bench/merge_rounds.py" "${SOURCE_DIR}/bench/merge_bench.py"
     DESTINATION "${OUT_DIR}/bundle")
file(CREATE_LINK "${BENCH}" "${OUT_DIR}/bundle/bin/bench" SYMBOLIC)
if(PART STREQUAL "serve")
  set(allocators mutex lockfree none)
  set(env SERVE_BACKEND=sim SERVE_ROUNDS=2 "SERVE_ALLOCATORS=mutex lockfree none" SERVE_THREADS=4
          SERVE_MIN_TIME=0.001 SERVE_REPS=2)
  set(point "serve/lockfree/mixed/real_time/threads:4_median")
  set(needles "### serve/mixed" "with rounds: the median of each round's ratio"
              "The rounds' spread (cv of the 2 rounds' medians" "| lockfree | " "| none | "
              "2 equal allocators with this run's median round spread would score (simulated, 2 rounds)")
elseif(PART STREQUAL "replay")
  # One short trace of the repo's (the bundle holds them all).
  file(COPY "${SOURCE_DIR}/traces/lm_infer_varseq.csv" DESTINATION "${OUT_DIR}/bundle/traces")
  set(allocators mutex lockfree)
  # REPLAY_CPU=0: every process pinned (taskset) to CPU 0, which every host has.
  set(env REPLAY_BACKEND=sim REPLAY_ROUNDS=2 "REPLAY_ALLOCATORS=mutex lockfree" REPLAY_MIN_TIME=0.001
          REPLAY_REPS=2 REPLAY_CPU=0)
  set(point "replay/lockfree/lm_infer_varseq/elided/real_time_median")
  set(needles "## Replay of recorded traces" "From gpu-suite's replay part, `replay.json`"
              "The rounds' spread, stream-ordered (cv of the 2 rounds' medians" "| lockfree | " "| mutex | ")
elseif(PART STREQUAL "spread")
  if(NOT DEFINED INSTANCES)
    message(FATAL_ERROR "rounds_test.cmake: the spread part needs -DINSTANCES=<instances binary>")
  endif()
  file(CREATE_LINK "${INSTANCES}" "${OUT_DIR}/bundle/bin/instances" SYMBOLIC)
  set(allocators)
  set(env SPREAD_BACKEND=sim SPREAD_PROCESSES=2 SPREAD_REPETITIONS=2 SPREAD_ROUNDS=3 SPREAD_INSTANCES=3 SPREAD_CPU=0)
  set(needles "### Single-thread spread between processes" "| `pair/tls/4096` | "
              "Instance by instance (`instances`, spread_instances.json): 3 pools of a variant alive at once"
              "| `tls` | free_1 | " "| `lockfree` | pinned_2 | "
              "Fresh processes (`instances --processes`, spread_instances.json): 2 processes of each variant"
              "| `tls` | processes_free | " "| `lockfree` | processes_pinned | ")
elseif(PART STREQUAL "pagebench")
  # Not rounds: the page's microbenchmarks in one bench.json (two filters, two minimum times).
  set(allocators)
  set(env PAGEBENCH_BACKEND=sim PAGEBENCH_MIN_TIME=0.001 PAGEBENCH_LIMIT_MIN_TIME=0.001 BENCH_REPS=2)
  set(needles "### pair/4096 (allocate + free of 4096 bytes on each thread)" "### prodcons (4 KiB blocks"
              "| tls | ")
else()
  message(FATAL_ERROR "rounds_test.cmake: PART must be serve, replay, spread or pagebench, not '${PART}'")
endif()
if(PART STREQUAL "replay")
  # As .ci/gpu-bundle carries it: bin/ packed into bin.tar.xz, which gpu-suite unpacks.
  execute_process(COMMAND tar -chJf bin.tar.xz bin WORKING_DIRECTORY "${OUT_DIR}/bundle" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tar -cJf bin.tar.xz exited ${rc}")
  endif()
  file(REMOVE_RECURSE "${OUT_DIR}/bundle/bin")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env ${env} bash "${OUT_DIR}/bundle/gpu-suite" "${OUT_DIR}/run" ${PART}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpu-suite ${PART} exited ${rc}:\n${out}\n${err}")
endif()
foreach(a IN LISTS allocators)
  foreach(r 1 2)
    if(NOT EXISTS "${OUT_DIR}/run/${PART}_rounds/${a}_r${r}.json")
      message(FATAL_ERROR "no ${PART}_rounds/${a}_r${r}.json:\n${out}")
    endif()
  endforeach()
endforeach()
if(PART STREQUAL "serve")
  # One repetition per process gives no median rows: the part must fail and say why, not merge
  # into an empty serve.json.
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env SERVE_BACKEND=sim SERVE_ROUNDS=1 SERVE_ALLOCATORS=none SERVE_THREADS=1
            SERVE_KINDS=small SERVE_MIN_TIME=0.001 SERVE_REPS=1 bash "${OUT_DIR}/bundle/gpu-suite" "${OUT_DIR}/one_rep" serve
    RESULT_VARIABLE rc1 OUTPUT_VARIABLE out1 ERROR_VARIABLE err1)
  if(rc1 EQUAL 0 OR NOT "${out1}${err1}" MATCHES "no median row in the inputs")
    message(FATAL_ERROR "gpu-suite serve with SERVE_REPS=1 exited ${rc1} without naming the missing medians:\n${out1}\n${err1}")
  endif()
  # PART_DEADLINE already passed: the first round runs, the part stops before the second, and
  # serve.json holds that round (merged after every round, so that a cut part keeps its rounds).
  string(TIMESTAMP now "%s" UTC)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env SERVE_BACKEND=sim SERVE_ROUNDS=3 SERVE_ALLOCATORS=none SERVE_THREADS=1
            SERVE_KINDS=small SERVE_MIN_TIME=0.001 SERVE_REPS=2 PART_DEADLINE=${now}
            bash "${OUT_DIR}/bundle/gpu-suite" "${OUT_DIR}/deadline" serve
    RESULT_VARIABLE rc2 OUTPUT_VARIABLE out2 ERROR_VARIABLE err2)
  if(NOT rc2 EQUAL 0 OR NOT "${out2}" MATCHES "serve: stopped before round 2"
     OR NOT "${out2}" MATCHES "serve: rounds 1-1 merged into serve.json"
     OR EXISTS "${OUT_DIR}/deadline/serve_rounds/none_r2.json")
    message(FATAL_ERROR "gpu-suite serve with PART_DEADLINE passed exited ${rc2}, or ran round 2:\n${out2}\n${err2}")
  endif()
  file(READ "${OUT_DIR}/deadline/serve.json" one_round)
  if(NOT one_round MATCHES "\"rounds\": 1")
    message(FATAL_ERROR "serve.json after a deadline does not hold round 1 alone")
  endif()
endif()
if(PART STREQUAL "replay")
  # A CPU the host does not have: taskset refuses to start bench, so no process of the part may
  # write its JSON and the part must fail (the pin is applied to every replay process).
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env REPLAY_BACKEND=sim REPLAY_ROUNDS=1 REPLAY_ALLOCATORS=mutex REPLAY_MIN_TIME=0.001
            REPLAY_REPS=2 REPLAY_MODES= REPLAY_CPU=4095 bash "${OUT_DIR}/bundle/gpu-suite" "${OUT_DIR}/no_cpu" replay
    RESULT_VARIABLE rc3 OUTPUT_VARIABLE out3 ERROR_VARIABLE err3)
  if(rc3 EQUAL 0 OR NOT "${out3}" MATCHES "replay allocator=mutex round=1: no results")
    message(FATAL_ERROR "gpu-suite replay with REPLAY_CPU=4095 (no such CPU) exited ${rc3} or ran a replay:\n${out3}\n${err3}")
  endif()
endif()
if(NOT out MATCHES "${PART}: rounds 1-1 merged into ${PART}.json" AND NOT PART MATCHES "^(spread|pagebench)$")
  message(FATAL_ERROR "gpu-suite ${PART} did not merge after round 1:\n${out}")
endif()
include("${SOURCE_DIR}/docs/results_page.cmake")
if(PART STREQUAL "spread")
  file(READ "${OUT_DIR}/run/spread_instances.json" merged)
  cudapool_require_text("spread_instances.json" "${merged}" "\"pinned_2\"" "\"free_2\"" "\"f_instances\"" "\"processes_free\""
                        "\"mode\": \"processes\"")
elseif(PART STREQUAL "pagebench")
  file(READ "${OUT_DIR}/run/bench.json" merged)
  cudapool_require_text("bench.json" "${merged}" "\"pair/tls/4096/real_time/threads:1_median\""
                        "\"prodcons/lockfree/real_time/threads:2_median\"" "\"limit/epoch_event/real_time_median\""
                        "\"limit/stack/real_time/threads:1_median\"")
else()
  file(READ "${OUT_DIR}/run/${PART}.json" merged)
  cudapool_require_text("${PART}.json" "${merged}" "\"round_medians\"" "\"rounds\": 2" "${point}")
endif()
cudapool_results_page("${PYTHON}" "${SOURCE_DIR}/docs/make_results.py" "${OUT_DIR}/run" "${OUT_DIR}/page")
cudapool_require_text("${page}" "${text}" ${needles})
message(STATUS "${PART} rounds page: ${page}")
