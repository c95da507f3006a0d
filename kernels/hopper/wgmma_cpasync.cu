// hopper-wgmma-fp16 / hopper-wgmma-bf16 / hopper-wgmma-tf32 — Hopper rung 1: warpgroup MMA
// (wgmma.mma_async m64nNk16, or m64nNk8 .tf32, fp32 accumulators) from shared memory that
// cp.async fills, multi-stage. (tf32: see the section at the end of this comment.)
//
// Idea: the step from warp-level MMA (wmma-fp16: 16x16x16 fragments loaded into registers by
// every warp; docs/findings.md, "The Hopper family") to warpgroup MMA: 4 warps issue one m64nBNk16 instruction that
// reads both operands straight from swizzled shared memory through descriptors — no fragment
// loads, no ldmatrix, and 64*BN*16 MACs per instruction. The implicit GEMM of hopper_core.cuh
// (NHWC, rows = output pixels, columns = filters, K = R*S*C with channels innermost): every
// 16-byte cp.async chunk is 8 channels of one filter tap of one pixel, so the A tile (128
// pixels x 64 k) is 1024 chunks, each thread 4, with the tap (r,s,c) of its chunk column
// advanced incrementally per k-slice (no division in the loop) and zero-fill (src-size 0) for
// padding, k >= K and rows >= P; the B tile (BN filters x 64 k) is KRSC rows as they lie.
// k-slices cross filter taps freely (C % 8 == 0 is all the loader needs), so K is padded only
// at its end (conv2: 2400 -> 2432). Pipeline: STAGES buffers, prefetch distance STAGES-2,
// ONE __syncthreads per k-slice:
//     wait for slice kt's cp.async group; fence.proxy.async (generic -> async proxy, wgmma
//     reads shared memory through the async proxy); __syncthreads;
//     issue cp.async for slice kt+STAGES-2 into the buffer slice kt-2 used (its wgmma
//     finished: every thread passed wgmma.wait_group(1) of iteration kt-1 before the barrier);
//     wgmma.fence; BK/16 wgmma; commit; wgmma.wait_group(1) (slice kt stays in flight while
//     the next slice's copies are issued).
// Any layer: C % 8 != 0 (conv1) goes through hopper_transforms.cuh's transform — channel padding, or
// space-to-depth where stride > 1 (conv1: 4x4 blocks -> C'=48, 3x3 stride 1 on 57x57, same
// 55x55 output); NCHW problems through the NCHW->NHWC / KCRS->KRSC transforms; both inside
// run() (kernel_ms). The NCHW output is written directly by the epilogue.
//
// Tiles: the family's table (tiles.hpp) with 128 B k-slices, the `tile` axis. Default (from
// the tile sweep): 128x96 with 2 CTAs/SM for M <= 96 (conv1), 128x256 where M % 256 == 0 and
// the grid has >= 4 waves (conv2), 128x128 6 stages for other M % 256 == 0 (conv5), else
// 128x128 with 2 CTAs/SM (conv3/4). detail() names the tile.
//
// tf32 rows: the same kernel on fp32 tensors (wgmma m64nNk8 .tf32 reads 32 bytes of each
// operand row per instruction, like fp16's k16, so the tile table in bytes serves both);
// operands a transform writes anyway are rounded there (OperandOf<float>), operands read in
// place are truncated by the tensor core (NOTES.md, "Hopper rung 1", says why).
// Numbers: the report's Hopper ladder; the rung's predictions and measurement history are in
// NOTES.md ("Hopper rung 1: history of the file header").
#include "hopper_core.cuh"
#include "pipeline.cuh"
#include "rungs.hpp"
#include "tiles.hpp"

