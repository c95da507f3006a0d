// The multi-kernel family's spec and its rungs' supports() (host code; the plans are
// multi_kernel.cu and multi_kernel_vec.cu, their kernels and Plan multi_kernel.cuh): the study's
// Mk ladder, N x M x C blocks each writing one channel's partial plane to a workspace that a
// second kernel sums over C (multi_kernel.cu's file comment). Each variant's flags: Design,
// multi_kernel_rungs.hpp.
#include "families.hpp"
#include "multi_kernel_rungs.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace cs::gpu::variants {

namespace multi_kernel {

int filter_row_stride(bool vec, const ConvShape& s) {
    const bool rows4 = vec && s.R == s.S && (s.S == 3 || s.S == 5 || s.S == 11);
    return rows4 ? round_up4(s.S) : s.S;
}

std::string kib(double bytes) {
    char b[48];
    if (bytes >= 1024.0 * 1024.0 * 1024.0)
        std::snprintf(b, sizeof b, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    else if (bytes >= 1024.0 * 1024.0)
        std::snprintf(b, sizeof b, "%.1f MiB", bytes / (1024.0 * 1024.0));
    else
        std::snprintf(b, sizeof b, "%.1f KiB", bytes / 1024.0);
    return b;
}

std::optional<std::string> supports(const Design& d, const Problem& p, const cudaDeviceProp& prop) {
    const ConvShape s = conv_shape(p.layer);
    const PlaneTiling tl = plane_tiling(s.E, s.F, prop.maxThreadsPerBlock);
    if (tl.t > kMaxT)
        return "the " + std::to_string(s.E) + "x" + std::to_string(s.F) +
               " output plane needs more than 4x4 outputs per thread in one block (kernels are built for t <= 4)";
    const std::int64_t gx = prop.maxGridSize[0];
    // Kernel 1's N x M x C grid is flattened onto x; y and z (65535) are not used.
    if (d.atomic && std::int64_t(s.C) * s.M > gx)
        return "C*M = " + std::to_string(std::int64_t(s.C) * s.M) + " blocks per image exceed the grid's x limit";
    if (!d.atomic && s.M > gx) return "M exceeds the grid's x limit";
    if (d.sw) {
        const std::size_t bytes = std::size_t(round_up4(s.R * filter_row_stride(d.vec, s))) * 4;
        if (bytes > prop.sharedMemPerBlockOptin)
            return "the " + std::to_string(s.R) + "x" + std::to_string(s.S) + " filter slice needs " + kib(double(bytes)) +
                   " of shared memory, more than the device's " + kib(double(prop.sharedMemPerBlockOptin));
    }
    return std::nullopt;
}

}  // namespace multi_kernel

// Workspace C*N*M*E*F partials, cut into chunks of images (and channel groups when one image
// does not fit) to stay under the plan's workspace limit. A rung here is its Design; its plan
// instantiates the kernels from it (multi_kernel.cu, multi_kernel_vec.cu).
Family multi_kernel_family() {
    namespace mk = multi_kernel;
    auto rung = [](std::string name, std::string study, PrecisionRow row, std::string idea, const mk::Design& d,
                   RungPlan pl, bool deterministic = true) {
        RungSupports sup = [d](const PrecisionRow&, const Problem& p, const cudaDeviceProp& prop) {
            return mk::supports(d, p, prop);
        };
        Rung r = make_rung(std::move(name), {std::move(row)}, std::move(idea), std::move(sup), std::move(pl),
                           {"direct", {Layout::nchw}, deterministic});
        r.aliases = {{std::move(study), ""}};
        return r;
    };
    return {"multi-kernel",
            {},
            {
                rung("mk", "Mk", row_fp32(),
                     "N x M x C blocks each write one channel's partial plane to a workspace, the running sum kept in "
                     "that global slot (read-add-write per tap, as the study's Mk); a 2nd kernel sums over C in fixed "
                     "order",
                     mk::kMk, CS_PLAN(mk_plan)),
                rung("mk-sw-mt", "Mk-sw-mt", row_fp32(),
                     "mk + the channel's R x S filter slice in shared memory, staged by all threads, and the sum in a "
                     "register",
                     mk::kMkSwMt, CS_PLAN(mk_sw_mt_plan)),
                rung("mk-sw-mt-si-c", "Mk-sw-mt-si-c", row_fp32(),
                     "mk-sw-mt + the channel's input plane in shared memory where the device's opt-in limit allows; "
                     "coalesced conv1 mapping",
                     mk::kMkSwMtSiC, CS_PLAN(mk_sw_mt_si_c_plan)),
                rung("mk-sw-mt-si-c-vec", "Mk-sw-mt-si-c-vec", row_fp32(),
                     "mk-sw-mt-si-c + float4 loads (alignment checked at run time), float4 filter rows, unrolled rows",
                     mk::kMkSwMtSiCVec, CS_PLAN(mk_sw_mt_si_c_vec_plan)),
                rung("mk-sw-mt-si-c-half", "Mk-sw-mt-si-c-half", {Precision::fp16, DType::f16, "fp16"},
                     "mk-sw-mt-si-c on half data: float products and sums, half workspace, half output",
                     mk::kMkSwMtSiC, CS_PLAN(mk_sw_mt_si_c_half_plan)),
                rung("exp-mk-sw-mt-si-c-vec", "exp-Mk-sw-mt-si-c-vec", row_fp32(),
                     "single kernel: mk-sw-mt-si-c-vec's per-channel partials atomicAdd-ed into the zeroed output, no "
                     "workspace",
                     mk::kExpMkSwMtSiCVec, CS_PLAN(exp_mk_sw_mt_si_c_vec_plan), false),
            }};
}

}  // namespace cs::gpu::variants
