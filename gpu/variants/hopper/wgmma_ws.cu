// hopper-ws-fp16 / hopper-ws-bf16 / hopper-ws-tf32 / hopper-ws-3xtf32 — Hopper rung 3: rung 2 (wgmma fed by TMA
// through an mbarrier pipeline) + warp specialisation, register reallocation and a persistent
// grid. (tf32: see the section at the end of this comment.)
//
// Idea: rung 2's thread 0 is both a consumer and the producer — each refill waits inside a
// consumer warp, stalling its warpgroup's next wgmma — and every CTA pays its pipeline fill
// and its epilogue with the tensor cores idle (the tile sweep showed it: 2 CTAs/SM beat
// 1 CTA/SM with twice the stages on conv3-5, where one CTA's fill and epilogue overlap the
// other's mainloop). Here a CTA has 3 warpgroups:
//   warpgroup 0, the producer: setmaxnreg.dec to 40 registers; one thread walks the CTA's tiles
//     and k-slices and, for each, waits for the stage to be released (empty[s]), then issues
//     the im2col and tiled TMA loads completing on full[s] (transaction bytes);
//   warpgroups 1-2, the consumers: setmaxnreg.inc to 232; each owns 64 rows of the 128 x BN
//     tile: wait full[s], BK/16 wgmma, commit, wait_group(1), release slice kt-1 (one arrival
//     per warpgroup on empty[s]); after the last slice wait_group(0), release it, epilogue.
// Persistent grid: min(tiles, SMs) CTAs, CTA i takes tiles i, i + grid, ... The producer runs
// ahead across tile boundaries (a global slice counter drives the stage and phase), so the
// next tile's first STAGES slices are loaded while the consumers run the epilogue: the fill
// latency is paid once per CTA instead of once per tile.
// Everything else (im2col / tiled maps, BK, transforms, epilogue) is rung 2's.
//
// Prediction: the tile sweep's 2-CTA gain (conv3 0.0825 -> 0.0723 ms, conv4 0.114 -> 0.100)
// without halving the stages, plus no producer stall in a consumer warp: 75-85% of the cuBLAS
// GEMM ceiling at N=128 — conv2 ~0.21 ms, conv3 ~0.07, conv4 ~0.095, conv5 ~0.075, conv1's
// GEMM (space-to-depth, 7 k-slices per tile, 3025 tiles) ~0.08. The epilogue itself is not
// overlapped with MMA (both consumer warpgroups store at once): that needs ping-pong consumers
// or an smem-staged TMA store — the next step.
//
// Default tile (from the sweep): 128x96x64 7 stages for M <= 96; 128x256 for M % 256 == 0 with
// >= 4 waves of tiles (conv2: with 32-wide slices and 8 stages where C % 64 != 0 — C=96 in 3
// exact slices per tap: 0.218 ms against 0.250 for 64-wide slices padded to 128, 4 stages);
// else 128x128x64, 6 stages (conv3-5: 3.8 / 2.6 waves of 128x128 tiles against 2.6 / 1.3 of
// 128x192 / 128x256).
//
// Measured (H200, N=128, L2 flushed, median of 20, default tile; cuBLAS fp16 GEMM of the im2col
// shape and cuDNN fp16 NHWC from DESIGN.md's PyTorch sweep for reference):
//            fp16 NHWC         fp16 NCHW   bf16 NHWC   cuBLAS   cuDNN   vs rung 2 (fp16 NHWC)
//   conv1    0.311 ms   87     0.297       0.311       0.348    0.698   +3%
//   conv2    0.215     533     0.267       0.214       0.172    0.175   -15%
//   conv3    0.066     578     0.109       0.065       0.058    0.062   -8%
//   conv4    0.092     622     0.154       0.091       0.085    0.083   -8%
//   conv5    0.070     545     0.127       0.069       0.066    0.062   -22%
// 80% (conv2), 88% (conv3), 92% (conv4), 95% (conv5) of the cuBLAS GEMM of the same shape;
// 1.07-1.23x cuDNN's fp16 NHWC times — the goals (<= 1.0x) are missed by 7% (conv3), 11%
// (conv4), 13% (conv5) and 23% (conv2). Where the time goes: the epilogue is not overlapped
// with MMA (both consumer warpgroups store at once, from registers, 16-byte pieces of 32-byte
// sectors), and conv2's 729 tiles are 5.5 waves on 132 SMs (the last half-empty). Next:
// ping-pong consumers (one warpgroup's epilogue under the other's mainloop) or an smem-staged
// TMA store, a 2-CTA cluster multicasting the B tile, and stream-K for the wave tail.
// conv1's GEMM gains nothing (0.191 ms alone; see rung 2: it is L2-bound on re-reading the
// 110 KB filter block per tile and the 9 tap re-reads of A): it needs the filters resident in
// shared memory for the persistent CTA and the space-to-depth fused into the loads.
// NCHW rows pay the transform kernels (hopper_core.cuh) and the scalar NCHW epilogue:
// +0.04-0.06 ms on conv2-5.
// Correct on the 5 layers at N=1, 5, 128 and the 12 odd shapes, both layouts, fp16 and bf16,
// every tile config; memcheck / synccheck clean, racecheck no hazard on the odd shapes.
//
// ptxas (sm_90a, -O3, no spills): 168 registers at launch for every tile (384 threads, 1
// CTA/SM; setmaxnreg moves them to 40 / 232 at run time). SASS: UTMALDG x2 (the producer's
// im2col + tiled loads), HGMMA.64xBNx16.F32 x BK/16 per k-slice, no LDL/STL.
//
// ---- hopper-ws-tf32 --------------------------------------------------------------------
// The same kernel on fp32 tensors, wgmma m64nNk8.tf32 (rungs 1 and 2 say what carries over in
// bytes and why operands read in place are truncated, transformed ones rounded). Default tile
// by the same rule in bytes: conv1 128x96x32f 7 stages; conv2 128x256x32f 4 stages (C=96
// floats = 3 exact 128 B slices per tap: fp16 needed 64 B slices for that); conv3-5
// 128x128x32f 6 stages.
// Prediction (N=128, tf32 ceiling ~416 TFLOP/s): GFLOP 27.0 / 114.7 / 38.3 / 57.4 / 38.3;
// conv2-5 compute-bound (conv2 134 MB, conv3-5 55-72 MB of DRAM traffic: 0.01-0.03 ms). The
// fixed per-tile costs (fill, epilogue) weigh half as much against a mainloop twice as long
// (the epilogue's bytes double too), so a little above fp16 rung 3's 70-81% of its ceiling:
// ~77-84% -> conv2 ~0.36 ms, conv3 ~0.115, conv4 ~0.165, conv5 ~0.118; conv1 (transform 79 MB
// in + 80 MB out, GEMM 80 MB + 149 MB out, L2 re-reads of the filter block) ~0.40-0.50.
// Against the goal (cuDNN tf32 NHWC 0.660 / 0.279 / 0.112 / 0.161 / 0.113, all five
// <= 1.0 ms): conv1 met, conv2 missed (~1.3x: 0.279 ms is 411 TFLOP/s, 99% of the ceiling,
// out of reach with a non-overlapped epilogue and a 5.5-wave tile count), conv3-5 within a
// few % either side of 1.0x, total ~1.15 ms (missed). cuBLAS's tf32 GEMM of the same shapes
// (0.386 / 0.469 / 0.192 / 0.280 / 0.170) runs at only 200-245 TFLOP/s: we expect 1.6-1.7x it.
// ptxas: 168 registers at launch for every tf32 tile (as fp16), no spills.
// Measured (H200, N=128, tools/dev/hopper/h200/tf32_time.log, L2 flushed, median of 20):
// conv1 0.341 / conv2 0.308 / conv3 0.110 / conv4 0.154 / conv5 0.119 ms NHWC (total 1.03);
// 0.52 / 1.10 / 0.98 / 0.96 / 1.05x cuDNN tf32 NHWC (PyTorch), 0.83-0.97x cuBLAS's tf32 GEMM.
//
// ---- hopper-ws-3xtf32 (fp32 class) -------------------------------------------------------
// 3xTF32 with no new kernel: the transforms (hopper_core.cuh, Split3) write each fp32 operand
// as three blocks of channels, hi = rna_tf32(x) and lo = rna_tf32(x - hi) (x - hi - lo
// <= 2^-22 |x|): the input as [hi, hi, lo], the weights as [hi, lo, hi]. This kernel, run on
// C' = 3C channels, sums hi*hi + hi*lo + lo*hi in fp32: the split-TF32 products (lo*lo,
// 2^-22 relative, is dropped). Cost: 3x the MMA work and the transforms on every layout
// (the input read once, written three times).
// Prediction (N=128): 3x the tf32 GEMM plus a transform of 22-36 MB in / 66-108 MB out
// (~0.03-0.05 ms): conv1 ~0.75, conv2 ~0.97, conv3 ~0.36, conv4 ~0.51, conv5 ~0.41 ms, total
// ~3.0 against cuDNN fp32 (NCHW, PyTorch) 1.032 / 0.464 / 0.494 / 0.674 / 0.482 (3.15): under
// cuDNN on conv1 and conv3-5, 2.1x over it on conv2 (FFT), the 2.5 ms total missed. Error:
// ~1e-6 of max|out| (two roundings of 2^-22 and fp32 accumulation), well inside 1e-4.
// Measured (H200, sweep at 968c39f, N=128, 10 repeats, NHWC): 0.571 / 0.887 / 0.325 / 0.470 /
// 0.366 ms = 2.62 (cuDNN fp32 best 2.92): 0.55 / 2.04 / 0.78 / 0.79 / 0.83x cuDNN; conv2-5 run
// at 2.86-2.93x the tf32 kernel's time (the GEMM at the tf32 ceiling, the transforms ~3%).
// max_rel_err 4e-6 (conv1) to 3e-5 (conv4): 20x more than the prediction — the tensor core's
// fp32 accumulation of the aligned products is not an IEEE fp32 sum (the mma.sync split-tf32
// shows the same 2-3e-5) — and still 3x inside the fp32 threshold.
//
// ---- hopper-ws-3xfp16 (fp32 class) -------------------------------------------------------
// The same split into half operands (hopper_core.cuh, Split3Half): fp16 has tf32's 11
// significand bits and twice its tensor-core rate, so the three products cost 1.5x one tf32
// GEMM instead of 3x. fp16's 5-bit exponent is handled by scaling: the low parts are stored
// x 2^11 (out of the subnormals), the weights' first block too, and the epilogue multiplies
// by 2^-11 (exact). Prediction: fp16 rung 3 x 3 plus the transforms: conv2 ~0.67, conv3 ~0.22,
// conv4 ~0.31, conv5 ~0.24, conv1 ~0.6 (L2-bound like every conv1 here).
// Measured (sweep at 587b15d, N=128, NHWC): 0.446 / 0.593 / 0.199 / 0.288 / 0.226 = 1.75 ms
// (goal 2.5; cuDNN fp32 2.92): 0.43 / 1.37 / 0.48 / 0.48 / 0.51x cuDNN; max_rel_err 2.4e-6 to
// 1.5e-5, half of 3xTF32's (the tf32 lo parts are truncated by the tensor core, the fp16
// ones are rounded by the transform). N=32: 0.54 ms total (cuDNN 0.90), conv2 1.11x; N=1 (with
// split-K, 44d9743): 0.163 ms against 0.349 (0.47x).
//
// ---- split-K (rungs 3 and 4) -------------------------------------------------------------
// At N=1 conv3-5 have 6-9 output tiles for 132 SMs: choose_ksplit splits each tile's k-slices
// into d equal parts (the largest divisor of the slice count with tiles x d <= SMs and >= 4
// slices a part); each work unit writes an fp32 partial tile, splitk_reduce_kernel sums the
// parts in order (deterministic), scales, converts and lays out. Measured (sweep at 44d9743,
// N=1, fp16 NHWC): all five 0.107 -> 0.071 ms (cuDNN 0.076: 1.40x -> 0.93x); tf32 0.152 ->
// 0.080 (cuDNN 0.089: 1.71x -> 0.90x).
#include "hopper_api.hpp"
#include "hopper_core.cuh"
#include "hopper_tma.cuh"
#include "variants.hpp"
#include "wgmma_pingpong.cuh"

