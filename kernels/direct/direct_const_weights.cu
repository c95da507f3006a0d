// const-weights — filters in __constant__ memory (course-project idea).
//
// Idea: the course reports kept the convolution mask in constant memory. The constant
// cache broadcasts: when every thread of a warp reads the same address it is served in
// one request, and it is a separate path from the L1/shared pipe that the input loads
// use. Here every thread of a block works on the same filter m and walks (c, r, s) in
// the same order, so every weight read of a warp is one address: a broadcast.
//
// The catch: the constant bank holds 64 KB, less than any AlexNet layer's filters
// (conv1 139 KB, conv2 2.4 MB, conv4 5.3 MB). The filters are therefore cut into chunks
// of whole filters that fit (cap = floor(64 KB / (C*R*S*4)) filters; the chunks are
// balanced, same count), and per chunk the plan enqueues
//     cudaMemcpyToSymbolAsync(bank <- w[m0 .. m0+chunk), device-to-device, on the stream)
//     kernel on that chunk's filters (grid N x chunk)
// The copies are inside kernel_ms: they are part of what the idea costs. Stream order
// makes each copy wait until the previous chunk's kernel has drained (the bank is reused),
// so the chunks run one after another with a drain + copy + launch gap between them.
// Chunks per layer: conv1 3 (of 32), conv2 43 (of <= 6), conv3 55 (of <= 7), conv4 96
// (of 4), conv5 64 (of 4). A single filter larger than 64 KB (C*R*S > 16384) cannot be
// held: supports() says so.
//
// The bank is one per device and module, shared by every plan of this variant: the
// `streams` memory mode makes one plan per stream and would otherwise let stream B
// overwrite the bank while stream A's kernel still reads it. Every run therefore waits
// on an event recorded by the previous run (of any plan) and records it when its last
// kernel is enqueued: the const-weights kernels of different streams run one after
// another, the copies of the streams mode still overlap them.
//
// Otherwise the kernel is register-acc (single_kernel.cu): the same N x M grid (M of
// the chunk), block and coalesced mapping from plane_tiling (conv1: 28x28 threads, 2x2
// outputs each), the same (c, r, s) order and bounds checks, the sum in a register —
// only the filter comes from the constant bank, so the two measure the bank against
// global memory (and the chunking against one launch).
//
// Prediction, per FMA: global (L1) 1 load (the input; register-acc: 2, input + weight),
// constant 1 uniform load (LDC with a register address: a broadcast, served by the
// constant cache, off the L1 pipe), shared 0. The instruction count per FMA is
// register-acc's (same loops and checks, LDC in place of LDG), so the gain is bounded by
// how L1-bound register-acc is: at best ~1.3x per FLOP in a chunk's steady state.
// Against it: each chunk costs a drain (its last wave runs with SMs part empty) + a copy
// + a launch, and a chunk's grid is small — conv4 at N=128 is 96 launches of
// 4 x 128 = 512 blocks of 169 threads, ~4 blocks per SM where register-acc has 49152
// blocks in one launch. Expected at N=128: conv1 (3 chunks of 32 filters, 4096 blocks)
// about register-acc or a little better; conv2-5 0.7-1.1x register-acc (the occupancy
// of the small grids and the gaps between chunks eat the broadcast's gain). At N=1 a
// chunk is 4-7 blocks on 132 SMs, 43-96 of them one after another: expect 10-40x slower
// than register-acc on conv2-5. The broadcast helps where chunks are few and big (conv1,
// large N); the extra launches cost more where the filters are large (conv2-5) and N
// is small.
// Measured: docs/findings.md, "Direct and GEMM formulations".
//
// Resources (nvcc 13.0, sm_90, -Xptxas -v): const_weights_kernel 32 registers (as
// register-acc), 0 B shared, 0 B stack, no spills; the 64 KB bank is its constant data.
//
// This file holds the kernel and the plan; supports() and the bank's capacity are host code,
// direct_family.cpp (declared in direct_rungs.hpp).
#include "conv_shape.hpp"
#include "direct_rungs.hpp"
#include "direct_taps.cuh"
#include "cuda_check.hpp"
#include "error.hpp"
#include "variant.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace cs::gpu::variants {
namespace {

constexpr int kMaxThreads = 1024;

__constant__ float c_weights[kConstBankFloats];  // the whole 64 KB user constant bank

// One output per (i, j) of the thread, as register-acc: sum in a register, K products in
// the order (c, r, s), zero padding skipped. The weight index is the same for every
// thread of the block (one filter, one loop order): a constant-cache broadcast.
__global__ void __launch_bounds__(kMaxThreads)
    const_weights_kernel(const float* in, float* out, ConvShape s, int t, int m0) {
    const int n = blockIdx.x, mc = blockIdx.y;  // mc: filter inside the chunk
    const int K = s.C * s.R * s.S;
    const float* in_n = in + std::int64_t(n) * s.C * s.H * s.W;
    const float* w_m = c_weights + mc * K;
    float* out_nm = out + (std::int64_t(n) * s.M + (m0 + mc)) * s.E * s.F;
    for (int i = 0; i < t; ++i) {
        for (int j = 0; j < t; ++j) {
            int e, f;
            plane_coord<PlaneMapping::coalesced>(t, i, j, e, f);
            if (e >= s.E || f >= s.F) continue;
            RegSum sum(nullptr);
            dot(sum, in_n, w_m, s, e, f);  // w_m points into __constant__ memory
            out_nm[e * s.F + f] = sum.get();
        }
    }
}

// The event that orders every use of the bank on one device (see the file comment).
struct BankOrder {
    cudaEvent_t last_use = nullptr;
    std::mutex enqueue;  // one run enqueues its chunks at a time
    BankOrder() { CS_CUDA_CHECK(cudaEventCreateWithFlags(&last_use, cudaEventDisableTiming)); }
    ~BankOrder() {
        if (last_use) (void)cudaEventDestroy(last_use);
    }
    BankOrder(const BankOrder&) = delete;
    BankOrder& operator=(const BankOrder&) = delete;
};

// Shared by every live plan on `device`; made again once they are all gone.
std::shared_ptr<BankOrder> bank_order(int device) {
    static std::mutex mu;
    static std::map<int, std::weak_ptr<BankOrder>> live;
    std::lock_guard<std::mutex> lock(mu);
    std::shared_ptr<BankOrder> sp = live[device].lock();
    if (!sp) {
        sp = std::make_shared<BankOrder>();
        live[device] = sp;
    }
    return sp;
}

// Filters per chunk: as many whole filters as the bank holds, then balanced over the
// chunk count that needs (same number of launches, no tiny last chunk).
struct Chunking {
    int cap = 0;      // filters the bank holds
    int count = 0;    // chunks
    int filters = 0;  // filters per chunk (the last may have fewer)
};

Chunking chunking(const Layer& l, const cudaDeviceProp& prop) {
    Chunking ch;
    ch.cap = int(std::min<std::int64_t>(bank_floats(prop) / l.K(), l.M));
    if (ch.cap <= 0) return ch;
    const int n = (l.M + ch.cap - 1) / ch.cap;
    ch.filters = (l.M + n - 1) / n;
    ch.count = (l.M + ch.filters - 1) / ch.filters;
    return ch;
}

class ConstWeightsPlan final : public Plan {
public:
    ConstWeightsPlan(const ConvShape& s, const PlaneTiling& tl, const Chunking& ch, std::shared_ptr<BankOrder> order)
        : s_(s), tl_(tl), ch_(ch), order_(std::move(order)) {}

