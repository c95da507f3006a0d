// Winograd with the Winograd-domain products on the tensor cores as 3xFP16 (fp32 class): what
// its rungs share — the filter and input transform kernels (fp32 -> fp16 hi + lo parts in the
// layout the GEMM stages read) and the plan (workspace, chunks of images, the three launches).
// The tile geometry is host code in fp32fast_tiles.hpp (WtcCfg, the main kernels' tiles), the
// check of what a layer must be in fp32fast_family.cpp. The rungs differ only in the main kernel
// (the 49 position GEMMs with the output transform folded in):
//   winograd_3xfp16.cu           mma.sync m16n8k16 from ldmatrix fragments (any sm_80+ GPU)
//   winograd_wgmma.cu     wgmma m64n32k16 from swizzled shared memory (sm_90a)
//   winograd_wgmma_ws.cu  the same warp-specialised, m64n64k16 (sm_90a)
//
// Split: x = hi + 2^-11 lo, hi = fp16(x), lo = fp16((x - hi) * 2^11) (x - hi is exact; the scale
// keeps lo out of fp16's subnormals). A product sums Vh*Uh into one fp32 accumulator and
// Vh*Ul + Vl*Uh into a second, combined as main + 2^-11 corr: ~22 significand bits per operand.
//
// Range (range_scale.hpp): fp16 holds the transformed operands only below 65504, and the
// transforms grow them: the F(3x3,5x5) input transform's rows have an L1 norm of up to 15, so
// |V| <= 225 max|x|, and the filter transform's up to 5/3, so |U| <= 25/9 max|w|. Unscaled, |x|
// above ~291 overflowed. The plan therefore scales each tensor by a power of two found on the
// device each run: max|x'| in [2^7, 2^8) (|V| < 225 * 2^8 = 57600), max|w'| in [2^13, 2^14)
// (|U| < 45512), applied before the transforms and undone exactly where the outputs are written
// (wtc_put, wtc_store_staged: out_mul). Any finite data with max|x| max|w| K < 2^127 is then in
// range; outside it the plan reports an ERROR naming the range (Plan::run_error).
//
// Global layout of the transformed operands: V[xi][t][2*Cp] (tile rows, Tp = T rounded up to the
// block's tiles, padding rows zero) and U[xi][m][2*Cp] (Mp rows, padding rows zero); a row holds
// its channels in chunks of CH = 32 as [hi c0..31 | lo c0..31 | hi c32..63 | lo c32..63 ...], so
// one pipeline stage (one position, one chunk) is 128 contiguous bytes per row — one 128 B
// swizzle row for wgmma, four 16-byte cp.async chunks of hi and four of lo.
#pragma once

#include "fp32fast_tiles.hpp"
#include "range_scale.hpp"
#include "split_mutation.hpp"
#include "variant.hpp"
#include "winograd_fused.cuh"

#include <cuda_fp16.h>

#include <algorithm>