#include <type_traits>

namespace cs::gpu::variants {
namespace hopper {
namespace {

constexpr int kWsThreads = 384;  // producer warpgroup + 2 consumer warpgroups

// T: operand type; TO: output type (T, or float for 3xFP16); kDown: the epilogue's 2^-kDown;
// kPP: ping-pong consumers (rung 4, wgmma_pingpong.cuh) instead of cooperative ones.
template <class T, int BN, int BK, int STAGES, class TO = T, int kDown = 0, bool kPP = false>
__global__ void __launch_bounds__(kWsThreads, 1)
    wgmma_ws_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                    TO* __restrict__ out, const ConvGeom g, int tiles_n, int nunits, int cslices, int nchw_out,
                    int ksplit, float* __restrict__ partial) {
#ifdef CS_HOPPER_DEVICE
    using Sw = SwizzleOf<BK, int(sizeof(T))>;  // BK elements = 128 B or 64 B per row
    constexpr int ROWB = BK * int(sizeof(T)), A_BYTES = kBM * ROWB, B_BYTES = BN * ROWB, ST_BYTES = A_BYTES + B_BYTES;
    static_assert(ST_BYTES % 1024 == 0, "stage buffers keep the 1024-byte swizzle alignment");
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t sbase = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const std::uint32_t full0 = sbase + STAGES * ST_BYTES;
    const std::uint32_t empty0 = full0 + STAGES * 8;
    const std::uint32_t order0 = empty0 + STAGES * 8;  // rung 4: one per consumer warpgroup

    const int tid = int(threadIdx.x);
    const int wg = tid >> 7;
    // Work units: output tile (unit / ksplit) x K part (unit % ksplit), each part KT of the
    // R*S*cslices k-slices (ksplit divides them; 1 unless split-K).
    const int KT = g.R * g.S * cslices / ksplit;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);
            mbar_init(empty0 + 8 * s, kPP ? 1 : 2);
        }
        mbar_init(order0, 1);
        mbar_init(order0 + 8, 1);
        mbar_fence_init();
    }
    __syncthreads();

    if (wg == 0) {
        // ---- producer ----
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int stage = 0;
            std::uint32_t phase = 0;  // parity of the stage's current round
            int round0 = 1;           // first round: the stages are free
            for (int unit = int(blockIdx.x); unit < nunits; unit += int(gridDim.x)) {
                const int tile = unit / ksplit, part = unit - tile * ksplit;
                const int pt = tile / tiles_n, nt = tile - pt * tiles_n;
                const int p0 = pt * kBM, m0 = nt * BN;
                const int n0 = p0 / g.EF, rem = p0 - n0 * g.EF;
                const int e0 = rem / g.F, f0 = rem - e0 * g.F;
                const int w0 = f0 * g.stride - g.pad, h0 = e0 * g.stride - g.pad;
                const int kt0 = part * KT;
                int tap = kt0 / cslices, cs = kt0 - tap * cslices, r = tap / g.S, s = tap - r * g.S;
                for (int kt = 0; kt < KT; ++kt) {
                    // round k of a stage waits for the consumers' release of round k-1,
                    // which completed phase k-1 of empty[stage]: parity (k-1) & 1.
                    if (!round0) mbar_wait(empty0 + 8 * stage, phase ^ 1u);
                    const std::uint32_t bar = full0 + 8 * stage;
                    const std::uint32_t sA = sbase + std::uint32_t(stage) * ST_BYTES;
                    mbar_arrive_expect_tx(bar, ST_BYTES);
                    tma_load_im2col_4d(sA, &tmA, bar, cs * BK, w0, h0, n0, s, r);
                    tma_load_3d(sA + A_BYTES, &tmB, bar, cs * BK, tap, m0);
                    if (++cs == cslices) {
                        cs = 0;
                        ++tap;
                        if (++s == g.S) s = 0, ++r;
                    }
                    if (++stage == STAGES) {
                        stage = 0;
                        phase ^= 1u;
                        round0 = 0;
                    }
                }
            }
        }
    } else {
        // ---- consumers ----
        setmaxnreg_inc<232>();
        const int ct = tid - 128;  // 0..255
        if constexpr (kPP) {
            if constexpr (BN <= 128)
                pingpong_consume<T, BN, BK, STAGES, TO, kDown>(out, g, tiles_n, nunits, KT, sbase, full0, empty0,
                                                               order0, ct, nchw_out != 0, ksplit, partial);
            return;
        }
        const int cw = ct >> 7;    // consumer warpgroup: rows 64*cw ..
        int stage = 0;
        std::uint32_t phase = 0;
        for (int unit = int(blockIdx.x); unit < nunits; unit += int(gridDim.x)) {
            const int tile = unit / ksplit, part = unit - tile * ksplit;
            const int pt = tile / tiles_n, nt = tile - pt * tiles_n;
            const int p0 = pt * kBM, m0 = nt * BN;
            float acc[BN / 2];
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
            int prev = -1;
            for (int kt = 0; kt < KT; ++kt) {
                mbar_wait(full0 + 8 * stage, phase);
                const std::uint32_t sA = sbase + std::uint32_t(stage) * ST_BYTES + std::uint32_t(cw) * 64u * ROWB;
                const std::uint32_t sB = sbase + std::uint32_t(stage) * ST_BYTES + A_BYTES;
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < ROWB / 32; ++kk)  // one wgmma per 32 bytes of K
                    WgmmaSS<T, BN>::mma(acc, smem_desc(sA + kk * 32, Sw::kSbo, Sw::kLayout),
                                        smem_desc(sB + kk * 32, Sw::kSbo, Sw::kLayout));
                wgmma_commit();
                wgmma_wait<1>();
                if (prev >= 0 && (ct & 127) == 0) mbar_arrive(empty0 + 8 * prev);
                prev = stage;
                if (++stage == STAGES) {
                    stage = 0;
                    phase ^= 1u;
                }
            }
            wgmma_wait<0>();
            fence_regs(acc);
            if ((ct & 127) == 0) mbar_arrive(empty0 + 8 * prev);
            if (ksplit > 1)
                store_tile<float, BN>(acc, partial + std::int64_t(part) * g.P * g.M, g, p0, m0, false, ct);
            else
                store_tile<TO, BN, kDown>(acc, out, g, p0, m0, nchw_out != 0, ct);
        }
    }
