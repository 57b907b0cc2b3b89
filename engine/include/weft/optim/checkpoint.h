#pragma once
// Training checkpoints for an optimizer and its scheduler, so that an interrupted run resumes
// exactly (save the model itself with nn::save). One safetensors file, written atomically:
//   tensors       "state.<param index>.<name>" (e.g. "state.3.exp_avg"), indices as in
//                 Optimizer::state_dict(): positions in the concatenated groups' params
//   __metadata__  "weft.format"                 "weft.optim.training_state/1"
//                 "weft.optimizer.param_groups" JSON [{"options": {...}, "params": [0, 1]}]
//                 "weft.optimizer.state"        JSON {"3": {"step": 5, "tensors": ["exp_avg"],
//                                               "undefined": []}}
//                 "weft.scheduler"              JSON scheduler state_dict(), when saved with one
//                 any other key                 the caller's metadata (epoch, …)
// Non-finite numbers in the JSON are the strings "Infinity", "-Infinity" and "NaN".

#include <filesystem>
#include <map>
#include <string>

#include "weft/optim/lr_scheduler.h"
#include "weft/optim/optimizer.h"

namespace weft::optim {

// Writes the optimizer's state_dict() and, when given, the scheduler's (which must drive
// `optimizer`). `metadata` keys may not start with "weft.".
void save_training_state(const std::filesystem::path& path, const Optimizer& optimizer,
                         const CheckpointableScheduler* scheduler = nullptr,
                         const std::map<std::string, std::string>& metadata = {});

// Restores what save_training_state wrote into a freshly built optimizer (and scheduler, which
// then must have been saved too), as PyTorch's resume recipe does, and returns the caller's
// metadata. A damaged or foreign file, or one that does not fit the optimizer or scheduler
// (another scheduler type, another number of groups or parameters, other shapes), raises
// weft::FormatError naming the file and the field, and changes neither.
std::map<std::string, std::string> load_training_state(
    const std::filesystem::path& path, Optimizer& optimizer,
    CheckpointableScheduler* scheduler = nullptr);

}  // namespace weft::optim
