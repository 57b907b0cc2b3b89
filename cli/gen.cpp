// `weft gen`: random valid models written as test-case directories (graph.json +
// values.safetensors), one summary line each; --dot adds a Graphviz rendering.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "arguments.h"
#include "commands.h"
#include "form_rates.h"
#include "weft/corpus/test_case.h"
#include "weft/error.h"
#include "weft/gen/generator.h"
#include "weft/gen/value_search.h"
#include "weft/io/atomic_file.h"
#include "weft/ir/graph_dot.h"

namespace weft::cli {

namespace {

struct GenArgs {
  std::uint64_t seed = 0;
  int nodes = 10;
  int count = 1;
  std::string ops;
  std::string exclude;
  std::string dtypes = "float32";
  std::string out = "cases";
  bool dot = false;
  gen::GeneratorOptions options;
  std::vector<std::string> rates;  // --rate FORM=R (form_rates.h)
};

std::vector<Dtype> parse_dtypes(const std::string& text) {
  std::vector<Dtype> dtypes;
  for (const std::string& name : split_list(text)) {
    const auto dtype = dtype_from_name(name);
    if (!dtype) throw Error("--dtypes: unknown dtype '" + name + "'");
    dtypes.push_back(*dtype);
  }
  return dtypes;
}

int run_gen(GenArgs& args) {
  gen::GeneratorOptions options = args.options;
  options.nodes = args.nodes;
  options.ops = parse_ops(args.ops, "--ops");
  options.exclude = parse_ops(args.exclude, "--exclude");
  options.dtypes = parse_dtypes(args.dtypes);
  gen::Generator generator;
  const nlohmann::json rates = parse_form_rates(args.rates);
  int failures = 0;
  for (int k = 0; k < args.count; ++k) {
    options.seed = args.seed + static_cast<std::uint64_t>(k);
    const auto start = std::chrono::steady_clock::now();
    gen::CaseOptions case_options;
    case_options.generator = options;
    apply_form_rates(rates, "--rate", case_options);
    const gen::GeneratedCase generated = gen::generate_case(generator, case_options);
    const gen::ValueSearchResult& values = generated.values;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const std::filesystem::path dir =
        std::filesystem::path(args.out) / fmt::format("seed-{:06d}", options.seed);
    corpus::save_case(dir, {generated.graph, values.values});
    if (args.dot) {
      io::write_file_atomically(dir / "graph.dot", ir::graph_to_dot(generated.graph));
    }
    std::map<std::string, int> ops;
    for (const ir::Node& node : generated.graph.nodes()) ++ops[std::string(ir::op_name(node.op))];
    std::string op_list;
    for (const auto& [name, n] : ops) {
      op_list += (op_list.empty() ? "" : " ") + name + (n > 1 ? fmt::format("×{}", n) : "");
    }
    std::cout << fmt::format(
        "{}: {} nodes, {} inputs, {} parameters, {} outputs, {} ({:.1f} ms, z3 {}×, {} "
        "regenerated){}\n",
        dir.string(), generated.graph.nodes().size(), generated.graph.inputs().size(),
        generated.graph.parameters().size(), generated.graph.outputs().size(),
        values.finite ? "finite" : "NOT finite: " + values.reason, ms, generated.stats.z3_calls,
        generated.regenerations, op_list.empty() ? "" : " — " + op_list);
    if (!values.finite) ++failures;
  }
  if (failures > 0) {
    std::cerr << fmt::format("{} of {} cases have no finite values (marked in their summary)\n",
                             failures, args.count);
  }
  return 0;
}

}  // namespace

void add_gen_command(CLI::App& app) {
  auto args = std::make_shared<GenArgs>();
  CLI::App* cmd =
      app.add_subcommand("gen", "Generate random valid models as test-case directories");
  cmd->add_option("--seed", args->seed, "seed of the first model (the k-th uses seed + k)")
      ->capture_default_str();
  cmd->add_option("--nodes", args->nodes, "ops per model")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--count", args->count, "models to generate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--ops", args->ops, "comma-separated ops to draw from (default: all)");
  cmd->add_option("--exclude", args->exclude, "comma-separated ops never to draw");
  cmd->add_option("--dtypes", args->dtypes, "dtypes of fresh leaves (float32,float64,int64,…)")
      ->capture_default_str();
  cmd->add_option("--max-rank", args->options.max_rank, "largest rank")->capture_default_str();
  cmd->add_option("--max-dim", args->options.max_dim, "largest dimension")->capture_default_str();
  cmd->add_option("--max-elements", args->options.max_elements, "largest tensor")
      ->capture_default_str();
  cmd->add_option("--backward-rate", args->options.backward_rate, "share of backward insertions")
      ->capture_default_str();
  cmd->add_option("--edge-rate", args->options.edge_rate,
                  "rate of edge cases (size-0 dims, rank 0, int/bool values, …); 0: none")
      ->capture_default_str();
  cmd->add_option("-o,--out", args->out, "directory for the test cases")->capture_default_str();
  cmd->add_flag("--dot", args->dot, "also write graph.dot (Graphviz) in each case");
  cmd->add_option("--rate", args->rates,
                  "FORM=R: the share of cases that use a program form, as weft fuzz --rate");
  cmd->callback([args] {
    try {
      const int code = run_gen(*args);
      if (code != 0) throw CLI::RuntimeError(code);
    } catch (const Error& e) {
      std::cerr << "weft gen: " << e.what() << "\n";
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace weft::cli