#else
    (void)tmA, (void)tmB, (void)out, (void)g, (void)tiles_n, (void)nunits, (void)cslices, (void)nchw_out,
        (void)ksplit, (void)partial;
#endif
}

// Tiles in bytes, as rung 2's: hb = the k-slice in halves' worth of bytes (64: 128 B rows,
// 32: 64 B rows); a T-typed kernel uses BK = hb * 2 / sizeof(T) elements (tf32: 32 or 16).
struct CfgInfo {
    int bn, hb, stages;
};
#define CS_WS_CFGS(X)  \
    X(0, 96, 64, 7)    \
    X(1, 128, 64, 6)   \
    X(2, 192, 64, 5)   \
    X(3, 256, 64, 4)   \
    X(4, 128, 32, 8)   \
    X(5, 96, 32, 8)    \
    X(6, 256, 32, 8)
constexpr CfgInfo kCfgs[] = {
    {96, 64, 7}, {128, 64, 6}, {192, 64, 5}, {256, 64, 4}, {128, 32, 8}, {96, 32, 8}, {256, 32, 8},
};
constexpr int kNumCfgs = int(sizeof(kCfgs) / sizeof(kCfgs[0]));
int bk_of(int cfg, int es) { return kCfgs[cfg].hb * 2 / es; }
std::string cfg_name(int cfg, int es) {
    return "128x" + std::to_string(kCfgs[cfg].bn) + "x" + std::to_string(bk_of(cfg, es)) + ", " +
           std::to_string(kCfgs[cfg].stages) + " stages, persistent";
}

