// Host-side layout permutes between the golden files' NCHW and the channels-last layout a
// variant may run in (see Layout in variant.hpp). The harness permutes the inputs in
// set-up and the output back before checking: layout is a property of the run, like its
// memory mode, and neither permute is timed. A variant that runs NHWC kernels on NCHW
// data does its own transforms inside Plan::run, where kernel_ms counts them.
#pragma once

#include <cstdint>

namespace cs::gpu {

// dst[n][h][w][c] = src[n][c][h][w]. Weights M*C*R*S -> M*R*S*C are the same permute
// (n=M, h=R, w=S); an output N*E*F*M -> N*M*E*F is nhwc_to_nchw with c=M, h=E, w=F.
void nchw_to_nhwc(const float* src, float* dst, std::int64_t n, int c, int h, int w);
// dst[n][c][h][w] = src[n][h][w][c].
void nhwc_to_nchw(const float* src, float* dst, std::int64_t n, int c, int h, int w);

}  // namespace cs::gpu
