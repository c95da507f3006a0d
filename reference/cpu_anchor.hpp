// Timing the CPU side of every speedup: our float32 reference, and oneDNN's fp32
// convolution (Debian's libdnnl-dev) on the same NCHW buffers when it was built in.
#pragma once

#include "layer.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace cs {

struct CpuTiming {
    double ms = 0;         // median wall time of one call (all threads)
    double min_ms = 0;
    int repeats = 0;
    int threads = 0;       // OpenMP threads used
};

// "AMD EPYC 7B13" from /proc/cpuinfo, or "unknown".
std::string cpu_model();
int cpu_threads();

// Times conv2d_ref<float> (result written to out): a warm-up call, then repeats until
// `min_seconds` have passed or `max_repeats` calls were made; median and min.
CpuTiming time_cpu_reference(const Layer& layer, std::int64_t N, const float* in, const float* w, float* out,
                             double min_seconds = 0.3, int max_repeats = 5);

// True when oneDNN was built in (CONVSTUDY_HAVE_DNNL).
bool onednn_available();
// "oneDNN 2.6.3" or "" when not built in.
std::string onednn_version();
// Times oneDNN's fp32 forward convolution on NCHW/OIHW buffers, reorders included in the
// timed call, result in out (so it can be checked). nullopt when oneDNN is not built in.
std::optional<CpuTiming> time_onednn(const Layer& layer, std::int64_t N, const float* in, const float* w, float* out,
                                     double min_seconds = 0.3, int max_repeats = 5);

}  // namespace cs
