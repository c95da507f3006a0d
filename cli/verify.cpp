#include "verify.hpp"

#include "conv_ref.hpp"
#include "datagen.hpp"
#include "error.hpp"
#include "golden.hpp"
#include "golden_chain.hpp"
#include "network_ref.hpp"
#include "problem_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace cs::cli {

namespace fs = std::filesystem;

namespace {

// A recomputed element's difference `d` relative to the rounding allowed `tol`; NaN compares
// false and is reported as infinitely far.
double allowed_ratio(double d, double tol) { return d <= tol ? d / tol : (std::isnan(d) ? INFINITY : d / tol); }

// The largest difference of K recomputed elements from the stored output and bound, each
// relative to the float rounding allowed: above 1 is a failure. The golden output is the
// double reference rounded to float, so a recomputation in another summation order may
// differ by one float ulp (2^-23 relative), plus the double error of a sum that cancels
// (1e-12 of its bound sum|w*x|).
struct Recomputed {
    double worst = 0;
    std::int64_t at = -1;
    bool bound = false;
};

Recomputed recompute_sample(const GoldenSet& g, std::int64_t count) {
    const Layer& l = g.layer;
    const auto idx = sample_indices(l, g.N, count, g.seed);
    std::vector<double> value(idx.size()), bound(idx.size());
    conv2d_elements(l, g.input.data(), g.weights.data(), idx.data(), std::int64_t(idx.size()), value.data(),
                    bound.data());
    Recomputed r;
    for (std::size_t i = 0; i < idx.size(); ++i) {
        const double v = value[i], b = bound[i];
        const double gv = g.output[std::size_t(idx[i])];
        const double gb = g.bound[std::size_t(idx[i])];
        const double ulp = std::ldexp(1.0, -23);
        const double tol = ulp * std::max(std::fabs(v), std::fabs(gv)) + 1e-12 * b + 1e-38;
        const double btol = ulp * std::max(b, std::fabs(gb)) + 1e-38;
        const double ratio = allowed_ratio(std::fabs(v - gv), tol);
        const double bound_ratio = allowed_ratio(std::fabs(b - gb), btol);
        if (ratio > r.worst) r = {ratio, idx[i], false};
        if (bound_ratio > r.worst) r = {bound_ratio, idx[i], true};
    }
    return r;
}

// The first element where `got` differs from what the generator makes, or -1.
std::int64_t first_difference(const std::vector<float>& got, const std::vector<float>& want) {
    if (got.size() != want.size()) return 0;
    if (std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0) return -1;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) return std::int64_t(i);
    return -1;
}

// "4 files, 12 MB: manifest, ...": what loading a set of `files` files checked.
std::string loaded_detail(std::size_t files, double set_bytes) {
    return std::to_string(files) + " files, " + std::to_string(std::int64_t(set_bytes / 1e6 + 0.5)) +
           " MB: manifest, headers, shapes, sizes and SHA-256 match";
}

// The failure of a recomputed element: element `at` of `file` is `worst` times the rounding allowed.
Error recomputation_error(const std::string& file, std::int64_t at, double worst) {
    return Error(file + ": element " + std::to_string(at) + " differs from its recomputation on the CPU (" +
                 std::to_string(worst) + "x the float rounding allowed)");
}

// cs::Error "<file>: element <i><made_for>" at the first element where the stored data `got`
// differs from what the generator makes (`want`).
void require_regenerated(const std::vector<float>& got, const std::vector<float>& want, const std::string& file,
                         const std::string& made_for) {
    if (const auto i = first_difference(got, want); i >= 0)
        throw Error(file + ": element " + std::to_string(i) + made_for);
}

// The counts of a verify run, one line per set: "ok    <detail>" or "FAIL  <why>".
struct Tally {
    int ok = 0, failed = 0;
    double bytes = 0;
    // Runs `check`, which returns the set's detail line and its size in bytes, or throws
    // cs::Error when the set fails.
    template <class Check>
    void set(Check check) {
        try {
            const auto [detail, set_bytes] = check();
            std::printf("ok    %s\n", detail.c_str());
            bytes += set_bytes;
            ++ok;
        } catch (const Error& e) {
            std::printf("FAIL  %s\n", e.what());
            ++failed;
        }
    }
};

std::string set_file(const fs::path& root, const LayerTable& table, const GoldenSet& g, GoldenTensor t) {
    return golden_file_path(root, table, g.layer.name, g.N, t, g.scales).string();
}

void check_recompute(std::int64_t recompute) {
    if (recompute < 0 || recompute > kMaxRecompute)
        throw Error("--recompute: " + std::to_string(recompute) + " is not 0 to " + std::to_string(kMaxRecompute));
}

// The staging directories of interrupted runs in `dir`, in directory order.
std::vector<std::string> staging_leftovers(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_directory(ec) && e.path().filename().string().rfind(".partial-", 0) == 0)
            out.push_back(e.path().string() + ": left by an interrupted generate; the next generate removes it");
    return out;
}

