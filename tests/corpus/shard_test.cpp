// Shards from the command line and from Slurm's and Kubernetes' environments.
#include "weft/corpus/shard.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "weft/error.h"

namespace weft::corpus {
namespace {

using Environment = std::map<std::string, std::string>;

std::optional<ScheduledShard> from(const Environment& environment) {
  return shard_from_environment([&](const char* name) -> const char* {
    const auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const Environment& environment) {
  try {
    from(environment);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Shard, ParsesIOverN) {
  const Shard shard = parse_shard("3/8");
  EXPECT_EQ(shard.index, 3u);
  EXPECT_EQ(shard.count, 8u);
  for (const char* bad : {"8/8", "1/0", "1", "a/2", "-1/2", "1/2/3", ""}) {
    EXPECT_THROW(parse_shard(bad), Error) << bad;
  }
  try {
    parse_shard("2/2");
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--shard: expected I/N with 0 <= I < N, got '2/2'");
  }
}

TEST(Shard, NoSchedulerNoShard) {
  EXPECT_FALSE(from({}).has_value());
  // A batch script has SLURM_PROCID=0 without a job step; one task is not a shard either.
  EXPECT_FALSE(from({{"SLURM_PROCID", "0"}, {"SLURM_JOB_ID", "7"}}).has_value());
  EXPECT_FALSE(from({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}).has_value());
  EXPECT_FALSE(
      from({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}).has_value());
}

TEST(Shard, ASlurmArrayTaskIsItsPositionInTheArray) {
  const auto shard = from({{"SLURM_ARRAY_TASK_ID", "1"},
                           {"SLURM_ARRAY_TASK_COUNT", "2"},
                           {"SLURM_ARRAY_TASK_MIN", "0"},
                           {"SLURM_ARRAY_TASK_MAX", "1"},
                           {"SLURM_ARRAY_JOB_ID", "12"},
                           {"SLURM_PROCID", "0"}});
  ASSERT_TRUE(shard.has_value());
  EXPECT_EQ(shard->shard.index, 1u);
  EXPECT_EQ(shard->shard.count, 2u);
  EXPECT_EQ(shard->scheduler, "slurm-array");
  EXPECT_EQ(shard->environment["SLURM_ARRAY_JOB_ID"], "12");
  // --array=3-17:2 is 8 tasks; task 9 is the fourth.
  const auto stepped = from({{"SLURM_ARRAY_TASK_ID", "9"},
                             {"SLURM_ARRAY_TASK_COUNT", "8"},
                             {"SLURM_ARRAY_TASK_MIN", "3"},
                             {"SLURM_ARRAY_TASK_MAX", "17"},
                             {"SLURM_ARRAY_TASK_STEP", "2"}});
  ASSERT_TRUE(stepped.has_value());
  EXPECT_EQ(stepped->shard.index, 3u);
  EXPECT_EQ(stepped->shard.count, 8u);
}

TEST(Shard, AnArrayWithGapsIsRefusedSayingWhichArraysWork) {
  // --array=0-3,9: five tasks, but task 9 would be shard 9 of 5 and shard 4 would never run.
  const std::string message = error_of({{"SLURM_ARRAY_TASK_ID", "9"},
                                        {"SLURM_ARRAY_TASK_COUNT", "5"},
                                        {"SLURM_ARRAY_TASK_MIN", "0"},
                                        {"SLURM_ARRAY_TASK_MAX", "9"}});
  EXPECT_NE(message.find("SLURM_ARRAY_TASK_ID=9"), std::string::npos) << message;
  EXPECT_NE(message.find("--array=0-7"), std::string::npos) << message;
  EXPECT_NE(error_of({{"SLURM_ARRAY_TASK_ID", "1"}}).find("SLURM_ARRAY_TASK_COUNT"),
            std::string::npos);
  EXPECT_NE(error_of({{"SLURM_ARRAY_TASK_ID", "x"}}).find("SLURM_ARRAY_TASK_ID=x"),
            std::string::npos);
}

TEST(Shard, SrunTasksAreShardsInsideAJobStep) {
  const auto shard = from({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}});
  ASSERT_TRUE(shard.has_value());
  EXPECT_EQ(shard->shard.index, 2u);
  EXPECT_EQ(shard->shard.count, 4u);
  EXPECT_EQ(shard->scheduler, "slurm-tasks");
}

TEST(Shard, AnIndexedJobNeedsItsCompletionsInWeftShardCount) {
  const auto shard = from({{"JOB_COMPLETION_INDEX", "5"}, {"WEFT_SHARD_COUNT", "6"}});
  ASSERT_TRUE(shard.has_value());
  EXPECT_EQ(shard->shard.index, 5u);
  EXPECT_EQ(shard->shard.count, 6u);
  EXPECT_EQ(shard->scheduler, "kubernetes-indexed-job");
  EXPECT_NE(error_of({{"JOB_COMPLETION_INDEX", "5"}}).find("WEFT_SHARD_COUNT"), std::string::npos);
  EXPECT_NE(error_of({{"JOB_COMPLETION_INDEX", "6"}, {"WEFT_SHARD_COUNT", "6"}}).find("not below"),
            std::string::npos);
}

TEST(Shard, DirectoriesSortByIndexAndCasesSplitTheTotal) {
  EXPECT_EQ(shard_directory_name({3, 16}), "shard-03-of-16");
  EXPECT_EQ(shard_directory_name({0, 1}), "shard-0-of-1");
  EXPECT_EQ(shard_directory_name({7, 10}), "shard-7-of-10");
  // Indices below 10 in 3 shards: {0, 3, 6, 9}, {1, 4, 7}, {2, 5, 8}.
  EXPECT_EQ(shard_case_count(10, {0, 3}), 4u);
  EXPECT_EQ(shard_case_count(10, {1, 3}), 3u);
  EXPECT_EQ(shard_case_count(10, {2, 3}), 3u);
  EXPECT_EQ(shard_case_count(2, {2, 3}), 0u);
  EXPECT_EQ(shard_case_count(40, {0, 1}), 40u);
}

}  // namespace
}  // namespace weft::corpus