namespace cs::gpu::variants::hopper {
namespace {

template <class T, int BN, int STAGES, int MINB>
__global__ void __launch_bounds__(kThreads, MINB)
    wgmma_cpasync_kernel(const T* __restrict__ in, const T* __restrict__ w, T* __restrict__ out, const ConvGeom g,
                         int tiles_n, int nchw_out) {
#ifdef CS_HOPPER_DEVICE
    static_assert(STAGES >= 3, "prefetch distance STAGES-2 needs at least 3 stages");
    static_assert(BN % 32 == 0, "B rows are loaded 32 per pass");
    // A k-slice is one 128-byte row per pixel / filter: BK = 64 halves or 32 floats, copied
    // as 8 chunks of 16 B = CE elements; 4 wgmma per slice (each eats 32 bytes of K).
    constexpr int ES = int(sizeof(T)), BK = 128 / ES, CE = 16 / ES;
    using Sw = SwizzleOf<BK, ES>;
    constexpr int A_BYTES = kBM * 128, B_BYTES = BN * 128, ST_BYTES = A_BYTES + B_BYTES;
    constexpr int A_ITERS = kBM / 32, B_ITERS = BN / 32;
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t sbase = (smem_u32(smem_raw) + 1023u) & ~1023u;

    const int tid = int(threadIdx.x);
    const int pt = int(blockIdx.x) / tiles_n;
    const int nt = int(blockIdx.x) - pt * tiles_n;
    const int p0 = pt * kBM, m0 = nt * BN;
    const int j = tid & 7, rb = tid >> 3;         // chunk column, first row (rows rb + 32*i)
    const std::uint32_t soff = Sw::offset(rb, j);  // (rb + 32*i) & 7 == rb & 7: same swizzle

    // A rows: image base and window corner of each of this thread's 4 pixels.
    std::int64_t a_base[A_ITERS];
    int a_ih[A_ITERS], a_iw[A_ITERS];
#pragma unroll
    for (int i = 0; i < A_ITERS; ++i) {
        const int p = p0 + rb + 32 * i;
        if (p < g.P) {
            const int n = p / g.EF, ef = p - n * g.EF;
            const int e = ef / g.F, f = ef - e * g.F;
            a_ih[i] = e * g.stride - g.pad;
            a_iw[i] = f * g.stride - g.pad;
            a_base[i] = ((std::int64_t(n) * g.H + a_ih[i]) * g.W + a_iw[i]) * g.C;
        } else {
            a_ih[i] = -(1 << 29);  // fails the bounds test: zero rows
            a_iw[i] = 0;
            a_base[i] = 0;
        }
    }
    // k of this thread's chunk column: k = kb; its tap (kr, ks) and channel kc.
    int kb = CE * j;
    int kr, ks, kc;
    {
        const int tap = kb / g.C;
        kc = kb - tap * g.C;
        kr = tap / g.S;
        ks = tap - kr * g.S;
    }
    const int KT = (g.K + BK - 1) / BK;

    auto load_slice = [&](int stage) {
        const std::uint32_t sA = sbase + std::uint32_t(stage) * ST_BYTES;
        const std::uint32_t sB = sA + A_BYTES;
        const bool kval = kr < g.R;
        const int koff = (kr * g.W + ks) * g.C + kc;
#pragma unroll
        for (int i = 0; i < A_ITERS; ++i) {
            const int ih = a_ih[i] + kr, iw = a_iw[i] + ks;
            const bool ok = kval && unsigned(ih) < unsigned(g.H) && unsigned(iw) < unsigned(g.W);
            const T* src = ok ? in + a_base[i] + koff : in;
            cp_async_16(sA + soff + std::uint32_t(i) * 32u * 128u, src, ok);
        }
#pragma unroll
        for (int i = 0; i < B_ITERS; ++i) {
            const int m = m0 + rb + 32 * i;
            const bool ok = m < g.M && kb < g.K;
            const T* src = ok ? w + std::int64_t(m) * g.K + kb : w;
            cp_async_16(sB + soff + std::uint32_t(i) * 32u * 128u, src, ok);
        }
        // next slice: k += BK
        kb += BK;
        kc += BK;
        while (kc >= g.C) {
            kc -= g.C;
            if (++ks == g.S) {
                ks = 0;
                ++kr;
            }
        }
    };

    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;

#pragma unroll
    for (int s = 0; s < STAGES - 2; ++s) {
        if (s < KT) load_slice(s);
        cp_async_commit();
    }

    const int wg = tid >> 7;
    int stage = 0, lstage = STAGES - 2;
    for (int kt = 0; kt < KT; ++kt) {
        cp_async_wait<STAGES - 3>();
        fence_proxy_async_smem();
        __syncthreads();
        if (kt + STAGES - 2 < KT) load_slice(lstage);
        cp_async_commit();
        lstage = lstage + 1 == STAGES ? 0 : lstage + 1;

        const std::uint32_t sA = sbase + std::uint32_t(stage) * ST_BYTES + std::uint32_t(wg) * 64u * 128u;
        const std::uint32_t sB = sbase + std::uint32_t(stage) * ST_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
            WgmmaSS<T, BN>::mma(acc, smem_desc(sA + kk * 32, Sw::kSbo, Sw::kLayout),
                                smem_desc(sB + kk * 32, Sw::kSbo, Sw::kLayout));
        wgmma_commit();
        wgmma_wait<1>();
        stage = stage + 1 == STAGES ? 0 : stage + 1;
    }
    wgmma_wait<0>();
    fence_regs(acc);
    store_tile<T, BN>(acc, out, g, p0, m0, nchw_out != 0, tid);
#else
    (void)in, (void)w, (void)out, (void)g, (void)tiles_n, (void)nchw_out;
#endif
}

// Tiles in bytes: every stage holds 128 B of K per row (64 halves or 32 floats), so a stage
// costs the same shared memory and (tf32 k8 at half fp16's rate per k) the same MMA time in
// either type; the same configurations fit and keep their balance.
// Tiles: the family's table (tiles.hpp), those with 128 B k-slices (this loader's rows).

template <int BN, int STAGES>
constexpr int smem_bytes() {
    return STAGES * (kBM + BN) * 128 + 1024;
}

template <class T, int BN, int STAGES, int MINB>
void prepare_cfg() {
    CS_CUDA_CHECK(cudaFuncSetAttribute(wgmma_cpasync_kernel<T, BN, STAGES, MINB>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes<BN, STAGES>()));
}

template <class T, int BN, int STAGES, int MINB>
void launch_cfg(const T* in, const T* w, T* out, const ConvGeom& g, bool nchw, cudaStream_t stream) {
    if (g.P == 0) return;
    const int tiles_p = (g.P + kBM - 1) / kBM, tiles_n = (g.M + BN - 1) / BN;
    const std::int64_t grid = std::int64_t(tiles_p) * tiles_n;
    wgmma_cpasync_kernel<T, BN, STAGES, MINB>
        <<<unsigned(grid), kThreads, smem_bytes<BN, STAGES>(), stream>>>(in, w, out, g, tiles_n, nchw ? 1 : 0);
    CS_CUDA_CHECK_LAUNCH();
}

template <class T>
struct CpAsyncGemm {
    int tile = 0;
    std::string info;

