// split-tf32 — "3xTF32": the implicit-GEMM convolution on the tensor cores with an
// fp32-class result (issue 15, item 4), on mma.sync m16n8k8 tf32; and tf32-mma-1x, the same
// kernel with one product (plain TF32), to show the error the split removes.
//
// Idea: a float x is split into a TF32 high part and a TF32 low part,
//   x_hi = tf32(x),  x_lo = tf32(x - x_hi)        (x - x_hi is exact in fp32)
// so x = x_hi + x_lo + O(2^-22 |x|). Then
//   a*b ~= a_hi*b_hi + a_hi*b_lo + a_lo*b_hi       (a_lo*b_lo ~ 2^-22 |ab| dropped)
// three tensor-core products accumulated in fp32 (the small ones first). Each product of two
// TF32 numbers is exact in fp32, so the error is the fp32 accumulation's plus ~2^-21 per
// term: fp32 class (threshold 1e-4 of max|out|), where plain TF32 (~2^-11 per operand) lands
// near 3e-4 on these layers and fails it.
//
// Kernel: block tile 128 (m) x 128 (p) x 16 (k), 256 threads = 8 warps of 64 x 32 (4 x 4
// m16n8 tiles, 64 fp32 accumulators per thread); A = the transposed, zero-padded weights
// (wt_transpose_kernel, each run) by 16-byte cp.async; B = the implicit im2col tile by 4-byte
// cp.async with zero fill (fp32fast_common.cuh); 3-stage pipeline, one barrier per k-tile.
// Shared memory is k-major with rows padded by 8 floats (A: [k][m], B: [k][p]), so the
// fragment reads (row t or t+4, column g) hit 32 distinct banks. The split is done on the
// fragments as they are read (cvt.rna.tf32 + FSUB + cvt: 2 ALU per element); per k8-step a
// warp issues 48 HMMA (16 with 1x) and ~100 other instructions.
//
// Prediction: mma.sync TF32 on Hopper runs at roughly 60% of the wgmma rate (~495 TFLOP/s
// dense on the H200), ~300 TFLOP/s; three products -> ~100 TFLOP/s of fp32-class work if
// the issue slots keep up: N=128 conv2 ~1.2 ms (cuBLAS SGEMM 2.524), conv3 ~0.4 (0.795),
// conv4 ~0.6 (1.173), conv5 ~0.45 (0.949) — about cuDNN's Winograd/FFT fp32 times on
// conv3-5. 1x: ~2.5x faster than 3x, error ~3e-4 (tf32 class).
//
// Measured (H200): see the report of issue 15.
// ptxas (sm_90, -O3): see the report of issue 15 (128-register cap of 2 blocks/SM, 0 spills).
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

struct TcTile {
    static constexpr int BM = 128, BN = 128, BK = 16, NSTAGE = 3;
    static constexpr int WM = 64, WN = 32, NWM = 2, NWN = 4, NT = 256;
    static constexpr int LDA = BM + 8, LDB = BN + 8;
    static constexpr int AST = BK * LDA, BST = BK * LDB;
    static constexpr int SMEM = NSTAGE * (AST + BST) * 4;
};

template <bool SPLIT>
__global__ void __launch_bounds__(TcTile::NT, 2)
    split_tf32_kernel(const float* __restrict__ in, const float* __restrict__ wt, const int2* __restrict__ tbl,
                      float* __restrict__ out, const GemmShape g, int P, int tiles_m) {
    using T = TcTile;
    constexpr int BM = T::BM, BN = T::BN, BK = T::BK, NT = T::NT, NSTAGE = T::NSTAGE, LDA = T::LDA, LDB = T::LDB;
    constexpr int A_CHUNKS = BK * BM / 4;
    static_assert(A_CHUNKS % NT == 0, "A tile: whole 16-byte chunks per thread");
    constexpr int A_PER = A_CHUNKS / NT;
    using BLd = ImplicitB<BK, BN, NT, LDB>;

    FF_DYN_SMEM(float, smem);
    float* As = smem;                    // [NSTAGE][BK][LDA]
    float* Bs = smem + NSTAGE * T::AST;  // [NSTAGE][BK][LDB]

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
            cp_async16(as + row * LDA + c4, wt + std::int64_t(k0 + row) * g.Mp + m0 + c4);
        }
        b.load(in, tbl, g, k0, Bs + stage * T::BST);
    };

    const int warp = tid / 32, lane = tid % 32;
    const int wm = warp % T::NWM, wn = warp / T::NWM;
    const int gq = lane >> 2, tq = lane & 3;

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

