// Generation throughput on one core: models per second at 5, 10 and 20 nodes, for the whole
// pipeline NNSmith's model generation covers (graph generation + materialization of values +
// one eager run), with weft's value search standing in for materialization, and the time of
// each phase. bench/vs_nnsmith.sh runs it beside NNSmith itself, in the same run, and prints
// the ratios.
//
//   generator_bench [--models N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "weft/gen/generator.h"
#include "weft/gen/value_search.h"
#include "weft/ir/execute.h"
#include "weft/parallel.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int models = 300;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--models") models = std::atoi(argv[i + 1]);
  }
  weft::set_num_threads(1);
  std::printf("%-6s %10s %10s %10s %10s %10s %8s\n", "nodes", "models/s", "gen ms", "search ms",
              "run ms", "median ms", "z3/model");
  for (const int nodes : {5, 10, 20}) {
    weft::gen::Generator generator;
    weft::gen::CaseOptions options;
    options.generator.nodes = nodes;
    double generation = 0, search = 0, run = 0;
    std::int64_t z3_calls = 0;
    int finite = 0;
    std::vector<double> per_model;
    const auto all = Clock::now();
    for (int m = 0; m < models; ++m) {
      const auto start = Clock::now();
      options.generator.seed = static_cast<std::uint64_t>(m);
      const weft::gen::GeneratedCase c = weft::gen::generate_case(generator, options);
      generation += c.generation_seconds;
      search += c.search_seconds;
      z3_calls += c.stats.z3_calls;
      const auto run_start = Clock::now();
      if (c.values.finite) {
        weft::ir::execute(c.graph, c.values.values);
        ++finite;
      }
      run += seconds_since(run_start);
      per_model.push_back(seconds_since(start) * 1e3);
    }
    const double total = seconds_since(all);
    const double rate = models / total;
    std::printf("%-6d %10.1f %10.3f %10.3f %10.3f %10.3f %8.2f\n", nodes, rate,
                generation * 1e3 / models, search * 1e3 / models, run * 1e3 / models,
                median(per_model), static_cast<double>(z3_calls) / models);
    if (finite < models)
      std::printf("       (%d of %d models without finite values)\n", models - finite, models);
  }
  std::printf("(one thread; value search = float32 + float64 forward and backward per check)\n");
  return 0;
}