    template <class F>
    void dispatch(F&& f) const {
        with_tile(tile, [&](auto I) {
            constexpr Tile t = kTiles[decltype(I)::value];
            if constexpr (t.rowb == 128 && t.bm == kBM) f(std::integral_constant<int, t.bn>{}, std::integral_constant<int, t.stages>{},
                                           std::integral_constant<int, t.minb>{});
        });
    }
    void prepare() const {
        dispatch([&](auto bn, auto st, auto mb) { prepare_cfg<T, bn.value, st.value, mb.value>(); });
    }
    void launch(const T* in, const T* w, T* out, const ConvGeom& g, bool nchw, cudaStream_t stream) {
        dispatch([&](auto bn, auto st, auto mb) { launch_cfg<T, bn.value, st.value, mb.value>(in, w, out, g, nchw, stream); });
    }
    std::string detail() const { return info; }
    std::string config() const { return "tile=" + tile_name(tile); }
    std::size_t workspace_bytes() const { return 0; }
};

// Default tile (from the tile sweep on the H200, N=128, see the header): 2 CTAs/SM of
// 128x96 / 128x128 where the mainloop is short or the 128x256 grid would leave a partial wave;
// 128x256 where M is a multiple of 256 and the grid is >= 4 waves (conv2).
int default_tile(const Setup& u, std::int64_t n, int sms) {
    const std::int64_t rows = (n * u.g.EF + kBM - 1) / kBM;
    if (u.g.M <= 96) return find_tile(96, 128, 2, 3);
    if (u.g.M % 256 == 0)
        return rows * (u.g.M / 256) >= 4 * std::int64_t(sms) ? find_tile(256, 128, 1, 4) : find_tile(128, 128, 1, 6);
    return find_tile(128, 128, 2, 3);
}

template <class T>
std::unique_ptr<Plan> plan_t(const Problem& p, const PlanContext& ctx) {
    Setup u = make_setup(p);
    CpAsyncGemm<T> gemm;
    gemm.tile = whole_slice_tile(
        p.axes.id("tile"), default_tile(u, std::max<std::int64_t>(1, ctx.max_chunk_N), ctx.prop.multiProcessorCount),
        "rung 1");
    if (kTiles[gemm.tile].rowb != 128)
        throw Skip("the cp.async loader fills 128 B k-slices only (tile " + tile_name(gemm.tile) + ")");
    gemm.prepare();
    const int bn = kTiles[gemm.tile].bn;
    const std::int64_t maxn = std::max<std::int64_t>(1, ctx.max_chunk_N);
    const std::int64_t tiles = (maxn * u.g.EF + kBM - 1) / kBM * ((u.g.M + bn - 1) / bn);
    gemm.info = std::string("wgmma m64n") + std::to_string(bn) + "k" + std::to_string(WgmmaSS<T, 96>::kK) + " " +
                Elem<T>::name + " from cp.async shared memory (128B swizzle), CTA tile " +
                tile_text(gemm.tile, int(sizeof(T))) + ", " + std::to_string(tiles) + " CTAs for " +
                std::to_string(maxn) + " image(s); K " + std::to_string(u.g.K) + " in slices of " +
                std::to_string(128 / int(sizeof(T)));
    return make_hopper_plan<T>(p, ctx, std::move(u), std::move(gemm));
}

}  // namespace

std::unique_ptr<Plan> cpasync_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx) {
    if (row.io == DType::f32) return plan_t<float>(p, ctx);
    if (row.io == DType::bf16) return plan_t<__nv_bfloat16>(p, ctx);
    return plan_t<__half>(p, ctx);
}

}  // namespace cs::gpu::variants::hopper