#pragma unroll
    for (int s = 0; s < NSTAGE - 1; ++s) {
        if (s < ktiles) load_tile(s, s);
        cp_async_commit();
    }

    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<NSTAGE - 2>();
        __syncthreads();
        {
            const int nk = kt + NSTAGE - 1;
            if (nk < ktiles) load_tile(nk % NSTAGE, nk);
            cp_async_commit();
        }
        const float* as = As + (kt % NSTAGE) * T::AST + wm * T::WM + gq;
        const float* bs = Bs + (kt % NSTAGE) * T::BST + wn * T::WN + gq;
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) {
            const int k_lo = ks * 8 + tq, k_hi = k_lo + 4;
            std::uint32_t bh[4][2], bl[4][2];
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) {
                const float x0 = bs[k_lo * LDB + ni * 8], x1 = bs[k_hi * LDB + ni * 8];
                bh[ni][0] = to_tf32(x0);
                bh[ni][1] = to_tf32(x1);
                if constexpr (SPLIT) {
                    bl[ni][0] = to_tf32(x0 - __uint_as_float(bh[ni][0]));
                    bl[ni][1] = to_tf32(x1 - __uint_as_float(bh[ni][1]));
                }
            }
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                float x[4];
                x[0] = as[k_lo * LDA + mi * 16];
                x[1] = as[k_lo * LDA + mi * 16 + 8];
                x[2] = as[k_hi * LDA + mi * 16];
                x[3] = as[k_hi * LDA + mi * 16 + 8];
                std::uint32_t ah[4], al[4];
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    ah[r] = to_tf32(x[r]);
                    if constexpr (SPLIT) al[r] = to_tf32(x[r] - __uint_as_float(ah[r]));
                }
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) {
                    if constexpr (SPLIT) {
                        mma_tf32(acc[mi][ni], al, bh[ni]);
                        mma_tf32(acc[mi][ni], ah, bl[ni]);
                    }
                    mma_tf32(acc[mi][ni], ah, bh[ni]);
                }
            }
        }
    }
    cp_async_wait<0>();

    // Epilogue: acc[mi][ni][r] is row wm*64 + mi*16 + gq + 8*(r>>1), column wn*32 + ni*8 + 2*tq + (r&1);
    // one column's NCHW base at a time.
    const int mrow = m0 + wm * T::WM + gq;
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            const std::int64_t cb = nchw_col_base(g, P, p0 + wn * T::WN + ni * 8 + 2 * tq + c);
            if (cb < 0) continue;
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int m = mrow + mi * 16 + 8 * h;
                    if (m < g.M) out[cb + std::int64_t(m) * g.EF] = acc[mi][ni][2 * h + c];
                }
        }
}

template <bool SPLIT>
void split_tf32_enqueue(const float* in, const float* w, float* wt, const int2* tbl, float* out, const GemmShape& g,
                        int P, cudaStream_t stream) {
    auto tk = &wt_transpose_kernel;
    const dim3 tgrid(unsigned((g.Kp + 31) / 32), unsigned((g.Mp + 31) / 32));
    FF_LAUNCH(tk, tgrid, 256, 32 * 33 * 4, stream, w, wt, g.M, g.K, g.Mp, g.Kp);
#ifndef FP32FAST_EMU
    CS_CUDA_CHECK_LAUNCH();
#endif
    const int tiles_m = (g.M + TcTile::BM - 1) / TcTile::BM;
    const std::int64_t blocks = std::int64_t(tiles_m) * ((P + TcTile::BN - 1) / TcTile::BN);
    if (blocks == 0) return;
    auto k = &split_tf32_kernel<SPLIT>;
    FF_LAUNCH(k, unsigned(blocks), TcTile::NT, TcTile::SMEM, stream, in, wt, tbl, out, g, P, tiles_m);
#ifndef FP32FAST_EMU
    CS_CUDA_CHECK_LAUNCH();
#endif
}

}  // namespace fp32fast

