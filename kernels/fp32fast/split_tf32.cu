// split-tf32 — "3xTF32": the implicit-GEMM convolution on the tensor cores with an
// fp32-class result, on mma.sync m16n8k8 tf32; and tf32-mma-1x, the same
// kernel with one product (plain TF32), to show the error the split removes.
//
// Idea: a float x is split into a TF32 high part and a TF32 low part,
//   x_hi = tf32(x),  x_lo = tf32(x - x_hi)        (x - x_hi is exact in fp32)
// so x = x_hi + x_lo + O(2^-22 |x|). Then
//   a*b ~= a_hi*b_hi + a_hi*b_lo + a_lo*b_hi       (a_lo*b_lo ~ 2^-22 |ab| dropped)
// three tensor-core products accumulated in fp32 (the small ones first). Each product of two
// TF32 numbers is exact in fp32, so the error is the accumulation's plus ~2^-21 per term:
// fp32 class (threshold 1e-4 of max|out|), where plain TF32 (~2^-11 per operand) lands
// near 3e-4 on these layers and fails it.
//
// Kernel: block tile 128 (m) x 128 (p) x 16 (k) (TcTile, fp32fast_tiles.hpp), 256 threads = 8
// warps of 64 x 32 (4 x 4 m16n8 tiles, 64 fp32 accumulators per thread); 3-stage cp.async
// pipeline, one barrier per k-tile. A = the weights packed once per run by wpack_kernel in
// fragment order and already split (hi, lo): one contiguous 16-byte cp.async stream, one
// LDS.128 per fragment and part.
// B = the implicit im2col tile by 4-byte cp.async with zero fill (fp32fast_common.cuh),
// k-major in shared memory with rows padded by 8 floats (fragment reads hit 32 distinct
// banks), split on the fragments as they are read (cvt.rna + FADD + cvt per element).
//
// Prediction: mma.sync TF32 on Hopper at about half the wgmma rate; three products, so near
// cuBLAS SGEMM if the issue slots keep up.
//
// Measured: docs/findings.md, "Exact fp32 faster" (the development runs, with tf32-mma-1x
// beside it: git show 3ab0d79:gpu/variants/split_tf32.cu). tf32-mma-1x fails the fp32
// threshold and passes tf32's 5e-3; the split buys a much smaller error for a modest share
// more time. 3xTF32 runs about at cuBLAS SGEMM's speed on the same shapes and beats cuDNN
// fp32 on conv1 — far from the prediction: the loop issues ~490 instructions per
// k-tile for 96 HMMA (SASS: B split, 8 table loads + bounds per thread and tile, address
// arithmetic), so it is issue-bound, not tensor-bound. Packing A in fragment order and
// splitting it once per run (instead of per block in the loop) was the step that gained.
//   Next: warpgroup MMA (wgmma, tf32) from shared memory with the B split in a producer
//   warp, as the Hopper family does for half; a 64x64 warp tile to halve fragment traffic.
//
// Range: tf32 has fp32's 8-bit exponent, so the split needs no scale (checked on the range
// golden sets, plans/range.json). hi = tf32(x) is finite for every finite x below
// (2 - 2^-11) 2^127; lo = tf32(x - hi) ~ 2^-11..2^-12 |x| falls into fp32's subnormals only for
// |x| < ~2^-114, and a product hi*lo only when |x w| < ~2^-115: data far below the golden sets'
// 2^-24 x 2^-24 (products ~2^-48 there). Inside fp32's normal range every product and sum is
// then what the fp32 class allows: the same range fp32 itself computes in, and no scale pass.
//
// ptxas (sm_90, -O3): 3x: 123 registers, 1x: 114, 0 spills (k8-step loop not unrolled:
// unrolled, the 3x kernel spilled 4 bytes); wpack_kernel 14 registers.
#include "buffers.hpp"
#include "conv_shape.hpp"
#include "copy_now.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "fp32fast_common.cuh"
#include "fp32fast_rungs.hpp"
#include "fp32fast_tiles.hpp"
#include "family.hpp"
#include "split_mutation.hpp"

#include <algorithm>
#include <string>

