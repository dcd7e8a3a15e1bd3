// A summary as a JSON value, for documents that embed it (ddp-sim's replay report embeds the
// measured and the predicted trace's summaries); summary_to_json is its text.
#pragma once

#include <nlohmann/json.hpp>

#include "ddpsim/trace/summary.hpp"

namespace ddpsim::trace {

nlohmann::ordered_json summary_json(const Summary& summary);

}  // namespace ddpsim::trace