    void run(const DeviceIO& io, cudaStream_t stream) override {
        if (io.N <= 0) return;
        const std::int64_t K = std::int64_t(s_.C) * s_.R * s_.S;
        const auto* w = static_cast<const float*>(io.w);
        std::lock_guard<std::mutex> lock(order_->enqueue);
        // Wait until the previous user of the bank (another plan's stream) is done with it.
        CS_CUDA_CHECK(cudaStreamWaitEvent(stream, order_->last_use, 0));
        for (int k = 0; k < ch_.count; ++k) {
            const int m0 = k * ch_.filters;
            const int mc = std::min(ch_.filters, s_.M - m0);
            // Device-to-device into the bank (cudaMemcpyDefault: the runtime sees the
            // weight buffer is device memory; in the managed modes it is managed memory).
            CS_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_weights, w + m0 * K, std::size_t(mc * K) * sizeof(float), 0,
                                                  cudaMemcpyDefault, stream));
            const dim3 grid(unsigned(io.N), unsigned(mc));
            const dim3 block(unsigned(tl_.bx), unsigned(tl_.by));
            const_weights_kernel<<<grid, block, 0, stream>>>(static_cast<const float*>(io.in),
                                                             static_cast<float*>(io.out), s_, tl_.t, m0);
            CS_CUDA_CHECK_LAUNCH();
        }
        CS_CUDA_CHECK(cudaEventRecord(order_->last_use, stream));
    }

    std::string detail() const override {
        return "grid N x chunk, block " + std::to_string(tl_.bx) + "x" + std::to_string(tl_.by) + ", " +
               std::to_string(tl_.t * tl_.t) + " outputs/thread (coalesced), sum in a register; filters in " +
               "__constant__: " + std::to_string(ch_.count) + (ch_.count == 1 ? " chunk" : " chunks") + " of <= " +
               std::to_string(ch_.filters) + " filters (bank holds " + std::to_string(ch_.cap) + " x " +
               std::to_string(std::int64_t(s_.C) * s_.R * s_.S * 4) +
               " B), one device-to-device cudaMemcpyToSymbolAsync + one launch per chunk, all inside kernel_ms";
    }

private:
    ConvShape s_;
    PlaneTiling tl_;
    Chunking ch_;
    std::shared_ptr<BankOrder> order_;
};

}  // namespace

// ---- the plan (the spec and supports(): direct_family.cpp) ----

std::unique_ptr<Plan> const_weights_plan(const Problem& p, const PlanContext& ctx) {
    const ConvShape s = conv_shape(p.layer);
    const PlaneTiling tl = plane_tiling(s.E, s.F, ctx.prop.maxThreadsPerBlock);
    cudaFuncAttributes fa{};
    CS_CUDA_CHECK(cudaFuncGetAttributes(&fa, const_weights_kernel));
    if (fa.maxThreadsPerBlock < tl.threads())
        throw Skip("the kernel can launch at most " + std::to_string(fa.maxThreadsPerBlock) +
                   " threads per block (registers); the plane needs " + std::to_string(tl.threads()));
    return std::make_unique<ConstWeightsPlan>(s, tl, chunking(p.layer, ctx.prop), bank_order(ctx.device));
}

}  // namespace cs::gpu::variants