#ifndef FP32FAST_EMU
namespace {

std::optional<std::string> tc_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (p.layout != Layout::nchw) return std::string("NCHW only (the implicit B loader reads NCHW)");
    if (prop.major < 8) return std::string("needs sm_80+ (mma.sync tf32, cp.async)");
    if (prop.sharedMemPerBlockOptin < std::size_t(fp32fast::TcTile::SMEM))
        return std::string("needs ") + std::to_string(fp32fast::TcTile::SMEM) + " bytes of shared memory per block";
    const Layer& l = p.layer;
    if (p.N * std::int64_t(l.E()) * l.F() > std::int64_t(INT_MAX) - 1024)
        return std::string("N*E*F columns exceed 32-bit indices");
    if (std::int64_t(l.C) * l.H * l.W > INT_MAX / 2) return std::string("one image's C*H*W exceeds 32-bit offsets");
    if (l.K() > INT_MAX / 4) return std::string("K = C*R*S exceeds 32-bit indices");
    if (l.H >= 16384 || l.W >= 16384 || l.R >= 16384 || l.S >= 16384)
        return std::string("H, W, R or S >= 16384 (the row table packs r and s in 16 bits)");
    return std::nullopt;
}

template <bool SPLIT>
class TcPlan final : public Plan {
public:
    TcPlan(const Problem& p, const PlanContext& ctx) {
        const Layer& l = p.layer;
        using T = fp32fast::TcTile;
        g_ = fp32fast::gemm_shape(l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, T::BK, T::BM);
        const std::size_t wt_bytes = std::size_t(g_.Kp) * std::size_t(g_.Mp) * 4;
        const std::size_t tbl_bytes = std::size_t(g_.Kp) * sizeof(int2);
        if (wt_bytes + tbl_bytes > ctx.workspace_limit)
            throw Skip("transposed weights need " + std::to_string(wt_bytes + tbl_bytes) +
                       " bytes, over the workspace limit");
        wt_ = Buffer(MemKind::device, wt_bytes);
        tbl_ = Buffer(MemKind::device, tbl_bytes);
        const auto t = fp32fast::im2col_row_table(g_);
        CS_CUDA_CHECK(cudaMemcpy(tbl_.get(), t.data(), tbl_bytes, cudaMemcpyHostToDevice));
        CS_CUDA_CHECK(cudaFuncSetAttribute(fp32fast::split_tf32_kernel<SPLIT>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM));
        const std::int64_t Pmax = std::max<std::int64_t>(1, ctx.max_chunk_N) * g_.EF;
        const std::int64_t blocks = ((l.M + T::BM - 1) / T::BM) * ((Pmax + T::BN - 1) / T::BN);
        detail_ = std::string(SPLIT ? "3xTF32" : "1xTF32") +
                  " mma.sync m16n8k8, 128x128x16 block, 8 warps of 64x32, 3-stage cp.async, " +
                  std::to_string(blocks) + " blocks for P=" + std::to_string(Pmax) + "; weights transposed to " +
                  std::to_string(g_.Kp) + "x" + std::to_string(g_.Mp) + " each run";
    }
    void run(const DeviceIO& io, cudaStream_t stream) override {
        const int P = int(io.N * g_.EF);
        fp32fast::split_tf32_enqueue<SPLIT>(static_cast<const float*>(io.in), static_cast<const float*>(io.w),
                                            wt_.as<float>(), tbl_.as<int2>(), static_cast<float*>(io.out), g_, P,
                                            stream);
    }
    std::size_t workspace_bytes() const override { return wt_.bytes() + tbl_.bytes(); }
    std::string detail() const override { return detail_; }

private:
    fp32fast::GemmShape g_{};
    Buffer wt_, tbl_;
    std::string detail_;
};

}  // namespace

std::optional<std::string> split_tf32_supports(const Problem& p, const cudaDeviceProp& prop) {
    return tc_supports(p, prop);
}
std::unique_ptr<Plan> split_tf32_plan(const Problem& p, const PlanContext& ctx) {
    if (auto why = tc_supports(p, ctx.prop)) throw Skip(*why);
    return std::make_unique<TcPlan<true>>(p, ctx);
}
std::optional<std::string> tf32_mma_supports(const Problem& p, const cudaDeviceProp& prop) {
    return tc_supports(p, prop);
}
std::unique_ptr<Plan> tf32_mma_plan(const Problem& p, const PlanContext& ctx) {
    if (auto why = tc_supports(p, ctx.prop)) throw Skip(*why);
    return std::make_unique<TcPlan<false>>(p, ctx);
}
#endif  // FP32FAST_EMU

}  // namespace cs::gpu::variants
