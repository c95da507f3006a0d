// cuDNN's side of a chain run (`convstudy chain`, issue 52): per layer one cuDNN graph of
// convolution + bias (+ ReLU), searched as the per-layer anchors are (cudnn_graph.cu: heuristics
// A and B, fallback, the global list, runtime-compiled engines included; every candidate that
// finalizes is timed, L2 flushed, and the fastest whose output passes the class's accuracy screen
// is kept), then cuDNN's pooling operation for a layer that pools. In the chain's element type
// and layout; float compute. The graph and pooling run on the stream given, without allocation or
// host sync, so that the whole chain can be captured into one CUDA graph.
// Built only with the kernels and cuDNN (CONVSTUDY_HAVE_KERNELS, CONVSTUDY_HAVE_CUDNN).
#pragma once

#include "variant.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cs::gpu {

class CudnnChainLayer {
public:
    virtual ~CudnnChainLayer() = default;
    // conv_out = relu?(conv(in, w) + bias) (bias: layer.M values of the element type; relu as the
    // layer says), then, when the layer pools, pooled = maxpool3x3s2(conv_out); pooled is unused
    // (may be null) for a layer without pool. Tensors in the layout and element type given at
    // plan time: in N x C x H x W, w M x C x R x S (KCRS, or KRSC for NHWC), conv_out N x M x E x
    // F, pooled N x M x pooled_E x pooled_F. Every pointer 16-byte aligned (cs::Error otherwise); a
    // new set of pointers costs host-side descriptor work once (its variant pack), nothing on the GPU.
    virtual void run(const void* in, const void* w, const void* bias, void* conv_out, void* pooled,
                     cudaStream_t s) = 0;
    // The engine chosen (its name and knobs) and what the search timed, for the CSV's detail.
    virtual std::string detail() const = 0;
    virtual std::size_t workspace_bytes() const = 0;
};

// Plans one layer of the chain: layer's shape and ops (Layer::bias, relu, pool), N images,
// precision class p (fp32, tf32, fp16, bf16: the class's element type and tensor-core use as
// the cudnn-<class> rows), layout. Throws cs::Skip when no engine supports the fused graph (the
// message names what was tried), cs::Error on a bad argument.
std::unique_ptr<CudnnChainLayer> make_cudnn_chain_layer(const Layer& layer, std::int64_t N, Precision p, Layout layout,
                                                        const PlanContext& ctx);

}  // namespace cs::gpu
