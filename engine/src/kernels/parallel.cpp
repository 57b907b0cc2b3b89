// A small persistent thread pool. Work is split into one chunk per thread; the caller runs
// the first chunk itself, so one thread means no synchronization at all.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "weft/parallel.h"

namespace weft {

namespace {

thread_local bool in_parallel_region = false;

class ThreadPool {
 public:
  ~ThreadPool() { resize(0); }

  int threads() const { return threads_; }

  void set_threads(int n) {
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    resize(std::max(1, n) - 1);
    threads_ = std::max(1, n);
  }

  void run(int chunks, const std::function<void(int)>& task) {
    std::lock_guard<std::mutex> run_lock(run_mutex_);  // one parallel region at a time
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = &task;
      next_chunk_ = 1;
      chunks_ = chunks;
      pending_ = chunks - 1;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    run_chunk(0);
    std::unique_lock<std::mutex> lock(mutex_);
    // The caller also helps with chunks nobody picked up yet.
    while (next_chunk_ < chunks_) {
      const int chunk = next_chunk_++;
      lock.unlock();
      run_chunk(chunk);
      lock.lock();
      --pending_;
    }
    done_.wait(lock, [&] { return pending_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_chunk(int chunk) {
    in_parallel_region = true;
    try {
      (*task_)(chunk);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    in_parallel_region = false;
  }

  void worker() {
    std::uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stopping_ || (generation_ != seen && next_chunk_ < chunks_); });
      if (stopping_) return;
      seen = generation_;
      while (task_ && next_chunk_ < chunks_) {
        const int chunk = next_chunk_++;
        lock.unlock();
        run_chunk(chunk);
        lock.lock();
        if (--pending_ == 0) done_.notify_all();
      }
    }
  }

  void resize(int workers) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    stopping_ = false;
    for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { worker(); });
  }

  std::mutex run_mutex_;
  std::mutex mutex_;
  std::mutex error_mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* task_ = nullptr;
  int next_chunk_ = 0;
  int chunks_ = 0;
  int pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
  int threads_ = 1;
};

ThreadPool& pool() {
  static ThreadPool instance;
  static const bool configured = [] {
    if (const char* env = std::getenv("WEFT_NUM_THREADS")) {
      const int n = std::atoi(env);
      if (n > 0) instance.set_threads(n);
    }
    return true;
  }();
  (void)configured;
  return instance;
}

}  // namespace

int get_num_threads() {
  return pool().threads();
}
void set_num_threads(int threads) {
  pool().set_threads(threads);
}

void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t)>& fn) {
  const std::int64_t total = end - begin;
  if (total <= 0) return;
  ThreadPool& p = pool();
  const int threads = p.threads();
  if (threads <= 1 || in_parallel_region || total < 2 * std::max<std::int64_t>(grain, 1)) {
    fn(begin, end);
    return;
  }
  const int chunks =
      static_cast<int>(std::min<std::int64_t>(threads, total / std::max<std::int64_t>(grain, 1)));
  const std::int64_t per_chunk = (total + chunks - 1) / chunks;
  p.run(chunks, [&](int chunk) {
    const std::int64_t b = begin + chunk * per_chunk;
    const std::int64_t e = std::min(end, b + per_chunk);
    if (b < e) fn(b, e);
  });
}

}  // namespace weft