namespace cs::gpu::variants {
namespace fp32fast {

// ---- configuration: WtcCfg and the main kernels' tiles (fp32fast_tiles.hpp) -----------------------

struct WtcArgs {
    const float* in;
    const __half* U;
    __half* V;
    float* out;
    int C, H, W, M, E, F, pad;
    int tiles_w, tpi, T, Tp, Mp, Cp, K2, mblocks;
    int HW;
    std::int64_t CHW, MEF;
    const RangeScale* rs;  // the tensors' scales and the test mutations (range_scale.hpp)
};

// The output's scale 2^(ex+ew) as one factor pair, read once by a thread that writes outputs.
struct WtcOutMul {
    float a, b;
    __device__ __forceinline__ explicit WtcOutMul(const WtcArgs& w) : a(w.rs->out_mul[0]), b(w.rs->out_mul[1]) {}
    __device__ __forceinline__ float operator()(float v) const { return v * a * b; }
};

// Row position of channel c's part (0 hi, 1 lo) in a row of 2*Cp halves.
template <int CH>
__host__ __device__ inline int wtc_col(int c, int part) {
    return (c / CH) * 2 * CH + part * CH + c % CH;
}

__device__ __forceinline__ void wtc_split(double x, __half& hi, __half& lo) {
    hi = __double2half(x);
    lo = __double2half((x - double(__half2float(hi))) * 2048.0);
}
__device__ __forceinline__ void wtc_split(float x, __half& hi, __half& lo) {
    hi = __float2half_rn(x);
    lo = __float2half_rn((x - __half2float(hi)) * 2048.0f);  // x - hi is exact
}

// ---- 1. filter transform: thread (c = 32 per block in x, m = 8 per block in y) ----------------------
template <class Cfg>
__global__ void __launch_bounds__(256) wtc_filter_kernel(const float* __restrict__ w, __half* __restrict__ U,
                                                         WtcArgs a) {
    constexpr int R = Cfg::R, A = Cfg::A, CH = Cfg::CH;
    const int c = int(blockIdx.y) * 32 + int(threadIdx.x), m = int(blockIdx.x) * 8 + int(threadIdx.y);
    if (c >= a.Cp || m >= a.Mp) return;
    const double sw = double(a.rs->w_mul[0]) * double(a.rs->w_mul[1]);  // 2^-ew, exact in double
    const float lo_keep = c < a.Cp / 2 ? a.rs->lo_keep_w_half : 1.0f;   // test mutation (1 normally)
    double g[R][R];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int s = 0; s < R; ++s)
            g[r][s] = (m < a.M && c < a.C) ? double(w[((std::int64_t(m) * a.C + c) * R + r) * R + s]) * sw : 0.0;
    double t[A][R];
    for (int j = 0; j < R; ++j) {
        double col[R], o[A];
        for (int i = 0; i < R; ++i) col[i] = g[i][j];
        Wino<Cfg::MT, R>::filt(col, o);
        for (int i = 0; i < A; ++i) t[i][j] = o[i];
    }
    for (int i = 0; i < A; ++i) {
        double u[A];
        Wino<Cfg::MT, R>::filt(t[i], u);
        for (int j = 0; j < A; ++j) {
            __half hi, lo;
            wtc_split(u[j], hi, lo);
            lo = __float2half_rn(__half2float(lo) * lo_keep);
            __half* row = U + (std::int64_t(i * A + j) * a.Mp + m) * a.K2;
            row[wtc_col<CH>(c, 0)] = hi;
            row[wtc_col<CH>(c, 1)] = lo;
        }
    }
}

// ---- 2. input transform: block = 32 channels x TW tiles of one tile row of one image -------------
// The block's input (32 channels x A rows x TW*MT + R-1 columns, zero outside the image and for
// channels C..Cp-1) is staged in shared memory with loads along the rows (coalesced), then
// thread (channel = tid % 32, tile = tid / 32) transforms its window from there (rows XP floats
// apart, A*XP odd: the 32 channels of a warp hit 32 banks) and writes its a^2 values as hi and lo:
// per warp and (position, part) 32 consecutive halves. Tiles past tiles_w idle. The padding rows
// t >= T of V are never written (the plan zeroes V once; their products are never stored).
// (A first version read the windows straight from global memory, lanes = channels: slower, most
// of its stalls on those loads; git show 3ab0d79:gpu/variants/winograd_3xfp16.cuh.)
template <class Cfg>
struct WtcInputTile {
    int TW, XW, XP;  // tiles per block, window columns, their padded row length
    __host__ __device__ explicit WtcInputTile(int tiles_w) : TW(tiles_w < 16 ? tiles_w : 16) {  // XW <= 64
        XW = TW * Cfg::MT + Cfg::R - 1;
        XP = (Cfg::A * XW) % 2 ? XW : XW + 1;
    }
    int smem_bytes() const { return 32 * Cfg::A * XP * 4; }
};

template <class Cfg>
__global__ void __launch_bounds__(512) wtc_input_kernel(const float* __restrict__ in, __half* __restrict__ V,
                                                        WtcArgs a) {
    constexpr int MT = Cfg::MT, A = Cfg::A, CH = Cfg::CH;
    extern __shared__ float wtc_in_smem[];  // [32][A][XP]
    const WtcInputTile<Cfg> g(a.tiles_w);
    const int ntb = (a.tiles_w + g.TW - 1) / g.TW, tiles_h = a.tpi / a.tiles_w;
    const int tb = int(blockIdx.x) % ntb, th = (int(blockIdx.x) / ntb) % tiles_h, n = int(blockIdx.x) / ntb / tiles_h;
    const int c0 = int(blockIdx.y) * 32, tid = int(threadIdx.x), nt = 32 * g.TW;
    const int y0 = th * MT - a.pad, x0 = tb * g.TW * MT - a.pad;
    const float* img = in + std::int64_t(n) * a.CHW;
    // Staging: warp w copies rows (channel, window row) r = w + k*nwarps, lanes along the row (XW <=
    // 52 columns: two per lane), by cp.async (zero-filled outside the image and past C): every copy
    // of the thread in flight at once. (Loads through registers, 8 in flight per warp, were
    // slower, the staging stores waiting on them — ncu's top stall; git show 3ab0d79:gpu/variants/winograd_3xfp16.cuh.)
    {
        constexpr int ROWS = 32 * A;
        const int warp = tid / 32, lane = tid % 32, nw = nt / 32;
        for (int r = warp; r < ROWS; r += nw) {
            const int cl = r / A, i = r % A, c = c0 + cl, y = y0 + i;
            const bool rok = c < a.C && unsigned(y) < unsigned(a.H);
            const float* src = img + (rok ? std::int64_t(c) * a.HW + y * a.W : 0);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int x = lane + 32 * h, xx = x0 + x;
                const bool ok = rok && unsigned(xx) < unsigned(a.W);
                if (x < g.XW) cp_async4(wtc_in_smem + r * g.XP + x, ok ? src + xx : img, ok);
            }
        }
        cp_async_commit();
        cp_async_wait<0>();
    }
    __syncthreads();
    const int cl = tid % 32, tl = tid / 32, tw = tb * g.TW + tl, c = c0 + cl;
    if (tw >= a.tiles_w || c >= a.Cp) return;
    const int t = (n * tiles_h + th) * a.tiles_w + tw;
    float d[A][A];
    const float* w = wtc_in_smem + cl * A * g.XP + tl * MT;
    const float s0 = a.rs->in_mul[0], s1 = a.rs->in_mul[1], lo_keep = a.rs->lo_keep_in;  // 2^-ex; mutation
#pragma unroll
    for (int i = 0; i < A; ++i)
#pragma unroll
        for (int j = 0; j < A; ++j) d[i][j] = w[i * g.XP + j] * s0 * s1;
#pragma unroll
    for (int j = 0; j < A; ++j) {  // columns (B^T d)
        float col[A], o[A];
#pragma unroll
        for (int i = 0; i < A; ++i) col[i] = d[i][j];
        Wino<MT, Cfg::R>::in(col, o);
#pragma unroll
        for (int i = 0; i < A; ++i) d[i][j] = o[i];
    }
    __half* o = V + std::int64_t(t) * a.K2 + wtc_col<CH>(c, 0);  // position 0; lo CH halves on
    const std::int64_t step = std::int64_t(a.Tp) * a.K2;           // next position
#pragma unroll
    for (int i = 0; i < A; ++i) {  // rows (. B)
        float r[A];
        Wino<MT, Cfg::R>::in(d[i], r);
#pragma unroll
        for (int j = 0; j < A; ++j, o += step) {
            __half lo;
            wtc_split(r[j], o[0], lo);
            o[CH] = __float2half_rn(__half2float(lo) * lo_keep);
        }
    }
}

