// Training checkpoints: optimizer state tensors as safetensors tensors, everything else (step
// counts, group options, scheduler state) as JSON strings in __metadata__.
#include "weft/optim/checkpoint.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "weft/error.h"
#include "weft/io/safetensors.h"
#include "weft/io/tensor_bytes.h"

namespace weft::optim {
namespace {

using Json = nlohmann::json;

constexpr const char* kFormatKey = "weft.format";
constexpr const char* kFormat = "weft.optim.training_state/1";
constexpr const char* kGroupsKey = "weft.optimizer.param_groups";
constexpr const char* kStateKey = "weft.optimizer.state";
constexpr const char* kSchedulerKey = "weft.scheduler";
constexpr const char* kReservedPrefix = "weft.";

std::string tensor_key(std::int64_t index, const std::string& name) {
  return "state." + std::to_string(index) + "." + name;
}

// JSON has no numbers for ±inf and NaN; they are written as Python's json module spells them.
Json number_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

std::string shown(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// Reads the JSON documents of one file; every error names the file and the field.
class Reader {
 public:
  Reader(const io::SafetensorsFile& file, std::string source)
      : file_(file), source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw FormatError(source_, field, problem);
  }

  std::string metadata_field(const std::string& key) const { return "__metadata__/" + key; }

  // The metadata string `key`, or null when absent and `required` is false.
  const std::string* metadata(const std::string& key, bool required) const {
    const auto it = file_.metadata.find(key);
    if (it != file_.metadata.end()) return &it->second;
    if (required) fail(metadata_field(key), "missing");
    return nullptr;
  }

  Json parse(const std::string& key) const {
    const std::string& text = *metadata(key, true);
    Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) fail(metadata_field(key), "expected a JSON document");
    return value;
  }

  const Json& member(const Json& object, const std::string& field, const char* name) const {
    const auto it = object.find(name);
    if (it == object.end()) fail(field + "/" + name, "missing");
    return *it;
  }

  std::int64_t integer(const Json& value, const std::string& field) const {
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() <=
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(value.get<std::uint64_t>());
    }
    if (value.is_number_integer() && !value.is_number_unsigned()) {
      return value.get<std::int64_t>();
    }
    fail(field, "expected an integer, got " + shown(value));
  }

  double number(const Json& value, const std::string& field) const {
    if (value.is_number()) return value.get<double>();
    if (value == "Infinity") return std::numeric_limits<double>::infinity();
    if (value == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (value == "NaN") return std::numeric_limits<double>::quiet_NaN();
    fail(field, "expected a number, got " + shown(value));
  }

  const Json& array(const Json& value, const std::string& field) const {
    if (!value.is_array()) fail(field, "expected a list, got " + shown(value));
    return value;
  }

  const Json& object(const Json& value, const std::string& field) const {
    if (!value.is_object()) fail(field, "expected a JSON object, got " + shown(value));
    return value;
  }

  std::vector<std::string> names(const Json& value, const std::string& field) const {
    std::vector<std::string> out;
    for (const Json& item : array(value, field)) {
      if (!item.is_string()) {
        fail(field + "/" + std::to_string(out.size()), "expected a name, got " + shown(item));
      }
      out.push_back(item.get<std::string>());
    }
    return out;
  }

 private:
  const io::SafetensorsFile& file_;
  std::string source_;
};

std::vector<OptimizerState::Group> read_groups(const Reader& reader) {
  const std::string field = reader.metadata_field(kGroupsKey);
  const Json groups = reader.parse(kGroupsKey);
  std::vector<OptimizerState::Group> out;
  for (const Json& saved : reader.array(groups, field)) {
    const std::string where = field + "/" + std::to_string(out.size());
    reader.object(saved, where);
    OptimizerState::Group group;
    const Json& options = reader.object(reader.member(saved, where, "options"), where + "/options");
    for (const auto& [name, value] : options.items()) {
      group.options[name] = reader.number(value, where + "/options/" + name);
    }
    const Json& params = reader.array(reader.member(saved, where, "params"), where + "/params");
    for (const Json& index : params) {
      group.params.push_back(
          reader.integer(index, where + "/params/" + std::to_string(group.params.size())));
    }
    out.push_back(std::move(group));
  }
  return out;
}

// Per-parameter state: step counts from the metadata, tensors from the file's tensors.
std::map<std::int64_t, ParamState> read_state(const Reader& reader,
                                              const io::SafetensorsFile& file) {
  const std::string field = reader.metadata_field(kStateKey);
  const Json saved = reader.parse(kStateKey);
  reader.object(saved, field);
  std::map<std::int64_t, ParamState> out;
  std::map<std::string, std::pair<std::int64_t, std::string>> expected;  // key → index, name
  for (const auto& [key, entry] : saved.items()) {
    const std::string where = field + "/" + key;
    std::int64_t index = -1;
    if (!key.empty() && key.size() < 19 &&
        key.find_first_not_of("0123456789") == std::string::npos) {
      index = std::stoll(key);
    } else {
      reader.fail(where, "expected a parameter index as the key");
    }
    reader.object(entry, where);
    ParamState state;
    state.step = reader.integer(reader.member(entry, where, "step"), where + "/step");
    for (const std::string& name :
         reader.names(reader.member(entry, where, "tensors"), where + "/tensors")) {
      expected.emplace(tensor_key(index, name), std::pair(index, name));
    }
    if (entry.contains("undefined")) {
      for (const std::string& name : reader.names(entry.at("undefined"), where + "/undefined")) {
        state.tensors.emplace(name, Tensor());
      }
    }
    out.emplace(index, std::move(state));
  }
  for (const auto& [key, bytes] : file.tensors) {
    const auto it = expected.find(key);
    if (it == expected.end()) {
      reader.fail(key, "unexpected tensor: " + std::string(kStateKey) + " does not list it");
    }
    out.at(it->second.first).tensors.insert_or_assign(it->second.second, io::from_bytes(bytes));
    expected.erase(it);
  }
  if (!expected.empty()) {
    reader.fail(expected.begin()->first,
                "missing: " + std::string(kStateKey) + " lists it but the file has no such tensor");
  }
  return out;
}

// State tensors have their parameter's shape; a file that says otherwise would fail (or
// worse) on the next step, so it is refused now. Other mismatches are the optimizer's to find.
void check_shapes(const Reader& reader, const OptimizerState& state, const Optimizer& optimizer) {
  const auto& groups = optimizer.param_groups();
  if (state.param_groups.size() != groups.size()) return;
  std::map<std::int64_t, const Tensor*> by_index;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& indices = state.param_groups[g].params;
    if (indices.size() != groups[g].params.size()) return;
    for (std::size_t i = 0; i < indices.size(); ++i) by_index[indices[i]] = &groups[g].params[i];
  }
  for (const auto& [index, s] : state.state) {
    const auto it = by_index.find(index);
    if (it == by_index.end()) continue;
    for (const auto& [name, t] : s.tensors) {
      if (t.defined() && t.sizes() != it->second->sizes()) {
        reader.fail(tensor_key(index, name), "has shape " + Json(t.sizes()).dump() +
                                                 ", but its parameter has shape " +
                                                 Json(it->second->sizes()).dump());
      }
    }
  }
}

}  // namespace

