// The Fashion-MNIST CNN of examples/fashion_mnist trained for one epoch with weft and with
// LibTorch's C++ frontend (OpenBLAS) in the same run: same architecture, initial weights, batch
// order, batch size, optimizer (AdamW) and thread count. Prints samples/s of both and the
// ratio (> 1: weft is faster), plus each side's mean loss as a sanity check.
//
//   train_cnn_vs_torch_bench [--samples N] [--batch-size B] [--threads T] [--data DIR]
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_threads.h"
#include "weft/autograd.h"
#include "weft/data/mnist.h"
#include "weft/nn/activation.h"
#include "weft/nn/container.h"
#include "weft/nn/conv.h"
#include "weft/nn/functional.h"
#include "weft/nn/linear.h"
#include "weft/nn/normalization.h"
#include "weft/nn/pooling.h"
#include "weft/nn/shape.h"
#include "weft/ops.h"
#include "weft/optim/adam.h"
#include "weft/random.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::int64_t samples = 60000;
  std::int64_t batch_size = 64;
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  std::string data = "/usr/share/datasets/fashion-mnist";
};

// Dropout is left out so that both sides do exactly the same arithmetic.
std::shared_ptr<weft::nn::Sequential> weft_cnn() {
  using namespace weft::nn;
  return std::make_shared<Sequential>(
      std::make_shared<Conv2d>(Conv2dOptions(1, 32, 3).padding(1)),
      std::make_shared<BatchNorm2d>(32), std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2),
      std::make_shared<Conv2d>(Conv2dOptions(32, 64, 3).padding(1)),
      std::make_shared<BatchNorm2d>(64), std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2),
      std::make_shared<Flatten>(), std::make_shared<Linear>(64 * 7 * 7, 128),
      std::make_shared<ReLU>(), std::make_shared<Linear>(128, 10));
}

torch::nn::Sequential torch_cnn() {
  namespace tnn = torch::nn;
  return tnn::Sequential(tnn::Conv2d(tnn::Conv2dOptions(1, 32, 3).padding(1)), tnn::BatchNorm2d(32),
                         tnn::ReLU(), tnn::MaxPool2d(2),
                         tnn::Conv2d(tnn::Conv2dOptions(32, 64, 3).padding(1)),
                         tnn::BatchNorm2d(64), tnn::ReLU(), tnn::MaxPool2d(2), tnn::Flatten(),
                         tnn::Linear(64 * 7 * 7, 128), tnn::ReLU(), tnn::Linear(128, 10));
}

at::Tensor to_torch(const weft::Tensor& t) {
  const weft::Tensor c = t.contiguous();
  return torch::from_blob(c.raw_data(),
                          std::vector<std::int64_t>(c.sizes().begin(), c.sizes().end()),
                          t.dtype() == weft::Dtype::Int64 ? torch::kInt64 : torch::kFloat32)
      .clone();
}

// Same starting point: torch's parameters and buffers take weft's initial values.
void copy_weights(const weft::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  auto params = to.named_parameters();
  auto buffers = to.named_buffers();
  for (const auto& [name, value] : from.state_dict()) {
    torch::Tensor* target = params.find(name);
    if (target == nullptr) target = buffers.find(name);
    if (target == nullptr) {
      std::fprintf(stderr, "torch model has no tensor %s\n", name.c_str());
      std::exit(1);
    }
    target->copy_(to_torch(value));
  }
}

struct Result {
  double seconds = 0;
  double mean_loss = 0;
};