// ---- the main kernels' shared pieces -----------------------------------------------------------------
// The copies of the pipeline stages. The main kernels are bound by each warp's instruction stream
// (the 144 folded accumulators per thread leave room for few warps), so all addressing is set up
// once and advanced by additions. A stage is one position and G chunks of CH channels: BT rows of
// V and BM rows of U, 2*CH halves each per chunk, in 16-byte copies; thread tid does copies
// q = tid + j*NT of every chunk, the first CPA of them A rows (V), the rest B rows (U).
// dst_of(row, part) is a copy's byte offset in a chunk (padded rows or a swizzle: the rung's
// layout), chunk g of a stage lies GBYTES after chunk g-1. Chunks past the position's last
// (kc >= nkc when G does not divide Cp / CH) are zero-filled: their products add nothing. Per
// position the sources move by +Tp*K2 (V) and +Mp*K2 (U); chunk kc of a row is 2*CH*kc halves in.
template <class Cfg, int NT, int G = 1, std::uint32_t GBYTES = 0>
struct WtcLoader {
    static constexpr int KCH = 2 * Cfg::CH / 8;  // 16-byte copies per row
    static constexpr int CPT = (Cfg::BT + Cfg::BM) * KCH / NT, CPA = Cfg::BT * KCH / NT;
    static_assert(Cfg::BT * KCH % NT == 0 && Cfg::BM * KCH % NT == 0, "a thread's copies split into A and B rows");
    const __half* src[CPT];
    std::uint32_t dst[CPT];
    std::int64_t offV = 0, offU = 0, stepV, stepU;
    int kc = 0, nkc, stage = 0;

