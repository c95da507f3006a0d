// The direct family's spec: the course reports' constant-memory mask, restrict + unrolling and
// shared-memory input tiling, each on the direct convolution. One rung per file:
// direct_const_weights.cu, direct_restrict_unroll.cu, direct_tiled_input.cu (shared taps:
// direct_taps.cuh).
#include "families.hpp"

namespace cs::gpu::variants {

// The rungs' entry points, one pair per file.
std::optional<std::string> const_weights_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> const_weights_plan(const Problem&, const PlanContext&);
std::optional<std::string> restrict_unroll_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> restrict_unroll_plan(const Problem&, const PlanContext&);
std::optional<std::string> tiled_input_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> tiled_input_plan(const Problem&, const PlanContext&);

Family direct_family() {
    auto rung = [](std::string name, std::string idea, PlainSupports sup, PlainPlan pl) {
        return make_rung(std::move(name), {row_fp32()}, std::move(idea), plain(sup), plain(pl));
    };
    return {"direct",
            {},
            {
                rung("const-weights",
                     "filters in __constant__ memory (broadcast reads), in chunks of M that fit 64 KB: a "
                     "device-to-device copy + a launch per chunk",
                     const_weights_supports, const_weights_plan),
                rung("restrict-unroll",
                     "register-acc with __restrict__ pointers and the filter size compile-time (11, 5, 3: loops "
                     "fully unrolled), a generic fallback",
                     restrict_unroll_supports, restrict_unroll_plan),
                rung("tiled-input",
                     "a block stages its input tile + halo and the filters' channel slices in shared memory; 2 rows "
                     "x 8-16 filters per thread",
                     tiled_input_supports, tiled_input_plan),
            }};
}

}  // namespace cs::gpu::variants
