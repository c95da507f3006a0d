// hopper-tma-fp16 / hopper-tma-bf16 / hopper-tma-tf32 — Hopper rung 2: rung 1's wgmma core fed
// by the tensor memory accelerator (TMA) through an mbarrier pipeline instead of per-thread
// cp.async. (tf32: see the section at the end of this comment.)
//
// Idea: rung 1 spends its issue slots on address arithmetic, bounds tests and 4+BN/32 16-byte
// copies per thread per k-slice, and every k-slice ends in a CTA-wide barrier. TMA moves a
// whole tile with one instruction from one thread, does the im2col addressing, the padding and
// the swizzle in hardware, and signals completion on an mbarrier (transaction bytes), so the
// consumer warps only wait on a barrier and issue wgmma.
//   A (pixels x channels of one filter tap): cuTensorMapEncodeIm2col over the NHWC input
//     {C, W, H, N}: pixelsPerColumn = 128 output pixels, channelsPerPixel = BK, traversal
//     stride = conv stride, bounding box lower corner -pad and upper corner
//     (F-1)*stride - pad - (W-1) (so exactly F start positions per row, E per image; the
//     traversal wraps rows and images like the GEMM's p = (n*E + e)*F + f); the load names the
//     tile's first pixel (c0, f0*stride - pad, e0*stride - pad, n0) and the tap as im2col
//     offsets (s, r). Padding, channels >= C and images >= N come back as zeros.
//   B (filters x channels of one tap): a tiled 3D map over the KRSC weights {C, R*S, M}, box
//     {BK, 1, BN}: zero rows for m >= M and channels >= C.
// So a k-slice is one tap and BK channels; K is walked as R*S taps x ceil(C/BK) channel
// slices. BK = 64 (128 B swizzle) unless C <= 32 (then 32, 64 B swizzle): the sweep showed
// 64-wide slices faster even on conv2, where C=96 pads to 128 (0.252 vs 0.258 ms).
// Tensor maps (hopper_tma.cuh) are encoded on the host with the driver's
// cuTensorMapEncodeIm2col / Tiled (fetched through cudaGetDriverEntryPointByVersion: no
// -lcuda), checked at plan time and re-encoded in run() only when the tensors' addresses or
// the image count change; they travel as __grid_constant__ kernel parameters.
// Pipeline: STAGES stages, full[s] (1 arrival + transaction bytes) and empty[s] (one arrival
// per consumer warpgroup) mbarriers. Thread 0 fills all stages first; in iteration kt every
// thread waits full[kt], the warpgroups issue wgmma, commit, wait_group(1) — slice kt-1 is then
// read — and one thread per warpgroup arrives on empty[kt-1]; thread 0 waits for both and
// refills that stage with slice kt-1+STAGES. No CTA-wide barrier in the loop. (Thread 0 is
// also a consumer: rung 3 gives the copies a producer warpgroup of their own.)
// Transforms (space-to-depth, NCHW) and the NCHW epilogue: as rung 1 (hopper_core.cuh).
// Default tile (from the sweep): 128x96x64 7 stages for M <= 96; 128x256x64 4 stages where
// M % 256 == 0 and the grid has >= 4 waves (conv2); else 128x128x64 3 stages, 2 CTAs/SM.
//
// Prediction: the same tensor-core work as rung 1 with a fraction of its issue slots and no
// per-slice CTA barrier: 60-80% of the cuBLAS ceiling at N=128 — conv2 ~0.22 ms, conv3 ~0.08,
// conv4 ~0.11, conv5 ~0.08; conv1 as rung 1.
//
// Measured (H200, N=128, L2 flushed, median of 20, default tile, same run as the cuBLAS GEMM
// of the layer's im2col shape):
//            fp16 NHWC         fp16 NCHW   bf16 NHWC   cuBLAS   vs rung 1 (fp16 NHWC)
//   conv1    0.303 ms   89     0.289       0.303       0.348    +18%
//   conv2    0.252     456     0.307       0.246       0.172    +1%
//   conv3    0.072     528     0.117       0.072       0.058    -16%
//   conv4    0.100     575     0.165       0.099       0.085    -17%
//   conv5    0.090     424     0.151       0.084       0.066    -2%
// 80-85% of cuBLAS on conv3/4 (their 2-CTA/SM tiles), 66-68% on conv2/5. Where one CTA per SM
// holds a deep ring (conv2, conv5's alternatives) rung 2 gains nothing over rung 1: each CTA
// still pays its fill and epilogue alone, and thread 0's refill waits stall warpgroup 0.
// conv1's GEMM alone (space-to-depth layer, K = 9 taps x 64 channels of which 48 real) is
// slower than rung 1's (0.184 vs 0.143 ms): the tap-aligned slices pad 432 -> 576, and every
// tile re-reads the whole 96 x 576 filter block (110 KB, as large as its A tiles) from L2.
// Correct on everything rung 1 is (same test), memcheck / synccheck clean.
//
// ptxas (sm_90a, -O3, no spills): 128x96: 80 registers; 128x128: 93; 128x192: 127;
// 128x256: 160 (BK 32 and 64 alike). SASS: UTMALDG x4 per kernel (im2col + tiled, prologue and
// refill), HGMMA.64xBNx16.F32 x BK/16 per k-slice, no LDGSTS, no LDL/STL.
//
// ---- hopper-tma-tf32 -------------------------------------------------------------------
// The same kernel on fp32 tensors (rung 1's header says why the layout, the k-steps and the
// tiles carry over in bytes, and the rounding decision): FLOAT32 tensor maps, a k-slice of 32
// floats (128 B rows, 128B swizzle) or 16 (64 B rows, where C*4 <= 64), im2col boxes of 128
// pixels x 32 channels; wgmma m64nNk8.tf32, ROWB/32 = 4 (or 2) per slice. The table's k-slice
// is in halves' worth of bytes, so config i has the same shared memory and stages in either
// type (names in elements: "128x256x32" for tf32 is fp16's "128x256x64"). Default tile: the
// same rule in bytes — conv1 128x96x32f 7 stages (C'=48 in two slices per tap, 48 -> 64),
// conv2 128x256x32f 4 stages (C=96 = 3 exact slices), conv3-5 128x128x32f 3 stages 2 CTAs/SM.
// Prediction (N=128; rung 2 fp16 reached 55-75% of the fp16 ceiling): conv2 ~0.45 ms, conv3
// ~0.13, conv4 ~0.18, conv5 ~0.16 (ceiling 0.276 / 0.092 / 0.138 / 0.092), conv1 ~0.42.
// Measured: not yet (no device time left in this session; tools/dev/hopper/device_tf32.sh).
// ptxas: tf32 instantiations 80 / 93 / 127 / 160 registers (BN 96 / 128 / 192 / 256), as
// fp16's, no spills; fp16 / bf16 machine code unchanged.
#include "hopper_api.hpp"
#include "hopper_core.cuh"
#include "hopper_tma.cuh"
#include "variants.hpp"