template <int BN, int ROWB, int STAGES>
constexpr int smem_bytes() {
    return STAGES * (kBM + BN) * ROWB + 1024 + STAGES * 16 + 16;
}

template <class T, int BN, int BK, int STAGES, class TO, int kDown, bool kPP>
void prepare_cfg() {
    CS_CUDA_CHECK(cudaFuncSetAttribute(wgmma_ws_kernel<T, BN, BK, STAGES, TO, kDown, kPP>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       smem_bytes<BN, BK * int(sizeof(T)), STAGES>()));
}

template <class T, int BN, int BK, int STAGES, class TO, int kDown, bool kPP>
void launch_cfg(const CUtensorMap& a, const CUtensorMap& b, TO* out, const ConvGeom& g, bool nchw, int sms,
                int ksplit, float* partial, cudaStream_t stream) {
    const int tiles_p = (g.P + kBM - 1) / kBM, tiles_n = (g.M + BN - 1) / BN;
    const std::int64_t ntiles = std::int64_t(tiles_p) * tiles_n;
    const std::int64_t nunits = ntiles * ksplit;
    const int grid = int(std::min<std::int64_t>(nunits, sms));
    const int cslices = (g.C + BK - 1) / BK;
    constexpr int smem = smem_bytes<BN, BK * int(sizeof(T)), STAGES>();
    wgmma_ws_kernel<T, BN, BK, STAGES, TO, kDown, kPP>
        <<<unsigned(grid), kWsThreads, smem, stream>>>(a, b, out, g, tiles_n, int(nunits), cslices, nchw ? 1 : 0, ksplit, partial);
    CS_CUDA_CHECK_LAUNCH();
    if (ksplit > 1) {
        const std::int64_t total = std::int64_t(g.P) * g.M;
        splitk_reduce_kernel<TO, kDown>
            <<<unsigned((total + 255) / 256), 256, 0, stream>>>(partial, out, g, ksplit, nchw ? 1 : 0);
        CS_CUDA_CHECK_LAUNCH();
    }
}

