// The baseline family's spec and its rung's supports() (host code; the plan and its kernel are
// baseline.cu): the study's "Mcpy" kernel (and, in managed memory, its "UM"), one thread per
// output with the running sum in global memory, on the study's N x M grid (conv_shape.hpp).
#include "baseline_rungs.hpp"
#include "conv_shape.hpp"
#include "families.hpp"

namespace cs::gpu::variants {

std::optional<std::string> baseline_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (const char* why = nm_grid_limit_reason(p.N, p.layer.M, prop)) return std::string(why);
    return std::nullopt;
}

Family baseline_family() {
    Rung r;
    r.name = "baseline";
    r.aliases = {{"Mcpy", "pageable"}, {"UM", "managed"}};
    r.rows = {row_fp32()};
    r.idea = "one thread per output, sum kept in global memory (study: Mcpy, UM in managed memory)";
    r.supports = plain(baseline_supports);
    r.make_plan = CS_PLAN(baseline_plan);
    return {"baseline", {}, {r}};
}

}  // namespace cs::gpu::variants
