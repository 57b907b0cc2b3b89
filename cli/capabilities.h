#pragma once
// The capability gaps of the LibTorch under test, learned the way NNSmith's auto_opset learns
// an opset: one-node models of every op on every dtype, run on eager and the engine; an
// (op, first input dtype) pair that eager refuses for want of a kernel while the engine runs
// it is a gap. Learned once per LibTorch and weft version, cached under ~/.cache/weft/.

#include <string>
#include <utility>
#include <vector>

#include "weft/dtype.h"
#include "weft/ir/op_kind.h"

namespace weft::cli {

using CapabilityGaps = std::vector<std::pair<ir::OpKind, Dtype>>;

// From the cache when it holds this LibTorch's; otherwise probed (seconds) and cached. A
// probe that cannot run (no worker) returns no gaps and says why on stderr.
CapabilityGaps learn_capability_gaps(double time_limit_seconds);

// [["pad", "int64"], ...] and back; the reader throws weft::FormatError naming `source`.
std::vector<std::vector<std::string>> gaps_to_names(const CapabilityGaps& gaps);
CapabilityGaps gaps_from_names(const std::vector<std::vector<std::string>>& names,
                               const std::string& source);

}  // namespace weft::cli
