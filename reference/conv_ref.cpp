// The CPU reference convolution: an implicit GEMM out[m][q] = sum_k W[m][k] * X[k][q],
// k = (c, r, s), q = (n, e, f) over the whole batch.
//
// Design
//   * Weights are packed once per call as [m-block][k][MR] (rows past M zero), in Acc.
//   * When pad > 0 the input is copied once with its zero border made explicit (N*C*Hp*Wp
//     floats), so packing has no bounds checks: im2col element (k, q) is
//     src[koff[k] + coloff[q]].
//   * The columns q (all images of the batch together) are cut into column blocks of NC;
//     per K block (KC) a block's im2col panel is packed as [NR-panel][k][NR], in Acc.
//     Columns past the end repeat a valid column; their results are never stored.
//   * A register-blocked micro-kernel (MR x NR, explicit FMA intrinsics) accumulates a tile
//     over one K block; between K blocks the tile's Acc partial sums are parked in a
//     per-thread buffer and loaded back, so every output element is ONE fma chain over
//     k = 0..K-1 in order, started from +0, whatever the blocking, tile position or thread
//     count. The result is rounded to float once: full tiles whose NR columns are
//     consecutive outputs of one image are stored straight from registers, others through
//     the tile buffer (same values).
//   * OpenMP over work items = (column block, M chunk), dynamic schedule; M is only split
//     (and NC shrunk) when there are too few column blocks for the threads (small N). No
//     reductions across threads: bit-identical results for any thread count.
//   * Every path (AVX-512, AVX2, scalar std::fma fallback) is the same fma chain in the same
//     order, so the double golden output is the same on every x86 machine. With Acc =
//     double each product of two floats is exact, so fma(a, b, s) == s + a*b and the result
//     equals conv2d_naive's bit for bit (tests check this).
//
// Tuning log (float path, AlexNet conv1..5, N=32, against oneDNN 2.6.3 fp32, reorders
// included; the times and ratios of each step: git show 3ab0d79:cpu_ref/conv_ref.cpp)
//   Dev box: AMD EPYC (Zen 3), AVX2+FMA, 2 vCPUs shared with other jobs (timings swing
//   with the load; the single-thread ratio is the stable number). Single-core float peak
//   32 FLOP/cycle times the clock.
//   1. MR=6 x NR=16 kernel, KC=256, MC=96, NC=256, im2col packing with per-element bounds
//      checks: the kernel itself near peak, but packing a large share of conv1 and conv2.
//   2. Packing by runs of columns sharing (n, e): no faster (per-run overhead on 16-wide
//      panels).
//   3. Explicit zero-padded input copy + offset tables (branch-free gather): packing down
//      to a small share.
//   4. Direct float stores from registers for full, contiguous tiles: conv1 faster.
//   5. No effect (kept out): unrolling k by 4; KC 128/384 instead of 256; MR=4 x NR=24.
//   Result: behind oneDNN by a modest ratio, most on conv1.
//   GPU machine: 16-core Intel Xeon (AVX-512), same build (-march=native there):
//   6. AVX-512 MR=8 x NR=48, KC=256 (B micro-panel 48 KiB = all of L1); KC from a 24 KiB
//      B-panel budget (128); MR=12 x NR=32 with KC=128 the best single-thread ratio; MR=14 x
//      NR=32 no better. Kept 12x32, KC=128: behind oneDNN on one thread, level or ahead on
//      16 threads.

#include "conv_ref.hpp"
#include "network_ref.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <omp.h>

