// simt-gemm — an implicit-GEMM convolution on the FP32 FMA pipes built like a cuBLAS SGEMM
// (issue 15, item 1): the rungs implicit-gemm-idx lacks, added together.
//
// Idea (what changes against implicit-gemm-idx, gemm_implicit_idx.cu):
//   - weights transposed once per run into a zero-padded Kp x Mp workspace (wt_transpose_kernel,
//     ~5 us on conv4; inside kernel_ms since the weights change between calls): the A tile is
//     one 16-byte cp.async per thread and k-step, no bounds tests, no transposing stores;
//   - the im2col row table {c*H*W + r*W + s, r, s} is computed at plan time for all Kp rows
//     (layer shape only, no data) instead of by 8 threads per k-tile with two divisions;
//   - the B tile goes global -> shared memory by cp.async (4 bytes, zero-filled outside the
//     image), a 3-stage pipeline with one barrier per k-tile and no staging registers;
//   - warp tiling: a warp owns a 64 x 32 block of the output, lanes 8 (m) x 4 (n), each thread
//     8 x 8 outputs as 2 x 2 groups of 4 x 4 (rows ty*4 + {0,32}, columns tx*4 + {0,16}): a
//     float4 fragment read touches 8 (A) or 4 (B) distinct 16-byte words per warp, one
//     shared-memory wavefront each, no bank conflicts;
//   - fragments double-buffered in registers across the 8 k-steps of a tile, so the LDS of
//     step kk+1 overlaps the 64 FFMA of step kk.
// Per thread and k-tile: 512 FFMA, 32 LDS.128, 1 cp.async of 16 B (A), 4 cp.async of 4 B
// (B) with ~6 integer instructions each: ~88% FFMA (implicit-gemm-idx: 69%).
// Tiles: 128x128 (256 threads, 2 blocks/SM), 128x64 (128 threads), 64x64 (64 threads); the
// plan takes the one with the fewest waves for the largest call (see choose_cfg).
//
// Prediction (H200, 132 SMs x 128 FMA/clk x 1.98 GHz = 66.9 TFLOP/s FP32 peak): the FFMA
// share and 16 warps/SM should give ~65-70% of peak, 43-47 TFLOP/s, i.e. 0.9-1.0x cuBLAS
// SGEMM on the same GEMM shape: N=128 conv2 ~2.6 ms (cuBLAS 2.524), conv3 ~0.85 (0.795),
// conv4 ~1.25 (1.173), conv5 ~1.0 (0.949; 338 blocks on 264 slots = 2 waves, as cuBLAS).
// Bytes: each 128x128 block reads 1 KB of A+B per k-tile per 262 kFLOP (32 FLOP/B of L2).
//
// Measured (H200): see the file's entry in NOTES.md / the report of issue 15.
// ptxas (sm_90, -O3): see the report of issue 15 (registers per tile, 0 spills required).
#include "buffers.hpp"
#include "conv_shape.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "fp32fast_common.cuh"
#include "variants.hpp"

#include <algorithm>
#include <climits>
#include <string>

