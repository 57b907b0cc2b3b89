// Finite differences of the case's objective against the reference gradient
// (reference_check.h).
#include "weft/oracle/reference_check.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <sstream>

#include "weft/ops.h"
#include "weft/random.h"

namespace weft::oracle {

namespace {

// The graph with every float32 value declared float64: leaves can then move by steps that
// float32 could not hold.
ir::Graph in_float64(const ir::Graph& graph) {
  ir::Graph copy = graph;
  for (ir::Value& value : copy.mutable_values()) {
    if (is_floating(value.type.dtype)) value.type.dtype = Dtype::Float64;
  }
  return copy;
}

double objective(const ir::Graph& graph, const ir::TensorMap& leaves,
                 const std::vector<Tensor>& cotangents) {
  ir::ExecutionOptions options;
  options.floating_dtype = Dtype::Float64;
  const ir::Execution run = ir::execute(graph, leaves, options);
  double total = 0;
  for (std::size_t i = 0; i < run.outputs.size() && i < cotangents.size(); ++i) {
    if (!run.outputs[i].is_floating_point()) continue;
    const std::vector<double> out = run.outputs[i].to_vector<double>();
    const std::vector<double> cot = cotangents[i].to_vector<double>();
    for (std::size_t j = 0; j < out.size() && j < cot.size(); ++j) total += out[j] * cot[j];
  }
  return total;
}

double dot(const ir::TensorMap& gradients, const ir::TensorMap& direction) {
  double total = 0;
  for (const auto& [name, v] : direction) {
    const auto it = gradients.find(name);
    if (it == gradients.end() || !it->second.defined()) continue;
    const std::vector<double> g = it->second.to_vector<double>();
    const std::vector<double> d = v.to_vector<double>();
    for (std::size_t i = 0; i < g.size() && i < d.size(); ++i) total += g[i] * d[i];
  }
  return total;
}

}  // namespace

bool finite_differences_contradict_reference(const ir::Graph& graph, const ir::TensorMap& values,
                                             const std::vector<Tensor>& cotangents,
                                             const ir::TensorMap& reference,
                                             const ir::TensorMap& path, std::string& why) {
  try {
    const ir::Graph graph64 = in_float64(graph);
    ir::TensorMap base;
    double scale = 1;
    for (const auto& [name, value] : values) {
      base[name] = value.is_floating_point() ? value.to(Dtype::Float64) : value;
      if (value.is_floating_point()) {
        for (double x : value.to_vector<double>()) {
          if (std::isfinite(x)) scale = std::max(scale, std::abs(x));
        }
      }
    }
    const double h = 1e-6 * scale;
    std::ostringstream text;
    text.precision(9);
    Generator gen(0xfd);
    for (int direction = 0; direction < 2; ++direction) {
      ir::TensorMap v, plus, minus;
      for (const auto& [name, value] : base) {
        if (!value.is_floating_point()) {
          plus[name] = minus[name] = value;
          continue;
        }
        std::vector<double> d(static_cast<std::size_t>(value.numel()));
        for (double& x : d) x = 2 * gen.uniform() - 1;
        v[name] = from_blob(d.data(), value.sizes(), Dtype::Float64);
        plus[name] = add(value, v[name] * h);
        minus[name] = sub(value, v[name] * h);
      }
      const double fd =
          (objective(graph64, plus, cotangents) - objective(graph64, minus, cotangents)) / (2 * h);
      const double by_reference = dot(reference, v);
      const double by_path = dot(path, v);
      const double size =
          std::max({std::abs(fd), std::abs(by_reference), std::abs(by_path), 1e-12});
      const bool path_right = std::abs(fd - by_path) <= 1e-4 * size;
      const bool reference_wrong = std::abs(fd - by_reference) > 1e-2 * size;
      text << (direction ? "; " : "") << "finite differences " << fd << ", reference "
           << by_reference << ", eager " << by_path;
      if (!std::isfinite(fd) || !path_right || !reference_wrong) return false;
    }
    why = text.str();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace weft::oracle
