#include "problem_data.hpp"

#include "sample_grid.hpp"

#include "conv_ref.hpp"
#include "cpu_anchor.hpp"
#include "datagen.hpp"
#include "error.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <iterator>
#include <set>

namespace cs::cli {

gpu::HostData ProblemData::host() const {
    gpu::HostData d;
    d.in = input.data();
    d.w = weights.data();
    if (!golden.empty()) {
        d.golden = golden.data();
        d.bound = bound.empty() ? nullptr : bound.data();
    } else {
        d.sample_index = sample_index.data();
        d.sample_value = sample_value.data();
        d.sample_bound = sample_bound.empty() ? nullptr : sample_bound.data();
        d.sample_count = std::int64_t(sample_index.size());
        d.sample_max_abs = sample_max_abs;
    }
    return d;
}

std::vector<std::int64_t> sample_indices(const Layer& l, std::int64_t N, std::int64_t count, std::uint64_t seed) {
    const std::int64_t E = l.E(), F = l.F();
    const std::int64_t total = l.output_elems(N);
    std::vector<std::int64_t> grid = gpu::tile_covering_indices(l, N, seed);
    std::vector<std::int64_t> idx;
    if (2 * std::max<std::int64_t>(count, std::int64_t(grid.size())) >= total) {
        // a sample that large might as well be everything
        idx.resize(std::size_t(total));
        for (std::int64_t i = 0; i < total; ++i) idx[std::size_t(i)] = i;
        return idx;
    }
    std::set<std::int64_t> extra;
    for (std::int64_t n : {std::int64_t(0), N - 1})
        for (std::int64_t m : {std::int64_t(0), std::int64_t(l.M) - 1})
            for (std::int64_t e : {std::int64_t(0), E - 1})
                for (std::int64_t f : {std::int64_t(0), F - 1}) extra.insert(((n * l.M + m) * E + e) * F + f);
    std::mt19937_64 rng(seed ^ 0x5a3c9e1d2b4f6071ull);
    std::uniform_int_distribution<std::int64_t> pick(0, total - 1);
    // Beyond the grid, uniformly random ones until `count` (the grid usually has more already).
    const std::int64_t want_extra = count - std::int64_t(grid.size());
    while (std::int64_t(extra.size()) < std::max<std::int64_t>(want_extra, 16) + 16) extra.insert(pick(rng));
    idx.reserve(grid.size() + extra.size());
    std::merge(grid.begin(), grid.end(), extra.begin(), extra.end(), std::back_inserter(idx));
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    return idx;
}

ProblemData make_sampled(const Layer& l, std::int64_t N, std::uint64_t seed, std::int64_t samples, bool time_cpu,
                         const DataScales& scales) {
    // Host memory: inputs, and the whole output when the CPU reference is timed.
    const double need = 4.0 * double(l.input_elems(N) + l.weight_elems() + (time_cpu ? l.output_elems(N) : 0));
    const double have = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
    if (have > 0 && need > 0.8 * have)
        throw Error("the sampled check of " + l.name + " at N=" + std::to_string(N) + " needs about " +
                    std::to_string(std::int64_t(need / 1e6)) + " MB of host memory and this machine has " +
                    std::to_string(std::int64_t(have / 1e6)) + " MB; use a smaller batch" +
                    (time_cpu ? " or --no-cpu-timing" : ""));
    ProblemData d;
    d.layer = l;
    d.N = N;
    d.input.resize(std::size_t(l.input_elems(N)));
    d.weights.resize(std::size_t(l.weight_elems()));
    d.scales = scales;
    make_input(l, N, seed, d.input.data(), scales.input);
    make_weights(l, seed, d.weights.data(), scales.weights);
    d.sample_index = sample_indices(l, N, samples, seed);
    d.sample_value.resize(d.sample_index.size());
    d.sample_bound.resize(d.sample_index.size());
    conv2d_elements(l, d.input.data(), d.weights.data(), d.sample_index.data(), std::int64_t(d.sample_index.size()),
                    d.sample_value.data(), d.sample_bound.data());
    for (double v : d.sample_value) d.sample_max_abs = std::max(d.sample_max_abs, std::fabs(v));
    d.cpu_model = cpu_model();
    if (time_cpu) {
        std::vector<float> out(std::size_t(l.output_elems(N)));
        d.cpu = time_cpu_reference(l, N, d.input.data(), d.weights.data(), out.data(), 0.0, 1);
    }
    return d;
}

ProblemData from_golden(GoldenSet&& g) {
    ProblemData d;
    d.layer = g.layer;
    d.N = g.N;
    d.input = std::move(g.input);
    d.weights = std::move(g.weights);
    d.golden = std::move(g.output);
    d.bound = std::move(g.bound);
    d.cpu = g.cpu;
    d.onednn = g.onednn;
    d.cpu_model = g.cpu_model;
    d.scales = g.scales;
    return d;
}

}  // namespace cs::cli
