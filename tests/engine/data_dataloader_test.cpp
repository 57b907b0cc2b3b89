// DataLoader: batching, shuffling by seed and epoch, worker threads that keep the order,
// default_collate of tuples, pairs and dicts, custom collate functions, exceptions from workers
// and stopping mid-epoch.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "expect_error.h"
#include "weft/autograd.h"
#include "weft/data/collate.h"
#include "weft/data/dataloader.h"
#include "weft/data/dataset.h"
#include "weft/ops.h"

namespace {

using weft::Dtype;
using weft::Shape;
using weft::Tensor;
using weft::data::DataLoader;
using weft::data::DataLoaderOptions;
using weft::data::Dataset;
using weft::data::TensorDataset;
using weft::testing::expect_error;

// Sample i is the scalar i; optionally sleeps a little (longer for some indices, so workers
// finish out of order) and throws at one index.
class Indices final : public Dataset<std::int64_t> {
 public:
  explicit Indices(std::int64_t n, bool jitter = false, std::int64_t throw_at = -1)
      : n_(n), jitter_(jitter), throw_at_(throw_at) {}
  std::int64_t size() const override { return n_; }
  std::int64_t get(std::int64_t index) const override {
    ++calls;
    if (index == throw_at_) throw std::out_of_range("boom at " + std::to_string(index));
    if (jitter_) std::this_thread::sleep_for(std::chrono::microseconds(50 * (index % 7)));
    return index;
  }
  mutable std::atomic<std::int64_t> calls{0};

