// Oracle throughput: test cases judged per second at 5 and 10 nodes, each case run in the
// isolated workers and judged, for (a) the pair NNSmith measures — LibTorch eager against
// TorchScript freeze + optimize_for_inference, forward only (weft adds its float64 reference
// and float32 engine, which the judge needs) — and (b) every default backend with gradients;
// with 1 and 2 workers (one Oracle, hence one worker process, per thread). Cases are generated
// before timing; generation has its own benchmark (generator_bench). The fuzz loop beside
// NNSmith's, measured in the same run: bench/vs_nnsmith.sh.
//
//   oracle_bench [--cases N]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "weft/gen/generator.h"
#include "weft/oracle/oracle.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
  weft::ir::Graph graph;
  weft::ir::TensorMap values;
};

std::vector<Case> make_cases(int count, int nodes) {
  weft::gen::Generator generator;
  std::vector<Case> cases;
  for (int seed = 0; seed < count; ++seed) {
    weft::gen::CaseOptions options;
    options.generator.seed = static_cast<std::uint64_t>(seed);
    options.generator.nodes = nodes;
    weft::gen::GeneratedCase generated = weft::gen::generate_case(generator, options);
    cases.push_back({std::move(generated.graph), std::move(generated.values.values)});
  }
  return cases;
}

struct Measurement {
  double cases_per_second = 0;
  int bugs = 0;
  double backend_share = 0;  // time inside the backends (prepare + calls) / wall time × workers
};

Measurement measure(const std::vector<Case>& cases, const std::vector<std::string>& backends,
                    bool gradients, int workers) {
  std::vector<std::unique_ptr<weft::oracle::Oracle>> oracles;
  for (int w = 0; w < workers; ++w) {
    weft::oracle::OracleOptions options;
    options.backends = backends;
    options.gradients = gradients;
    options.worker.command = {WEFT_BINARY, "worker"};
    oracles.push_back(std::make_unique<weft::oracle::Oracle>(options));
    oracles.back()->check(cases[0].graph, cases[0].values);  // start the worker, untimed
  }
  std::atomic<std::size_t> next{0};
  std::atomic<int> bugs{0};
  std::vector<double> backend_seconds(static_cast<std::size_t>(workers), 0.0);
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      for (std::size_t i = next++; i < cases.size(); i = next++) {
        const weft::oracle::CaseReport report =
            oracles[static_cast<std::size_t>(w)]->check(cases[i].graph, cases[i].values);
        if (report.verdict.bug()) ++bugs;
        for (const weft::oracle::BackendResult& r : report.results) {
          backend_seconds[static_cast<std::size_t>(w)] += r.seconds;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  double inside = 0;
  for (double s : backend_seconds) inside += s;
  return {static_cast<double>(cases.size()) / seconds, bugs.load(), inside / (seconds * workers)};
}

}  // namespace

int main(int argc, char** argv) {
  int count = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--cases") count = std::atoi(argv[i + 1]);
  }
  const std::vector<std::string> pair = {"engine-f64", "engine", "torch", "torchscript-ofi"};
  const std::vector<std::string> all = weft::oracle::default_backends();
  std::printf("oracle throughput, %d cases per row (cases generated before timing)\n", count);
  std::printf("%-6s %-44s %-8s %10s %6s %9s\n", "nodes", "backends", "workers", "cases/s", "bugs",
              "in paths");
  for (int nodes : {5, 10}) {
    const std::vector<Case> cases = make_cases(count, nodes);
    for (int workers : {1, 2}) {
      const Measurement a = measure(cases, pair, /*gradients=*/false, workers);
      std::printf("%-6d %-44s %-8d %10.1f %6d %8.0f%%\n", nodes,
                  "(a) eager vs torchscript-ofi, forward", workers, a.cases_per_second, a.bugs,
                  100 * a.backend_share);
      std::fflush(stdout);
    }
    for (int workers : {1, 2}) {
      const Measurement b = measure(cases, all, /*gradients=*/true, workers);
      std::printf("%-6d %-44s %-8d %10.1f %6d %8.0f%%\n", nodes,
                  ("(b) all " + std::to_string(all.size()) + " default, with gradients").c_str(),
                  workers, b.cases_per_second, b.bugs, 100 * b.backend_share);
      std::fflush(stdout);
    }
  }
  return 0;
}
