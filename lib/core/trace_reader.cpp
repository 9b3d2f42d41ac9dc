// trace_reader.cpp - a trace file opened, one line of it read, the errors of its ids (format:
// trace_reader.hpp).
#include <cudapool/detail/core/trace_reader.hpp>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

namespace cudapool::core {
namespace {

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

template <class T>
bool parse_number(std::string_view s, T& out) noexcept {
  s = trim(s);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc{} && end == s.data() + s.size();
}

}  // namespace

std::ifstream open_trace_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw trace_file_error("is a directory, not a trace file");
  std::ifstream in(path);
  if (!in) throw trace_file_error(std::string("cannot be read: ") + std::strerror(errno));
  return in;
}

std::optional<trace_line> parse_trace_line(std::string_view line) {
  constexpr std::string_view byte_order_mark = "\xEF\xBB\xBF";
  if (line.starts_with(byte_order_mark)) line.remove_prefix(byte_order_mark.size());
  line = trim(line);
  if (line.empty() || line.front() == '#') return std::nullopt;
  std::string_view field[5];
  std::size_t n = 0;
  for (std::string_view rest = line;;) {
    const std::size_t comma = rest.find(',');
    if (n < 5) field[n] = trim(rest.substr(0, comma));
    ++n;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (field[0] == "op") return std::nullopt;  // the CSV header
  if (n != 4 && n != 5) throw trace_line_error("expected op,id,bytes,stream[,thread]");
  trace_line r;
  if (field[0] == "a") {
    r.allocate = true;
  } else if (field[0] != "f") {
    throw trace_line_error("op must be a or f");
  }
  if (!parse_number(field[1], r.id)) throw trace_line_error("id is not a number");
  if (!parse_number(field[2], r.bytes)) throw trace_line_error("bytes is not a number");
  if (!parse_number(field[3], r.stream)) throw trace_line_error("stream is not a number");
  if (n == 5 && !parse_number(field[4], r.thread)) throw trace_line_error("thread is not a number");
  if (r.allocate && r.bytes == 0) throw trace_line_error("an allocation of 0 bytes");
  return r;
}

void throw_id_live(std::uint64_t id) {
  throw trace_line_error("id " + std::to_string(id) + " allocated again while it is live");
}

void throw_id_not_live(std::uint64_t id) {
  throw trace_line_error("free of id " + std::to_string(id) + ", which is not live (never allocated, or freed already)");
}

}  // namespace cudapool::core