 private:
  std::int64_t n_;
  bool jitter_;
  std::int64_t throw_at_;
};

// The sample indices of one epoch, batch by batch.
template <typename Loader>
std::vector<std::vector<std::int64_t>> epoch_batches(Loader& loader) {
  std::vector<std::vector<std::int64_t>> out;
  for (auto& batch : loader) out.push_back(batch.template to_vector<std::int64_t>());
  return out;
}

std::vector<std::int64_t> flatten(const std::vector<std::vector<std::int64_t>>& batches) {
  std::vector<std::int64_t> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

TEST(DataLoader, BatchesInOrderWithALastPartialBatch) {
  auto dataset = std::make_shared<Indices>(10);
  DataLoader loader(dataset, DataLoaderOptions{}.with_batch_size(4));
  EXPECT_EQ(loader.size(), 3);
  const auto batches = epoch_batches(loader);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0], (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(batches[1], (std::vector<std::int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(batches[2], (std::vector<std::int64_t>{8, 9}));
}

TEST(DataLoader, DropLastDropsThePartialBatch) {
  auto dataset = std::make_shared<Indices>(10);
  DataLoader loader(dataset, DataLoaderOptions{}.with_batch_size(4).with_drop_last());
  EXPECT_EQ(loader.size(), 2);
  const auto batches = epoch_batches(loader);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1], (std::vector<std::int64_t>{4, 5, 6, 7}));

  DataLoader exact(dataset, DataLoaderOptions{}.with_batch_size(5).with_drop_last());
  EXPECT_EQ(exact.size(), 2);
  EXPECT_EQ(epoch_batches(exact).size(), 2u);
}

TEST(DataLoader, DefaultBatchSizeIsOne) {
  auto dataset = std::make_shared<Indices>(3);
  DataLoader loader(dataset);
  EXPECT_EQ(loader.size(), 3);
  const auto batches = epoch_batches(loader);
  EXPECT_EQ(batches, (std::vector<std::vector<std::int64_t>>{{0}, {1}, {2}}));
}

TEST(DataLoader, EmptyDatasetGivesNoBatches) {
  DataLoader loader(std::make_shared<Indices>(0), DataLoaderOptions{}.with_num_workers(2));
  EXPECT_EQ(loader.size(), 0);
  EXPECT_TRUE(epoch_batches(loader).empty());
}

TEST(DataLoader, ShuffleIsReproducibleBySeedAndDiffersAcrossEpochs) {
  auto dataset = std::make_shared<Indices>(50);
  const auto options = DataLoaderOptions{}.with_batch_size(8).with_shuffle().with_seed(123);
  DataLoader a(dataset, options);
  DataLoader b(dataset, options);
  DataLoader other(dataset, DataLoaderOptions(options).with_seed(124));
  const auto a0 = flatten(epoch_batches(a));
  const auto a1 = flatten(epoch_batches(a));
  EXPECT_EQ(a0, flatten(epoch_batches(b)));
  EXPECT_EQ(a1, flatten(epoch_batches(b)));
  EXPECT_NE(a0, a1);
  EXPECT_NE(a0, flatten(epoch_batches(other)));

  std::vector<std::int64_t> identity(50);
  for (std::int64_t i = 0; i < 50; ++i) identity[static_cast<std::size_t>(i)] = i;
  EXPECT_NE(a0, identity);

  // set_epoch replays an epoch's order (resuming a run).
  a.set_epoch(1);
  EXPECT_EQ(flatten(epoch_batches(a)), a1);
  EXPECT_EQ(a.epoch(), 2);
}

TEST(DataLoader, EveryIndexIsSeenExactlyOncePerEpoch) {
  auto dataset = std::make_shared<Indices>(37);
  for (const std::int64_t workers : {0, 3}) {
    DataLoader loader(
        dataset,
        DataLoaderOptions{}.with_batch_size(5).with_shuffle().with_seed(9).with_num_workers(
            workers));
    for (int epoch = 0; epoch < 3; ++epoch) {
      std::vector<std::int64_t> seen = flatten(epoch_batches(loader));
      std::sort(seen.begin(), seen.end());
      ASSERT_EQ(seen.size(), 37u);
      for (std::int64_t i = 0; i < 37; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], i);
    }
  }
}

TEST(DataLoader, WorkersDeliverTheSameBatchesInTheSameOrderAsTheCallingThread) {
  auto dataset = std::make_shared<Indices>(103, /*jitter=*/true);
  const auto options = DataLoaderOptions{}.with_batch_size(3).with_shuffle().with_seed(5);
  DataLoader serial(dataset, options);
  const auto expected0 = epoch_batches(serial);
  const auto expected1 = epoch_batches(serial);
  for (const std::int64_t workers : {1, 2, 4}) {
    for (const std::int64_t prefetch : {1, 3}) {
      DataLoader parallel(
          dataset,
          DataLoaderOptions(options).with_num_workers(workers).with_prefetch_factor(prefetch));
      EXPECT_EQ(epoch_batches(parallel), expected0) << workers << " workers";
      EXPECT_EQ(epoch_batches(parallel), expected1) << workers << " workers";
    }
  }
}

TEST(DataLoader, TensorDatasetBatchesStackEachTensor) {
  auto dataset = std::make_shared<TensorDataset>(
      std::vector<Tensor>{weft::arange(12).reshape({6, 2}), weft::arange(6).to(Dtype::Float32)});
  DataLoader loader(dataset, DataLoaderOptions{}.with_batch_size(4).with_num_workers(2));
  std::vector<std::vector<Tensor>> batches;
  for (auto& batch : loader) batches.push_back(batch);
  ASSERT_EQ(batches.size(), 2u);
  ASSERT_EQ(batches[0].size(), 2u);
  EXPECT_EQ(batches[0][0].sizes(), (Shape{4, 2}));
  EXPECT_EQ(batches[0][0].dtype(), Dtype::Int64);
  EXPECT_EQ(batches[0][0].to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(batches[1][0].sizes(), (Shape{2, 2}));
  EXPECT_EQ(batches[1][1].to_vector<float>(), (std::vector<float>{4, 5}));
}

// (features, label, weight) samples, as a tuple.
class Rows final : public Dataset<std::tuple<Tensor, std::int64_t, double>> {
 public:
  std::int64_t size() const override { return 5; }
  std::tuple<Tensor, std::int64_t, double> get(std::int64_t index) const override {
    const auto i = static_cast<float>(index);
    return {weft::tensor(std::vector<float>{i, -i}), index * 10, 0.5 * static_cast<double>(index)};
  }
};

TEST(DataLoader, TuplesCollatePositionByPositionWithPythonScalarTypes) {
  DataLoader loader(std::make_shared<Rows>(), DataLoaderOptions{}.with_batch_size(3));
  auto it = loader.begin();
  const auto& [features, labels, weights] = *it;
  EXPECT_EQ(features.sizes(), (Shape{3, 2}));
  EXPECT_EQ(features.to_vector<float>(), (std::vector<float>{0, -0.f, 1, -1, 2, -2}));
  EXPECT_EQ(labels.dtype(), Dtype::Int64);  // Python int → int64
  EXPECT_EQ(labels.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 10, 20}));
  EXPECT_EQ(weights.dtype(), Dtype::Float64);  // Python float → float64
  EXPECT_EQ(weights.to_vector<double>(), (std::vector<double>{0.0, 0.5, 1.0}));
}

