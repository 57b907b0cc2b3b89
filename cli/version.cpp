#include <fmt/format.h>

#include "commands.h"
#include "weft/cuda.h"
#include "weft/gen/z3_info.h"
#include "weft/oracle/torch_info.h"
#include "weft/version.h"

namespace weft::cli {

std::string version_text() {
  const cuda::Availability& gpu = cuda::availability();
  std::string cuda_line;
  if (gpu.available) {
    cuda_line = fmt::format("available ({} device{}, runtime {})", gpu.device_count,
                            gpu.device_count == 1 ? "" : "s", gpu.runtime_version);
  } else {
    cuda_line = fmt::format("unavailable: {}", gpu.reason);
  }
  std::string text = fmt::format("weft {}\nLibTorch {}\nZ3 {}\nCUDA {}\nPyTorch targets:", kVersion,
                                 oracle::torch_version(), gen::z3_version(), cuda_line);
  for (const oracle::TorchTarget& target : oracle::torch_targets()) {
    const std::string where = target.where.empty() ? "" : " " + target.where;
    text += target.version.empty()
                ? fmt::format("\n  {}: not found ({})", target.what, target.why_not)
                : fmt::format("\n  {} {}{}: {}", target.what, target.version, where, target.paths);
  }
  return text;
}

}  // namespace weft::cli
