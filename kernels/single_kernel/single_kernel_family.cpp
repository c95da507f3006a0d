// The single-kernel family's spec and its rungs' supports() (host code; the plans and their
// kernels are single_kernel.cu, for the study's rla2m, rswbdl2m, rswmtla2m and swso, and
// half_baseline.cu, for its halfprecision): one block per output plane on the study's N x M grid
// (conv_shape.hpp), the ideas differing in where the running sum and the filter live.
#include "families.hpp"
#include "single_kernel_rungs.hpp"

#include <climits>
#include <cstdint>
#include <vector>

namespace cs::gpu::variants {

namespace sk {  // the single-kernel family

std::int64_t smem_bytes(Idea idea, const ConvShape& s, const PlaneTiling& tl) {
    std::int64_t b = 0;
    if (idea != Idea::register_acc) b += std::int64_t(s.C) * s.R * s.S * 4;
    if (accum_of(idea) == Accum::shared) b += std::int64_t(tl.t) * tl.t * tl.threads() * 4;
    return b;
}

std::optional<std::string> supports(Idea idea, const Problem& p, const cudaDeviceProp& prop) {
    if (const char* why = nm_grid_limit_reason(p.N, p.layer.M, prop)) return std::string(why);
    const Layer& l = p.layer;
    // Offsets inside one image and one filter are 32-bit in the kernel.
    if (l.input_elems(1) > INT_MAX || l.K() > INT_MAX || std::int64_t(l.E()) * l.F() > INT_MAX)
        return std::string("one image, filter or output plane has more than 2^31 elements (32-bit offsets)");
    const ConvShape s = conv_shape(l);
    const PlaneTiling tl = plane_tiling(s.E, s.F, prop.maxThreadsPerBlock);
    const std::int64_t need = smem_bytes(idea, s, tl);
    if (need > std::int64_t(prop.sharedMemPerBlockOptin)) {
        std::string what = "the filter (C*R*S*4 = " + std::to_string(l.K() * 4) + " bytes)";
        if (accum_of(idea) == Accum::shared) what += " and the partial sums";
        return what + " need " + std::to_string(need) + " bytes of shared memory per block; this device allows " +
               std::to_string(prop.sharedMemPerBlockOptin) + " (opt-in limit)";
    }
    return std::nullopt;
}

}  // namespace sk

std::optional<std::string> half_baseline_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (const char* why = nm_grid_limit_reason(p.N, p.layer.M, prop)) return std::string(why);
    const Layer& l = p.layer;
    if (l.input_elems(1) > INT_MAX || l.K() > INT_MAX || std::int64_t(l.E()) * l.F() > INT_MAX)
        return std::string("one image, filter or output plane has more than 2^31 elements (32-bit offsets)");
    return std::nullopt;
}

// The family: each idea in two rungs, `<name>` (coalesced) and `<name>-uncoalesced` (Table 8:
// each thread on an adjacent t x t patch of outputs; identical to the coalesced one where a
// plane fits a block, t = 1: conv2-5), the study's abbreviations with "-nc" on the twin.
Family single_kernel_family() {
    using sk::Idea;
    auto rung = [](std::string name, std::vector<Alias> aliases, PrecisionRow row, std::string idea, RungSupports sup,
                   RungPlan pl) {
        Rung r = make_rung(std::move(name), {std::move(row)}, std::move(idea), std::move(sup), std::move(pl));
        r.aliases = std::move(aliases);
        return r;
    };
    auto ours = [&](std::string name, std::vector<std::string> abbrs, Idea idea, std::string coalesced_idea) {
        std::vector<Alias> a, a_nc;
        for (const auto& x : abbrs) {
            a.push_back({x, ""});
            a_nc.push_back({x + "-nc", ""});
        }
        RungSupports sup = [idea](const PrecisionRow&, const Problem& p, const cudaDeviceProp& prop) {
            return sk::supports(idea, p, prop);
        };
        return std::vector<Rung>{
            rung(name, a, row_fp32(), coalesced_idea, sup, CS_PLAN(sk::plan(idea, PlaneMapping::coalesced))),
            rung(name + "-uncoalesced", a_nc, row_fp32(),
                 name + " with each thread on an adjacent t x t output patch (t=1: same as coalesced)", sup,
                 CS_PLAN(sk::plan(idea, PlaneMapping::uncoalesced))),
        };
    };
    Family f{"single-kernel", {}, {}};
    for (auto rs : {ours("register-acc", {"rla2m"}, Idea::register_acc,
                         "sum in a register, one coalesced store per output, filter read from global memory"),
                    ours("shared-weights-one-loader", {"rswbdl2m", "rswbdla2m"}, Idea::one_loader,
                         "filter in shared memory copied by ONE thread while the block waits; sum in a register"),
                    ours("shared-weights-many-loaders", {"rswmtla2m"}, Idea::many_loaders,
                         "filter in shared memory copied by C*R*S threads (K <= block) or R*S threads (a tap each); "
                         "sum in a register"),
                    ours("shared-weights-shared-out", {"swso"}, Idea::shared_out,
                         "filter in shared memory (one loader) and each running sum in a shared-memory slot, not a "
                         "register")})
        for (auto& r : rs) f.rungs.push_back(std::move(r));
    const PrecisionRow half = class_row(Precision::fp16acc);
    f.rungs.push_back(rung("half-baseline", {{"halfprecision", ""}, {"half-precision", ""}}, half,
                           "the baseline on half data: half sum kept in global memory (the harness converts float to "
                           "half on the GPU)",
                           plain(half_baseline_supports), CS_PLAN(half_baseline_plan)));
    f.rungs.push_back(rung("half-baseline-uncoalesced", {{"halfprecision-nc", ""}, {"half-precision-nc", ""}}, half,
                           "half-baseline with each thread on an adjacent t x t output patch (t=1: same as coalesced)",
                           plain(half_baseline_supports), CS_PLAN(half_baseline_uncoalesced_plan)));
    return f;
}

}  // namespace cs::gpu::variants