namespace cs::gpu::variants {
namespace fp32fast {

template <int BM, int BN>
struct SimtTile {
    static constexpr int BK = 8, WM = 64, WN = 32, NSTAGE = 3;
    static constexpr int NWM = BM / WM, NWN = BN / WN, NT = NWM * NWN * 32;
    static constexpr int AST = BK * BM, BST = BK * BN;  // floats per stage
    static constexpr int SMEM = NSTAGE * (AST + BST) * 4;
    static constexpr int MINB = 512 / NT < 8 ? 512 / NT : 8;  // blocks/SM at <= 128 registers
};

template <int BM, int BN>
__global__ void __launch_bounds__(SimtTile<BM, BN>::NT, SimtTile<BM, BN>::MINB)
    simt_gemm_kernel(const float* __restrict__ in, const float* __restrict__ wt, const int2* __restrict__ tbl,
                     float* __restrict__ out, const GemmShape g, int P, int tiles_m) {
    using T = SimtTile<BM, BN>;
    constexpr int BK = T::BK, NT = T::NT, NSTAGE = T::NSTAGE;
    constexpr int A_CHUNKS = BK * BM / 4;
    static_assert(A_CHUNKS % NT == 0, "A tile: whole 16-byte chunks per thread");
    constexpr int A_PER = A_CHUNKS / NT;
    using BLd = ImplicitB<BK, BN, NT, BN>;

    FF_DYN_SMEM(float, smem);
    float* As = smem;                   // [NSTAGE][BK][BM]
    float* Bs = smem + NSTAGE * T::AST;  // [NSTAGE][BK][BN]

    const int tid = int(threadIdx.x);
    const int mt = int(blockIdx.x % unsigned(tiles_m)), nt = int(blockIdx.x / unsigned(tiles_m));
    const int m0 = mt * BM, p0 = nt * BN;
    const int ktiles = g.Kp / BK;

    BLd b;
    b.init(g, P, p0, tid);

    auto load_tile = [&](int stage, int kt) {
        const int k0 = kt * BK;
        float* as = As + stage * T::AST;
#pragma unroll
        for (int i = 0; i < A_PER; ++i) {
            const int q = tid + i * NT;
            const int row = q / (BM / 4), c4 = (q % (BM / 4)) * 4;
            cp_async16(as + row * BM + c4, wt + std::int64_t(k0 + row) * g.Mp + m0 + c4);
        }
        b.load(in, tbl, g, k0, Bs + stage * T::BST);
    };

    const int warp = tid / 32, lane = tid % 32;
    const int wm = warp % T::NWM, wn = warp / T::NWM;
    const int ty = lane / 4, tx = lane % 4;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

#pragma unroll
    for (int s = 0; s < NSTAGE - 1; ++s) {
        if (s < ktiles) load_tile(s, s);
        cp_async_commit();
    }

    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<NSTAGE - 2>();
        __syncthreads();  // tile kt visible to all; the stage refilled below was last read in kt-1
        {
            const int nk = kt + NSTAGE - 1;
            if (nk < ktiles) load_tile(nk % NSTAGE, nk);
            cp_async_commit();
        }
        const float* as = As + (kt % NSTAGE) * T::AST + wm * T::WM + ty * 4;
        const float* bs = Bs + (kt % NSTAGE) * T::BST + wn * T::WN + tx * 4;

        float a[2][8], bb[2][8];
        auto frag = [&](int buf, int kk) {
            const float4 a0 = *reinterpret_cast<const float4*>(as + kk * BM);
            const float4 a1 = *reinterpret_cast<const float4*>(as + kk * BM + 32);
            const float4 b0 = *reinterpret_cast<const float4*>(bs + kk * BN);
            const float4 b1 = *reinterpret_cast<const float4*>(bs + kk * BN + 16);
            a[buf][0] = a0.x, a[buf][1] = a0.y, a[buf][2] = a0.z, a[buf][3] = a0.w;
            a[buf][4] = a1.x, a[buf][5] = a1.y, a[buf][6] = a1.z, a[buf][7] = a1.w;
            bb[buf][0] = b0.x, bb[buf][1] = b0.y, bb[buf][2] = b0.z, bb[buf][3] = b0.w;
            bb[buf][4] = b1.x, bb[buf][5] = b1.y, bb[buf][6] = b1.z, bb[buf][7] = b1.w;
        };
        frag(0, 0);
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            if (kk + 1 < BK) frag((kk + 1) & 1, kk + 1);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[kk & 1][i], bb[kk & 1][j], acc[i][j]);
        }
    }
    cp_async_wait<0>();

    // Epilogue: rows m0 + wm*64 + ty*4 + {0..3} (+32), columns p0 + wn*32 + tx*4 + {0..3} (+16);
    // one column's NCHW base at a time (keeps the register count under the cap).
    const int mrow = m0 + wm * T::WM + ty * 4;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const std::int64_t cb = nchw_col_base(g, P, p0 + wn * T::WN + tx * 4 + (j & 3) + (j >> 2) * 16);
        if (cb < 0) continue;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int m = mrow + (i & 3) + (i >> 2) * 32;
            if (m < g.M) out[cb + std::int64_t(m) * g.EF] = acc[i][j];
        }
    }
}