namespace cs {

namespace {

// ---- the SIMD layer: one vector of Acc, with an explicit fused multiply-add -------------

template <typename T>
struct Vec;

#if defined(__AVX512F__)
template <>
struct Vec<float> {
    using V = __m512;
    static constexpr int L = 16;
    static V zero() { return _mm512_setzero_ps(); }
    static V load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
    static V bcast(const float* p) { return _mm512_set1_ps(*p); }
    static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    static V add(V a, V b) { return _mm512_add_ps(a, b); }
    static V relu(V a) { return _mm512_maskz_max_ps(0xFFFF, a, _mm512_setzero_ps()); }  // max(-0, +0) = +0; maskz: GCC 12 warns on max_ps
    static void store_float(float* p, V v) { _mm512_storeu_ps(p, v); }
};
template <>
struct Vec<double> {
    using V = __m512d;
    static constexpr int L = 8;
    static V zero() { return _mm512_setzero_pd(); }
    static V load(const double* p) { return _mm512_loadu_pd(p); }
    static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
    static V bcast(const double* p) { return _mm512_set1_pd(*p); }
    static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
    static V add(V a, V b) { return _mm512_add_pd(a, b); }
    static V relu(V a) { return _mm512_maskz_max_pd(0xFF, a, _mm512_setzero_pd()); }
    static void store_float(float* p, V v) { _mm256_storeu_ps(p, _mm512_maskz_cvtpd_ps(0xFF, v)); }  // maskz: GCC 12 warns on cvtpd_ps
};
constexpr int kMR = 12;  // 12 x 2 vectors = 24 of 32 zmm accumulators
constexpr int kNV = 2;
constexpr std::int64_t kBPanelBytes = 24 * 1024;  // B micro-panel KC x NR: half of a 48 KiB L1
#elif defined(__AVX2__) && defined(__FMA__)
template <>
struct Vec<float> {
    using V = __m256;
    static constexpr int L = 8;
    static V zero() { return _mm256_setzero_ps(); }
    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
    static V bcast(const float* p) { return _mm256_broadcast_ss(p); }
    static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    static V add(V a, V b) { return _mm256_add_ps(a, b); }
    static V relu(V a) { return _mm256_max_ps(a, _mm256_setzero_ps()); }  // max(-0, +0) = +0
    static void store_float(float* p, V v) { _mm256_storeu_ps(p, v); }
};
template <>
struct Vec<double> {
    using V = __m256d;
    static constexpr int L = 4;
    static V zero() { return _mm256_setzero_pd(); }
    static V load(const double* p) { return _mm256_loadu_pd(p); }
    static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
    static V bcast(const double* p) { return _mm256_broadcast_sd(p); }
    static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
    static V add(V a, V b) { return _mm256_add_pd(a, b); }
    static V relu(V a) { return _mm256_max_pd(a, _mm256_setzero_pd()); }
    static void store_float(float* p, V v) { _mm_storeu_ps(p, _mm256_cvtpd_ps(v)); }
};
constexpr int kMR = 6;   // 6 x 2 vectors = 12 of 16 ymm accumulators
constexpr int kNV = 2;
constexpr std::int64_t kBPanelBytes = 16 * 1024;  // B micro-panel KC x NR: half of a 32 KiB L1
#else
// Portable fallback: still one std::fma per term, so results match the SIMD paths bit for bit.
template <typename T>
struct Vec {
    using V = T;
    static constexpr int L = 1;
    static V zero() { return T(0); }
    static V load(const T* p) { return *p; }
    static void store(T* p, V v) { *p = v; }
    static V bcast(const T* p) { return *p; }
    static V fma(V a, V b, V c) { return std::fma(a, b, c); }
    static V add(V a, V b) { return a + b; }
    static V relu(V a) { return a > T(0) ? a : T(0); }
    static void store_float(float* p, V v) { *p = float(v); }
};
constexpr int kMR = 4;
constexpr int kNV = 4;
constexpr std::int64_t kBPanelBytes = 16 * 1024;
#endif

template <typename T>
constexpr int kNR = kNV * Vec<T>::L;

// Cache blocking (elements of Acc). Tuned on the dev box, see the header comment.
template <typename T>
struct Blocking;
template <>
struct Blocking<float> {
    static constexpr std::int64_t KC = kBPanelBytes / (kNR<float> * 4);  // K block: B micro-panel in L1
    static constexpr int MC = 96;            // rows of A per pass over a B panel (L2)
    static constexpr int NC = 256;           // columns per work item
};
template <>
struct Blocking<double> {
    static constexpr std::int64_t KC = kBPanelBytes / (kNR<double> * 8);
    static constexpr int MC = 48;
    static constexpr int NC = 128;
};

// The network ops after the sum (network_ref.hpp): bias[m] added in Acc, then ReLU, then
// the one rounding to float. bias == nullptr and relu == false: the plain convolution.
template <typename T>
struct Epilogue {
    const T* bias = nullptr;  // M values, in Acc
    bool relu = false;
    bool any() const { return bias != nullptr || relu; }
    T apply(T v, std::int64_t m) const {
        if (bias) v += bias[m];
        return relu && !(v > T(0)) ? T(0) : v;  // as Vec::relu: -0 and NaN give +0
    }
};

// tile = (accumulate ? c : 0) + sum_{k<kc} a[k][:] (x) b[k][:], an MR x NR tile; stored
// to c (row-major, Acc) or, when `direct` is set, rounded to float into direct[i*ldd + j]
// (a full tile whose columns are consecutive outputs of one image), after the epilogue
// (row i's bias ep.bias[m0 + i], then ReLU).
template <typename T>
inline void micro_kernel(const T* __restrict a, const T* __restrict b, std::int64_t kc, T* __restrict c,
                         bool accumulate, float* __restrict direct, std::int64_t ldd, const Epilogue<T>& ep = {},
                         std::int64_t m0 = 0) {
    using VT = Vec<T>;
    using V = typename VT::V;
    constexpr int L = VT::L;
    constexpr int NR = kNR<T>;
    V acc[kMR][kNV];
    if (accumulate) {
#pragma GCC unroll 16
        for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
            for (int j = 0; j < kNV; ++j) acc[i][j] = VT::load(c + i * NR + j * L);
    } else {
#pragma GCC unroll 16
        for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
            for (int j = 0; j < kNV; ++j) acc[i][j] = VT::zero();
    }
    for (std::int64_t k = 0; k < kc; ++k) {
        V bv[kNV];
#pragma GCC unroll 4
        for (int j = 0; j < kNV; ++j) bv[j] = VT::load(b + j * L);
#pragma GCC unroll 16
        for (int i = 0; i < kMR; ++i) {
            const V av = VT::bcast(a + i);
#pragma GCC unroll 4
            for (int j = 0; j < kNV; ++j) acc[i][j] = VT::fma(av, bv[j], acc[i][j]);
        }
        a += kMR;
        b += NR;
    }
    if (direct) {
        if (ep.bias) {
#pragma GCC unroll 16
            for (int i = 0; i < kMR; ++i) {
                const V bv = VT::bcast(ep.bias + m0 + i);
#pragma GCC unroll 4
                for (int j = 0; j < kNV; ++j) acc[i][j] = VT::add(acc[i][j], bv);
            }
        }
        if (ep.relu) {
#pragma GCC unroll 16
            for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
                for (int j = 0; j < kNV; ++j) acc[i][j] = VT::relu(acc[i][j]);
        }
#pragma GCC unroll 16
        for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
            for (int j = 0; j < kNV; ++j) VT::store_float(direct + i * ldd + j * L, acc[i][j]);
        return;
    }
#pragma GCC unroll 16
    for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < kNV; ++j) VT::store(c + i * NR + j * L, acc[i][j]);
}

// A 64-byte aligned scratch array (no initialisation).
template <typename T>
class Scratch {
public:
    explicit Scratch(std::size_t n) : n_(n) {
        const std::size_t bytes = ((n * sizeof(T) + 63) / 64) * 64;
        p_ = static_cast<T*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
        if (!p_) throw std::bad_alloc();
    }
    ~Scratch() { std::free(p_); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    T* data() { return p_; }
    std::size_t size() const { return n_; }

private:
    T* p_ = nullptr;
    std::size_t n_ = 0;
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

struct Geometry {
    std::int64_t N, C, H, W, M, R, S, stride, pad, E, F;
    std::int64_t P;    // E*F outputs per image and channel
    std::int64_t Q;    // N*P columns
    std::int64_t K;    // C*R*S
    std::int64_t HW, CHW, RS;
};

Geometry geometry(const Layer& l, std::int64_t N) {
    Geometry g{};
    g.N = N;
    g.C = l.C;
    g.H = l.H;
    g.W = l.W;
    g.M = l.M;
    g.R = l.R;
    g.S = l.S;
    g.stride = l.stride;
    g.pad = l.pad;
    g.E = l.E();
    g.F = l.F();
    g.P = g.E * g.F;
    g.Q = N * g.P;
    g.K = l.K();
    g.HW = g.H * g.W;
    g.CHW = g.C * g.HW;
    g.RS = g.R * g.S;
    return g;
}

// Packs panels [0, panels) x k in [k0, k1) of the implicit im2col matrix of the zero-padded
// input `src` into bp[panel][k - k0][NR]: element (k, column j) is src[koff[k] + coloff[j]].
// No bounds checks: padding lives in src, and columns past the end of the block repeat a
// valid column (their results are computed and never stored).
template <typename T>
void pack_panels(const float* src, const std::int64_t* koff, const std::int64_t* coloff, std::int64_t panels,
                 std::int64_t k0, std::int64_t k1, T* bp) {
    constexpr int NR = kNR<T>;
    for (std::int64_t pn = 0; pn < panels; ++pn) {
        const std::int64_t* co = coloff + pn * NR;
        T* dst = bp + pn * (k1 - k0) * NR;
        for (std::int64_t k = k0; k < k1; ++k, dst += NR) {
            const float* s = src + koff[k];
#pragma GCC unroll 32
            for (int j = 0; j < NR; ++j) dst[j] = T(s[co[j]]);
        }
    }
}

// The input with its zero padding made explicit, every element of `padded` (N*C planes of
// (H+2pad) x (W+2pad)) written. A worksharing loop without its own parallel region: called
// inside conv2d_impl's, the threads split the planes.
void pad_input(const Geometry& g, const float* in, float* padded) {
    const std::int64_t Hp = g.H + 2 * g.pad, Wp = g.W + 2 * g.pad, HWp = Hp * Wp;
#pragma omp for schedule(static)
    for (std::int64_t plane = 0; plane < g.N * g.C; ++plane) {
        float* dst = padded + plane * HWp;
        const float* from = in + plane * g.HW;
        std::fill(dst, dst + g.pad * Wp, 0.0f);
        for (std::int64_t h = 0; h < g.H; ++h) {
            float* row = dst + (h + g.pad) * Wp;
            std::fill(row, row + g.pad, 0.0f);
            std::copy(from + h * g.W, from + (h + 1) * g.W, row + g.pad);
            std::fill(row + g.pad + g.W, row + Wp, 0.0f);
        }
        std::fill(dst + (g.H + g.pad) * Wp, dst + HWp, 0.0f);
    }
}

// The weights packed [m-block][k][kMR], rows past M zero; a worksharing loop like pad_input.
template <typename Acc>
void pack_weights(const Geometry& g, const float* w, std::int64_t mblocks, Acc* apk) {
#pragma omp for schedule(static)
    for (std::int64_t mb = 0; mb < mblocks; ++mb) {
        Acc* dst = apk + mb * g.K * kMR;
        for (std::int64_t k = 0; k < g.K; ++k)
            for (int i = 0; i < kMR; ++i) {
                const std::int64_t m = mb * kMR + i;
                dst[k * kMR + i] = m < g.M ? Acc(w[m * g.K + k]) : Acc(0);
            }
    }
}

// conv2d_ref with the epilogue `ep` (conv2d_ref itself: none; conv2d_bias_relu_ref).
template <typename Acc>
void conv2d_impl(const Layer& layer, std::int64_t N, const float* in, const float* w, float* out,
                 const Epilogue<Acc>& ep) {
    using B = Blocking<Acc>;
    constexpr int MR = kMR;
    constexpr int NR = kNR<Acc>;
    const Geometry g = geometry(layer, N);
    if (g.Q <= 0 || g.M <= 0) return;
    if (g.K <= 0) {  // degenerate: no taps
        for (std::int64_t i = 0; i < N * g.M * g.P; ++i) out[i] = float(ep.apply(Acc(0), (i / g.P) % g.M));
        return;
    }

    // K blocks of nearly equal length, at most KC each.
    const std::int64_t nkb = ceil_div(g.K, B::KC);
    const std::int64_t kcb = ceil_div(g.K, nkb);

    // Work items: column blocks x M chunks (M only split when columns are too few).
    const std::int64_t threads = omp_get_max_threads();
    const std::int64_t target = 4 * threads;
    const std::int64_t mblocks = ceil_div(g.M, MR);
    std::int64_t nc = std::min<std::int64_t>(B::NC, ceil_div(g.Q, NR) * NR);
    while (ceil_div(g.Q, nc) < target && nc > 4 * NR) nc = std::max<std::int64_t>(4 * NR, ceil_div(nc / 2, NR) * NR);
    const std::int64_t ncb = ceil_div(g.Q, nc);
    const std::int64_t mchunks = std::min(mblocks, std::max<std::int64_t>(1, ceil_div(target, ncb)));
    const std::int64_t chunk_blocks = ceil_div(mblocks, mchunks);  // row blocks per chunk
    const std::int64_t items = ncb * ceil_div(mblocks, chunk_blocks);
    const std::int64_t mc_blocks = std::max<std::int64_t>(1, B::MC / MR);  // row blocks per L2 pass

    Scratch<Acc> ap(std::size_t(mblocks * MR * g.K));
    Acc* const apk = ap.data();

    // The input with its zero padding made explicit (the input itself when pad = 0), so
    // packing needs no bounds checks. Offsets: koff[k] for k = (c, r, s), column q = (n, e, f)
    // at n*C*Hp*Wp + e*stride*Wp + f*stride.
    const std::int64_t Hp = g.H + 2 * g.pad, Wp = g.W + 2 * g.pad, HWp = Hp * Wp, CHWp = g.C * HWp;
    Scratch<float> padded(g.pad > 0 ? std::size_t(N * CHWp) : 0);  // every element written below
    const float* const src = g.pad > 0 ? padded.data() : in;
    std::vector<std::int64_t> koff(static_cast<std::size_t>(g.K));
    for (std::int64_t c = 0, k = 0; c < g.C; ++c)
        for (std::int64_t r = 0; r < g.R; ++r)
            for (std::int64_t s = 0; s < g.S; ++s) koff[std::size_t(k++)] = c * HWp + r * Wp + s;

#pragma omp parallel
    {
        if (g.pad > 0) pad_input(g, in, padded.data());
        pack_weights(g, w, mblocks, apk);

        Scratch<Acc> bp(std::size_t(kcb * ceil_div(nc, NR) * NR));
        Scratch<Acc> cbuf(std::size_t(chunk_blocks * MR * ceil_div(nc, NR) * NR));
        std::vector<std::int64_t> colbase(static_cast<std::size_t>(nc));
        std::vector<std::int64_t> coloff(static_cast<std::size_t>(ceil_div(nc, NR) * NR));

#pragma omp for schedule(dynamic, 1)
        for (std::int64_t it = 0; it < items; ++it) {
            const std::int64_t jc = it / ceil_div(mblocks, chunk_blocks);
            const std::int64_t mch = it % ceil_div(mblocks, chunk_blocks);
            const std::int64_t q0 = jc * nc;
            const std::int64_t ncols = std::min(nc, g.Q - q0);
            const std::int64_t panels = ceil_div(ncols, NR);
            const std::int64_t mb0 = mch * chunk_blocks;
            const std::int64_t mb1 = std::min(mblocks, mb0 + chunk_blocks);
            for (std::int64_t j = 0; j < panels * NR; ++j) {
                const std::int64_t q = q0 + std::min(j, ncols - 1);
                const std::int64_t n = q / g.P, p = q % g.P;
                if (j < ncols) colbase[std::size_t(j)] = n * g.M * g.P + p;
                coloff[std::size_t(j)] = n * CHWp + (p / g.F) * g.stride * Wp + (p % g.F) * g.stride;
            }
            for (std::int64_t kb = 0; kb < nkb; ++kb) {
                const std::int64_t k0 = kb * kcb;
                const std::int64_t k1 = std::min(g.K, k0 + kcb);
                const std::int64_t kc = k1 - k0;
                const bool last = kb + 1 == nkb;
                pack_panels<Acc>(src, koff.data(), coloff.data(), panels, k0, k1, bp.data());
                for (std::int64_t ic = mb0; ic < mb1; ic += mc_blocks) {
                    const std::int64_t ic1 = std::min(mb1, ic + mc_blocks);
                    for (std::int64_t pn = 0; pn < panels; ++pn) {
                        const Acc* b = bp.data() + pn * kc * NR;
                        for (std::int64_t mb = ic; mb < ic1; ++mb) {
                            const Acc* a = apk + mb * g.K * MR + k0 * MR;
                            Acc* tile = cbuf.data() + ((mb - mb0) * panels + pn) * MR * NR;
                            const std::int64_t* cb = colbase.data() + pn * NR;
                            const bool full = (mb + 1) * MR <= g.M && (pn + 1) * NR <= ncols;
                            if (last && full && cb[NR - 1] == cb[0] + NR - 1) {  // one image, consecutive
                                micro_kernel<Acc>(a, b, kc, tile, kb > 0, out + cb[0] + mb * MR * g.P, g.P, ep,
                                                  mb * MR);
                                continue;
                            }
                            micro_kernel<Acc>(a, b, kc, tile, kb > 0, nullptr, 0);
                            if (!last) continue;
                            const int rows = int(std::min<std::int64_t>(MR, g.M - mb * MR));
                            const int cols = int(std::min<std::int64_t>(NR, ncols - pn * NR));
                            for (int i = 0; i < rows; ++i) {
                                const std::int64_t mo = (mb * MR + i) * g.P;
                                const Acc* trow = tile + i * NR;
                                if (ep.any()) {
                                    for (int j = 0; j < cols; ++j) out[cb[j] + mo] = float(ep.apply(trow[j], mb * MR + i));
                                } else {
                                    for (int j = 0; j < cols; ++j) out[cb[j] + mo] = float(trow[j]);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

}  // namespace

template <typename Acc>
void conv2d_ref(const Layer& layer, std::int64_t N, const float* in, const float* w, float* out) {
    conv2d_impl<Acc>(layer, N, in, w, out, Epilogue<Acc>{});
}

template <typename Acc>
void conv2d_bias_relu_ref(const Layer& layer, std::int64_t N, const float* in, const float* w, const float* bias,
                          bool relu, float* out) {
    std::vector<Acc> b;  // the bias in Acc (exact: a float widened or kept)
    if (bias) b.assign(bias, bias + layer.M);
    conv2d_impl<Acc>(layer, N, in, w, out, Epilogue<Acc>{bias ? b.data() : nullptr, relu});
}

template void conv2d_ref<float>(const Layer&, std::int64_t, const float*, const float*, float*);
template void conv2d_ref<double>(const Layer&, std::int64_t, const float*, const float*, float*);
template void conv2d_bias_relu_ref<float>(const Layer&, std::int64_t, const float*, const float*, const float*, bool,
                                          float*);
template void conv2d_bias_relu_ref<double>(const Layer&, std::int64_t, const float*, const float*, const float*, bool,
                                           float*);

namespace {
// sum over the taps of output (n, m, e, f) of term(x * w), in double, padding skipped: the
// one loop behind conv2d_element (term = identity) and conv2d_element_bound (|x * w|).
template <class Term>
double element_sum(const Layer& layer, const float* in, const float* w, std::int64_t n, int m, int e, int f,
                   Term term) {
    const Geometry g = geometry(layer, n + 1);
    double sum = 0;
    for (std::int64_t c = 0; c < g.C; ++c)
        for (std::int64_t r = 0; r < g.R; ++r)
            for (std::int64_t s = 0; s < g.S; ++s) {
                const std::int64_t ih = e * g.stride + r - g.pad;
                const std::int64_t iw = f * g.stride + s - g.pad;
                if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
                sum += term(double(in[n * g.CHW + c * g.HW + ih * g.W + iw]) *
                            double(w[((m * g.C + c) * g.R + r) * g.S + s]));
            }
    return sum;
}
}  // namespace

// Every output's conv2d_element, in order: the same loop, with no blocking and no threads.
void conv2d_naive(const Layer& layer, std::int64_t N, const float* in, const float* w, double* out) {
    const Geometry g = geometry(layer, N);
    for (std::int64_t n = 0; n < N; ++n)
        for (int m = 0; m < g.M; ++m)
            for (int e = 0; e < g.E; ++e)
                for (int f = 0; f < g.F; ++f)
                    out[((n * g.M + m) * g.E + e) * g.F + f] = conv2d_element(layer, in, w, n, m, e, f);
}

double conv2d_element(const Layer& layer, const float* in, const float* w, std::int64_t n, int m, int e, int f) {
    return element_sum(layer, in, w, n, m, e, f, [](double p) { return p; });
}

void conv2d_bound(const Layer& layer, std::int64_t N, const float* in, const float* w, float* bound) {
    std::vector<float> in_abs(static_cast<std::size_t>(layer.input_elems(N)));
    std::vector<float> w_abs(static_cast<std::size_t>(layer.weight_elems()));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < std::int64_t(in_abs.size()); ++i) in_abs[std::size_t(i)] = std::fabs(in[i]);
    for (std::size_t i = 0; i < w_abs.size(); ++i) w_abs[i] = std::fabs(w[i]);
    conv2d_ref<double>(layer, N, in_abs.data(), w_abs.data(), bound);
}

double conv2d_element_bound(const Layer& layer, const float* in, const float* w, std::int64_t n, int m, int e,
                            int f) {
    return element_sum(layer, in, w, n, m, e, f, [](double p) { return std::fabs(p); });
}

void conv2d_elements(const Layer& layer, const float* in, const float* w, const std::int64_t* idx, std::int64_t count,
                     double* value, double* bound) {
    const std::int64_t E = layer.E(), F = layer.F();
#pragma omp parallel for schedule(dynamic, 16)
    for (std::int64_t i = 0; i < count; ++i) {
        std::int64_t x = idx[i];
        const int f = int(x % F);
        x /= F;
        const int e = int(x % E);
        x /= E;
        const int m = int(x % layer.M);
        const std::int64_t n = x / layer.M;
        value[i] = conv2d_element(layer, in, w, n, m, e, f);
        bound[i] = conv2d_element_bound(layer, in, w, n, m, e, f);
    }
}

}  // namespace cs
