// Internal to cs_cpu: the oneDNN calls, defined only in onednn_anchor.cpp, which CMake
// compiles only when it found oneDNN (and then defines CONVSTUDY_HAVE_DNNL=1).
// cpu_anchor.cpp uses these under #ifdef CONVSTUDY_HAVE_DNNL and owns the timing loop.
#pragma once

#include "layer.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace cs::detail {

// "oneDNN 2.6.3"
std::string onednn_version_string();

// Sets up oneDNN's fp32 forward convolution of `layer` on user buffers in NCHW / OIHW /
// NCHW (primitive and reorders created here, once) and returns the call to time: reorder
// input and weights to the primitive's layouts, convolve, reorder the output back into
// `out` (NCHW), wait. The buffers must outlive the returned function.
std::function<void()> make_onednn_conv(const Layer& layer, std::int64_t N, const float* in, const float* w,
                                       float* out);

}  // namespace cs::detail
