#pragma once
// DataLoader (torch.utils.data.DataLoader): iterates a Dataset in batches, optionally shuffled,
// with background worker threads that prefetch batches and deliver them in order.
//
//   auto train = std::make_shared<weft::data::MNIST>(root);
//   weft::data::DataLoader loader(train, weft::data::DataLoaderOptions{}.with_batch_size(64)
//                                            .with_shuffle(true).with_num_workers(2));
//   for (auto& [images, labels] : loader) { … }   // one epoch; iterate again for the next

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/autograd.h"
#include "weft/data/collate.h"
#include "weft/data/dataset.h"
#include "weft/error.h"

namespace weft::data {

// DataLoader's settings, with PyTorch's names and defaults. Set fields directly or chain the
// with_* setters.
struct DataLoaderOptions {
  std::int64_t batch_size = 1;
  bool shuffle = false;
  // Epoch e is shuffled by a permutation drawn from a generator seeded with (seed, e), so runs
  // repeat exactly and every epoch has its own order.
  std::uint64_t seed = 0;
  bool drop_last = false;  // drop the last batch when it would be smaller than batch_size
  // 0: batches are made in the iterating thread. N > 0: N threads each make whole batches,
  // keeping up to prefetch_factor * N batches ready ahead of the consumer.
  std::int64_t num_workers = 0;
  std::int64_t prefetch_factor = 2;

  DataLoaderOptions& with_batch_size(std::int64_t v) {
    batch_size = v;
    return *this;
  }
  DataLoaderOptions& with_shuffle(bool v = true) {
    shuffle = v;
    return *this;
  }
  DataLoaderOptions& with_seed(std::uint64_t v) {
    seed = v;
    return *this;
  }
  DataLoaderOptions& with_drop_last(bool v = true) {
    drop_last = v;
    return *this;
  }
  DataLoaderOptions& with_num_workers(std::int64_t v) {
    num_workers = v;
    return *this;
  }
  DataLoaderOptions& with_prefetch_factor(std::int64_t v) {
    prefetch_factor = v;
    return *this;
  }
};

namespace detail {
// Checks options against PyTorch's rules (throws weft::Error).
void check_options(const DataLoaderOptions& options);
// The order in which an epoch visits the dataset: 0..n-1, or epoch `epoch`'s permutation.
std::vector<std::int64_t> epoch_order(std::int64_t n, const DataLoaderOptions& options,
                                      std::int64_t epoch);
// Wraps the exception being handled in a weft::Error that says where it happened (worker,
// batch, dataset index) and nests the original (std::rethrow_if_nested recovers it).
[[noreturn]] void rethrow_with_context(const std::string& context);
}  // namespace detail

// Loads batches of `Sample`s from a Dataset, collated into `Batch`es (by default_collate unless
// a collate function is given). Each begin() starts a new epoch and ends any unfinished one; a
// loader runs one epoch at a time. Samples are fetched with autograd recording off, so batches
// never require grad. Dataset::get and the collate function must be thread-safe when
// num_workers > 0 (and must not draw from weft's default generator). An exception from get or
// collate surfaces at the begin() or ++ that reaches its batch, as a weft::Error naming the
// worker, batch and dataset index, with the original nested (std::rethrow_if_nested); later
// batches can still be taken.
template <typename Sample, typename Batch = default_collate_t<Sample>>
class DataLoader {
 public:
  using CollateFn = std::function<Batch(const std::vector<Sample>&)>;
  class Iterator;

  explicit DataLoader(std::shared_ptr<const Dataset<Sample>> dataset,
                      DataLoaderOptions options = {}, CollateFn collate_fn = nullptr)
      : dataset_(std::move(dataset)), options_(options), collate_(std::move(collate_fn)) {
    if (!dataset_) throw Error("DataLoader: dataset is null");
    detail::check_options(options_);
    if (!collate_) {
      if constexpr (is_collatable_v<Sample>) {
        if constexpr (std::is_same_v<Batch, default_collate_t<Sample>>) {
          collate_ = [](const std::vector<Sample>& samples) { return default_collate(samples); };
        }
      }
      if (!collate_) {
        throw Error(
            "DataLoader: default_collate cannot make this Batch type from these samples; "
            "pass a collate_fn");
      }
    }
  }

  // Number of batches per epoch (len(loader)).
  std::int64_t size() const {
    const std::int64_t n = dataset_->size();
    return options_.drop_last ? n / options_.batch_size
                              : (n + options_.batch_size - 1) / options_.batch_size;
  }
  const DataLoaderOptions& options() const { return options_; }
  const std::shared_ptr<const Dataset<Sample>>& dataset() const { return dataset_; }
  // Epochs started so far; the next begin() uses this epoch's shuffle order.
  std::int64_t epoch() const { return epoch_; }
  // Sets the epoch the next begin() runs (to resume a run's shuffle order).
  void set_epoch(std::int64_t epoch) { epoch_ = epoch; }

  // Starts an epoch and loads its first batch.
  Iterator begin() {
    run_.reset();  // joins the workers of an unfinished epoch
    run_ = std::make_unique<Run>(dataset_, collate_, options_,
                                 detail::epoch_order(dataset_->size(), options_, epoch_), size());
    ++epoch_;
    run_->advance();
    return Iterator(this);
  }
  Iterator end() { return Iterator(nullptr); }

  // An input iterator over the current epoch; dereferencing gives the current batch.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = Batch*;
    using reference = Batch&;