// Leftovers in the table's directory: staging directories of interrupted runs and .npy
// files in n<N>/ that the manifest does not list.
std::vector<std::string> leftovers(const fs::path& root, const LayerTable& table, const GoldenListing& listing) {
    std::set<std::string> listed;
    for (const auto& [l, N] : listing.sets)
        for (auto t : {GoldenTensor::input, GoldenTensor::weights, GoldenTensor::output, GoldenTensor::bound})
            listed.insert(fs::weakly_canonical(golden_file_path(root, table, l.name, N, t, listing.scales)).string());
    const fs::path table_dir = golden_table_dir(root, table, listing.scales);
    std::vector<std::string> out = staging_leftovers(table_dir);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(table_dir, ec)) {
        const std::string name = e.path().filename().string();
        if (e.is_directory(ec) && name.size() > 1 && name[0] == 'n') {
            for (const auto& f : fs::directory_iterator(e.path(), ec))
                if (f.path().extension() == ".npy" && !listed.count(fs::weakly_canonical(f.path()).string()))
                    out.push_back(f.path().string() + ": not listed in the manifest (unused)");
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

int verify_golden(const fs::path& root, const LayerTable& table, std::int64_t recompute, const DataScales& scales) {
    check_recompute(recompute);
    check_data_scale(scales.input, "--input-scale");
    check_data_scale(scales.weights, "--weight-scale");
    const GoldenListing listing = list_golden_sets(root, table, scales);
    if (listing.sets.empty() && listing.problems.empty())
        throw Error(listing.manifest.string() + ": the manifest lists no golden sets; generate them with: " +
                    regenerate_command(root, table, 1, listing.seed, scales));
    Tally tally;
    for (const auto& p : listing.problems) {
        std::printf("FAIL  %s\n", p.c_str());
        ++tally.failed;
    }
    for (const auto& [layer, N] : listing.sets) {
        std::printf("%-6s N=%-5lld ", layer.name.c_str(), static_cast<long long>(N));
        std::fflush(stdout);
        tally.set([&, &layer = layer, N = N] {
            // Refuses a manifest whose recorded scales are not the ones of its directory.
            const GoldenSet g = load_golden(root, table, layer, N, std::nullopt, scales);
            const double set_bytes = 4.0 * double(g.input.size() + g.weights.size() + g.output.size() + g.bound.size());
            std::string detail = loaded_detail(4, set_bytes);
            if (recompute > 0) {
                std::vector<float> want(g.input.size());
                const std::string made_for = " is not what generator " + std::string(kGeneratorName) +
                                             " makes for seed " + std::to_string(g.seed) + ", input scale " +
                                             data_scale_string(g.scales.input) + " and weight scale " +
                                             data_scale_string(g.scales.weights);
                make_input(layer, N, g.seed, want.data(), g.scales.input);
                require_regenerated(g.input, want, set_file(root, table, g, GoldenTensor::input), made_for);
                want.assign(g.weights.size(), 0.0f);
                make_weights(layer, g.seed, want.data(), g.scales.weights);
                require_regenerated(g.weights, want, set_file(root, table, g, GoldenTensor::weights), made_for);
                const Recomputed r = recompute_sample(g, recompute);
                if (!(r.worst <= 1.0))
                    throw recomputation_error(
                        set_file(root, table, g, r.bound ? GoldenTensor::bound : GoldenTensor::output), r.at, r.worst);
                char b[160];
                std::snprintf(b, sizeof b, "; inputs and weights regenerated, %lld outputs recomputed (worst %.2f of the rounding allowed)",
                              static_cast<long long>(std::min<std::int64_t>(recompute, layer.output_elems(N))), r.worst);
                detail += b;
            }
            return std::pair(detail, set_bytes);
        });
    }
    for (const auto& note : leftovers(root, table, listing)) std::printf("note: %s\n", note.c_str());
    char size[32];
    const double bytes = tally.bytes;
    std::snprintf(size, sizeof size, bytes >= 1e9 ? "%.2f GB" : "%.1f MB", bytes >= 1e9 ? bytes / 1e9 : bytes / 1e6);
    std::printf("%d of %zu golden sets verified (%s) in %s; %d failed\n", tally.ok,
                listing.sets.size() + listing.problems.size(), size,
                golden_table_dir(root, table, scales).string().c_str(),
                tally.failed);
    return tally.failed ? 1 : 0;
}

namespace {

// The largest difference of `count` recomputed post-op elements of each layer from the stored
// output, relative to one float ulp of the value (above 1 is a failure); the layer's input is
// the stored input (layer 0) or the previous layer's stored output.
struct ChainRecomputed {
    double worst = 0;
    std::size_t layer = 0;
    std::int64_t at = -1;
};

ChainRecomputed recompute_chain_sample(const LayerTable& table, const ChainGoldenSet& g, std::int64_t count) {
    ChainRecomputed r;
    for (std::size_t li = 0; li < table.layers.size(); ++li) {
        const Layer& l = table.layers[li];
        // The post-op output as a layer of shape (N, M, E', F') for the sampler.
        Layer shape;
        shape.name = l.name;
        shape.C = 1, shape.R = 1, shape.S = 1, shape.M = l.M, shape.H = l.pooled_E(), shape.W = l.pooled_F();
        const auto idx = sample_indices(shape, g.N, count, g.seed + li);
        const float* in = li == 0 ? g.data.input.data() : g.outputs[li - 1].data();
        const float* bias = l.bias ? g.data.bias[li].data() : nullptr;
        std::vector<double> value(idx.size());
        const std::int64_t PE = shape.H, PF = shape.W;
#pragma omp parallel for schedule(dynamic, 16)
        for (std::size_t i = 0; i < idx.size(); ++i) {
            std::int64_t x = idx[i];
            const int j = int(x % PF);
            x /= PF;
            const int e = int(x % PE);
            x /= PE;
            const int m = int(x % l.M);
            value[i] = layer_ops_element(l, in, g.data.weights[li].data(), bias, x / l.M, m, e, j);
        }
        for (std::size_t i = 0; i < idx.size(); ++i) {
            const double v = value[i], gv = g.outputs[li][std::size_t(idx[i])];
            // The recomputation sums the same exact products in the same (c, r, s) order as
            // chain_ref<double>, so it rounds to the stored float; one float ulp is allowed.
            const double tol = std::ldexp(1.0, -23) * std::max(std::fabs(v), std::fabs(gv)) + 1e-38;
            const double ratio = allowed_ratio(std::fabs(v - gv), tol);
            if (ratio > r.worst) r = {ratio, li, idx[i]};
        }
    }
    return r;
}

}  // namespace

int verify_chain_golden(const fs::path& root, const LayerTable& table, std::int64_t recompute) {
    check_recompute(recompute);
    const ChainListing listing = list_chain_golden(root, table);
    if (listing.batches.empty())
        throw Error(listing.manifest.string() + ": the chain manifest lists no golden sets; generate them with: " +
                    chain_regenerate_command(root, table, 1, listing.seed));
    Tally tally;
    const fs::path dir = golden_chain_dir(root, table);
    for (const auto N : listing.batches) {
        std::printf("chain  N=%-5lld ", static_cast<long long>(N));
        std::fflush(stdout);
        tally.set([&, N = N] {
            const ChainGoldenSet g = load_chain_golden(root, table, N);
            double set_bytes = 4.0 * double(g.data.input.size());
            std::size_t files = 1;
            for (std::size_t i = 0; i < table.layers.size(); ++i) {
                set_bytes += 4.0 * double(g.data.weights[i].size() + g.data.bias[i].size() + g.outputs[i].size());
                files += table.layers[i].bias ? 3 : 2;
            }
            std::string detail = loaded_detail(files, set_bytes);
            if (recompute > 0) {
                const ChainData want = make_chain_data(table, N, g.seed);
                const std::string made_for =
                    " is not what generator " + std::string(kGeneratorName) + " makes for seed " + std::to_string(g.seed);
                auto file = [&](const std::string& layer, ChainTensor t) {
                    return (dir / chain_relative_file(layer, N, t)).string();
                };
                require_regenerated(g.data.input, want.input, file("", ChainTensor::input), made_for);
                for (std::size_t li = 0; li < table.layers.size(); ++li) {
                    const std::string& name = table.layers[li].name;
                    require_regenerated(g.data.weights[li], want.weights[li], file(name, ChainTensor::weights),
                                        made_for);
                    require_regenerated(g.data.bias[li], want.bias[li], file(name, ChainTensor::bias), made_for);
                }
                const ChainRecomputed r = recompute_chain_sample(table, g, recompute);
                if (!(r.worst <= 1.0))
                    throw recomputation_error(file(table.layers[r.layer].name, ChainTensor::output), r.at, r.worst);
                char b[200];
                std::snprintf(b, sizeof b,
                              "; input, weights and biases regenerated, up to %lld post-op outputs per layer "
                              "recomputed (worst %.2f of the rounding allowed)",
                              static_cast<long long>(recompute), r.worst);
                detail += b;
            }
            return std::pair(detail, set_bytes);
        });
    }
    for (const auto& note : staging_leftovers(dir)) std::printf("note: %s\n", note.c_str());
    std::printf("%d of %zu chain golden sets verified (%.1f MB) in %s; %d failed\n", tally.ok, listing.batches.size(),
                tally.bytes / 1e6, dir.string().c_str(), tally.failed);
    return tally.failed ? 1 : 0;
}

}  // namespace cs::cli
