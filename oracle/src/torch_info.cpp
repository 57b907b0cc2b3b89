#include "weft/oracle/torch_info.h"

#include <torch/version.h>  // the cheapest torch header: macros only

namespace weft::oracle {

std::string torch_version() {
  return TORCH_VERSION;
}

}  // namespace weft::oracle