template <class T, class TO = T, int kDown = 0, bool kPP = false>
struct WsGemm {
    int cfg = 0;
    int sms = 132;
    int ksplit = 1;   // K parts per tile (split-K), dividing the k-slices
    Buffer partial;   // ksplit x P x M fp32 partial tiles (ksplit > 1)
    std::string info;
    CUtensorMap a{}, b{};
    const void* key_in = nullptr;
    const void* key_w = nullptr;
    int key_n = -1;

    static void prepare(int c) {
        switch (c) {
#define X(i, bn, hb, st) \
    case i: prepare_cfg<T, bn, hb * 2 / int(sizeof(T)), st, TO, kDown, kPP && bn <= 128>(); break;
            CS_WS_CFGS(X)
#undef X
            default: break;
        }
    }
    void launch(const T* in, const T* w, TO* out, const ConvGeom& g, bool nchw, cudaStream_t stream) {
        if (g.P == 0) return;
        if (in != key_in || w != key_w || g.N != key_n) {
            const std::string err = encode_maps<T>(a, b, g, in, w, bk_of(cfg, int(sizeof(T))), kCfgs[cfg].bn);
            if (!err.empty()) throw cs::Error("hopper-ws: " + err);
            key_in = in, key_w = w, key_n = g.N;
        }
        switch (cfg) {
#define X(i, bn, hb, st) \
    case i:                                                                                                    \
        launch_cfg<T, bn, hb * 2 / int(sizeof(T)), st, TO, kDown, kPP && bn <= 128>(a, b, out, g, nchw, sms, \
                                                                                     ksplit,                  \
                                                                                     partial.as<float>(),     \
                                                                                     stream);                 \
        break;
            CS_WS_CFGS(X)
#undef X
            default: break;
        }
    }
    std::string detail() const { return info; }
    std::size_t workspace_bytes() const { return partial.bytes(); }
};

