// `weft fuzz --rate FORM=R` (form_rates.h).
#include "form_rates.h"

#include <cstdlib>

#include "weft/error.h"

namespace weft::cli {

namespace {

double* rate_of(const std::string& form, gen::CaseOptions& options) {
  if (form == "forward-only") return &options.forward_only_rate;
  if (form == "nn-modules") return &options.nn_modules_rate;
  if (form == "layouts") return &options.layout_rate;
  if (form == "dynamic-shapes") return &options.dynamic_shapes_rate;
  if (form == "half-precision") return &options.half_precision_rate;
  if (form == "in-place") return &options.in_place_rate;
  return nullptr;
}

std::string known_forms() {
  std::string text;
  for (const std::string& name : rate_form_names()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

const std::vector<std::string>& rate_form_names() {
  static const std::vector<std::string> names{"forward-only",   "nn-modules",     "layouts",
                                              "dynamic-shapes", "half-precision", "in-place"};
  return names;
}

nlohmann::json parse_form_rates(const std::vector<std::string>& entries) {
  nlohmann::json rates = nlohmann::json::object();
  gen::CaseOptions probe;
  for (const std::string& entry : entries) {
    const auto equals = entry.find('=');
    const std::string form = entry.substr(0, equals);
    if (equals == std::string::npos || rate_of(form, probe) == nullptr) {
      throw Error("--rate: expected FORM=R with FORM one of " + known_forms() + ", got '" + entry +
                  "'");
    }
    const std::string number = entry.substr(equals + 1);
    char* end = nullptr;
    const double rate = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !(rate >= 0 && rate <= 1)) {
      throw Error("--rate: " + form + ": expected a rate between 0 and 1, got '" + number + "'");
    }
    rates[form] = rate;
  }
  return rates;
}

void apply_form_rates(const nlohmann::json& stored, const std::string& source,
                      gen::CaseOptions& options) {
  if (!stored.is_object()) throw Error(source + ": expected an object of form rates");
  for (const auto& [form, value] : stored.items()) {
    double* rate = rate_of(form, options);
    if (rate == nullptr) {
      throw Error(source + "/" + form + ": unknown program form (expected one of " + known_forms() +
                  ")");
    }
    if (!value.is_number() || !(value.get<double>() >= 0 && value.get<double>() <= 1)) {
      throw Error(source + "/" + form + ": expected a rate between 0 and 1, got " + value.dump());
    }
    *rate = value.get<double>();
  }
}

}  // namespace weft::cli
