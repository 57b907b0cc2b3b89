// Shards from the command line and from cluster schedulers' environments (weft/corpus/shard.h).
#include "weft/corpus/shard.h"

#include <fmt/format.h>

#include <string>

#include "weft/error.h"

namespace weft::corpus {

namespace {

using Lookup = std::function<const char*(const char*)>;

// The variable as a non-negative integer; nothing when unset; Error when set to anything else.
std::optional<std::uint64_t> number_variable(const Lookup& lookup, const char* name) {
  const char* value = lookup(name);
  if (value == nullptr) return std::nullopt;
  const std::string text(value);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 18) {
    throw Error(fmt::format("{}={}: expected a non-negative integer", name, text));
  }
  return std::stoull(text);
}

// `context` says why the variable is needed: "SLURM_ARRAY_TASK_ID is set".
std::uint64_t required_variable(const Lookup& lookup, const char* name, const char* context) {
  const std::optional<std::uint64_t> value = number_variable(lookup, name);
  if (!value) throw Error(fmt::format("{}, but {} is not", context, name));
  return *value;
}

ScheduledShard slurm_array(const Lookup& lookup, std::uint64_t id) {
  const char* why = "SLURM_ARRAY_TASK_ID is set";
  const std::uint64_t count = required_variable(lookup, "SLURM_ARRAY_TASK_COUNT", why);
  const std::uint64_t min = number_variable(lookup, "SLURM_ARRAY_TASK_MIN").value_or(0);
  const std::uint64_t step = number_variable(lookup, "SLURM_ARRAY_TASK_STEP").value_or(1);
  const std::optional<std::uint64_t> max = number_variable(lookup, "SLURM_ARRAY_TASK_MAX");
  // Shards must cover every index: the task IDs have to be MIN, MIN + STEP, ..., MAX.
  const bool regular = count > 0 && step > 0 && id >= min && (id - min) % step == 0 &&
                       (id - min) / step < count && (!max || *max == min + (count - 1) * step);
  if (!regular) {
    throw Error(fmt::format(
        "SLURM_ARRAY_TASK_ID={} of an array of {} tasks (min {}, max {}, step {}): a campaign's "
        "array must be MIN-MAX or MIN-MAX:STEP (--array=0-7), so that every shard runs",
        id, count, min, max ? std::to_string(*max) : std::string("?"), step));
  }
  ScheduledShard scheduled;
  scheduled.shard = {(id - min) / step, count};
  scheduled.scheduler = "slurm-array";
  for (const char* name : {"SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
                           "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
                           "SLURM_JOB_ID", "SLURM_CLUSTER_NAME"}) {
    if (const char* value = lookup(name)) scheduled.environment[name] = value;
  }
  return scheduled;
}

}  // namespace

Shard parse_shard(const std::string& text, const std::string& option) {
  const auto slash = text.find('/');
  const auto digits = [](const std::string& part) {
    return !part.empty() && part.size() <= 18 &&
           part.find_first_not_of("0123456789") == std::string::npos;
  };
  if (slash != std::string::npos && digits(text.substr(0, slash)) &&
      digits(text.substr(slash + 1))) {
    const std::uint64_t i = std::stoull(text.substr(0, slash));
    const std::uint64_t n = std::stoull(text.substr(slash + 1));
    if (n > 0 && i < n) return {i, n};
  }
  throw Error(option + ": expected I/N with 0 <= I < N, got '" + text + "'");
}

std::optional<ScheduledShard> shard_from_environment(const Lookup& lookup) {
  if (const std::optional<std::uint64_t> id = number_variable(lookup, "SLURM_ARRAY_TASK_ID")) {
    return slurm_array(lookup, *id);
  }
  // srun's tasks; a batch script's own SLURM_PROCID (no job step) is not a shard.
  if (lookup("SLURM_STEP_ID") != nullptr && lookup("SLURM_PROCID") != nullptr) {
    const char* why = "SLURM_PROCID is set in a job step";
    const std::uint64_t procid = required_variable(lookup, "SLURM_PROCID", why);
    const std::uint64_t ntasks = required_variable(lookup, "SLURM_NTASKS", why);
    if (ntasks > 1) {
      if (procid >= ntasks) {
        throw Error(fmt::format("SLURM_PROCID={} is not below SLURM_NTASKS={}", procid, ntasks));
      }
      ScheduledShard scheduled;
      scheduled.shard = {procid, ntasks};
      scheduled.scheduler = "slurm-tasks";
      for (const char* name : {"SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_NTASKS",
                               "SLURM_CLUSTER_NAME"}) {
        if (const char* value = lookup(name)) scheduled.environment[name] = value;
      }
      return scheduled;
    }
  }
  if (const std::optional<std::uint64_t> index = number_variable(lookup, "JOB_COMPLETION_INDEX")) {
    const std::uint64_t count = required_variable(
        lookup, "WEFT_SHARD_COUNT",
        "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job: set WEFT_SHARD_COUNT to its "
        "completions)");
    if (*index >= count) {
      throw Error(
          fmt::format("JOB_COMPLETION_INDEX={} is not below WEFT_SHARD_COUNT={}", *index, count));
    }
    ScheduledShard scheduled;
    scheduled.shard = {*index, count};
    scheduled.scheduler = "kubernetes-indexed-job";
    for (const char* name : {"JOB_COMPLETION_INDEX", "WEFT_SHARD_COUNT", "HOSTNAME"}) {
      if (const char* value = lookup(name)) scheduled.environment[name] = value;
    }
    return scheduled;
  }
  return std::nullopt;
}

std::string shard_directory_name(const Shard& shard) {
  const std::size_t width = std::to_string(shard.count - 1).size();
  return fmt::format("shard-{:0{}}-of-{}", shard.index, width, shard.count);
}

std::uint64_t shard_case_count(std::uint64_t total, const Shard& shard) {
  if (total <= shard.index) return 0;
  return (total - shard.index + shard.count - 1) / shard.count;
}

}  // namespace weft::corpus