// Split-K where the output tiles leave most SMs idle (N=1: conv3-5 have 6-9 tiles for 132
// SMs): the largest divisor d of the k-slice count with tiles * d <= SMs and at least
// kMinSlices slices per part (the pipeline's fill and the partials' round trip must stay
// small against the part's MMAs); 1 when tiles fill half the SMs or more.
constexpr int kMinSlices = 4;
int choose_ksplit(std::int64_t tiles, int kslices, int sms) {
    if (2 * tiles > sms) return 1;
    int best = 1;
    for (int d = 2; d <= kslices / kMinSlices; ++d)
        if (kslices % d == 0 && tiles * d <= sms) best = d;
    return best;
}

// Default tile (from the tile sweep on the H200, N=128, see the header): 128x96 for M <= 96;
// 128x256 where M is a multiple of 256 and the grid has >= 4 waves of tiles (conv2), with
// k-slices of 32 where C is a multiple of 32 but not of 64 (conv2: C=96 in 3 exact slices per
// tap and 8 stages: 0.218 ms against 0.250 for 64-slices padded to 128 and 4 stages); else
// 128x128x64, 6 stages (conv3-5: 3.8 and 2.6 waves of 128x128 tiles against 2.6 and 1.3 of
// 128x192 / 128x256). All in bytes (k64: 128 B rows), so for tf32 conv2's C=96 floats is 3
// exact 128 B slices per tap and takes 128x256x32f, 4 stages.
// Rung 4 (pp: ping-pong, BN <= 128): 128x96 for M <= 96, else 128x128 with 64 B k-slices where
// C divides into them and not into 128 B ones. Rung 3's 128x128 tile takes 64 B slices only
// where 128 B ones would pad more than 1/8 (measured, N=32 conv2: fp16 C=96 0.0777 -> 0.0718
// ms with 64 B slices, 3xFP16 C'=288 0.179 -> 0.204: its 11% padding costs less than 9
// barriers instead of 5 per tap).
int default_cfg(const Setup& u, std::int64_t n, int sms, int es, bool pp) {
    const bool k64 = choose_bk(u.g.C, es) * es == 128;
    const int e128 = 128 / es, e64 = 64 / es;  // elements of a 128 B / 64 B row
    const bool exact64 = u.g.C % e128 != 0 && u.g.C % e64 == 0;
    // 128 B slices would put more than 1/8 of the MMAs on zero channels (fp16 conv2: C=96 ->
    // 128, 33%; 3xFP16 conv2: C'=288 -> 320, 11%, keeps them: fewer barriers win there).
    const bool pad_heavy = exact64 && ((u.g.C + e128 - 1) / e128 * e128 - u.g.C) * 8 > u.g.C;
    const std::int64_t rows = (n * u.g.EF + kBM - 1) / kBM;
    if (u.g.M <= 96) return k64 ? 0 : 5;
    if (pp) return (k64 && !exact64) ? 1 : 4;
    if (u.g.M % 256 == 0 && rows * (u.g.M / 256) >= 4 * std::int64_t(sms)) return (k64 && !exact64) ? 3 : 6;
    return (k64 && !pad_heavy) ? 1 : 4;
}

