# Every bad command line must be refused with exit status 2 and a one-line message, before any run.
# (A value listed with commas is several arguments; after a '|', a regular expression the message
# must match.)
#   cmake -DSTRESS=<path to stress> -DWORK_DIR=<scratch dir> -P bad_arguments.cmake
file(MAKE_DIRECTORY "${WORK_DIR}")
set(empty_trace "${WORK_DIR}/empty_trace.csv")
file(WRITE "${empty_trace}" "# no allocations here\nop,id,bytes,stream\n")
# Ids that do not pair: an id allocated again while live, a free of an id never allocated, a second free.
file(WRITE "${WORK_DIR}/id_twice.csv" "a,1,512,0\na,1,512,0\n")
file(WRITE "${WORK_DIR}/free_unknown.csv" "a,1,512,0\nf,2,512,0\n")
file(WRITE "${WORK_DIR}/freed_twice.csv" "a,1,512,0\nf,1,512,0\nf,1,512,0\n")

set(cases
  "--threads=0"
  "--streams=0"
  "--devices=0"
  "--threads=abc"
  "--handoff=1.5"
  "--cross-stream=-0.1"
  "--sizes=bogus"
  "--sizes=fixed:abc"
  "--sizes=fixed:0"
  "--sizes=trace:${WORK_DIR}/no_such_trace.csv"
  "--sizes=trace:${empty_trace}"
  "--sizes=trace:${WORK_DIR}/id_twice.csv,--ops=100|line 2: id 1 allocated again while it is live"
  "--sizes=trace:${WORK_DIR}/free_unknown.csv,--ops=100|line 2: free of id 2, which is not live"
  "--sizes=trace:${WORK_DIR}/freed_twice.csv,--ops=100|line 3: free of id 1, which is not live"
  "--sizes=trace:${WORK_DIR}|is a directory, not a trace file"
  "--duration=1,--ops=10"
  "--duration=0"
  "--variant=no_such_variant"
  "--backend=gpu"
  "--inject=bogus"
  "--tls-transfer=bogus"
  "--first-slab-bytes=100"
  "--remap-ratio=0.5"
  "--remap-ratio=inf"
  "--stream-arenas=65"
  "--stream-arenas=-1"
  "--ops=-1"
  "--first-slab-bytes=-1"
  "--first-slab-bytes=4194304"
  "--duration=1e10"
  "--no-such-option"
  "--allocator=no_such_allocator"
  "--allocator=cub,--backend=sim"
  "--allocator=cudaMallocAsync,--backend=sim"
  "--allocator=cub,--inject=early-reuse"
  "--allocator=cudaMallocAsync,--variant=tls"
)
set(failures 0)
foreach(args IN LISTS cases)
  set(want "")
  set(want_text "")
  if(args MATCHES "^([^|]*)\\|(.*)$")
    set(args "${CMAKE_MATCH_1}")
    set(want "${CMAKE_MATCH_2}")
    set(want_text " matching '${want}'")
  endif()
  string(REPLACE ";" " " shown "${args}")
  string(REPLACE "," ";" args "${args}")
  execute_process(COMMAND "${STRESS}" --quiet ${args} TIMEOUT 60
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(STRIP "${err}" err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines extra_lines)
  if(NOT "${status}" STREQUAL "2" OR err STREQUAL "" OR extra_lines GREATER 0
     OR (NOT want STREQUAL "" AND NOT err MATCHES "${want}"))
    message(SEND_ERROR "stress ${shown}: expected exit status 2 and one line on stderr${want_text}, got '${status}' and:\n${err}\n${out}")
    math(EXPR failures "${failures} + 1")
  else()
    message(STATUS "stress ${shown} -> 2: ${err}")
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} bad command lines were not refused properly")
endif()
