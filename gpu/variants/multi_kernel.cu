// multi-kernel family — the study's Mk, Mk-sw-mt, Mk-sw-mt-si-c and Mk-sw-mt-si-c-half
// (Mk-sw-mt-si-c-vec and exp-Mk-sw-mt-si-c-vec are in multi_kernel_vec.cu; the kernels,
// the workspace policy and the Plan of all six are in multi_kernel.cuh).
// HEADER-PLACEHOLDER
#include "multi_kernel.cuh"

namespace cs::gpu::variants {

namespace mk = multi_kernel;
using MkSpec = mk::Spec<float, float, false, false, false, false, PlaneMapping::uncoalesced>;
using MkSwMtSpec = mk::Spec<float, float, true, false, false, false, PlaneMapping::uncoalesced>;
using MkSwMtSiCSpec = mk::Spec<float, float, true, true, false, false, PlaneMapping::coalesced>;
using MkSwMtSiCHalfSpec = mk::Spec<__half, __half, true, true, false, false, PlaneMapping::coalesced>;

std::optional<std::string> mk_supports(const Problem& p, const cudaDeviceProp& prop) {
    return mk::supports<MkSpec>(p, prop);
}
std::unique_ptr<Plan> mk_plan(const Problem& p, const PlanContext& ctx) { return mk::make_plan<MkSpec>(p, ctx); }

std::optional<std::string> mk_sw_mt_supports(const Problem& p, const cudaDeviceProp& prop) {
    return mk::supports<MkSwMtSpec>(p, prop);
}
std::unique_ptr<Plan> mk_sw_mt_plan(const Problem& p, const PlanContext& ctx) {
    return mk::make_plan<MkSwMtSpec>(p, ctx);
}

std::optional<std::string> mk_sw_mt_si_c_supports(const Problem& p, const cudaDeviceProp& prop) {
    return mk::supports<MkSwMtSiCSpec>(p, prop);
}
std::unique_ptr<Plan> mk_sw_mt_si_c_plan(const Problem& p, const PlanContext& ctx) {
    return mk::make_plan<MkSwMtSiCSpec>(p, ctx);
}

std::optional<std::string> mk_sw_mt_si_c_half_supports(const Problem& p, const cudaDeviceProp& prop) {
    return mk::supports<MkSwMtSiCHalfSpec>(p, prop);
}
std::unique_ptr<Plan> mk_sw_mt_si_c_half_plan(const Problem& p, const PlanContext& ctx) {
    return mk::make_plan<MkSwMtSiCHalfSpec>(p, ctx);
}

}  // namespace cs::gpu::variants
