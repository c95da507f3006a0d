// The host data of one (layer, N) that a sweep checks against: a verified golden set, or,
// for batches without golden files (the scaling sweep up to N=2048, ~8 GB of golden files
// otherwise), inputs made by the generator plus a sample of output elements computed on
// the CPU in double. A sampled check compares those elements and the harness also scans
// the whole output for NaN poison, so unwritten elements still fail.
#pragma once

#include "golden.hpp"
#include "harness.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cs::cli {

enum class CheckMode { golden, sampled, automatic };

struct ProblemData {
    Layer layer;
    std::int64_t N = 0;
    std::vector<float> input, weights, golden;  // golden empty in sampled mode
    std::vector<float> bound;                  // sum|w*x| of each golden element (bench/tolerance.hpp)
    std::vector<std::int64_t> sample_index;
    std::vector<double> sample_value;
    std::vector<double> sample_bound;          // sum|w*x| of each sampled element
    double sample_max_abs = 0;
    CpuTiming cpu;                 // repeats == 0: not measured
    std::optional<CpuTiming> onednn;
    std::string cpu_model;
    DataScales scales;             // of the inputs and weights (the golden manifest's, or the sampled check's)

    gpu::HostData host() const;
};

// Default least number of sampled output elements (the tile-covering grid usually has more).
inline constexpr std::int64_t kDefaultSamples = 4096;

// Picks the output indices a sampled check compares: the tile-covering grid
// (bench/sample_grid.hpp: one element in every 8-pixel x 8-channel cell of the output in GEMM
// coordinates, so no wrong output tile is missed), every corner of every plane of the first and
// last image and filter, and uniformly random ones until there are at least `count` (all
// deterministic for the seed); sorted and unique. Every element when that is half the output
// or more.
std::vector<std::int64_t> sample_indices(const Layer& layer, std::int64_t N, std::int64_t count,
                                         std::uint64_t seed);

// Builds the sampled data: generator inputs, sampled reference values and their bounds
// sum|w*x| (double), and the float32 CPU reference time when time_cpu is set (it computes
// the whole output once).
// `scales`: the data scales of the inputs and weights (datagen.hpp).
ProblemData make_sampled(const Layer& layer, std::int64_t N, std::uint64_t seed, std::int64_t samples,
                         bool time_cpu, const DataScales& scales = {});

// Loads a golden set (verified) into ProblemData.
ProblemData from_golden(GoldenSet&& g);

}  // namespace cs::cli
