// cudapool_torch_test.cpp - libcudapool_torch.so through its C ABI on the simulated device
// (CUDAPOOL_BACKEND=sim), each case in a child process (cudapool_torch_child) so that what the
// library does at exit (the CUDAPOOL_STATS file) and what it does on a bad environment (abort)
// can be checked.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <cudapool/registry.hpp>

namespace {

struct child_result {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string stderr_text;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "cudapool_torch_" + std::to_string(getpid()) + "_" + name;
}

// Runs the child in MODE with the simulated backend and `env` (an empty value unsets).
child_result run_child(const std::string& mode, std::map<std::string, std::string> env) {
  env.emplace("CUDAPOOL_BACKEND", "sim");
  const std::string err_path = temp_path(mode + ".stderr");
  const pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [name, value] : env) {
      if (value.empty()) {
        unsetenv(name.c_str());
      } else {
        setenv(name.c_str(), value.c_str(), 1);
      }
    }
    const int fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) _exit(120);
    const char* argv[] = {CUDAPOOL_TORCH_CHILD, CUDAPOOL_TORCH_LIBRARY, mode.c_str(), nullptr};
    execv(argv[0], const_cast<char* const*>(argv));
    _exit(121);
  }
  child_result r;
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.stderr_text = read_file(err_path);
  std::remove(err_path.c_str());
  return r;
}

// The values of `"key":<number>` in `json`, in order (the stats file is flat enough for this).
std::vector<std::uint64_t> numbers(const std::string& json, const std::string& key) {
  std::vector<std::uint64_t> values;
  const std::string needle = "\"" + key + "\":";
  for (std::size_t at = json.find(needle); at != std::string::npos; at = json.find(needle, at + 1)) {
    values.push_back(std::stoull(json.substr(at + needle.size())));
  }
  return values;
}

// The first `"key":<number>` after each device's `"stats":`: the pool-level value.
std::vector<std::uint64_t> per_device(const std::string& json, const std::string& key) {
  std::vector<std::uint64_t> values;
  const std::string needle = "\"" + key + "\":";
  for (std::size_t at = json.find("\"stats\":"); at != std::string::npos; at = json.find("\"stats\":", at + 1)) {
    const std::size_t k = json.find(needle, at);
    if (k == std::string::npos) break;
    values.push_back(std::stoull(json.substr(k + needle.size())));
  }
  return values;
}

class torch_abi : public ::testing::TestWithParam<std::string> {};

