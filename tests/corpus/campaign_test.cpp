// Campaign directories: a shard's progress counts positions, old files are re-counted, and a
// count whose case progress.json never saw done is taken back when the campaign is reopened.
#include "weft/corpus/campaign.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "weft/error.h"
#include "weft/ir/graph.h"
#include "weft/tensor.h"

namespace weft::corpus {
namespace {

namespace fs = std::filesystem;

class CampaignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("weft-campaign-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void write(const fs::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
  }
  static nlohmann::json read(const fs::path& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
  }

  fs::path dir_;
};

TEST(Progress, AShardCountsPositionsOfItsOwnIndices) {
  Progress progress;
  progress.shard_index = 1;
  progress.shard_count = 3;  // indices 1, 4, 7, 10, ...
  progress.mark(4);
  EXPECT_EQ(progress.done_below, 0u);
  EXPECT_EQ(progress.done_above, (std::vector<std::uint64_t>{1}));
  progress.mark(1);
  EXPECT_EQ(progress.done_below, 2u);
  EXPECT_TRUE(progress.done_above.empty());
  progress.mark(10);
  EXPECT_TRUE(progress.done(1));
  EXPECT_TRUE(progress.done(4));
  EXPECT_FALSE(progress.done(7));
  EXPECT_TRUE(progress.done(10));
  EXPECT_FALSE(progress.done(2));  // another shard's
  EXPECT_EQ(progress.done_indices(), (std::vector<std::uint64_t>{1, 4, 10}));
  EXPECT_THROW(progress.mark(5), Error);

  const nlohmann::json json = progress_to_json(progress);
  EXPECT_EQ(json["shard"], nlohmann::json::array({1, 3}));
  const Progress back = progress_from_json(json, "progress.json");
  EXPECT_EQ(back.done_indices(), progress.done_indices());
  EXPECT_EQ(back.state, "running");
}

TEST(Progress, RefusesAnUnknownStateNamingTheField) {
  try {
    progress_from_json(nlohmann::json::parse(
                           R"({"done_below": 0, "done_above": [], "cases": 0, "elapsed": 0,
                               "state": "asleep"})"),
                       "p/progress.json");
    FAIL() << "accepted state asleep";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("p/progress.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/state"), std::string::npos) << e.what();
  }
}

TEST(CaseIndex, ReadsCaseDirectoryNames) {
  EXPECT_EQ(case_index(case_name(17)), 17u);
  EXPECT_EQ(case_index("case-"), std::nullopt);
  EXPECT_EQ(case_index("case-12x"), std::nullopt);
  EXPECT_EQ(case_index(""), std::nullopt);
}

TEST_F(CampaignTest, AShardWritesItsShardAndReopensIt) {
  Campaign campaign =
      Campaign::create(dir_, {{"seed", 1}, {"shard", {2, 4}}}, nlohmann::json::object());
  campaign.mark_done(2, 1.0);
  campaign.mark_done(6, 2.0);
  campaign.mark_done(14, 3.0);
  campaign.set_state("finished");
  campaign.save_progress();
  const nlohmann::json written = read(dir_ / "progress.json");
  EXPECT_EQ(written["done_below"], 2);
  EXPECT_EQ(written["done_above"], nlohmann::json::array({3}));
  EXPECT_EQ(written["state"], "finished");
  EXPECT_GT(written["updated"].get<double>(), 1.7e9);

  const Campaign reopened = Campaign::open(dir_);
  EXPECT_EQ(reopened.progress().done_indices(), (std::vector<std::uint64_t>{2, 6, 14}));
  EXPECT_EQ(reopened.progress().cases, 3u);
}

TEST_F(CampaignTest, AnOldShardProgressOfCaseIndicesIsRecountedInPositions) {
  Campaign::create(dir_, {{"seed", 1}, {"shard", {1, 2}}}, nlohmann::json::object());
  write(dir_ / "progress.json",
        R"({"done_below": 0, "done_above": [1, 3, 7], "cases": 3, "elapsed": 4.0})");
  const Campaign campaign = Campaign::open(dir_);
  EXPECT_EQ(campaign.progress().done_indices(), (std::vector<std::uint64_t>{1, 3, 7}));
  EXPECT_EQ(campaign.progress().done_below, 2u);
  EXPECT_EQ(campaign.progress().state, "running");
}

TEST_F(CampaignTest, AProgressOfAnotherShardIsRefused) {
  Campaign::create(dir_, {{"seed", 1}, {"shard", {1, 2}}}, nlohmann::json::object());
  write(dir_ / "progress.json",
        R"({"done_below": 0, "done_above": [], "cases": 0, "elapsed": 0, "shard": [0, 2]})");
  try {
    Campaign::open(dir_);
    FAIL() << "opened a progress.json of shard 0/2 in shard 1/2";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("/shard"), std::string::npos) << e.what();
  }
}

// The campaign died after bucket.json counted a case and before progress.json marked it done:
// reopening takes the count back, so judging the case again counts it once.
TEST_F(CampaignTest, ACountWhoseCaseWasNeverMarkedDoneIsTakenBack) {
  ir::Graph graph;
  graph.mark_output(graph.add_input("x", ir::TensorType{Dtype::Float32, {2}}));
  const TestCase test_case{graph, {{"x", zeros({2})}}};
  Bucket finding;
  finding.signature = "wrong-output|torch|relu|";
  finding.symptom = "wrong-output";
  finding.backend = "torch";
  finding.op = "relu";
  const auto no_repro = [] { return std::string("# repro\n"); };
  std::string name;
  {
    Campaign campaign = Campaign::create(dir_, {{"seed", 1}}, nlohmann::json::object());
    for (std::uint64_t index = 0; index < kMaxCasesPerBucket + 2; ++index) {
      campaign.record(finding, case_name(index), test_case, nlohmann::json::object(), no_repro);
      campaign.mark_done(index, 1.0);
      campaign.save_progress();
    }
    // Case 9 is counted (not stored: five lower ones are), then the campaign "dies".
    campaign.record(finding, case_name(9), test_case, nlohmann::json::object(), no_repro);
    name = campaign.buckets().begin()->first;
    EXPECT_EQ(campaign.buckets().begin()->second.count, kMaxCasesPerBucket + 3);
  }
  Campaign resumed = Campaign::open(dir_);
  EXPECT_EQ(resumed.buckets().at(name).count, kMaxCasesPerBucket + 2);
  // Judged again after the resume: counted once.
  resumed.record(finding, case_name(9), test_case, nlohmann::json::object(), no_repro);
  resumed.mark_done(9, 2.0);
  resumed.save_progress();
  EXPECT_EQ(Campaign::open(dir_).buckets().at(name).count, kMaxCasesPerBucket + 3);
  // A count whose case progress.json has is kept.
  EXPECT_EQ(read(dir_ / "bugs" / name / "bucket.json")["last_counted"], case_name(9));
}

}  // namespace
}  // namespace weft::corpus