struct SimtCfgInfo {
    int bm, bn, nt, minb, smem;
    const char* what;
};
inline const SimtCfgInfo kSimtCfgs[] = {
    {128, 128, SimtTile<128, 128>::NT, SimtTile<128, 128>::MINB, SimtTile<128, 128>::SMEM,
     "128x128x8 block, 8 warps of 64x32, 8x8 per thread"},
    {128, 64, SimtTile<128, 64>::NT, SimtTile<128, 64>::MINB, SimtTile<128, 64>::SMEM,
     "128x64x8 block, 4 warps of 64x32, 8x8 per thread"},
    {64, 64, SimtTile<64, 64>::NT, SimtTile<64, 64>::MINB, SimtTile<64, 64>::SMEM,
     "64x64x8 block, 2 warps of 64x32, 8x8 per thread"},
};
inline constexpr int kSimtMaxBM = 128;

// Fewest waves (blocks over resident slots), a small penalty for the smaller tiles (more
// loads per FMA); when even the largest tile leaves SMs idle, the tile with the most blocks.
inline int choose_cfg(int M, std::int64_t P, int sms) {
    const double penalty[] = {1.0, 1.12, 1.3};
    int best = 0;
    double best_cost = 1e300;
    const std::int64_t blocks0 = ((M + 127) / 128) * ((P + 127) / 128);
    for (int i = 0; i < 3; ++i) {
        const auto& c = kSimtCfgs[i];
        const std::int64_t blocks = ((M + c.bm - 1) / c.bm) * ((P + c.bn - 1) / c.bn);
        const std::int64_t slots = std::int64_t(sms) * c.minb;
        double cost = double((blocks + slots - 1) / slots) * penalty[i];
        if (blocks0 < sms) cost = -double(blocks);  // under one block per SM: most blocks wins
        if (cost < best_cost) best_cost = cost, best = i;
    }
    return best;
}

template <int BM, int BN>
void launch_simt(const float* in, const float* wt, const int2* tbl, float* out, const GemmShape& g, int P,
                 cudaStream_t stream) {
    using T = SimtTile<BM, BN>;
    const int tiles_m = (g.M + BM - 1) / BM;
    const std::int64_t blocks = std::int64_t(tiles_m) * ((P + BN - 1) / BN);
    if (blocks == 0) return;
    auto k = &simt_gemm_kernel<BM, BN>;
    FF_LAUNCH(k, unsigned(blocks), T::NT, T::SMEM, stream, in, wt, tbl, out, g, P, tiles_m);
#ifndef FP32FAST_EMU
    CS_CUDA_CHECK_LAUNCH();
#endif
}

// The whole run: transpose the weights, then the GEMM.
inline void simt_gemm_enqueue(int cfg, const float* in, const float* w, float* wt, const int2* tbl, float* out,
                              const GemmShape& g, int P, cudaStream_t stream) {
    auto tk = &wt_transpose_kernel;
    const dim3 tgrid(unsigned((g.Kp + 31) / 32), unsigned((g.Mp + 31) / 32));
    FF_LAUNCH(tk, tgrid, 256, 32 * 33 * 4, stream, w, wt, g.M, g.K, g.Mp, g.Kp);
#ifndef FP32FAST_EMU
    CS_CUDA_CHECK_LAUNCH();
#endif
    switch (cfg) {
        case 0: launch_simt<128, 128>(in, wt, tbl, out, g, P, stream); break;
        case 1: launch_simt<128, 64>(in, wt, tbl, out, g, P, stream); break;
        default: launch_simt<64, 64>(in, wt, tbl, out, g, P, stream); break;
    }
}

}  // namespace fp32fast