    Batch& operator*() const { return *loader_->run_->current; }
    Batch* operator->() const { return &*loader_->run_->current; }
    Iterator& operator++() {
      loader_->run_->advance();
      return *this;
    }
    bool operator==(const Iterator& other) const { return done() == other.done(); }
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    friend class DataLoader;
    explicit Iterator(DataLoader* loader) : loader_(loader) {}
    bool done() const { return loader_ == nullptr || !loader_->run_->current.has_value(); }
    DataLoader* loader_;
  };

 private:
  // One epoch: its order, its workers and the batches they have made but nobody took yet.
  // Workers touch only this object, the dataset and the collate function.
  struct Run {
    struct Slot {
      std::optional<Batch> batch;
      std::exception_ptr error;
    };

    Run(std::shared_ptr<const Dataset<Sample>> dataset, CollateFn collate,
        const DataLoaderOptions& options, std::vector<std::int64_t> order, std::int64_t num_batches)
        : dataset(std::move(dataset)),
          collate(std::move(collate)),
          batch_size(options.batch_size),
          order(std::move(order)),
          num_batches(num_batches),
          max_ahead(options.prefetch_factor * options.num_workers) {
      try {
        for (std::int64_t w = 0; w < options.num_workers; ++w) {
          workers.emplace_back([this, w] { work(w); });
        }
      } catch (...) {  // could not start a thread: stop the ones that did start
        stop();
        throw;
      }
    }

    ~Run() { stop(); }

    void stop() {
      {
        std::lock_guard<std::mutex> lock(mutex);
        stopping = true;
      }
      may_claim.notify_all();
      for (std::thread& t : workers) t.join();
      workers.clear();
    }

    // Makes batch `b` (worker -1: the iterating thread).
    Batch make_batch(std::int64_t b, std::int64_t worker) const {
      const std::string context =
          (worker < 0 ? std::string("DataLoader") : "DataLoader worker " + std::to_string(worker)) +
          ": batch " + std::to_string(b);
      autograd::NoGradGuard no_grad;
      const std::int64_t first = b * batch_size;
      const std::int64_t last =
          std::min<std::int64_t>(first + batch_size, static_cast<std::int64_t>(order.size()));
      std::vector<Sample> samples;
      samples.reserve(static_cast<std::size_t>(last - first));
      for (std::int64_t i = first; i < last; ++i) {
        const std::int64_t index = order[static_cast<std::size_t>(i)];
        try {
          samples.push_back(dataset->get(index));
        } catch (...) {
          detail::rethrow_with_context(context + ", dataset index " + std::to_string(index));
        }
      }
      try {
        return collate(samples);
      } catch (...) {
        detail::rethrow_with_context(context + ", collate_fn");
      }
    }

    void work(std::int64_t worker) {
      std::unique_lock<std::mutex> lock(mutex);
      while (true) {
        may_claim.wait(lock, [&] {
          return stopping || next_claim >= num_batches || next_claim < next_yield + max_ahead;
        });
        if (stopping || next_claim >= num_batches) return;
        const std::int64_t b = next_claim++;
        lock.unlock();
        Slot slot;
        try {
          slot.batch.emplace(make_batch(b, worker));
        } catch (...) {
          slot.error = std::current_exception();
        }
        lock.lock();
        ready.emplace(b, std::move(slot));
        is_ready.notify_all();
      }
    }

    // Moves to the next batch (or past the end); rethrows the batch's exception, if any.
    void advance() {
      current.reset();
      if (next_yield >= num_batches) return;
      const std::int64_t b = next_yield;
      if (workers.empty()) {
        ++next_yield;
        current.emplace(make_batch(b, -1));
        return;
      }
      Slot slot;
      {
        std::unique_lock<std::mutex> lock(mutex);
        is_ready.wait(lock, [&] { return ready.count(b) > 0; });
        auto node = ready.extract(b);
        slot = std::move(node.mapped());
        ++next_yield;
      }
      may_claim.notify_all();
      if (slot.error) std::rethrow_exception(slot.error);
      current = std::move(slot.batch);
    }

    const std::shared_ptr<const Dataset<Sample>> dataset;
    const CollateFn collate;
    const std::int64_t batch_size;
    const std::vector<std::int64_t> order;
    const std::int64_t num_batches;
    const std::int64_t max_ahead;

    std::mutex mutex;
    std::condition_variable may_claim;  // workers: room to prefetch, or stopping
    std::condition_variable is_ready;   // consumer: its batch is in `ready`
    std::int64_t next_claim = 0;        // next batch a worker will make
    std::int64_t next_yield = 0;        // next batch the consumer will take
    bool stopping = false;
    std::map<std::int64_t, Slot> ready;
    std::vector<std::thread> workers;

    std::optional<Batch> current;  // the consumer's batch (touched by the consumer only)
  };

  std::shared_ptr<const Dataset<Sample>> dataset_;
  DataLoaderOptions options_;
  CollateFn collate_;
  std::int64_t epoch_ = 0;
  std::unique_ptr<Run> run_;
};

// DataLoader loader(dataset_ptr, options) and DataLoader loader(dataset_ptr, options, fn)
// deduce the sample type from the dataset and the batch type from the collate function.
template <typename D>
DataLoader(std::shared_ptr<D>) -> DataLoader<typename D::sample_type>;
template <typename D>
DataLoader(std::shared_ptr<D>, DataLoaderOptions) -> DataLoader<typename D::sample_type>;
template <typename D, typename F>
DataLoader(std::shared_ptr<D>, DataLoaderOptions, F) -> DataLoader<
    typename D::sample_type,
    std::decay_t<std::invoke_result_t<F, const std::vector<typename D::sample_type>&>>>;

}  // namespace weft::data
