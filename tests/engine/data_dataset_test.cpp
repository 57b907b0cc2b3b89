// Datasets: TensorDataset rows, Subset indexing, random_split's lengths, fractions and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

#include "expect_error.h"
#include "weft/data/dataset.h"
#include "weft/ops.h"

namespace {

using weft::Tensor;
using weft::data::Dataset;
using weft::data::random_split;
using weft::data::Subset;
using weft::data::TensorDataset;
using weft::testing::expect_error;

// Sample i is i: lets tests see exactly which indices a subset holds.
class Range final : public Dataset<std::int64_t> {
 public:
  explicit Range(std::int64_t n) : n_(n) {}
  std::int64_t size() const override { return n_; }
  std::int64_t get(std::int64_t index) const override {
    return weft::data::wrap_index(index, n_, "Range");
  }

 private:
  std::int64_t n_;
};

template <typename Sample>
std::vector<Sample> all_samples(const Dataset<Sample>& dataset) {
  std::vector<Sample> out;
  for (std::int64_t i = 0; i < dataset.size(); ++i) out.push_back(dataset.get(i));
  return out;
}

TEST(TensorDataset, SampleIsOneRowOfEachTensor) {
  const Tensor x = weft::arange(12).reshape({4, 3});
  const Tensor y = weft::tensor(std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f});
  const TensorDataset dataset({x, y});
  ASSERT_EQ(dataset.size(), 4);
  const std::vector<Tensor> row = dataset.get(2);
  ASSERT_EQ(row.size(), 2u);
  EXPECT_EQ(row[0].sizes(), (weft::Shape{3}));
  EXPECT_EQ(row[0].to_vector<std::int64_t>(), (std::vector<std::int64_t>{6, 7, 8}));
  EXPECT_EQ(row[1].dim(), 0);
  EXPECT_FLOAT_EQ(row[1].item<float>(), 2.5f);
}

TEST(TensorDataset, NegativeIndexCountsFromTheEndAndOutOfRangeThrows) {
  const TensorDataset dataset({weft::arange(5)});
  EXPECT_EQ(dataset.get(-1)[0].item<std::int64_t>(), 4);
  expect_error([&] { dataset.get(5); }, "index 5 is out of bounds for size 5");
  expect_error([&] { dataset.get(-6); }, "index -6 is out of bounds for size 5");
}

TEST(TensorDataset, FirstDimensionMismatchNamesTheShapes) {
  expect_error(
      [] {
        TensorDataset({weft::zeros({4, 3}), weft::zeros({5})});
      },
      "Size mismatch between tensors: tensor 0 has shape [4, 3] but tensor 1 has shape "
      "[5]");
  expect_error([] { TensorDataset({weft::scalar_tensor(1.0)}); }, "0-dimensional");
  expect_error([] { TensorDataset(std::vector<Tensor>{}); }, "at least one tensor");
}

TEST(Subset, GetsTheParentSamplesAtItsIndicesInOrder) {
  auto parent = std::make_shared<Range>(10);
  const Subset subset(parent, {7, 2, -1});
  EXPECT_EQ(subset.size(), 3);
  EXPECT_EQ(all_samples(subset), (std::vector<std::int64_t>{7, 2, 9}));
  EXPECT_EQ(subset.get(-1), 9);
  expect_error([&] { Subset(parent, {10}); }, "index 10 is out of bounds for size 10");
}

TEST(RandomSplit, LengthsGiveDisjointSubsetsCoveringTheDataset) {
  auto parent = std::make_shared<Range>(10);
  const auto parts = random_split(parent, std::vector<std::int64_t>{3, 7}, 42);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]->size(), 3);
  EXPECT_EQ(parts[1]->size(), 7);
  std::vector<std::int64_t> seen = all_samples(*parts[0]);
  const std::vector<std::int64_t> second = all_samples(*parts[1]);
  seen.insert(seen.end(), second.begin(), second.end());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(RandomSplit, SameSeedSameSplitOtherSeedOtherSplit) {
  auto parent = std::make_shared<Range>(100);
  const auto a = random_split(parent, {50, 50}, 7);
  const auto b = random_split(parent, {50, 50}, 7);
  const auto c = random_split(parent, {50, 50}, 8);
  EXPECT_EQ(a[0]->indices(), b[0]->indices());
  EXPECT_NE(a[0]->indices(), c[0]->indices());
}

TEST(RandomSplit, FractionsFloorThenHandOutTheRemainderRoundRobin) {
  auto parent = std::make_shared<Range>(10);
  // floor(10 * 0.25) = 2 for each split; the remainder 2 goes to splits 0 and 1.
  const auto parts = random_split(parent, {0.25, 0.25, 0.25, 0.25});
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0]->size(), 3);
  EXPECT_EQ(parts[1]->size(), 3);
  EXPECT_EQ(parts[2]->size(), 2);
  EXPECT_EQ(parts[3]->size(), 2);

  const auto thirds = random_split(parent, std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3});
  EXPECT_EQ(thirds[0]->size(), 4);
  EXPECT_EQ(thirds[1]->size(), 3);
  EXPECT_EQ(thirds[2]->size(), 3);

  const auto uneven = random_split(parent, {0.8, 0.2});
  EXPECT_EQ(uneven[0]->size(), 8);
  EXPECT_EQ(uneven[1]->size(), 2);
}

TEST(RandomSplit, WholeNumbersInBracesAreLengths) {
  auto parent = std::make_shared<Range>(5);
  const auto parts = random_split(parent, {2, 3});
  EXPECT_EQ(parts[0]->size(), 2);
  EXPECT_EQ(parts[1]->size(), 3);
}

TEST(RandomSplit, BadLengthsRaisePyTorchsErrors) {
  auto parent = std::make_shared<Range>(10);
  expect_error(
      [&] {
        random_split(parent, {3, 4});
      },
      "Sum of input lengths does not equal the length of the input dataset!");
  expect_error(
      [&] {
        random_split(parent, std::vector<std::int64_t>{11, -1});
      },
      "must be non-negative");
  expect_error(
      [&] {
        random_split(parent, {1.5, -0.5});
      },
      "Fraction at index 0 is not between 0 and 1");
  expect_error([&] { random_split(parent, {0.5, 0.3}); }, "expected whole-number lengths");
}

TEST(RandomSplit, SplitsOfATensorDatasetKeepTheirRows) {
  auto parent = std::make_shared<TensorDataset>(std::vector<Tensor>{weft::arange(6)});
  const auto parts = random_split(parent, {0.5, 0.5}, 3);
  std::set<std::int64_t> values;
  for (const auto& part : parts) {
    for (std::int64_t i = 0; i < part->size(); ++i) {
      values.insert(part->get(i)[0].item<std::int64_t>());
    }
  }
  EXPECT_EQ(values, (std::set<std::int64_t>{0, 1, 2, 3, 4, 5}));
}

}  // namespace
