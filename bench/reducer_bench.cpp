// Reduction speed: wall time and oracle checks to reduce (a) a random 20-node model with one
// planted wrong-output fault (perturb-large on the op of one of its nodes; every check runs at
// engine speed) and (b) a random 20-node model with a real LibTorch bug appended, judged on the
// TorchScript path (checks cost tens of milliseconds), with 1 and 2 workers (parallel oracles,
// one `weft worker` process each). Reports medians over the cases and the 1-worker / 2-worker
// ratio measured in the same run. Worker start-up is included: each reduction starts its own
// workers, as `weft reduce` does.
//
//   reducer_bench [--cases N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "weft/gen/generator.h"
#include "weft/oracle/fault.h"
#include "weft/oracle/oracle.h"
#include "weft/reduce/reducer.h"

namespace {

struct Planted {
  weft::ir::Graph graph;
  weft::ir::TensorMap values;
  weft::oracle::Finding finding;
};

weft::oracle::WorkerOptions worker_options() {
  weft::oracle::WorkerOptions options;
  options.command = {WEFT_BINARY, "worker"};
  return options;
}

std::optional<Planted> plant(weft::gen::Generator& generator, std::uint64_t seed) {
  weft::gen::CaseOptions options;
  options.generator.seed = seed;
  options.generator.nodes = 20;
  const weft::gen::GeneratedCase generated = weft::gen::generate_case(generator, options);
  if (!generated.values.finite || generated.graph.nodes().empty()) return std::nullopt;
  const weft::ir::Node& node =
      generated.graph.nodes()[(seed * 7919) % generated.graph.nodes().size()];
  const std::string backend =
      weft::oracle::fault_backend_name({weft::oracle::FaultKind::PerturbLarge, node.op});
  weft::oracle::OracleOptions oracle_options;
  oracle_options.backends = {backend};
  oracle_options.worker = worker_options();
  weft::oracle::Oracle oracle(oracle_options);
  const weft::oracle::CaseReport report = oracle.check(generated.graph, generated.values.values);
  for (const weft::oracle::Finding& finding : report.verdict.findings) {
    if (finding.backend == backend && finding.symptom == weft::oracle::Symptom::WrongOutput) {
      return Planted{generated.graph, generated.values.values, finding};
    }
  }
  return std::nullopt;
}

// Scenario (b): a real LibTorch 1.13 bug on a slower path. gelu -> permute (reversed dims)
// appended to the model's last float32 value of rank >= 2: TorchScript's float32 gelu backward
// (oneDNN) never writes its result for the permuted gradient, which the workers' junk-filled
// allocations make NaN.
std::optional<Planted> embed_gelu_bug(weft::gen::Generator& generator, std::uint64_t seed,
                                      const std::string& backend) {
  namespace ir = weft::ir;
  weft::gen::CaseOptions options;
  options.generator.seed = seed;
  options.generator.nodes = 20;
  weft::gen::GeneratedCase generated = weft::gen::generate_case(generator, options);
  ir::Graph& graph = generated.graph;
  std::optional<ir::ValueId> target;
  for (const ir::Node& node : graph.nodes()) {
    for (ir::ValueId id : node.outputs) {
      const ir::TensorType& type = graph.type(id);
      const bool usable = type.dtype == weft::Dtype::Float32 && type.shape.size() >= 2;
      if (usable && graph.num_elements(id) > 0) target = id;
    }
  }
  if (!generated.values.finite || !target) return std::nullopt;
  const ir::TensorType type = graph.type(*target);
  const ir::ValueId gelu = graph.add_node(ir::OpKind::Gelu, {*target}, {}, {type})[0];
  std::vector<std::int64_t> dims;
  for (std::size_t d = type.shape.size(); d-- > 0;) dims.push_back(static_cast<std::int64_t>(d));
  const ir::Shape reversed(type.shape.rbegin(), type.shape.rend());
  graph.mark_output(graph.add_node(ir::OpKind::Permute, {gelu}, ir::Attributes().set("dims", dims),
                                   {ir::TensorType{weft::Dtype::Float32, reversed}})[0]);
  weft::oracle::OracleOptions oracle_options;
  oracle_options.backends = {backend};
  oracle_options.worker = worker_options();
  weft::oracle::Oracle oracle(oracle_options);
  const weft::oracle::CaseReport report = oracle.check(graph, generated.values.values);
  for (const weft::oracle::Finding& finding : report.verdict.findings) {
    if (finding.backend == backend && finding.op == "permute") {
      return Planted{graph, generated.values.values, finding};
    }
  }
  return std::nullopt;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

void run_scenario(const char* title, const std::vector<Planted>& cases) {
  std::printf("%s: %zu cases\n", title, cases.size());
  std::printf("%-8s %12s %14s %14s %12s %12s\n", "workers", "median s", "oracle checks",
              "backend runs", "nodes after", "elements");
  double seconds_by_workers[3] = {0, 0, 0};
  for (int workers : {1, 2}) {
    std::vector<double> seconds, checks, runs, nodes, elements;
    for (const Planted& p : cases) {
      weft::reduce::ReduceOptions options;
      options.jobs = workers;
      options.worker = worker_options();
      const auto start = std::chrono::steady_clock::now();
      const weft::reduce::ReduceResult result =
          weft::reduce::reduce_case(p.graph, p.values, p.finding, options);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      checks.push_back(result.oracle_checks);
      runs.push_back(result.backend_runs);
      nodes.push_back(static_cast<double>(result.nodes_after));
      elements.push_back(static_cast<double>(result.elements_after));
    }
    seconds_by_workers[workers] = median(seconds);
    std::printf("%-8d %12.2f %14.0f %14.0f %12.0f %12.0f\n", workers, median(seconds),
                median(checks), median(runs), median(nodes), median(elements));
  }
  if (seconds_by_workers[2] > 0) {
    std::printf("2 workers are %.2fx as fast as 1 (median wall time); aim: under 10 s with 2\n\n",
                seconds_by_workers[1] / seconds_by_workers[2]);
  }
}

int main(int argc, char** argv) {
  int count = 9;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--cases") count = std::atoi(argv[i + 1]);
  }
  weft::gen::Generator generator;
  std::vector<Planted> planted, real;
  for (std::uint64_t seed = 1; static_cast<int>(planted.size()) < count && seed < 1000; ++seed) {
    if (auto p = plant(generator, seed)) planted.push_back(std::move(*p));
  }
  for (std::uint64_t seed = 1; static_cast<int>(real.size()) < count && seed < 1000; ++seed) {
    if (auto p = embed_gelu_bug(generator, seed, "torchscript")) real.push_back(std::move(*p));
  }
  run_scenario("(a) 20-node models, one planted wrong-output fault (engine-speed path)", planted);
  run_scenario("(b) 20-node models + gelu->permute, TorchScript's gelu backward bug", real);
  return 0;
}
