# Helpers of the CTest scripts that run docs/make_results.py (make_results_test.cmake,
# bench/rounds_test.cmake).

# Runs make_results.py on run_dir into out_dir/results.md (out_dir made afresh); sets `page` (its
# path) and `text` (its content) in the caller's scope; fails the test when the script fails.
function(cudapool_results_page python script run_dir out_dir)
  file(REMOVE_RECURSE "${out_dir}")
  file(MAKE_DIRECTORY "${out_dir}")
  set(p "${out_dir}/results.md")
  execute_process(
    COMMAND "${python}" "${script}" "${run_dir}" --out "${p}" --date test --host test --command test
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "make_results.py exited ${rc}:\n${out}\n${err}")
  endif()
  file(READ "${p}" t)
  set(page "${p}" PARENT_SCOPE)
  set(text "${t}" PARENT_SCOPE)
endfunction()

# Fails the test unless `text` (the content of `what`) holds every further argument.
function(cudapool_require_text what text)
  foreach(needle IN LISTS ARGN)
    string(FIND "${text}" "${needle}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${what} lacks '${needle}'")
    endif()
  endforeach()
endfunction()
