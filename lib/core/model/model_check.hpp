// model_check.hpp - runs Relacy models: each sound model must pass, each seeded-bug twin must be
// reported, with the failure kind expected. A model binary's exit status is 0 only when all of its
// sound models passed and all of its seeded twins were caught: a checker that cannot fail is not
// a checker.
//
// Iterations: every model runs Relacy's random scheduler for its default count (bounded so that
// all models together take seconds on two cores); CUDAPOOL_MODEL_ITERATIONS=N runs N instead (a
// longer search on demand). A seeded twin stops at its first failure, so N mainly lengthens the
// sound runs. CUDAPOOL_MODEL_VERBOSE=1 prints Relacy's history of every seeded failure too.
//
// Include the library's headers first, then this one (which includes <relacy/relacy.hpp>).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <ostream>
#include <streambuf>
#include <string>

#include <relacy/relacy.hpp>

// Relacy rewrites the names std::memory_order_* (to append its `$` debug argument), new, delete
// (as in `= delete`), malloc and free as macros. The library's code and these models call
// std::atomic's interface, which relacy_atomics forwards with the caller's location, and allocate
// nothing inside a model: the macros go.
#undef memory_order_relaxed
#undef memory_order_consume
#undef memory_order_acquire
#undef memory_order_release
#undef memory_order_acq_rel
#undef memory_order_seq_cst
#undef new
#undef delete
#undef malloc
#undef calloc
#undef realloc
#undef free

#include <cudapool/detail/core/model/relacy_atomics.hpp>

namespace cudapool::core::model {

class model_checks {
 public:
  // The model must pass every iteration, and reach the path it exists to check: `reached` counts
  // (across iterations, outside Relacy's state) the iterations that got there, e.g. a block reused
  // by a second thread. A sound run that never gets there proves nothing.
  template <class Test>
  void sound(const char* name, rl::iteration_t default_iterations, const std::uint64_t& reached) {
    const run r = simulate<Test>(default_iterations);
    const bool ok = r.result == rl::test_result_success && reached > 0;
    std::cout << (ok ? "ok      sound   " : "FAILED  sound   ") << name << ": " << r.iterations
              << " iterations, " << rl::test_result_str(r.result) << ", path checked in " << reached << "\n";
    if (!ok) std::cout << r.report << "\n";
    failures_ += ok ? 0 : 1;
  }

  // The seeded bug must be reported, as `expected`.
  template <class Test>
  void seeded(const char* name, rl::test_result_e expected, rl::iteration_t default_iterations) {
    const run r = simulate<Test>(default_iterations);
    const bool ok = r.result == expected;
    std::cout << (ok ? "ok      seeded  " : "FAILED  seeded  ") << name << ": ";
    if (r.result == rl::test_result_success) {
      std::cout << "not found in " << r.iterations << " iterations (expected " << rl::test_result_str(expected) << ")\n";
    } else {
      std::cout << rl::test_result_str(r.result) << " at iteration " << r.iterations;
      if (!ok) std::cout << " (expected " << rl::test_result_str(expected) << ")";
      std::cout << "\n";
      if (!ok || verbose()) std::cout << r.report << "\n";
    }
    failures_ += ok ? 0 : 1;
  }

  [[nodiscard]] int exit_code() const {
    std::cout << (failures_ == 0 ? "all models behaved as expected\n" : "some models did not behave as expected\n");
    return failures_ == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
  }

 private:
  struct run {
    rl::test_result_e result;
    rl::iteration_t iterations;
    std::string report;
  };

  static bool verbose() {
    const char* s = std::getenv("CUDAPOOL_MODEL_VERBOSE");
    return s != nullptr && *s != '\0' && *s != '0';
  }

  static rl::iteration_t iterations(rl::iteration_t default_iterations) {
    const char* s = std::getenv("CUDAPOOL_MODEL_ITERATIONS");
    if (s == nullptr || *s == '\0') return default_iterations;
    const auto n = std::strtoull(s, nullptr, 10);
    return n == 0 ? default_iterations : static_cast<rl::iteration_t>(n);
  }

  template <class Test>
  static run simulate(rl::iteration_t default_iterations) {
    rl::test_params p;
    p.iteration_count = iterations(default_iterations);
    p.search_type = rl::random_scheduler_type;
    report_buffer out;
    std::ostream out_stream(&out);
    p.output_stream = &out_stream;
    p.progress_stream = &out_stream;
    rl::simulate<Test>(p);
    return {p.test_result, p.test_result == rl::test_result_success ? p.iteration_count : p.stop_iteration, out.str()};
  }

  // Relacy writes a failing history to the output stream from inside the simulation, where it
  // replaces operator new and delete: a stream that reallocates its buffer there (std::ostringstream)
  // frees memory Relacy did not allocate and is reported as a double free. This one writes into a
  // fixed array and drops what does not fit.
  class report_buffer : public std::streambuf {
   public:
    report_buffer() { setp(text_, text_ + sizeof(text_)); }
    [[nodiscard]] std::string str() const { return std::string(pbase(), pptr()); }

   protected:
    int_type overflow(int_type) override { return traits_type::not_eof(0); }

   private:
    char text_[64 * 1024];
  };

  int failures_ = 0;
};

}  // namespace cudapool::core::model
