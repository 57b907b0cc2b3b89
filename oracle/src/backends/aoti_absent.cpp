// The torch2-aoti paths in a weft built against a LibTorch older than 2.6, which has no
// AOTInductor package loader (aoti.cpp is the real one; oracle/CMakeLists.txt picks).
#include <memory>

#include "backends/backends.h"
#include "weft/error.h"
#include "weft/oracle/torch_info.h"

namespace weft::oracle {

namespace {

class AbsentAotiBackend final : public Backend {
 public:
  explicit AbsentAotiBackend(std::string_view name) : name_(name) {}
  std::string name() const override { return name_; }
  std::string unavailable_reason() const override {
    return "LibTorch " + torch_version() + " has no AOTInductor package loader (LibTorch >= 2.6)";
  }
  void prepare(const ir::Graph&, const ir::TensorMap&) override {
    throw Error(unavailable_reason());
  }
  CallResult call(const std::vector<Tensor>&) override { throw Error(unavailable_reason()); }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<Backend> make_aoti_backend(std::string_view name, bool) {
  return std::make_unique<AbsentAotiBackend>(name);
}

}  // namespace weft::oracle