TEST(DefaultCollate, PairsVectorsAndStringsCollateElementWise) {
  using Sample = std::pair<Tensor, std::vector<std::string>>;
  const std::vector<Sample> samples{{weft::zeros({2}), {"a", "b"}}, {weft::ones({2}), {"c", "d"}}};
  const auto batch = weft::data::default_collate(samples);
  EXPECT_EQ(batch.first.to_vector<float>(), (std::vector<float>{0, 0, 1, 1}));
  ASSERT_EQ(batch.second.size(), 2u);
  EXPECT_EQ(batch.second[0], (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(batch.second[1], (std::vector<std::string>{"b", "d"}));

  const std::vector<std::vector<std::int64_t>> ragged{{1, 2}, {3}};
  expect_error([&] { weft::data::default_collate(ragged); },
               "each element in list of batch should be of equal size");
  expect_error([] { weft::data::default_collate(std::vector<Tensor>{}); }, "at least one sample");
  const std::vector<Tensor> shapes{weft::zeros({2}), weft::zeros({3})};
  expect_error([&] { weft::data::default_collate(shapes); },
               "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at "
               "entry 1");
}

using Record = std::map<std::string, Tensor>;

// Dict samples; when `bad_key` is set, sample 2 has a different shape or set of keys.
class Records final : public Dataset<Record> {
 public:
  explicit Records(int fault = 0) : fault_(fault) {}
  std::int64_t size() const override { return 4; }
  Record get(std::int64_t index) const override {
    Record r{{"image", weft::full({2, 2}, static_cast<double>(index))},
             {"label", weft::scalar_tensor(static_cast<double>(index), weft::dtype(Dtype::Int64))}};
    if (index == 2 && fault_ == 1) r["image"] = weft::zeros({3});
    if (index == 2 && fault_ == 2) r.erase("label");
    if (index == 2 && fault_ == 3) r["extra"] = weft::zeros({1});
    return r;
  }

 private:
  int fault_;
};

TEST(DataLoader, DictsCollateKeyByKey) {
  DataLoader loader(std::make_shared<Records>(), DataLoaderOptions{}.with_batch_size(4));
  auto it = loader.begin();
  const Record& batch = *it;
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch.at("image").sizes(), (Shape{4, 2, 2}));
  EXPECT_EQ(batch.at("image")[3].to_vector<float>(), (std::vector<float>{3, 3, 3, 3}));
  EXPECT_EQ(batch.at("label").sizes(), (Shape{4}));
  EXPECT_EQ(batch.at("label").dtype(), Dtype::Int64);
}

TEST(DefaultCollate, DictsThatDisagreeNameTheKey) {
  auto collate_all = [](const Records& dataset) {
    std::vector<Record> samples;
    for (std::int64_t i = 0; i < dataset.size(); ++i) samples.push_back(dataset.get(i));
    return weft::data::default_collate(samples);
  };
  expect_error([&] { collate_all(Records(1)); }, "at entry 2 at ['image']");
  expect_error([&] { collate_all(Records(2)); }, "key 'label' is in sample 0 but not in sample 2");
  expect_error([&] { collate_all(Records(3)); }, "key 'extra' is in sample 2 but not in sample 0");
}

TEST(DataLoader, CustomCollateMakesAnyBatchType) {
  auto dataset = std::make_shared<Indices>(10);
  DataLoader loader(dataset, DataLoaderOptions{}.with_batch_size(4).with_num_workers(2),
                    [](const std::vector<std::int64_t>& samples) {
                      std::int64_t sum = 0;
                      for (const std::int64_t s : samples) sum += s;
                      return sum;
                    });
  static_assert(std::is_same_v<decltype(loader)::Iterator::value_type, std::int64_t>);
  std::vector<std::int64_t> sums;
  for (const std::int64_t sum : loader) sums.push_back(sum);
  EXPECT_EQ(sums, (std::vector<std::int64_t>{6, 22, 17}));
}

// A sample type default_collate does not know, batched by a user's function.
struct Point {
  double x = 0;
  double y = 0;
};
class Points final : public Dataset<Point> {
 public:
  std::int64_t size() const override { return 3; }
  Point get(std::int64_t index) const override {
    return {static_cast<double>(index), 2.0 * static_cast<double>(index)};
  }
};

TEST(DataLoader, CustomCollateHandlesSampleTypesDefaultCollateDoesNot) {
  DataLoader loader(std::make_shared<Points>(), DataLoaderOptions{}.with_batch_size(3),
                    [](const std::vector<Point>& points) {
                      std::vector<double> xy;
                      for (const Point& p : points) {
                        xy.push_back(p.x);
                        xy.push_back(p.y);
                      }
                      return weft::tensor(xy, {static_cast<std::int64_t>(points.size()), 2});
                    });
  auto it = loader.begin();
  EXPECT_EQ(it->to_vector<double>(), (std::vector<double>{0, 0, 1, 2, 2, 4}));
}

TEST(DataLoader, BatchesNeverRequireGrad) {
  Tensor weights = weft::ones({4, 2});
  weights.requires_grad_();
  auto dataset = std::make_shared<TensorDataset>(std::vector<Tensor>{weights});
  for (const std::int64_t workers : {0, 2}) {
    DataLoader loader(dataset, DataLoaderOptions{}.with_batch_size(2).with_num_workers(workers));
    for (auto& batch : loader) EXPECT_FALSE(batch[0].requires_grad()) << workers << " workers";
  }
  EXPECT_TRUE(weft::autograd::grad_enabled());
}

TEST(DataLoader, ExceptionFromAWorkerIsRethrownAtItsBatch) {
  auto dataset = std::make_shared<Indices>(40, /*jitter=*/false, /*throw_at=*/13);
  for (const std::int64_t workers : {0, 2}) {
    DataLoader loader(dataset, DataLoaderOptions{}.with_batch_size(4).with_num_workers(workers));
    std::vector<std::int64_t> delivered;
    try {
      for (auto& batch : loader) delivered.push_back(batch[0].item<std::int64_t>());
      ADD_FAILURE() << "expected the batch holding index 13 to throw";
    } catch (const weft::Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("batch 3, dataset index 13: boom at 13"), std::string::npos)
          << message;
      if (workers > 0) {
        EXPECT_NE(message.find("DataLoader worker"), std::string::npos) << message;
      }
      // The original exception travels nested inside.
      try {
        std::rethrow_if_nested(e);
        ADD_FAILURE() << "expected a nested exception";
      } catch (const std::out_of_range& original) {
        EXPECT_STREQ(original.what(), "boom at 13");
      }
    }
    EXPECT_EQ(delivered, (std::vector<std::int64_t>{0, 4, 8})) << workers << " workers";

    // The loader stays usable: a new epoch starts from the beginning.
    auto it = loader.begin();
    EXPECT_EQ((*it)[0].item<std::int64_t>(), 0);
  }
}

