// multi-kernel family, vector loads — the study's Mk-sw-mt-si-c-vec and its single-kernel
// experiment exp-Mk-sw-mt-si-c-vec (kernels and plan in multi_kernel.cuh).
// HEADER-PLACEHOLDER
#include "multi_kernel.cuh"

namespace cs::gpu::variants {

namespace mk = multi_kernel;
using MkVecSpec = mk::Spec<float, float, true, true, true, false, PlaneMapping::coalesced>;
using ExpMkVecSpec = mk::Spec<float, float, true, true, true, true, PlaneMapping::coalesced>;

std::optional<std::string> mk_sw_mt_si_c_vec_supports(const Problem& p, const cudaDeviceProp& prop) {
    return mk::supports<MkVecSpec>(p, prop);
}
std::unique_ptr<Plan> mk_sw_mt_si_c_vec_plan(const Problem& p, const PlanContext& ctx) {
    return mk::make_plan<MkVecSpec>(p, ctx);
}

std::optional<std::string> exp_mk_sw_mt_si_c_vec_supports(const Problem& p, const cudaDeviceProp& prop) {
    return mk::supports<ExpMkVecSpec>(p, prop);
}
std::unique_ptr<Plan> exp_mk_sw_mt_si_c_vec_plan(const Problem& p, const PlanContext& ctx) {
    return mk::make_plan<ExpMkVecSpec>(p, ctx);
}

}  // namespace cs::gpu::variants