#ifndef FP32FAST_EMU
namespace {

std::optional<std::string> simt_common_supports(const Problem& p) {
    if (p.layout != Layout::nchw) return std::string("NCHW only (the implicit B loader reads NCHW)");
    const Layer& l = p.layer;
    if (p.N * std::int64_t(l.E()) * l.F() > std::int64_t(INT_MAX) - 1024)
        return std::string("N*E*F columns exceed 32-bit indices");
    if (std::int64_t(l.C) * l.H * l.W > INT_MAX / 2) return std::string("one image's C*H*W exceeds 32-bit offsets");
    if (l.K() > INT_MAX / 4) return std::string("K = C*R*S exceeds 32-bit indices");
    if (l.H >= 16384 || l.W >= 16384 || l.R >= 16384 || l.S >= 16384)
        return std::string("H, W, R or S >= 16384 (the row table packs r and s in 16 bits)");
    return std::nullopt;
}

class SimtGemmPlan final : public Plan {
public:
    SimtGemmPlan(const Problem& p, const PlanContext& ctx) {
        const Layer& l = p.layer;
        g_ = fp32fast::gemm_shape(l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, 8, fp32fast::kSimtMaxBM);
        const std::int64_t Pmax = std::max<std::int64_t>(1, ctx.max_chunk_N) * g_.EF;
        cfg_ = fp32fast::choose_cfg(l.M, Pmax, ctx.prop.multiProcessorCount);
        const std::size_t wt_bytes = std::size_t(g_.Kp) * std::size_t(g_.Mp) * 4;
        const std::size_t tbl_bytes = std::size_t(g_.Kp) * sizeof(int2);
        if (wt_bytes + tbl_bytes > ctx.workspace_limit)
            throw Skip("transposed weights need " + std::to_string(wt_bytes + tbl_bytes) +
                       " bytes, over the workspace limit");
        const auto& c = fp32fast::kSimtCfgs[cfg_];
        if (c.smem > int(ctx.prop.sharedMemPerBlock)) throw Skip("tile needs more shared memory than 48 KB");
        wt_ = Buffer(MemKind::device, wt_bytes);
        tbl_ = Buffer(MemKind::device, tbl_bytes);
        const auto t = fp32fast::im2col_row_table(g_);
        CS_CUDA_CHECK(cudaMemcpy(tbl_.get(), t.data(), tbl_bytes, cudaMemcpyHostToDevice));
        const std::int64_t blocks = ((l.M + c.bm - 1) / c.bm) * ((Pmax + c.bn - 1) / c.bn);
        detail_ = std::string(c.what) + ", 3-stage cp.async, " + std::to_string(blocks) + " blocks for P=" +
                  std::to_string(Pmax) + "; weights transposed to " + std::to_string(g_.Kp) + "x" +
                  std::to_string(g_.Mp) + " each run";
    }
    void run(const DeviceIO& io, cudaStream_t stream) override {
        const int P = int(io.N * g_.EF);
        fp32fast::simt_gemm_enqueue(cfg_, static_cast<const float*>(io.in), static_cast<const float*>(io.w),
                                    wt_.as<float>(), tbl_.as<int2>(), static_cast<float*>(io.out), g_, P, stream);
    }
    std::size_t workspace_bytes() const override { return wt_.bytes() + tbl_.bytes(); }
    std::string detail() const override { return detail_; }

private:
    fp32fast::GemmShape g_{};
    int cfg_ = 0;
    Buffer wt_, tbl_;
    std::string detail_;
};

}  // namespace

std::optional<std::string> simt_gemm_supports(const Problem& p, const cudaDeviceProp&) {
    return simt_common_supports(p);
}

std::unique_ptr<Plan> simt_gemm_plan(const Problem& p, const PlanContext& ctx) {
    if (auto why = simt_common_supports(p)) throw Skip(*why);
    return std::make_unique<SimtGemmPlan>(p, ctx);
}
#endif  // FP32FAST_EMU

}  // namespace cs::gpu::variants