#include <type_traits>

namespace cs::gpu::variants {
namespace hopper {
namespace {

template <class T, int BN, int BK, int STAGES, int MINB>
__global__ void __launch_bounds__(kThreads, MINB)
    wgmma_tma_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                     T* __restrict__ out, const ConvGeom g, int tiles_n, int cslices, int nchw_out) {
#ifdef CS_HOPPER_DEVICE
    using Sw = SwizzleOf<BK, int(sizeof(T))>;  // BK elements = 128 B or 64 B per row
    constexpr int ROWB = BK * int(sizeof(T)), A_BYTES = kBM * ROWB, B_BYTES = BN * ROWB, ST_BYTES = A_BYTES + B_BYTES;
    static_assert(ST_BYTES % 1024 == 0, "stage buffers keep the 1024-byte swizzle alignment");
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t sbase = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const std::uint32_t full0 = sbase + STAGES * ST_BYTES;  // STAGES x 8 bytes
    const std::uint32_t empty0 = full0 + STAGES * 8;        // STAGES x 8 bytes

    const int tid = int(threadIdx.x);
    const int pt = int(blockIdx.x) / tiles_n;
    const int nt = int(blockIdx.x) - pt * tiles_n;
    const int p0 = pt * kBM, m0 = nt * BN;
    const int KT = g.R * g.S * cslices;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);
            mbar_init(empty0 + 8 * s, 2);
        }
        mbar_fence_init();
    }
    __syncthreads();

    // The tile's first output pixel, as im2col start coordinates.
    const int n0 = p0 / g.EF, rem = p0 - n0 * g.EF;
    const int e0 = rem / g.F, f0 = rem - e0 * g.F;
    const int w0 = f0 * g.stride - g.pad, h0 = e0 * g.stride - g.pad;

    auto issue = [&](int kt, int stage) {
        const int tap = kt / cslices, cs = kt - tap * cslices;
        const int r = tap / g.S, s = tap - r * g.S;
        const std::uint32_t bar = full0 + 8 * stage;
        const std::uint32_t sA = sbase + std::uint32_t(stage) * ST_BYTES;
        mbar_arrive_expect_tx(bar, ST_BYTES);
        tma_load_im2col_4d(sA, &tmA, bar, cs * BK, w0, h0, n0, s, r);
        tma_load_3d(sA + A_BYTES, &tmB, bar, cs * BK, tap, m0);
    };
    if (tid == 0) {
        const int pre = KT < STAGES ? KT : STAGES;
        for (int kt = 0; kt < pre; ++kt) issue(kt, kt);
    }

    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;

    const int wg = tid >> 7;
    int stage = 0;
    std::uint32_t phase = 0;
    for (int kt = 0; kt < KT; ++kt) {
        mbar_wait(full0 + 8 * stage, phase);
        const std::uint32_t sA = sbase + std::uint32_t(stage) * ST_BYTES + std::uint32_t(wg) * 64u * ROWB;
        const std::uint32_t sB = sbase + std::uint32_t(stage) * ST_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < ROWB / 32; ++kk)  // one wgmma per 32 bytes of K
            WgmmaSS<T, BN>::mma(acc, smem_desc(sA + kk * 32, Sw::kSbo, Sw::kLayout),
                                smem_desc(sB + kk * 32, Sw::kSbo, Sw::kLayout));
        wgmma_commit();
        wgmma_wait<1>();
        if (kt > 0) {
            // slice kt-1 has been read by this warpgroup: release its stage.
            const int ps = stage == 0 ? STAGES - 1 : stage - 1;
            if ((tid & 127) == 0) mbar_arrive(empty0 + 8 * ps);
            if (tid == 0 && kt - 1 + STAGES < KT) {
                mbar_wait(empty0 + 8 * ps, std::uint32_t((kt - 1) / STAGES) & 1u);
                issue(kt - 1 + STAGES, ps);
            }
            __syncwarp();  // warp 0 reconverges before the next (warpgroup-collective) wgmma
        }
        if (++stage == STAGES) {
            stage = 0;
            phase ^= 1u;
        }
    }
    wgmma_wait<0>();
    fence_regs(acc);
    store_tile<T, BN>(acc, out, g, p0, m0, nchw_out != 0, tid);
