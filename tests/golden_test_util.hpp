// Helpers shared by the CPU tests that generate golden sets: generate options that print
// nothing and time nothing, and the two-layer table most of them generate (stride 2 with
// padding and a non-square filter; a 1x1 layer).
#pragma once

#include "golden.hpp"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace cs::test {

inline const char* kTwoLayerTable = R"({"name": "tiny", "layers": [
  {"name": "a", "C": 3, "H": 9, "W": 7, "M": 4, "R": 3, "S": 2, "stride": 2, "pad": 1},
  {"name": "b", "C": 2, "H": 5, "W": 5, "M": 3, "R": 1, "S": 1}]})";

inline cs::GenerateOptions quiet_generate_options(const std::filesystem::path& root,
                                                  std::vector<std::int64_t> batches = {1, 2},
                                                  cs::DataScales scales = {}) {
    cs::GenerateOptions o;
    o.root = root;
    o.batches = std::move(batches);
    o.quiet = true;
    o.time_cpu = false;
    o.time_onednn = false;
    o.scales = scales;
    return o;
}

}  // namespace cs::test