void save_training_state(const std::filesystem::path& path, const Optimizer& optimizer,
                         const CheckpointableScheduler* scheduler,
                         const std::map<std::string, std::string>& metadata) {
  if (scheduler != nullptr && &scheduler->optimizer() != &optimizer) {
    throw Error("save_training_state: the scheduler drives another optimizer");
  }
  io::SafetensorsFile file;
  for (const auto& [key, value] : metadata) {
    if (key.rfind(kReservedPrefix, 0) == 0) {
      throw Error("save_training_state: metadata key '" + key +
                  "' is reserved (keys starting with 'weft.' hold the training state)");
    }
    file.metadata.emplace(key, value);
  }
  const OptimizerState state = optimizer.state_dict();
  Json groups = Json::array();
  for (const OptimizerState::Group& group : state.param_groups) {
    Json options = Json::object();
    for (const auto& [name, value] : group.options) options[name] = number_value(value);
    groups.push_back({{"options", std::move(options)}, {"params", group.params}});
  }
  Json params = Json::object();
  for (const auto& [index, s] : state.state) {
    Json stored = Json::array();
    Json undefined = Json::array();
    for (const auto& [name, t] : s.tensors) {
      if (t.defined()) {
        stored.push_back(name);
        file.tensors.emplace_back(tensor_key(index, name), io::to_bytes(t));
      } else {
        undefined.push_back(name);
      }
    }
    Json entry = {{"step", s.step}, {"tensors", std::move(stored)}};
    if (!undefined.empty()) entry["undefined"] = std::move(undefined);
    params[std::to_string(index)] = std::move(entry);
  }
  file.metadata[kFormatKey] = kFormat;
  file.metadata[kGroupsKey] = groups.dump();
  file.metadata[kStateKey] = params.dump();
  if (scheduler != nullptr) file.metadata[kSchedulerKey] = scheduler->state_dict().dump();
  io::write_safetensors(path, file);
}

std::map<std::string, std::string> load_training_state(const std::filesystem::path& path,
                                                       Optimizer& optimizer,
                                                       CheckpointableScheduler* scheduler) {
  if (scheduler != nullptr && &scheduler->optimizer() != &optimizer) {
    throw Error("load_training_state: the scheduler drives another optimizer");
  }
  const io::SafetensorsFile file = io::read_safetensors(path);
  const Reader reader(file, path.string());
  const std::string* format = reader.metadata(kFormatKey, false);
  if (format == nullptr) {
    reader.fail(reader.metadata_field(kFormatKey),
                "missing: not a training state written by save_training_state");
  }
  if (*format != kFormat) {
    reader.fail(reader.metadata_field(kFormatKey),
                "expected \"" + std::string(kFormat) + "\", got " + Json(*format).dump());
  }
  OptimizerState state;
  state.param_groups = read_groups(reader);
  state.state = read_state(reader, file);
  check_shapes(reader, state, optimizer);

  // The scheduler goes first: its state is cheap to put back if the optimizer refuses its own.
  SchedulerState previous;
  if (scheduler != nullptr) {
    const Json saved = reader.parse(kSchedulerKey);
    previous = scheduler->state_dict();
    try {
      scheduler->load_state_dict(saved);
    } catch (const FormatError&) {
      throw;
    } catch (const Error& e) {
      reader.fail(reader.metadata_field(kSchedulerKey), e.what());
    }
  }
  try {
    optimizer.load_state_dict(state);
  } catch (const Error& e) {
    if (scheduler != nullptr) scheduler->load_state_dict(previous);
    reader.fail(reader.metadata_field(kGroupsKey), e.what());
  }

  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : file.metadata) {
    if (key.rfind(kReservedPrefix, 0) != 0) metadata.emplace(key, value);
  }
  return metadata;
}

}  // namespace weft::optim
