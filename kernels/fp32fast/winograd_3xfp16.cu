// winograd-3xfp16-f3x3-5x5 — Winograd F(3x3,5x5) with the Winograd-domain products on the tensor
// cores as 3xFP16 (fp32 class), NCHW, for 5x5 stride-1 layers (conv2).
//
// Range (all three 3xFP16 rungs, winograd_3xfp16.cuh): per-tensor power-of-two scales found on
// the GPU each run keep the transformed operands (up to 225|x| and 25/9|w|) inside fp16; fp32
// class for any finite data with max|x| max|w| K < 2^127, else an ERROR naming the range.
//
// Idea: winograd-f3x3-5x5 cuts conv2's multiplies 4.59x but runs them on the FP32 pipe, and
// hopper-ws-3xfp16 runs the direct products on the tensor cores; neither beats cuDNN fp32's
// FFT (docs/findings.md, "Exact fp32 faster"). Both ideas together: the 49 position GEMMs
//   Mx[xi][t][m] = sum_c V[xi][t][c] * U[xi][m][c]
// on mma.sync m16n8k16 with each fp32 operand split into an fp16 high part and an fp16 low part
// (stored scaled by 2^11, out of fp16's subnormals): Vh*Uh in one fp32 accumulator, Vh*Ul + Vl*Uh
// in a second, combined as main + 2^-11 * corr. hi*hi + the two cross terms carry ~22 significand
// bits per operand, as hopper-ws-3xfp16 does for the direct products.
//
// Data flow of one run (three kernels):
//   1. filter transform: U = G g G^T of every (filter, channel) in double, split into hi/lo
//      fp16, to U[xi][m][2*Cp] (zero rows m >= M, zero channels c >= C).
//   2. input transform: V = B^T d B of every (tile, channel), split, to V[xi][t][2*Cp] (zero rows
//      for the padding tiles t >= T). The row of one (xi, tile) holds the channels in chunks of
//      CH = 32: [hi c0..31 | lo c0..31 | hi c32..63 | lo c32..63 ...], so one pipeline stage
//      (one position, one chunk) is 128 contiguous bytes per row.
//   3. main kernel: block = 64 tiles x 64 filters, 8 warps of 32 tiles x 16 filters. For each
//      position xi (outer) and channel chunk (inner): a 4-stage cp.async pipeline brings the
//      64 V rows and 64 U rows of the stage into shared memory (rows padded to 144 bytes:
//      ldmatrix without bank conflicts), ldmatrix.x4 + 3 mma.sync per 16x8x16 step. After a
//      position's last chunk its product Mx is folded into the output tile right away:
//        Y[i][j] += At[i][p] * At[j][q] * Mx[p*7 + q]
//      (the output transform is linear), so a thread keeps 9 output accumulators per element
//      of its MMA tile (144 registers) instead of 49 products; the fold is 9 FMAs per element
//      and position on the FP32 pipe next to 3 x 96 x 2 tensor-core multiply-adds.
//      Epilogue: Y straight to the output (the 3x3 of each tile, clipped to E x F).
//
// Prediction (conv2, N=128: 10368 tiles, Cp = 96):
//   tensor work 3 * 49 * 10368 * 256 * 96 = 37.5 G multiply-adds (75 GFLOP, 1.3x the direct
//   fp32 work's 57 G, but at tensor rate, mma.sync f16 below wgmma's dense rate);
//   operand traffic from L2 (V read by the 4 filter blocks of a tile block, U by every tile
//   block): 648 blocks x 49 x 3 chunks x 16 KiB = 1.56 GB, the limit;
//   input transform: reads 36 MB, writes 49 * 10368 * 192 * 2 B = 195 MB;
//   filter transform: 2.4 MB. Expected ahead of cuDNN fp32's FFT.
//   Error: winograd-f3x3-5x5's (the transforms) plus the split's ~2^-22 per operand.
//
// Measured: docs/findings.md, "Exact fp32 faster" (the development runs and their ncu
// profiles: git show 3ab0d79:gpu/variants/winograd_3xfp16.cu). The first version was bound by
// low occupancy at 242 registers, each warp's ldmatrix -> mma chains with two warps per
// scheduler to hide them, and ~300 instructions of addressing and division per stage; the
// copies' addressing set up once (WtcLoader) followed. The error stays below winograd-f3x3-5x5's
// (the products accumulate in fp32 on the tensor cores without FMA-order effects of the SIMT
// tile). Still behind cuDNN fp32; the wgmma rung (winograd_wgmma.cu) is the faster one.
#include "fp32fast_rungs.hpp"
#include "winograd_3xfp16.cuh"

