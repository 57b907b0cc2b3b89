#include "weft/gen/z3_info.h"

#include <z3.h>

#include <string>

namespace weft::gen {

std::string z3_version() {
  unsigned major = 0, minor = 0, build = 0, revision = 0;
  Z3_get_version(&major, &minor, &build, &revision);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(build);
}

}  // namespace weft::gen