    template <class DstOf>
    __device__ __forceinline__ WtcLoader(const WtcArgs& a, int tid, int t0, int m0, DstOf dst_of)
        : stepV(std::int64_t(a.Tp) * a.K2), stepU(std::int64_t(a.Mp) * a.K2), nkc(a.Cp / Cfg::CH) {
#pragma unroll
        for (int j = 0; j < CPT; ++j) {
            const int q = tid + j * NT, row = q / KCH, part = q % KCH;
            src[j] = j < CPA ? a.V + std::int64_t(t0 + row) * a.K2 + part * 8
                             : a.U + std::int64_t(m0 + row - Cfg::BT) * a.K2 + part * 8;
            dst[j] = dst_of(row, part);
        }
    }
    // Issues the next stage's copies: copy(stage buffer, byte offset in it, source, valid).
    template <int STAGES, class Copy>
    __device__ __forceinline__ void next(Copy copy) {
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const bool ok = G == 1 || kc + g < nkc;
#pragma unroll
            for (int j = 0; j < CPT; ++j)
                copy(stage, g * GBYTES + dst[j], ok ? src[j] + (j < CPA ? offV : offU) + (kc + g) * 2 * Cfg::CH : src[j],
                     ok);
        }
        kc += G;
        if (kc >= nkc) {
            kc = 0;
            offV += stepV;
            offU += stepU;
        }
        stage = stage + 1 == STAGES ? 0 : stage + 1;
    }
};

// Fold position xi = p*A + q of EL products m (hi*hi + 2^-11 (hi*lo + lo*hi), already merged)
// into a thread's output tile: Y[i*MT + j][e] += At[i][p] * At[j][q] * m[e]. At's columns come
// from Wino::out applied to unit vectors (p, q are uniform over the block).
template <int MT, int R, int EL>
__device__ __forceinline__ void wtc_fold_merged(float (&Y)[MT * MT][EL], const float (&m)[EL], int xi) {
    constexpr int A = MT + R - 1;
    const int p = xi / A, q = xi % A;
    float ep[A], eq[A], ap[MT], aq[MT];
#pragma unroll
    for (int k = 0; k < A; ++k) {
        ep[k] = k == p ? 1.0f : 0.0f;
        eq[k] = k == q ? 1.0f : 0.0f;
    }
    Wino<MT, R>::out(ep, ap);
    Wino<MT, R>::out(eq, aq);
    float c[MT * MT];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < MT; ++j) c[i * MT + j] = ap[i] * aq[j];
    // A^T has zeros (F(3x3,5x5): columns 0 and 6 one nonzero each): 289 of the 441 (i, j, xi)
    // coefficients are nonzero. The branch is uniform over the block.
#pragma unroll
    for (int y = 0; y < MT * MT; ++y)
        if (c[y] != 0.0f) {
#pragma unroll
            for (int e = 0; e < EL; ++e) Y[y][e] = fmaf(c[y], m[e], Y[y][e]);
        }
}

// The same from the two accumulators (main = hi*hi, corr = hi*lo + lo*hi scaled by 2^11),
// which are merged into main first and both reset to 0.
template <int MT, int R, int EL>
__device__ __forceinline__ void wtc_fold(float (&Y)[MT * MT][EL], float (&accm)[EL], float (&accc)[EL], int xi) {
#pragma unroll
    for (int e = 0; e < EL; ++e) {
        accm[e] = fmaf(accc[e], 1.0f / 2048.0f, accm[e]);
        accc[e] = 0.0f;
    }
    wtc_fold_merged<MT, R, EL>(Y, accm, xi);
#pragma unroll
    for (int e = 0; e < EL; ++e) accm[e] = 0.0f;
}