namespace cs::gpu::variants {
namespace fp32fast {

// ---- 3. the position GEMMs with the output transform folded in ------------------------------------
__device__ __forceinline__ void wtc_cp16(void* smem, const void* gmem) {
#ifdef FF_PRE_SM80
    *static_cast<uint4*>(smem) = *static_cast<const uint4*>(gmem);
#else
    const unsigned s = unsigned(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#endif
}

__device__ __forceinline__ void wtc_ldsm_x4(std::uint32_t r[4], const __half* smem) {
#ifdef FF_PRE_SM80
    __trap();
#else
    const unsigned s = unsigned(__cvta_generic_to_shared(smem));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s));
#endif
}

// d += A (16x16, row) * B (16x8, col), fp16 operands, fp32 accumulators.
__device__ __forceinline__ void wtc_mma(float* d, const std::uint32_t a[4], std::uint32_t b0, std::uint32_t b1) {
#ifdef FF_PRE_SM80
    __trap();
#else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

template <class Cfg, class K>
__global__ void __launch_bounds__(K::NT, 1) wtc_main_kernel(const WtcArgs a) {
    constexpr int MT = Cfg::MT, NX = Cfg::NX, CH = Cfg::CH, LDS = K::LDS, BT = Cfg::BT, BM = Cfg::BM;
    constexpr int STAGES = K::STAGES, STAGE = K::STAGE, MI = K::MI, NI = K::NI, NT = K::NT;
    static_assert(NI == 2, "one ldmatrix.x4 covers the warp's 16 filters");
    FF_DYN_SMEM(__half, smem);

    const int tid = int(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    const int wt = warp % (BT / K::WT), wm = warp / (BT / K::WT);
    const int mb = int(blockIdx.x % unsigned(a.mblocks)), tb = int(blockIdx.x / unsigned(a.mblocks));
    const int t0 = tb * BT, m0 = mb * BM;
    const int nkc = a.Cp / CH, total = NX * nkc;

    WtcLoader<Cfg, NT> ld(a, tid, t0, m0, [](int row, int part) { return std::uint32_t(row * LDS + part * 8) * 2; });
    auto load = [&]() {
        ld.template next<STAGES>([&](int st, std::uint32_t off, const __half* src, bool) {
            wtc_cp16(reinterpret_cast<unsigned char*>(smem + st * STAGE) + off, src);  // G = 1: always valid
        });
    };

    constexpr int EL = MI * NI * 4;  // element (mi, ni, r) at (mi * NI + ni) * 4 + r
    float accm[EL], accc[EL], Y[MT * MT][EL];
#pragma unroll
    for (int e = 0; e < EL; ++e) {
        accm[e] = 0.0f;
        accc[e] = 0.0f;
#pragma unroll
        for (int y = 0; y < MT * MT; ++y) Y[y][e] = 0.0f;
    }

    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < total) load();
        cp_async_commit();
    }
    int cstage = 0, ckc = 0, cxi = 0;
    for (int s = 0; s < total; ++s) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        if (s + STAGES - 1 < total) load();
        cp_async_commit();

        const __half* sa = smem + cstage * STAGE;
        const __half* sb = sa + BT * LDS;
#pragma unroll
        for (int ks = 0; ks < CH / 16; ++ks) {
            std::uint32_t ah[MI][4], al[MI][4], bh[4], bl[4];
#pragma unroll
            for (int mi = 0; mi < MI; ++mi) {
                const __half* p = sa + (wt * K::WT + mi * 16 + lane % 16) * LDS + ks * 16 + (lane / 16) * 8;
                wtc_ldsm_x4(ah[mi], p);
                wtc_ldsm_x4(al[mi], p + CH);
            }
            const __half* p = sb + (wm * K::WM + lane % 8 + (lane / 16) * 8) * LDS + ks * 16 + ((lane / 8) % 2) * 8;
            wtc_ldsm_x4(bh, p);
            wtc_ldsm_x4(bl, p + CH);
#pragma unroll
            for (int mi = 0; mi < MI; ++mi)
#pragma unroll
                for (int ni = 0; ni < NI; ++ni) {
                    float* dm = accm + (mi * NI + ni) * 4;
                    float* dc = accc + (mi * NI + ni) * 4;
                    wtc_mma(dm, ah[mi], bh[2 * ni], bh[2 * ni + 1]);
                    wtc_mma(dc, ah[mi], bl[2 * ni], bl[2 * ni + 1]);
                    wtc_mma(dc, al[mi], bh[2 * ni], bh[2 * ni + 1]);
                }
        }
        cstage = cstage + 1 == STAGES ? 0 : cstage + 1;
        if (++ckc == nkc) {
            ckc = 0;
            wtc_fold<MT, Cfg::R, EL>(Y, accm, accc, cxi++);
        }
    }
    cp_async_wait<0>();

    // Element (mi, ni, r): tile t0 + wt*32 + mi*16 + lane/4 (+8 for r >= 2), filter
    // m0 + wm*16 + ni*8 + 2*(lane%4) + (r & 1).
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                wtc_store<MT, EL>(a, Y, (mi * NI + ni) * 4 + r, t0 + wt * K::WT + mi * 16 + lane / 4 + (r / 2) * 8,
                                  m0 + wm * K::WM + ni * 8 + 2 * (lane % 4) + (r & 1));
}

// WtcPlan's Main: the tile (WtcMmaSyncTile, fp32fast_tiles.hpp) and its launch.
template <class Cfg>
struct WtcMmaSync : WtcMmaSyncTile<Cfg> {
    using WtcMmaSyncTile<Cfg>::NT;
    using WtcMmaSyncTile<Cfg>::SMEM;
    static std::string what() { return "mma.sync m16n8k16"; }
    static void prepare() {
        CS_CUDA_CHECK(cudaFuncSetAttribute(wtc_main_kernel<Cfg, WtcMmaSync>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          SMEM));
    }
    struct State {};
    static State make_state(const WtcArgs&) { return {}; }
    static std::string copies() { return "cp.async"; }
    static void launch(const State&, const WtcArgs& a, unsigned blocks, cudaStream_t stream) {
        wtc_main_kernel<Cfg, WtcMmaSync><<<blocks, NT, SMEM, stream>>>(a);
        CS_CUDA_CHECK_LAUNCH();
    }
};

using WtcF35Mma = WtcMmaSync<WtcF35>;
}  // namespace fp32fast

std::unique_ptr<Plan> winograd_3xfp16_f3x3_5x5_plan(const Problem& p, const PlanContext& ctx) {
    return std::make_unique<fp32fast::WtcPlan<fp32fast::WtcF35, fp32fast::WtcF35Mma>>(p, ctx, "F(3x3,5x5)");
}

}  // namespace cs::gpu::variants
