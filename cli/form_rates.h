#pragma once
// `weft fuzz --rate FORM=R`: the share of cases that use a program form (gen::CaseOptions'
// rates), to focus a campaign on one form or turn one off. Stored in campaign.json's options
// as {"half-precision": 1, ...}, so that a resumed campaign and its replays draw the same.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "weft/gen/generator.h"

namespace weft::cli {

// The form names --rate takes, in the order `weft fuzz --help` lists them.
const std::vector<std::string>& rate_form_names();
// {"half-precision=1", "layouts=0"} -> {"half-precision": 1, "layouts": 0}; throws
// weft::Error naming --rate, the entry and what was expected.
nlohmann::json parse_form_rates(const std::vector<std::string>& entries);
// Sets the rates `stored` names (campaign.json's options/rates) on `options`; throws
// weft::Error naming `source` and the entry for an unknown form or a rate outside [0, 1].
void apply_form_rates(const nlohmann::json& stored, const std::string& source,
                      gen::CaseOptions& options);

}  // namespace weft::cli
