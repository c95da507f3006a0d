// The network ops of a chain run on the GPU, outside the convolution: the per-channel bias with
// ReLU after a convolution, and AlexNet's 3x3 stride-2 max-pool, on tensors in a chain's element
// type (f32, f16, bf16) and layout (NCHW or NHWC). What reference/network_ref.hpp computes on the
// CPU; `convstudy chain` (bench/chain_run.hpp) enqueues them between our convolutions: the pool
// after every pooled layer, and the bias and ReLU only after a plan that stores the plain
// convolution (Plan::fuses_post_ops false: its output is rounded to its element type, the bias
// added in float and the result rounded again, one rounding more than the fused epilogue makes).
// Every function only enqueues work on `s` (no allocation, no host sync): it can be captured into
// a CUDA graph. Compiled in every build (like convert.cu), so a host-only build links.
#pragma once

#include "variant.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace cs::gpu {

// A chain tensor's shape: N images of C channels of H x W, in `layout` (NCHW: n, c, h, w;
// NHWC: n, h, w, c), elements of `type`.
struct ChainTensor4 {
    DType type = DType::f32;
    Layout layout = Layout::nchw;
    std::int64_t N = 0;
    int C = 0, H = 0, W = 0;
    std::int64_t elems() const { return N * C * std::int64_t(H) * W; }
};

// y = relu ? max(y + bias[c], 0) : y + bias[c], in place, for every element of channel c.
// bias holds t.C values of t.type; the sum in float, rounded once to t.type. bias null: ReLU
// alone (relu false and bias null: nothing is enqueued).
// dependent (every op here): launched as the programmatic dependent of the kernel before it on
// `s` (a chain's op after its layer's convolution, sm_90 and later; elsewhere ignored); each op
// kernel waits for that kernel before it reads.
void bias_relu(void* y, const ChainTensor4& t, const void* bias, bool relu, cudaStream_t s, bool dependent = false);

// out = the 3x3 stride-2 max-pool of `in` (no padding, floor): out is in.N x in.C x
// maxpool3x3s2_size(in.H) x maxpool3x3s2_size(in.W) in in's type and layout. A NaN in a window
// is the window's result (as maxpool3x3s2_ref). in.H or in.W < 3: cs::Error.
void maxpool3x3s2(const void* in, const ChainTensor4& t, void* out, cudaStream_t s, bool dependent = false);

// The pool of bias_relu's output in one pass: out = maxpool3x3s2(relu?(in + bias)), the bias and
// ReLU applied to every element the pool reads with bias_relu's arithmetic, so the result is bit
// for bit bias_relu then maxpool3x3s2 (NaN included), without writing and re-reading the
// un-pooled tensor: a pooled layer of a chain (conv1, conv2, conv5 of AlexNet) saves a whole
// read and write of its convolution's output. `in` is left as it was. bias null: ReLU alone.
void bias_relu_maxpool3x3s2(const void* in, const ChainTensor4& t, const void* bias, bool relu, void* out,
                            cudaStream_t s, bool dependent = false);

}  // namespace cs::gpu
