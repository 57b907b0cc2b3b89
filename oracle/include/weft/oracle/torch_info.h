#pragma once
// Facts about the LibTorch this build links, without exposing torch headers to callers.

#include <string>
#include <vector>

namespace weft::oracle {

std::string torch_version();  // "1.13.0" as LibTorch's headers state it
int torch_major();            // 1 or 2: which LibTorch's C++ paths this build runs itself

// Why LibTorch cannot run on a CUDA device here (a CPU-only LibTorch, no device or driver);
// empty when it can.
std::string torch_cuda_unavailable_reason();

// Every PyTorch this weft can test, for `weft --version`: its own LibTorch, the sibling builds
// (worker.h), and the Python interpreters of the Python paths, with their versions (or why
// not found). The interpreters' versions come from package metadata, without importing torch.
struct TorchTarget {
  std::string what;     // "LibTorch (this build)", "LibTorch 2.x (sibling)", "Python 2.x", ...
  std::string where;    // a path
  std::string version;  // empty when not found
  std::string why_not;  // why it is not there
  std::string paths;    // the backends it runs
};
std::vector<TorchTarget> torch_targets();

// The Python interpreter that runs a repro script of `backend` (weft export): .venv's PyTorch
// 2.x for the torch2-* paths, Debian's 1.13 for the others; $WEFT_TORCH2_PYTHON / $WEFT_PYTHON
// override them. With its torch's version (empty when it has none).
TorchTarget python_for_backend(const std::string& backend);

}  // namespace weft::oracle