TEST(DataLoader, ExceptionFromCollateIsRethrownAtItsBatch) {
  auto dataset = std::make_shared<Indices>(10);
  DataLoader loader(dataset, DataLoaderOptions{}.with_batch_size(2).with_num_workers(3),
                    [](const std::vector<std::int64_t>& samples) -> std::int64_t {
                      if (samples[0] == 6) throw weft::Error("cannot collate 6");
                      return samples[0];
                    });
  auto it = loader.begin();
  EXPECT_EQ(*it, 0);
  ++it;
  ++it;
  EXPECT_EQ(*it, 4);
  expect_error([&] { ++it; }, "batch 3, collate_fn: cannot collate 6");
  ++it;  // later batches still arrive
  EXPECT_EQ(*it, 8);
  ++it;
  EXPECT_TRUE(it == loader.end());
}

TEST(DataLoader, DestroyingALoaderMidEpochJoinsItsWorkers) {
  auto dataset = std::make_shared<Indices>(1000, /*jitter=*/true);
  {
    DataLoader loader(dataset, DataLoaderOptions{}.with_batch_size(2).with_num_workers(4));
    auto it = loader.begin();
    EXPECT_EQ((*it).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1}));
  }  // workers are busy or waiting for room when the loader goes away
  const std::int64_t calls = dataset->calls.load();
  // At most the batches in flight were made: prefetch_factor * workers plus the one consumed,
  // each of two samples.
  EXPECT_LE(calls, 2 * (2 * 4 + 1));
  EXPECT_EQ(dataset->calls.load(), calls);  // nobody is still working
}

TEST(DataLoader, StartingANewEpochMidEpochRestartsFromTheFirstBatch) {
  auto dataset = std::make_shared<Indices>(20);
  DataLoader loader(dataset, DataLoaderOptions{}.with_batch_size(5).with_num_workers(2));
  for (auto& batch : loader) {
    EXPECT_EQ(batch[0].item<std::int64_t>(), 0);
    break;
  }
  const auto batches = epoch_batches(loader);
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[0].front(), 0);
  EXPECT_EQ(batches[3].back(), 19);
}

TEST(DataLoader, OptionsAreChecked) {
  auto dataset = std::make_shared<Indices>(4);
  expect_error([&] { DataLoader(dataset, DataLoaderOptions{}.with_batch_size(0)); },
               "batch_size should be a positive integer value, but got batch_size=0");
  expect_error([&] { DataLoader(dataset, DataLoaderOptions{}.with_num_workers(-1)); },
               "num_workers option should be non-negative");
  expect_error([&] { DataLoader(dataset, DataLoaderOptions{}.with_prefetch_factor(0)); },
               "prefetch_factor option should be a positive integer");
}

}  // namespace
