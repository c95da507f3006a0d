// The cuDNN engine choices remembered across runs (bench/engine_choice.hpp): a small JSON file
// that `run` and `sweep` read before they start and write back (atomically) when a choice
// was made or changed. Default: <golden root>/engine_choices.json; "none": every run chooses
// afresh and nothing is read or written.
#pragma once

#include <filesystem>
#include <string>

namespace cs::gpu {
class EngineChoices;
}

namespace cs::cli {

// Loads `path` into `memory` (a missing file or an empty path: an empty memory). Throws
// cs::Error naming the file when it is not a valid choices file.
void load_engine_choices(const std::filesystem::path& path, gpu::EngineChoices& memory);
// Writes `memory` to `path` atomically when it changed since the load (nothing for an empty path).
void save_engine_choices(const std::filesystem::path& path, gpu::EngineChoices& memory);

// The file a run uses: `option` as given, "" -> <golden_root>/engine_choices.json when that
// directory exists (else none), "none" -> empty path (no memory).
std::filesystem::path engine_choices_path(const std::string& option, const std::string& golden_root);

}  // namespace cs::cli