Result train_weft(weft::nn::Module& model, const weft::Tensor& images, const weft::Tensor& labels,
                  std::int64_t batch) {
  weft::optim::AdamW optimizer(model.parameters());
  model.train();
  const std::int64_t n = images.size(0);
  double loss_sum = 0;
  std::int64_t steps = 0;
  const auto start = Clock::now();
  for (std::int64_t b = 0; b + batch <= n; b += batch, ++steps) {
    const weft::Tensor x = images.slice(0, b, b + batch);
    const weft::Tensor y = labels.slice(0, b, b + batch);
    optimizer.zero_grad();
    const weft::Tensor loss = weft::nn::functional::cross_entropy(model.forward(x), y);
    loss.backward();
    optimizer.step();
    loss_sum += loss.item<double>();
  }
  return {std::chrono::duration<double>(Clock::now() - start).count(), loss_sum / steps};
}

Result train_torch(torch::nn::Sequential& model, const at::Tensor& images, const at::Tensor& labels,
                   std::int64_t batch) {
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-3));
  model->train();
  const std::int64_t n = images.size(0);
  double loss_sum = 0;
  std::int64_t steps = 0;
  const auto start = Clock::now();
  for (std::int64_t b = 0; b + batch <= n; b += batch, ++steps) {
    const at::Tensor x = images.slice(0, b, b + batch);
    const at::Tensor y = labels.slice(0, b, b + batch);
    optimizer.zero_grad();
    const at::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    optimizer.step();
    loss_sum += loss.item<double>();
  }
  return {std::chrono::duration<double>(Clock::now() - start).count(), loss_sum / steps};
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--samples") {
      o.samples = std::atoll(argv[i + 1]);
    } else if (flag == "--batch-size") {
      o.batch_size = std::atoll(argv[i + 1]);
    } else if (flag == "--threads") {
      o.threads = std::atoi(argv[i + 1]);
    } else if (flag == "--data") {
      o.data = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  weft::bench::set_threads(options.threads);

  // The epoch's data, normalized and shuffled once, held in memory by both sides.
  const weft::data::FashionMNIST train(options.data, true, weft::data::Normalize{0.2860, 0.3530});
  const std::int64_t n = std::min<std::int64_t>(options.samples, train.size());
  weft::manual_seed(3);
  const weft::Tensor order = weft::randperm(train.size()).slice(0, 0, n);
  std::vector<weft::Tensor> images, labels;
  for (std::int64_t i : order.to_vector<std::int64_t>()) {
    auto [image, label] = train.get(i);
    images.push_back(image);
    labels.push_back(
        weft::scalar_tensor(static_cast<double>(label), weft::dtype(weft::Dtype::Int64)));
  }
  const weft::Tensor weft_images = weft::stack(images), weft_labels = weft::stack(labels);
  const at::Tensor torch_images = to_torch(weft_images), torch_labels = to_torch(weft_labels);

  weft::manual_seed(1);
  auto weft_model = weft_cnn();
  auto torch_model = torch_cnn();
  copy_weights(*weft_model, *torch_model);

  std::printf(
      "CNN on %lld Fashion-MNIST samples, batch %lld, %d threads (OpenBLAS thread "
      "control: %s)\n",
      static_cast<long long>(n), static_cast<long long>(options.batch_size), options.threads,
      weft::bench::openblas_thread_control() ? "yes" : "not found");
  const Result torch_result =
      train_torch(torch_model, torch_images, torch_labels, options.batch_size);
  const Result weft_result = train_weft(*weft_model, weft_images, weft_labels, options.batch_size);
  const double weft_rate = static_cast<double>(n) / weft_result.seconds;
  const double torch_rate = static_cast<double>(n) / torch_result.seconds;
  std::printf("%-10s %12s %12s %10s\n", "", "samples/s", "seconds", "mean loss");
  std::printf("%-10s %12.0f %12.2f %10.4f\n", "weft", weft_rate, weft_result.seconds,
              weft_result.mean_loss);
  std::printf("%-10s %12.0f %12.2f %10.4f\n", "LibTorch", torch_rate, torch_result.seconds,
              torch_result.mean_loss);
  std::printf("speed ratio weft / LibTorch: %.2f (> 1: weft is faster)\n", weft_rate / torch_rate);
  return 0;
}
