// format.cpp - see format.hpp.
#include "format.hpp"

#include <cstdio>
#include <sstream>

namespace cudapool::stress {

std::string format_double(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string format_bytes(double bytes) {
  char text[32];
  if (bytes >= double(1 << 30)) {
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(1 << 30));
  } else if (bytes >= double(1 << 20)) {
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / double(1 << 20));
  } else if (bytes >= double(1 << 10)) {
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / double(1 << 10));
  } else {
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  }
  return text;
}

std::string format_pointer(std::uintptr_t p) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%012llx", static_cast<unsigned long long>(p));
  return text;
}

}  // namespace cudapool::stress