// Split: none; x3tf32 (T = float): the transforms write [hi, hi, lo] / [hi, lo, hi] channel
// blocks; x3fp16 (T = __half operands of a float problem): the same in half, low parts and the
// weights' first block scaled by 2^kLoLog2, the epilogue scales back.
enum class Split { none, x3tf32, x3fp16 };
// kPP: rung 4's ping-pong consumers (tiles of BN <= 128 only).
template <class T, Split kSplit = Split::none, bool kPP = false>
std::unique_ptr<Plan> plan_t(const Problem& p, const PlanContext& ctx, int cfg) {
    static_assert(kSplit != Split::x3tf32 || std::is_same_v<T, float>, "3xTF32 splits fp32 operands");
    static_assert(kSplit != Split::x3fp16 || std::is_same_v<T, __half>, "3xFP16 splits into half operands");
    constexpr int parts = kSplit == Split::none ? 1 : 3;
    using TO = std::conditional_t<kSplit == Split::x3fp16, float, T>;
    constexpr int kDown = kSplit == Split::x3fp16 ? kLoLog2 : 0;
    using Gemm = WsGemm<T, TO, kDown, kPP>;
    if (auto why = ws_supports(p, ctx.prop, parts)) throw Skip(*why);
    Setup u = make_setup(p, parts);
    const std::int64_t maxn = std::max<std::int64_t>(1, ctx.max_chunk_N);
    if (cfg < 0 || cfg >= kNumCfgs)
        cfg = default_cfg(u, maxn, ctx.prop.multiProcessorCount, int(sizeof(T)), kPP);
    if (kPP && kCfgs[cfg].bn > 128)
        throw Skip("ping-pong consumers hold a whole 128 x BN tile each: BN <= 128 (tile " +
                   cfg_name(cfg, int(sizeof(T))) + ")");
    Gemm::prepare(cfg);
    Gemm gemm;
    gemm.cfg = cfg;
    gemm.sms = ctx.prop.multiProcessorCount;
    {
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
                    std::to_string(WgmmaSS<T, 96>::kK) + " " + Elem<T>::name +
                    ", TMA producer warpgroup (setmaxnreg 40) + 2 " +
                    (kPP ? "ping-pong consumer warpgroups (232; each a whole tile, alternating)"
                         : "consumer warpgroups (232)") +
                    ", CTA tile " +
                    cfg_name(cfg, int(sizeof(T))) + ": " + std::to_string(tiles) + " tiles";
        const int ksplit = choose_ksplit(tiles, u.g.R * u.g.S * cs, ctx.prop.multiProcessorCount);
        if (ksplit > 1) {
            gemm.ksplit = ksplit;
            gemm.partial = Buffer(MemKind::device, std::size_t(ksplit) * std::size_t(maxn * u.g.EF) * u.g.M * 4);
            gemm.info += " x split-K " + std::to_string(ksplit) + " (" + std::to_string(u.g.R * u.g.S * cs / ksplit) +
                         " k-slices each, fp32 partials reduced in order by a second kernel)";
        }
        gemm.info += " on " + std::to_string(std::min<std::int64_t>(tiles * ksplit, ctx.prop.multiProcessorCount)) +
                     " CTAs for " + std::to_string(maxn) + " image(s); " + std::to_string(u.g.R * u.g.S) +
                     " taps x " + std::to_string(cs) + " channel slice(s) of " + std::to_string(bk) + " (C=" +
                     std::to_string(u.g.C) + ")";
    }
    if constexpr (kSplit == Split::x3tf32)
        return make_hopper_plan<T, Gemm, Split3<true>, Split3<false>>(p, ctx, std::move(u), std::move(gemm));
    else if constexpr (kSplit == Split::x3fp16)
        return make_hopper_plan<T, Gemm, Split3Half<true>, Split3Half<false>, float>(p, ctx, std::move(u),
                                                                                     std::move(gemm));
    else
        return make_hopper_plan<T>(p, ctx, std::move(u), std::move(gemm));
}

}  // namespace