TEST_P(torch_abi, sizes_two_devices_balanced_stats_at_exit) {
  const std::string stats = temp_path(GetParam() + ".json");
  std::remove(stats.c_str());
  const child_result r = run_child("sizes", {{"CUDAPOOL_VARIANT", GetParam()}, {"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stderr_text, "");
  const std::string json = read_file(stats);
  ASSERT_FALSE(json.empty()) << "no stats file at " << stats;
  EXPECT_NE(json.find("\"variant\":\"" + GetParam() + "\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"backend\":\"sim\""), std::string::npos) << json;
  EXPECT_EQ(numbers(json, "device"), (std::vector<std::uint64_t>{0, 1})) << json;
  EXPECT_EQ(per_device(json, "in_use_bytes"), (std::vector<std::uint64_t>{0, 0})) << json;
  // 3 rounds x 9 sizes per device; size 0 is no allocation.
  EXPECT_EQ(per_device(json, "allocs"), (std::vector<std::uint64_t>{27, 27})) << json;
  EXPECT_EQ(per_device(json, "frees"), (std::vector<std::uint64_t>{27, 27})) << json;
  EXPECT_EQ(per_device(json, "invalid_frees"), (std::vector<std::uint64_t>{0, 0})) << json;
  EXPECT_EQ(numbers(json, "failed_allocations"), (std::vector<std::uint64_t>{0})) << json;
  std::remove(stats.c_str());
}

TEST_P(torch_abi, threads_racing_to_create_pools) {
  const std::string stats = temp_path(GetParam() + "_threads.json");
  const child_result r = run_child("threads", {{"CUDAPOOL_VARIANT", GetParam()}, {"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const std::string json = read_file(stats);
  EXPECT_EQ(per_device(json, "in_use_bytes"), (std::vector<std::uint64_t>{0, 0})) << json;
  EXPECT_EQ(per_device(json, "allocs"), (std::vector<std::uint64_t>{8000, 8000})) << json;
  std::remove(stats.c_str());
}

INSTANTIATE_TEST_SUITE_P(variants, torch_abi, ::testing::ValuesIn(cudapool::available_variants()),
                         [](const auto& info) { return info.param; });

// The plug-in's defaults: lockfree, classes up to 64 KiB, no remap (CUDAPOOL_REMAP_RATIO turns it on).
TEST(torch_abi_default, defaults_are_lockfree_with_64k_classes_without_remap) {
  const std::string stats = temp_path("default.json");
  const child_result r = run_child("zero", {{"CUDAPOOL_VARIANT", ""}, {"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const std::string json = read_file(stats);
  EXPECT_NE(json.find("\"variant\":\"lockfree\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"remap_ratio\":0.0"), std::string::npos) << json;
  EXPECT_EQ(numbers(json, "max_class_bytes"), (std::vector<std::uint64_t>{64 << 10})) << json;
  EXPECT_EQ(per_device(json, "allocs"), (std::vector<std::uint64_t>{0})) << "size 0 is no allocation: " << json;
  std::remove(stats.c_str());
}

// The checker sees an unbalanced run: one block never freed is in use in the file.
TEST(torch_abi_default, leak_shows_in_stats) {
  const std::string stats = temp_path("leak.json");
  const child_result r = run_child("leak", {{"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const std::string json = read_file(stats);
  EXPECT_EQ(per_device(json, "in_use_bytes"), (std::vector<std::uint64_t>{4096})) << json;
  std::remove(stats.c_str());
}

TEST(torch_abi_default, no_stats_file_unless_asked) {
  const std::string stats = temp_path("unasked.json");
  std::remove(stats.c_str());
  const child_result r = run_child("leak", {{"CUDAPOOL_STATS", ""}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(read_file(stats), "");
}

// PyTorch does not check the pointer: exhaustion must throw (a std::bad_alloc), as its own allocator does.
TEST(torch_abi_default, out_of_memory_throws_and_recovers) {
  const std::string stats = temp_path("oom.json");
  const child_result r = run_child("oom", {{"CUDAPOOL_BYTE_LIMIT", "8m"}, {"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const std::string json = read_file(stats);
  EXPECT_EQ(numbers(json, "byte_limit"), (std::vector<std::uint64_t>{8u << 20})) << json;
  EXPECT_EQ(numbers(json, "failed_allocations"), (std::vector<std::uint64_t>{2})) << json;
  EXPECT_EQ(per_device(json, "ooms"), (std::vector<std::uint64_t>{2})) << json;
  EXPECT_EQ(per_device(json, "in_use_bytes"), (std::vector<std::uint64_t>{0})) << json;
  std::remove(stats.c_str());
}

TEST(torch_abi_default, bad_device_throws_and_foreign_free_is_reported) {
  const child_result r = run_child("bad-device", {});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("has no pool"), std::string::npos) << r.stderr_text;
}

TEST(torch_abi_default, bad_variant_aborts_naming_the_valid_ones) {
  const child_result r = run_child("zero", {{"CUDAPOOL_VARIANT", "bogus"}});
  EXPECT_EQ(r.signal, SIGABRT) << "exit " << r.exit_code << ": " << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("CUDAPOOL_VARIANT='bogus'"), std::string::npos) << r.stderr_text;
  for (const std::string& v : cudapool::available_variants()) {
    EXPECT_NE(r.stderr_text.find(v), std::string::npos) << v << " not named in: " << r.stderr_text;
  }
}

TEST(torch_abi_default, bad_backend_and_byte_limit_abort) {
  const child_result backend = run_child("zero", {{"CUDAPOOL_BACKEND", "fpga"}});
  // run_child sets sim only when the caller did not name a backend.
  EXPECT_EQ(backend.signal, SIGABRT) << backend.stderr_text;
  EXPECT_NE(backend.stderr_text.find("CUDAPOOL_BACKEND='fpga'"), std::string::npos) << backend.stderr_text;
  const child_result limit = run_child("zero", {{"CUDAPOOL_BYTE_LIMIT", "8x"}});
  EXPECT_EQ(limit.signal, SIGABRT) << limit.stderr_text;
  EXPECT_NE(limit.stderr_text.find("CUDAPOOL_BYTE_LIMIT='8x'"), std::string::npos) << limit.stderr_text;
}

// CUDAPOOL_MAX_CLASS_BYTES sets the largest size class: requests above it are heap extents.
TEST(torch_abi_default, max_class_bytes_sets_the_largest_class_and_a_bad_one_aborts) {
  const std::string stats = temp_path("max_class.json");
  // sizes allocates 1 B .. 8 MiB: its 1 MiB request must now take the large path.
  const child_result r = run_child("sizes", {{"CUDAPOOL_MAX_CLASS_BYTES", "64k"}, {"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const std::vector<std::uint64_t> classes = numbers(read_file(stats), "block_bytes");
  ASSERT_FALSE(classes.empty());
  EXPECT_EQ(*std::max_element(classes.begin(), classes.end()), 64u << 10);
  std::remove(stats.c_str());
  // And back to the library's 1 MiB, with remap on (off is the default).
  const child_result lib = run_child("sizes", {{"CUDAPOOL_MAX_CLASS_BYTES", "1m"}, {"CUDAPOOL_REMAP_RATIO", "1.01"},
                                               {"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(lib.exit_code, 0) << lib.stderr_text;
  const std::string json = read_file(stats);
  const std::vector<std::uint64_t> lib_classes = numbers(json, "block_bytes");
  ASSERT_FALSE(lib_classes.empty());
  EXPECT_EQ(*std::max_element(lib_classes.begin(), lib_classes.end()), 1u << 20);
  EXPECT_NE(json.find("\"remap_ratio\":1.01"), std::string::npos) << json;
  std::remove(stats.c_str());
  const child_result bad = run_child("zero", {{"CUDAPOOL_MAX_CLASS_BYTES", "3k"}});
  EXPECT_EQ(bad.signal, SIGABRT) << bad.stderr_text;
  EXPECT_NE(bad.stderr_text.find("CUDAPOOL_MAX_CLASS_BYTES='3k': cudapool::pool_options: max_class_bytes must be a power of two"),
            std::string::npos)
      << bad.stderr_text;
  // Above the plug-in's 2 MiB slabs no pool could be made (pool_options needs slab_bytes >= the
  // largest class): the setting aborts at once instead of failing every allocation.
  const child_result big = run_child("zero", {{"CUDAPOOL_MAX_CLASS_BYTES", "4m"}});
  EXPECT_EQ(big.signal, SIGABRT) << big.stderr_text;
  EXPECT_NE(big.stderr_text.find("CUDAPOOL_MAX_CLASS_BYTES='4m': cudapool::pool_options: slab_bytes (2097152) must be >= the "
                                 "largest class (4194304)"),
            std::string::npos)
      << big.stderr_text;
}

// CUDAPOOL_TLS_CACHE_BYTES sets what the tls variant's thread caches may hold together; the stats
// file records it (default: the library's 256 MiB).
TEST(torch_abi_default, tls_cache_bytes_is_read_recorded_and_a_bad_one_aborts) {
  const std::string stats = temp_path("tls_cache.json");
  const child_result def = run_child("sizes", {{"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(def.exit_code, 0) << def.stderr_text;
  EXPECT_EQ(numbers(read_file(stats), "tls_cache_bytes"), (std::vector<std::uint64_t>{256u << 20}));
  const child_result set = run_child("threads", {{"CUDAPOOL_TLS_CACHE_BYTES", "4m"}, {"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(set.exit_code, 0) << set.stderr_text;
  const std::string json = read_file(stats);
  EXPECT_EQ(numbers(json, "tls_cache_bytes"), (std::vector<std::uint64_t>{4u << 20})) << json;
  EXPECT_EQ(per_device(json, "in_use_bytes"), (std::vector<std::uint64_t>{0, 0})) << json;
  const child_result none = run_child("threads", {{"CUDAPOOL_TLS_CACHE_BYTES", "0"}, {"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(none.exit_code, 0) << none.stderr_text;
  EXPECT_EQ(per_device(read_file(stats), "allocs"), (std::vector<std::uint64_t>{8000, 8000}));
  std::remove(stats.c_str());
  const child_result bad = run_child("zero", {{"CUDAPOOL_TLS_CACHE_BYTES", "lots"}});
  EXPECT_EQ(bad.signal, SIGABRT) << bad.stderr_text;
  EXPECT_NE(bad.stderr_text.find("CUDAPOOL_TLS_CACHE_BYTES='lots' is not a byte count"), std::string::npos)
      << bad.stderr_text;
}

// Each value of `variable` in bad_ones aborts the plug-in at its first call, saying
// "<variable>='<value><why>".
template <std::size_t N>
void expect_each_aborts(const char* variable, const std::pair<const char*, const char*> (&bad_ones)[N]) {
  for (const auto& [bad, why] : bad_ones) {
    const child_result r = run_child("zero", {{variable, bad}});
    EXPECT_EQ(r.signal, SIGABRT) << variable << "=" << bad << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find(std::string(variable) + "='" + bad + why), std::string::npos) << r.stderr_text;
  }
}

// CUDAPOOL_EPOCH_BATCH sets pool_options::epoch_batch (how many stream-ordered frees fill an epoch,
// one event each): recorded in the stats file, and with 1 every free closes its epoch as full.
TEST(torch_abi_default, epoch_batch_is_read_recorded_and_a_bad_one_aborts) {
  const std::string stats = temp_path("epoch_batch.json");
  const auto full_closes = [](const std::string& json) {
    std::uint64_t sum = 0;
    for (const std::uint64_t n : numbers(json, "full")) sum += n;
    return sum;
  };
  const child_result def = run_child("sizes", {{"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(def.exit_code, 0) << def.stderr_text;
  const std::string def_json = read_file(stats);
  EXPECT_EQ(numbers(def_json, "epoch_batch"), (std::vector<std::uint64_t>{64}));
  // sizes frees 9 blocks per device per round, 3 rounds: fewer than 64 on each device's stream.
  EXPECT_EQ(full_closes(def_json), 0u) << def_json;
  const child_result one = run_child("sizes", {{"CUDAPOOL_EPOCH_BATCH", "1"}, {"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(one.exit_code, 0) << one.stderr_text;
  const std::string one_json = read_file(stats);
  EXPECT_EQ(numbers(one_json, "epoch_batch"), (std::vector<std::uint64_t>{1}));
  EXPECT_GE(full_closes(one_json), 2u * 3 * 9) << one_json;
  std::remove(stats.c_str());
  // Not a number (the plug-in's parser), or out of pool_options' range (cudapool::validate).
  const std::pair<const char*, const char*> bad_ones[] = {{"lots", "' is not a whole number"},
                                                          {"64k", "' is not a whole number"},
                                                          {"-1", "' is not a whole number"},
                                                          {"0", "': cudapool::pool_options: epoch_batch must be >= 1"},
                                                          {"8388608", "': cudapool::pool_options: epoch_batch must be < 2^23"}};
  expect_each_aborts("CUDAPOOL_EPOCH_BATCH", bad_ones);
}

// CUDAPOOL_STREAM_ARENAS sets pool_options::stream_arenas (streams that keep to their own memory):
// recorded in the stats file; a value that is not a whole number or above 64 aborts.
TEST(torch_abi_default, stream_arenas_are_read_recorded_and_a_bad_value_aborts) {
  const std::string stats = temp_path("stream_arenas.json");
  const child_result on = run_child("sizes", {{"CUDAPOOL_STREAM_ARENAS", "8"}, {"CUDAPOOL_STATS", stats}});
  ASSERT_EQ(on.exit_code, 0) << on.stderr_text;
  EXPECT_EQ(numbers(read_file(stats), "stream_arenas"), (std::vector<std::uint64_t>{8}));
  std::remove(stats.c_str());
  const std::pair<const char*, const char*> bad_ones[] = {{"lots", "' is not a whole number"},
                                                          {"-1", "' is not a whole number"},
                                                          {"65", "': cudapool::pool_options: stream_arenas must be <= 64"}};
  expect_each_aborts("CUDAPOOL_STREAM_ARENAS", bad_ones);
}

// CUDAPOOL_REMAP_RATIO: 0 or a finite number >= 1; anything else aborts at the first call (an
// infinite ratio passed the check, then no pool could be made and every allocation failed).
TEST(torch_abi_default, a_bad_remap_ratio_aborts) {
  for (const char* bad : {"0.5", "-1", "lots", "inf", "infinity", "nan"}) {
    const child_result r = run_child("zero", {{"CUDAPOOL_REMAP_RATIO", bad}});
    EXPECT_EQ(r.signal, SIGABRT) << bad << ": " << r.stderr_text;
    const std::string why = std::string_view(bad) == "lots" ? "' is not a number"
                                                            : "': cudapool::pool_options: remap_ratio must be 0 (off) or a finite number >= 1";
    EXPECT_NE(r.stderr_text.find(std::string("CUDAPOOL_REMAP_RATIO='") + bad + why), std::string::npos) << r.stderr_text;
  }
}

// Only the two entry points are exported (the static cudapool, TBB-using and cudart code is not).
TEST(torch_abi_default, exports_only_the_c_abi) {
  const std::string command = std::string("nm -D --defined-only ") + CUDAPOOL_TORCH_LIBRARY + " 2>/dev/null";
  FILE* nm = popen(command.c_str(), "r");
  ASSERT_NE(nm, nullptr);
  std::vector<std::string> exported;
  char line[4096];
  while (fgets(line, sizeof line, nm) != nullptr) {
    std::istringstream fields(line);
    std::string address, type, name;
    fields >> address >> type >> name;
    // Version-script nodes (type A) are not functions or data.
    if (!name.empty() && type != "A") exported.push_back(name);
  }
  const int status = pclose(nm);
  if (status != 0 && exported.empty()) GTEST_SKIP() << "nm is not available";
  std::sort(exported.begin(), exported.end());
  EXPECT_EQ(exported, (std::vector<std::string>{"cudapool_torch_free", "cudapool_torch_malloc", "cudapool_torch_set_byte_limit",
                                                "cudapool_torch_stats_json", "cudapool_torch_trim"}));
}

}  // namespace