// Where tile t's outputs go: the corner of its MT x MT outputs in filter 0's plane (filter m's is
// m * E*F further), how many of its rows (ne) and columns (nf) lie inside the E x F plane (more
// than MT where the plane goes on), and its column among the tiles of its tile row. Two
// divisions: locate a tile once, not once per filter.
struct WtcOutTile {
    float* base;
    int ne, nf, tw;
};
template <int MT>
__device__ __forceinline__ WtcOutTile wtc_out_tile(const WtcArgs& a, int t) {
    const int n = t / a.tpi, r = t - n * a.tpi, th = r / a.tiles_w, tw = r - th * a.tiles_w;
    const int e0 = th * MT, f0 = tw * MT;
    return {a.out + n * a.MEF + std::int64_t(e0) * a.F + f0, a.E - e0, a.F - f0, tw};
}

// Filter m's MT x MT outputs of a located tile (Y[i*MT + j][e] for output row i, column j),
// clipped to the plane; nothing for m >= M (the padding rows of the block).
template <int MT, int EL>
__device__ __forceinline__ void wtc_put(const WtcArgs& a, const WtcOutTile& o, const float (&Y)[MT * MT][EL], int e,
                                        int m) {
    if (m >= a.M) return;
    float* const p = o.base + m * (std::int64_t(a.E) * a.F);
    const WtcOutMul om(a);
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < MT; ++j)
            if (i < o.ne && j < o.nf) p[i * a.F + j] = om(Y[i * MT + j][e]);
}

// One output element of the fragment: tile t, filter m; nothing for t >= T (padding tiles).
template <int MT, int EL>
__device__ __forceinline__ void wtc_store(const WtcArgs& a, const float (&Y)[MT * MT][EL], int e, int t, int m) {
    if (t < a.T) wtc_put<MT, EL>(a, wtc_out_tile<MT>(a, t), Y, e, m);
}

