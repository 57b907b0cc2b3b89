// Learning the capability gaps of the LibTorch under test (capabilities.h).
#include "capabilities.h"

#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "weft/error.h"
#include "weft/gen/generator.h"
#include "weft/gen/spec.h"
#include "weft/io/atomic_file.h"
#include "weft/oracle/oracle.h"
#include "weft/oracle/torch_info.h"
#include "weft/version.h"

namespace weft::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kSeedsPerPair = 2;

fs::path cache_file() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path dir;
  if (xdg && *xdg) {
    dir = fs::path(xdg) / "weft";
  } else if (home && *home) {
    dir = fs::path(home) / ".cache" / "weft";
  } else {
    return {};
  }
  return dir / ("capabilities-libtorch-" + oracle::torch_version() + "-weft-" + kVersion + ".json");
}

CapabilityGaps probe(double time_limit_seconds) {
  oracle::OracleOptions options;
  options.backends = {oracle::kReferenceBackend, oracle::kEngineBackend, "torch"};
  options.gradients = false;
  options.localize = false;
  options.calls = 1;
  options.worker.time_limit_seconds = time_limit_seconds;
  oracle::Oracle oracle(options);
  gen::Generator generator;
  CapabilityGaps gaps;
  for (ir::OpKind op : ir::kAllOps) {
    if (!gen::has_spec(op)) continue;
    // float16 and bfloat16 are not probed: LibTorch 1.13 lacks most of their CPU kernels, and
    // avoiding those pairs would keep half precision away from PyTorch 2.x's paths too, which
    // have them; 1.13's refusals are recorded as capability gaps instead.
    for (Dtype dtype : {Dtype::Bool, Dtype::Int32, Dtype::Int64, Dtype::Float32, Dtype::Float64}) {
      for (int seed = 0; seed < kSeedsPerPair; ++seed) {
        gen::CaseOptions c;
        c.generator.seed = static_cast<std::uint64_t>(seed);
        c.generator.nodes = 1;
        c.generator.ops = {op};
        c.generator.dtypes = {dtype};
        c.half_precision_rate = 0;  // the pair probed, not a 16-bit float in its place
        c.generator.edge_rate = 0;
        c.max_regenerations = 0;
        gen::GeneratedCase generated;
        try {
          generated = gen::generate_case(generator, c);
        } catch (const std::exception&) {
          continue;
        }
        const auto& nodes = generated.graph.nodes();
        if (nodes.size() != 1 || nodes[0].op != op || nodes[0].inputs.empty() ||
            generated.graph.type(nodes[0].inputs[0]).dtype != dtype) {
          continue;
        }
        const oracle::CaseReport report = oracle.check(generated.graph, generated.values.values);
        if (!report.verdict.unsupported.empty()) {
          gaps.emplace_back(op, dtype);
          break;
        }
      }
    }
  }
  return gaps;
}

}  // namespace

std::vector<std::vector<std::string>> gaps_to_names(const CapabilityGaps& gaps) {
  std::vector<std::vector<std::string>> names;
  for (const auto& [op, dtype] : gaps) {
    names.push_back({std::string(ir::op_name(op)), dtype_name(dtype)});
  }
  return names;
}

CapabilityGaps gaps_from_names(const std::vector<std::vector<std::string>>& names,
                               const std::string& source) {
  CapabilityGaps gaps;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string at = "/" + std::to_string(i);
    if (names[i].size() != 2) throw FormatError(source, at, "expected [op, dtype]");
    const std::optional<ir::OpKind> op = ir::op_from_name(names[i][0]);
    const std::optional<Dtype> dtype = dtype_from_name(names[i][1]);
    if (!op) throw FormatError(source, at + "/0", "unknown op '" + names[i][0] + "'");
    if (!dtype) throw FormatError(source, at + "/1", "unknown dtype '" + names[i][1] + "'");
    gaps.emplace_back(*op, *dtype);
  }
  return gaps;
}

CapabilityGaps learn_capability_gaps(double time_limit_seconds) {
  const fs::path cache = cache_file();
  if (!cache.empty() && fs::exists(cache)) {
    try {
      const nlohmann::json document = nlohmann::json::parse(io::read_file(cache));
      return gaps_from_names(document.at("gaps").get<std::vector<std::vector<std::string>>>(),
                             cache.string());
    } catch (const std::exception& e) {
      std::cerr << "capabilities: ignoring " << cache.string() << " (" << e.what()
                << "); learning them again\n";
    }
  }
  const auto start = std::chrono::steady_clock::now();
  CapabilityGaps gaps;
  try {
    gaps = probe(time_limit_seconds);
  } catch (const std::exception& e) {
    std::cerr << "capabilities: could not probe LibTorch (" << e.what()
              << "); the generator avoids nothing\n";
    return {};
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string listed;
  for (const auto& names : gaps_to_names(gaps)) {
    listed += (listed.empty() ? "" : ", ") + names[0] + "/" + names[1];
  }
  std::cerr << fmt::format("learned {} capability gaps of LibTorch {} in {:.1f} s{}{}\n",
                           gaps.size(), oracle::torch_version(), seconds,
                           listed.empty() ? "" : ": ", listed);
  if (!cache.empty()) {
    try {
      fs::create_directories(cache.parent_path());
      const nlohmann::json document = {{"libtorch", oracle::torch_version()},
                                       {"weft", std::string(kVersion)},
                                       {"gaps", gaps_to_names(gaps)}};
      io::write_file_atomically(cache, document.dump(1) + "\n");
    } catch (const std::exception& e) {
      std::cerr << "capabilities: could not cache them in " << cache.string() << ": " << e.what()
                << "\n";
    }
  }
  return gaps;
}

}  // namespace weft::cli