namespace cs::gpu::variants {
namespace fp32fast {

// The weights, packed once per run in the order the A fragments are read, already split:
//   apack[m-block][k-tile][ks (2)][m16 tile (8)][part (hi, lo)][lane (32)][a0..a3]
// so a k-tile of a block is one contiguous run (16-byte cp.async, no index math) and a
// thread's fragment is one 16-byte shared-memory read per part, consecutive lanes on
// consecutive 16 bytes (no bank conflicts). Element (lane, r): m = 16*tile + lane/4 + 8*(r&1),
// k = 8*ks + lane%4 + 4*(r>>1); zero outside M x K. The split happens once per weight here
// instead of once per block column in the main kernel.
template <bool SPLIT>
__global__ void __launch_bounds__(256)
    wpack_kernel(const float* __restrict__ w, float* __restrict__ apack, int M, int K, int Kp, int total,
                 float lo_keep_half) {
    constexpr int H = SPLIT ? 2 : 1;
    const int i = int(blockIdx.x) * 256 + int(threadIdx.x);
    if (i >= total) return;
    const int r = i & 3, lane = (i >> 2) & 31;
    int q = i >> 7;
    const int part = q % H;
    q /= H;
    const int tile = q % 8;
    q /= 8;
    const int ks = q % 2;
    q /= 2;
    const int KT = Kp / 16, kt = q % KT, mb = q / KT;
    const int m = mb * 128 + tile * 16 + (lane >> 2) + 8 * (r & 1);
    const int k = kt * 16 + ks * 8 + (lane & 3) + 4 * (r >> 1);
    const float x = (m < M && k < K) ? w[std::int64_t(m) * K + k] : 0.0f;
    const std::uint32_t hi = to_tf32(x);
    // lo_keep_half: 1, or 0 for the test-only mutation (split_mutation.hpp) that drops the
    // hi*lo product over the first half of K.
    apack[i] = part == 0 ? __uint_as_float(hi)
                         : __uint_as_float(to_tf32(x - __uint_as_float(hi))) * (k < K / 2 ? lo_keep_half : 1.0f);
}

#ifndef FP32FAST_EMU
// Test-only (split_mutation.hpp, zero_input_lo): the input rounded to tf32 beforehand, so that
// the main kernel's in-loop split finds no low part (lo = tf32(x - hi) = 0).
__global__ void tf32_round_kernel(const float* __restrict__ in, float* __restrict__ out, std::int64_t n) {
    const std::int64_t i = std::int64_t(blockIdx.x) * 256 + threadIdx.x;
    if (i < n) out[i] = __uint_as_float(to_tf32(in[i]));
}
#endif

template <bool SPLIT>
__global__ void __launch_bounds__(TcTile<SPLIT>::NT, 2)
    split_tf32_kernel(const float* __restrict__ in, const float* __restrict__ apack, const int2* __restrict__ tbl,
                      float* __restrict__ out, const GemmShape g, int P, int tiles_m) {
    using T = TcTile<SPLIT>;
    constexpr int BN = T::BN, BK = T::BK, NT = T::NT, NSTAGE = T::NSTAGE, LDB = T::LDB, H = T::H;
    constexpr int A_CHUNKS = T::AST / 4;
    static_assert(A_CHUNKS % NT == 0, "A tile: whole 16-byte chunks per thread");
    constexpr int A_PER = A_CHUNKS / NT;
    using BLd = ImplicitB<BK, BN, NT, LDB>;

    FF_DYN_SMEM(float, smem);
    float* As = smem;                    // [NSTAGE][AST] (packed fragments)
    float* Bs = smem + NSTAGE * T::AST;  // [NSTAGE][BK][LDB]

    const int tid = int(threadIdx.x);
    const int mt = int(blockIdx.x % unsigned(tiles_m)), nt = int(blockIdx.x / unsigned(tiles_m));
    const int m0 = mt * T::BM, p0 = nt * BN;
    const int ktiles = g.Kp / BK;
    const float* ablk = apack + std::int64_t(mt) * ktiles * T::AST;

    BLd b;
    b.init(in, g, P, p0, tid);

    auto load_tile = [&](int stage, int kt) {
        float* as = As + stage * T::AST;
        const float* src = ablk + std::int64_t(kt) * T::AST;
#pragma unroll
        for (int i = 0; i < A_PER; ++i) {
            const int q = tid + i * NT;
            cp_async16(as + q * 4, src + q * 4);
        }
        b.load(in, tbl, g, kt * BK, Bs + stage * T::BST, tid);
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
        const float* as = As + (kt % NSTAGE) * T::AST + (wm * 4 * H) * 128 + lane * 4;
        const float* bs = Bs + (kt % NSTAGE) * T::BST + wn * T::WN + gq;
#pragma unroll 1
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
                const float* ap = as + ((ks * 8 + mi) * H) * 128;
                const float4 hv = *reinterpret_cast<const float4*>(ap);
                const std::uint32_t ah[4] = {__float_as_uint(hv.x), __float_as_uint(hv.y), __float_as_uint(hv.z),
                                             __float_as_uint(hv.w)};
                if constexpr (SPLIT) {
                    const float4 lv = *reinterpret_cast<const float4*>(ap + 128);
                    const std::uint32_t al[4] = {__float_as_uint(lv.x), __float_as_uint(lv.y),
                                                 __float_as_uint(lv.z), __float_as_uint(lv.w)};
#pragma unroll
                    for (int ni = 0; ni < 4; ++ni) {
                        mma_tf32(acc[mi][ni], al, bh[ni]);
                        mma_tf32(acc[mi][ni], ah, bl[ni]);
                        mma_tf32(acc[mi][ni], ah, bh[ni]);
                    }
                } else {
#pragma unroll
                    for (int ni = 0; ni < 4; ++ni) mma_tf32(acc[mi][ni], ah, bh[ni]);
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
void split_tf32_enqueue(const float* in, const float* w, float* apack, const int2* tbl, float* out,
                        const GemmShape& g, int P, cudaStream_t stream, float lo_keep_half = 1.0f) {
    using T = TcTile<SPLIT>;
    const int total = g.Mp * g.Kp * T::H;
    auto pk = &wpack_kernel<SPLIT>;
    FF_LAUNCH(pk, unsigned((total + 255) / 256), 256, 0, stream, w, apack, g.M, g.K, g.Kp, total, lo_keep_half);
    FF_CHECK_LAUNCH();
    const int tiles_m = g.Mp / T::BM;
    const std::int64_t blocks = std::int64_t(tiles_m) * ((P + T::BN - 1) / T::BN);
    if (blocks == 0) return;
    auto k = &split_tf32_kernel<SPLIT>;
    FF_LAUNCH(k, unsigned(blocks), T::NT, T::SMEM, stream, in, apack, tbl, out, g, P, tiles_m);
    FF_CHECK_LAUNCH();
}

}  // namespace fp32fast

#ifndef FP32FAST_EMU
namespace {

template <bool SPLIT>
class TcPlan final : public Plan {
public:
    TcPlan(const Problem& p, const PlanContext& ctx) {
        const Layer& l = p.layer;
        using T = fp32fast::TcTile<SPLIT>;
        g_ = fp32fast::gemm_shape(l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, T::BK, T::BM);
        const std::size_t wt_bytes = std::size_t(g_.Kp) * std::size_t(g_.Mp) * T::H * 4;
        const std::size_t tbl_bytes = std::size_t(g_.Kp) * sizeof(int2);
        if (wt_bytes + tbl_bytes > ctx.workspace_limit)
            throw Skip("packed weights need " + std::to_string(wt_bytes + tbl_bytes) +
                       " bytes, over the workspace limit");
        wt_ = Buffer(MemKind::device, wt_bytes);
        tbl_ = Buffer(MemKind::device, tbl_bytes);
        const auto t = fp32fast::im2col_row_table(g_);
        copy_to_device_now(tbl_.get(), t.data(), tbl_bytes);
        CS_CUDA_CHECK(cudaFuncSetAttribute(fp32fast::split_tf32_kernel<SPLIT>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM));
        const std::int64_t Pmax = std::max<std::int64_t>(1, ctx.max_chunk_N) * g_.EF;
        const std::int64_t blocks = ((l.M + T::BM - 1) / T::BM) * ((Pmax + T::BN - 1) / T::BN);
        detail_ = std::string(SPLIT ? "3xTF32" : "1xTF32") +
                  " mma.sync m16n8k8, 128x128x16 block, 8 warps of 64x32, 3-stage cp.async, " +
                  std::to_string(blocks) + " blocks for P=" + std::to_string(Pmax) +
                  "; weights packed in fragment order" + (SPLIT ? " and split (hi, lo)" : "") + " each run";
        if (SPLIT) {
            mut_ = ctx.split_mutation;
            if (mut_ == SplitMutation::zero_input_lo)
                rounded_ = Buffer(MemKind::device, std::size_t(std::max<std::int64_t>(1, ctx.max_chunk_N)) *
                                                       std::size_t(l.input_elems(1)) * 4);
            detail_ += split_mutation_note(mut_);
        }
        img_ = l.input_elems(1);
    }
    void run(const DeviceIO& io, cudaStream_t stream) override {
        const int P = int(io.N * g_.EF);
        const float* in = static_cast<const float*>(io.in);
        if (mut_ == SplitMutation::zero_input_lo) {  // test only (split_mutation.hpp)
            const std::int64_t n = io.N * img_;
            fp32fast::tf32_round_kernel<<<unsigned((n + 255) / 256), 256, 0, stream>>>(in, rounded_.as<float>(), n);
            CS_CUDA_CHECK_LAUNCH();
            in = rounded_.as<float>();
        }
        fp32fast::split_tf32_enqueue<SPLIT>(in, static_cast<const float*>(io.w), wt_.as<float>(), tbl_.as<int2>(),
                                            static_cast<float*>(io.out), g_, P, stream,
                                            split_keep(mut_).lo_w_half);
    }
    std::size_t workspace_bytes() const override { return wt_.bytes() + tbl_.bytes(); }
    std::string detail() const override { return detail_; }

private:
    fp32fast::GemmShape g_{};
    Buffer wt_, tbl_;
    std::string detail_;
    SplitMutation mut_ = SplitMutation::none;
    Buffer rounded_;  // the zero_input_lo mutation's tf32-rounded input
    std::int64_t img_ = 0;
};

}  // namespace

// Both rungs: split-tf32 (fp32 row: 3xTF32) and tf32-mma-1x (tf32 row: one product).
std::unique_ptr<Plan> split_tf32_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx) {
    if (row.precision == Precision::tf32) return std::make_unique<TcPlan<false>>(p, ctx);
    return std::make_unique<TcPlan<true>>(p, ctx);
}
#endif  // FP32FAST_EMU

}  // namespace cs::gpu::variants