#else
    (void)tmA, (void)tmB, (void)out, (void)g, (void)tiles_n, (void)cslices, (void)nchw_out;
#endif
}

// Tiles in bytes: hb = the k-slice in halves' worth of bytes (64: 128 B rows, 32: 64 B rows);
// a T-typed kernel uses BK = hb * 2 / sizeof(T) elements (tf32: 32 or 16 floats), so a stage
// has the same shared memory and the same MMA time (tf32 k8 runs at half fp16's k-rate) in
// every type, and the table serves all three.
struct CfgInfo {
    int bn, hb, stages, minb;
    const char* rest;
};
constexpr CfgInfo kCfgs[] = {
    {96, 64, 7, 1, "7 stages, 1 CTA/SM"},  {128, 64, 6, 1, "6 stages, 1 CTA/SM"},
    {128, 64, 3, 2, "3 stages, 2 CTAs/SM"}, {192, 64, 5, 1, "5 stages, 1 CTA/SM"},
    {256, 64, 4, 1, "4 stages, 1 CTA/SM"}, {96, 32, 8, 1, "8 stages, 1 CTA/SM"},
    {128, 32, 8, 1, "8 stages, 1 CTA/SM"}, {128, 32, 6, 2, "6 stages, 2 CTAs/SM"},
    {192, 32, 8, 1, "8 stages, 1 CTA/SM"}, {256, 32, 8, 1, "8 stages, 1 CTA/SM"},
};
constexpr int kNumCfgs = int(sizeof(kCfgs) / sizeof(kCfgs[0]));
int bk_of(int cfg, int es) { return kCfgs[cfg].hb * 2 / es; }
std::string cfg_name(int cfg, int es) {
    return "128x" + std::to_string(kCfgs[cfg].bn) + "x" + std::to_string(bk_of(cfg, es)) + ", " + kCfgs[cfg].rest;
}