// ---- the plan ---------------------------------------------------------------------------------------
// Main: the main kernel's tile (fp32fast_tiles.hpp: NT, STAGES, SMEM) and launch glue (what(),
// copies(), prepare(), State, make_state(), launch()).
template <class Cfg, class Main>
class WtcPlan final : public Plan {
public:
    WtcPlan(const Problem& p, const PlanContext& ctx, const char* what) {
        const Layer& l = p.layer;
        a_.C = l.C, a_.H = l.H, a_.W = l.W, a_.M = l.M, a_.pad = l.pad;
        a_.E = l.H + 2 * l.pad - (Cfg::R - 1);
        a_.F = l.W + 2 * l.pad - (Cfg::R - 1);
        const int tiles_h = (a_.E + Cfg::MT - 1) / Cfg::MT;
        a_.tiles_w = (a_.F + Cfg::MT - 1) / Cfg::MT;
        a_.tpi = tiles_h * a_.tiles_w;
        a_.Mp = round_up(l.M, Cfg::BM);
        a_.Cp = round_up(l.C, Cfg::CH);
        a_.K2 = 2 * a_.Cp;
        a_.mblocks = a_.Mp / Cfg::BM;
        a_.HW = l.H * l.W;
        a_.CHW = std::int64_t(l.C) * a_.HW;
        a_.MEF = std::int64_t(l.M) * a_.E * a_.F;
        mut_ = ctx.split_mutation;
        const SplitKeep keep = split_keep(mut_);
        scale_ = RangeScaleBuffer(RangeTargets{Cfg::kInLog2, Cfg::kWLog2, std::int64_t(l.C) * l.R * l.S}, keep.lo_in,
                                  keep.lo_w_half);
        a_.rs = scale_.device();
        const std::size_t u_bytes = std::size_t(Cfg::NX) * a_.Mp * a_.K2 * 2;
        const std::size_t v_per_image = std::size_t(Cfg::NX) * a_.tpi * a_.K2 * 2;
        const std::int64_t want = std::max<std::int64_t>(1, ctx.max_chunk_N);
        if (u_bytes + v_per_image + std::size_t(Cfg::NX) * Cfg::BT * a_.K2 * 2 > ctx.workspace_limit)
            throw Skip("transformed filters and one image's transformed tiles need more than the workspace limit (" +
                       std::to_string(ctx.workspace_limit) + " bytes)");
        const std::size_t room = ctx.workspace_limit - u_bytes - std::size_t(Cfg::NX) * Cfg::BT * a_.K2 * 2;
        chunk_ = std::min<std::int64_t>(want, std::int64_t(room / v_per_image));
        // V's position stride is a full chunk's tiles, also for a shorter last chunk (one layout:
        // the TMA rung's tensor map is encoded once); rows past a chunk's tiles are zero (the
        // memset) or an earlier chunk's, and their products are never stored.
        a_.Tp = round_up(int(chunk_ * a_.tpi), Cfg::BT);
        U_ = Buffer(MemKind::device, u_bytes);
        V_ = Buffer(MemKind::device, std::size_t(Cfg::NX) * a_.Tp * a_.K2 * 2);
        CS_CUDA_CHECK(cudaMemset(V_.as<__half>(), 0, V_.bytes()));
        a_.U = U_.as<__half>();
        a_.V = V_.as<__half>();
        Main::prepare();
        st_ = Main::make_state(a_);
        detail_ = std::string(what) + ", products on " + Main::what() + " as 3xFP16 (hi*hi + hi*lo + lo*hi): block " +
                  std::to_string(Cfg::BT) + " tiles x " + std::to_string(Cfg::BM) + " filters, " +
                  std::to_string(Main::NT) + " threads, " + std::to_string(Main::STAGES) + "-stage " + Main::copies() + " of " +
                  std::to_string(Cfg::CH) + " channels, output transform folded per position; " +
                  std::to_string(chunk_) + " images per pass, workspace " +
                  std::to_string((U_.bytes() + V_.bytes()) >> 20) + " MiB; " + scale_.describe() +
                  split_mutation_note(mut_);
        n_w_ = std::int64_t(l.M) * l.C * l.R * l.S;
    }
    void run(const DeviceIO& io, cudaStream_t stream) override {
        WtcArgs a = a_;
        scale_.compute(static_cast<const float*>(io.in), io.N * a.CHW, static_cast<const float*>(io.w), n_w_, stream);
        const dim3 fgrid(unsigned((a.Mp + 7) / 8), unsigned((a.Cp + 31) / 32));
        wtc_filter_kernel<Cfg><<<fgrid, dim3(32, 8), 0, stream>>>(static_cast<const float*>(io.w), U_.as<__half>(), a);
        CS_CUDA_CHECK_LAUNCH();
        for (std::int64_t n0 = 0; n0 < io.N; n0 += chunk_) {
            const std::int64_t nc = std::min(chunk_, io.N - n0);
            a.in = static_cast<const float*>(io.in) + n0 * a.CHW;
            a.out = static_cast<float*>(io.out) + n0 * a.MEF;
            a.T = int(nc * a.tpi);
            const WtcInputTile<Cfg> ig(a.tiles_w);
            const dim3 igrid(unsigned(nc * (a.tpi / a.tiles_w) * ((a.tiles_w + ig.TW - 1) / ig.TW)),
                             unsigned(a.Cp / 32));
            wtc_input_kernel<Cfg><<<igrid, 32 * ig.TW, ig.smem_bytes(), stream>>>(a.in, a.V, a);
            CS_CUDA_CHECK_LAUNCH();
            const unsigned blocks = unsigned(a.mblocks) * unsigned((a.T + Cfg::BT - 1) / Cfg::BT);
            Main::launch(st_, a, blocks, stream);
        }
    }
    std::size_t workspace_bytes() const override { return U_.bytes() + V_.bytes(); }
    std::string detail() const override { return detail_; }
    std::optional<std::string> run_error() const override { return scale_.error("the Winograd 3xFP16 split"); }

private:
    WtcArgs a_{};
    std::int64_t chunk_ = 1;
    Buffer U_, V_;
    typename Main::State st_{};
    std::string detail_;
    RangeScaleBuffer scale_;
    SplitMutation mut_ = SplitMutation::none;
    std::int64_t n_w_ = 0;
};

}  // namespace fp32fast
}  // namespace cs::gpu::variants
