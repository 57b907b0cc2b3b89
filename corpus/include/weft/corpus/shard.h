#pragma once
// Shards of a campaign: shard I of N judges case indices I, I + N, I + 2N, ... On a cluster the
// scheduler says which shard a task is (README "Campaigns on a cluster"):
//   Slurm array job      SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT (and _MIN, _MAX, _STEP)
//   Slurm tasks (srun)   SLURM_PROCID, SLURM_NTASKS, inside a job step (SLURM_STEP_ID)
//   Kubernetes           JOB_COMPLETION_INDEX of an Indexed Job, WEFT_SHARD_COUNT = completions
// Each shard writes its own campaign directory under a shared root (shard_directory_name).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace weft::corpus {

struct Shard {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
};

// "I/N" with 0 <= I < N; weft::Error naming `option` otherwise.
Shard parse_shard(const std::string& text, const std::string& option = "--shard");

// A shard a cluster scheduler assigned, with where it came from.
struct ScheduledShard {
  Shard shard;
  std::string scheduler;       // "slurm-array", "slurm-tasks" or "kubernetes-indexed-job"
  nlohmann::json environment;  // the variables it was read from, by name
};

// The shard the environment assigns (`lookup` is getenv or a stand-in), or nothing outside a
// scheduler (and for a Slurm job step of one task). Throws weft::Error naming the variables
// when they are set but unusable: an array whose task IDs are not MIN, MIN + STEP, ... (say
// --array=0-7 or 3-17:2, not 0-3,9), a non-number, an Indexed Job without WEFT_SHARD_COUNT.
std::optional<ScheduledShard> shard_from_environment(
    const std::function<const char*(const char*)>& lookup);

// "shard-03-of-16": the directory of a shard under the campaign's root (padded so that a
// listing sorts by index).
std::string shard_directory_name(const Shard& shard);

// How many of the case indices below `total` belong to `shard`: with --cases C a sharded
// campaign judges the indices below C, split among its shards, the same cases as one
// unsharded campaign of C cases.
std::uint64_t shard_case_count(std::uint64_t total, const Shard& shard);

}  // namespace weft::corpus
