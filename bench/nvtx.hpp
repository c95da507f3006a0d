// NVTX ranges (NVTX3, header-only, from the CUDA toolkit) that name every row's phases for
// Nsight Systems and Nsight Compute. All ranges are push/pop ranges of the domain
// "convstudy" on the calling thread:
//
//   <layer> N=<N> <variant> <layout> <memory>    the whole row (run_variant)
//     plan                                        allocation, staging, plan set-up
//     check                                       the NaN-poisoned checked run
//     warm-up | timed                             one iteration of the timing loop
//       warm-up kernels | timed kernels           exactly the interval kernel_ms measures
//
// `convstudy profile` profiles the kernels of one timed repeat with
// `ncu --nvtx --nvtx-include "convstudy@timed kernels/"` (kTimedKernels). A push or pop is a
// host-side call between two enqueues: the GPU is held busy before every timed interval
// (DeviceContext::hold), so it never shows in the events' times; without a tool attached
// it costs a few nanoseconds.
#pragma once

#include <string>

namespace cs::gpu::nvtx {

inline constexpr const char* kDomain = "convstudy";
inline constexpr const char* kTimedKernels = "timed kernels";

// The ncu NVTX filter of the timed repeats' kernels: "convstudy@timed kernels/".
std::string timed_kernels_filter();

// The row's range name, e.g. "conv2 N=128 hopper-ws-fp16 nhwc pageable".
std::string row_name(const std::string& layer, long long N, const std::string& variant, const std::string& layout,
                     const std::string& memory);

// A push/pop range for the lifetime of the object (the name is copied by NVTX at push).
class Range {
public:
    explicit Range(const char* name);
    explicit Range(const std::string& name) : Range(name.c_str()) {}
    ~Range();
    Range(const Range&) = delete;
    Range& operator=(const Range&) = delete;
};

}  // namespace cs::gpu::nvtx