template <int BN, int ROWB, int STAGES>
constexpr int smem_bytes() {
    return STAGES * (kBM + BN) * ROWB + 1024 + STAGES * 16;
}

template <class T, int BN, int BK, int STAGES, int MINB>
void prepare_cfg() {
    CS_CUDA_CHECK(cudaFuncSetAttribute(wgmma_tma_kernel<T, BN, BK, STAGES, MINB>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       smem_bytes<BN, BK * int(sizeof(T)), STAGES>()));
}

template <class T, int BN, int BK, int STAGES, int MINB>
void launch_cfg(const CUtensorMap& a, const CUtensorMap& b, T* out, const ConvGeom& g, bool nchw,
                cudaStream_t stream) {
    const int tiles_p = (g.P + kBM - 1) / kBM, tiles_n = (g.M + BN - 1) / BN;
    const std::int64_t grid = std::int64_t(tiles_p) * tiles_n;
    const int cslices = (g.C + BK - 1) / BK;
    constexpr int smem = smem_bytes<BN, BK * int(sizeof(T)), STAGES>();
    wgmma_tma_kernel<T, BN, BK, STAGES, MINB>
        <<<unsigned(grid), kThreads, smem, stream>>>(a, b, out, g, tiles_n, cslices, nchw ? 1 : 0);
    CS_CUDA_CHECK_LAUNCH();
}

#define CS_TMA_CFGS(X)     \
    X(0, 96, 64, 7, 1)     \
    X(1, 128, 64, 6, 1)    \
    X(2, 128, 64, 3, 2)    \
    X(3, 192, 64, 5, 1)    \
    X(4, 256, 64, 4, 1)    \
    X(5, 96, 32, 8, 1)     \
    X(6, 128, 32, 8, 1)    \
    X(7, 128, 32, 6, 2)    \
    X(8, 192, 32, 8, 1)    \
    X(9, 256, 32, 8, 1)

template <class T>
struct TmaGemm {
    int cfg = 0;
    std::string info;
    // Cached maps and what they were encoded for.
    CUtensorMap a{}, b{};
    const void* key_in = nullptr;
    const void* key_w = nullptr;
    int key_n = -1;

    static void prepare(int c) {
        switch (c) {
#define X(i, bn, hb, st, mb) \
    case i: prepare_cfg<T, bn, hb * 2 / int(sizeof(T)), st, mb>(); break;
            CS_TMA_CFGS(X)
#undef X
            default: break;
        }
    }
    void launch(const T* in, const T* w, T* out, const ConvGeom& g, bool nchw, cudaStream_t stream) {
        if (g.P == 0) return;
        if (in != key_in || w != key_w || g.N != key_n) {
            const std::string err = encode_maps<T>(a, b, g, in, w, bk_of(cfg, int(sizeof(T))), kCfgs[cfg].bn);
            if (!err.empty()) throw cs::Error("hopper-tma: " + err);
            key_in = in, key_w = w, key_n = g.N;
        }
        switch (cfg) {
#define X(i, bn, hb, st, mb) \
    case i: launch_cfg<T, bn, hb * 2 / int(sizeof(T)), st, mb>(a, b, out, g, nchw, stream); break;
            CS_TMA_CFGS(X)
#undef X
            default: break;
        }
    }
    std::string detail() const { return info; }
    std::size_t workspace_bytes() const { return 0; }
};

// Default tile (from the tile sweep on the H200, N=128, see the header): 128x96 for M <= 96;
// 128x256 where M is a multiple of 256 and the grid is >= 4 waves (conv2); else 128x128 with
// 2 CTAs/SM (conv3-5: one CTA's fill and epilogue overlap the other's mainloop). In bytes,
// so tf32 takes the same tiles (k64: 128 B rows).
int default_cfg(const Setup& u, std::int64_t n, int sms, int es) {
    const bool k64 = choose_bk(u.g.C, es) * es == 128;
    const std::int64_t rows = (n * u.g.EF + kBM - 1) / kBM;
    if (u.g.M <= 96) return k64 ? 0 : 5;
    if (u.g.M % 256 == 0 && rows * (u.g.M / 256) >= 4 * std::int64_t(sms)) return k64 ? 4 : 9;
    return k64 ? 2 : 7;
}

