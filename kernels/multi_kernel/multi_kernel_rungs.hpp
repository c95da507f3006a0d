// The multi-kernel family's entry points and the host-visible parts its kernels share: what each
// variant studies (Design, the flags its kernels are instantiated from), supports() and the
// helpers it shares with the plans (host code, multi_kernel_family.cpp, in every build); the
// plans (multi_kernel.cu, multi_kernel_vec.cu, built with the kernels). multi_kernel_family.cpp
// names the plans through CS_PLAN (family.hpp); multi_kernel.cuh's Spec takes a Design, and its
// make_plan the shared helpers through these declarations (supports() is asked once, by the
// harness, before a plan is made).
#pragma once

#include "conv_shape.hpp"
#include "variant.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

namespace multi_kernel {

// The flags of one variant (multi_kernel.cu's table; multi_kernel.cuh's kernel 1 says what each
// does). The element type (float or __half) is the plan's, beside the Design (Spec).
struct Design {
    bool sw;          // the channel's R x S filter slice in shared memory (kSW)
    bool si;          // the channel's input plane in shared memory, where it fits (kSI)
    bool vec;         // float4 loads, float4 filter rows, unrolled rows (kVec)
    bool atomic;      // partials atomicAdd-ed into the output, no workspace (kAtomic)
    PlaneMapping map;  // mapping of a thread's t x t outputs (kMap)
    bool global_acc;  // running sums in the workspace (mk), else in registers (kGlobalAcc)
};
inline constexpr Design kMk{false, false, false, false, PlaneMapping::uncoalesced, true};
inline constexpr Design kMkSwMt{true, false, false, false, PlaneMapping::uncoalesced, false};
inline constexpr Design kMkSwMtSiC{true, true, false, false, PlaneMapping::coalesced, false};  // and -half
inline constexpr Design kMkSwMtSiCVec{true, true, true, false, PlaneMapping::coalesced, false};
inline constexpr Design kExpMkSwMtSiCVec{true, true, true, true, PlaneMapping::coalesced, false};

constexpr int round_up4(int x) { return (x + 3) / 4 * 4; }

// Largest t the kernels are instantiated for (kT in {1, 2, 4}).
constexpr int kMaxT = 4;

// Shared filter row stride: S rounded up to 4 where the vector kernels read float4 rows (square
// R = S in {3, 5, 11}), else S.
int filter_row_stride(bool vec, const ConvShape& s);

// A byte count as "x.y KiB", "x.y MiB" or "x.yz GiB", for the reasons and the plans' detail.
std::string kib(double bytes);

std::optional<std::string> supports(const Design& d, const Problem& p, const cudaDeviceProp& prop);

}  // namespace multi_kernel

std::unique_ptr<Plan> mk_plan(const Problem&, const PlanContext&);                        // multi_kernel.cu
std::unique_ptr<Plan> mk_sw_mt_plan(const Problem&, const PlanContext&);                  // multi_kernel.cu
std::unique_ptr<Plan> mk_sw_mt_si_c_plan(const Problem&, const PlanContext&);             // multi_kernel.cu
std::unique_ptr<Plan> mk_sw_mt_si_c_half_plan(const Problem&, const PlanContext&);        // multi_kernel.cu
std::unique_ptr<Plan> mk_sw_mt_si_c_vec_plan(const Problem&, const PlanContext&);         // multi_kernel_vec.cu
std::unique_ptr<Plan> exp_mk_sw_mt_si_c_vec_plan(const Problem&, const PlanContext&);     // multi_kernel_vec.cu

}  // namespace cs::gpu::variants