int ws_num_configs() { return kNumCfgs; }
std::string ws_config_name(int cfg, DType dt) {
    return cfg >= 0 && cfg < kNumCfgs ? cfg_name(cfg, dt == DType::f32 ? 4 : 2) : std::string("default");
}

std::optional<std::string> ws_supports(const Problem& p, const cudaDeviceProp& prop, int parts) {
    if (auto why = supports_common(p, prop)) return why;
    return tma_geometry_reason(make_setup(p, parts).g);
}

std::unique_ptr<Plan> ws_3xtf32_plan(const Problem& p, const PlanContext& ctx, int cfg) {
    return plan_t<float, Split::x3tf32>(p, ctx, cfg);
}
std::unique_ptr<Plan> ws_3xfp16_plan(const Problem& p, const PlanContext& ctx, int cfg) {
    return plan_t<__half, Split::x3fp16>(p, ctx, cfg);
}

std::unique_ptr<Plan> ws_plan(DType dt, const Problem& p, const PlanContext& ctx, int cfg) {
    if (dt == DType::f32) return plan_t<float>(p, ctx, cfg);
    if (dt == DType::bf16) return plan_t<__nv_bfloat16>(p, ctx, cfg);
    return plan_t<__half>(p, ctx, cfg);
}

std::unique_ptr<Plan> pp_plan(DType dt, const Problem& p, const PlanContext& ctx, int cfg) {
    if (dt == DType::f32) return plan_t<float, Split::none, true>(p, ctx, cfg);
    if (dt == DType::bf16) return plan_t<__nv_bfloat16, Split::none, true>(p, ctx, cfg);
    return plan_t<__half, Split::none, true>(p, ctx, cfg);
}

}  // namespace hopper

std::optional<std::string> hopper_ws_fp16_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::ws_supports(p, prop);
}
std::unique_ptr<Plan> hopper_ws_fp16_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::ws_plan(DType::f16, p, ctx, -1);
}
std::optional<std::string> hopper_ws_bf16_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::ws_supports(p, prop);
}
std::unique_ptr<Plan> hopper_ws_bf16_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::ws_plan(DType::bf16, p, ctx, -1);
}
std::optional<std::string> hopper_ws_tf32_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::ws_supports(p, prop);
}
std::unique_ptr<Plan> hopper_ws_tf32_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::ws_plan(DType::f32, p, ctx, -1);
}
std::optional<std::string> hopper_ws_3xtf32_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::ws_supports(p, prop, 3);
}
std::unique_ptr<Plan> hopper_ws_3xtf32_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::ws_3xtf32_plan(p, ctx, -1);
}
std::optional<std::string> hopper_ws_3xfp16_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::ws_supports(p, prop, 3);
}
std::unique_ptr<Plan> hopper_ws_3xfp16_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::ws_3xfp16_plan(p, ctx, -1);
}
std::optional<std::string> hopper_pp_fp16_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::ws_supports(p, prop);
}
std::unique_ptr<Plan> hopper_pp_fp16_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::pp_plan(DType::f16, p, ctx, -1);
}
std::optional<std::string> hopper_pp_bf16_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::ws_supports(p, prop);
}
std::unique_ptr<Plan> hopper_pp_bf16_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::pp_plan(DType::bf16, p, ctx, -1);
}
std::optional<std::string> hopper_pp_tf32_supports(const Problem& p, const cudaDeviceProp& prop) {
    return hopper::ws_supports(p, prop);
}
std::unique_ptr<Plan> hopper_pp_tf32_plan(const Problem& p, const PlanContext& ctx) {
    return hopper::pp_plan(DType::f32, p, ctx, -1);
}

}  // namespace cs::gpu::variants