template <class T>
std::unique_ptr<Plan> plan_t(const Problem& p, const PlanContext& ctx, int cfg) {
    if (auto why = tma_supports(p, ctx.prop)) throw Skip(*why);
    Setup u = make_setup(p);
    if (cfg < 0 || cfg >= kNumCfgs)
        cfg = default_cfg(u, std::max<std::int64_t>(1, ctx.max_chunk_N), ctx.prop.multiProcessorCount,
                          int(sizeof(T)));
    TmaGemm<T>::prepare(cfg);
    TmaGemm<T> gemm;
    gemm.cfg = cfg;
    // Check the maps at plan time (the addresses are placeholders: encoding reads no memory).
    {
        const std::int64_t maxn = std::max<std::int64_t>(1, ctx.max_chunk_N);
        ConvGeom g = geom_for(u, maxn);
        CUtensorMap a, b;
        const int bk = bk_of(cfg, int(sizeof(T)));
        const std::string err = encode_maps<T>(a, b, g, reinterpret_cast<const void*>(std::uintptr_t(1) << 20),
                                               reinterpret_cast<const void*>(std::uintptr_t(1) << 21), bk,
                                               kCfgs[cfg].bn);
        if (!err.empty()) throw Skip(err);
        const std::int64_t tiles = (maxn * u.g.EF + kBM - 1) / kBM * ((u.g.M + kCfgs[cfg].bn - 1) / kCfgs[cfg].bn);
        const int cs = (u.g.C + bk - 1) / bk;
        gemm.info = std::string("wgmma m64n") + std::to_string(kCfgs[cfg].bn) + "k" +
                    std::to_string(WgmmaSS<T, 96>::kK) + " " + Elem<T>::name + " fed by TMA (im2col + tiled maps, " +
                    (kCfgs[cfg].hb == 64 ? "128B" : "64B") + " swizzle) on mbarriers, CTA tile " +
                    cfg_name(cfg, int(sizeof(T))) + ", " + std::to_string(tiles) + " CTAs for " +
                    std::to_string(maxn) + " image(s); " + std::to_string(u.g.R * u.g.S) + " taps x " +
                    std::to_string(cs) + " channel slice(s) of " + std::to_string(bk) + " (C=" +
                    std::to_string(u.g.C) + ")";
    }
    return make_hopper_plan<T>(p, ctx, std::move(u), std::move(gemm));
}

}  // namespace

int tma_num_configs() { return kNumCfgs; }
std::string tma_config_name(int cfg, DType dt) {
    return cfg >= 0 && cfg < kNumCfgs ? cfg_name(cfg, dt == DType::f32 ? 4 : 2) : std::string("default");
}

std::optional<std::string> tma_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (auto why = supports_common(p, prop)) return why;
    return tma_geometry_reason(make_setup(p).g);
}

std::unique_ptr<Plan> tma_plan(DType dt, const Problem& p, const PlanContext& ctx, int cfg) {
    if (dt == DType::f32) return plan_t<float>(p, ctx, cfg);
    if (dt == DType::bf16) return plan_t<__nv_bfloat16>(p, ctx, cfg);
    return plan_t<__half>(p, ctx, cfg);
}

}  // namespace hopper

std::optional<std::string> hopper_tma_fp16_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::tma_supports(p, prop);
}
std::unique_ptr<Plan> hopper_tma_fp16_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::tma_plan(DType::f16, p, ctx, -1);
}
std::optional<std::string> hopper_tma_bf16_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::tma_supports(p, prop);
}
std::unique_ptr<Plan> hopper_tma_bf16_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::tma_plan(DType::bf16, p, ctx, -1);
}
std::optional<std::string> hopper_tma_tf32_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::tma_supports(p, prop);
}
std::unique_ptr<Plan> hopper_tma_tf32_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::tma_plan(DType::f32, p, ctx, -1);
}

}  // namespace cs::gpu::variants
