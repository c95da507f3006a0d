// Does the check catch real bugs on the GPU, in every precision class? The GPU side of
// tests/test_injected_errors.cpp (which emulates each class's arithmetic on the CPU): here
// the arithmetic is the GPU's own, and the check is the real harness — gpu::run_variant
// through cs::test::run_checked, which hands it the golden output and the per-element bound
// B = sum|w*x| (make_ref_problem: seed 7, conv2d_ref<double>, conv2d_bound), so PASS/FAIL is
// tolerance.hpp's passes(): max_rel_err <= threshold and max|out-golden|/(tau*B+u_out|golden|)
// <= 1, tau taken for the layer's min_terms().
//
// The variants are test-local (not in the registry), like test_layout_gpu.cu's: one plain
// direct convolution in NCHW, one thread per output, grid-stride loop, products summed in
// (c, r, s) order (the emulation's order), taps outside the input skipped. Its arithmetic is
// one of five, one per precision class:
//   fp32     float operands, float fma chain, float output                (DType::f32)
//   tf32     float operands rounded with cvt.rna.tf32.f32, float fma chain (DType::f32)
//   fp16     half operands, float fma chain, output rounded to half        (DType::f16)
//   bf16     bf16 operands, float fma chain, output rounded to bf16        (DType::bf16)
//   fp16acc  half operands, half running sum (__hfma: one rounding of x*w+s), half output
//            (DType::f16) — exactly the emulation tolerance.hpp's numbers come from.
// and one of four injections, all into one output channel m0, the rest of the output
// being correct, so the check has to find it among all the other elements:
//   none           the correct convolution
//   drop_tap       the tap (c=0, r=R/2, s=S/2) left out of every output of channel m0
//   wrong_channel  channel m0 computed with filter (m0+1) % M
//   shifted_pad    channel m0's window moved down one row: input row h+1 read for h (taps
//                  that fall outside the input read zero, as padding does)
// m0 is chosen on the host from the weights: the channel whose tap (0, R/2, S/2) has the
// largest |w| (|w| ~0.99 of the weight scale on every layer), so a dropped tap is as large
// as one tap gets — what tests/test_injected_errors.cpp drops too.
//
// Asserted, on each AlexNet layer at N=1 (pageable memory) and each class:
//   - every run is checked against the golden output with the bound (check "golden",
//     err.bound_checked) and writes every element (err.nonfinite == 0: a FAIL comes from the
//     values, not from the NaN poison);
//   - none -> PASS; wrong_channel -> FAIL; shifted_pad -> FAIL;
//   - drop_tap -> FAIL in every class, except fp16acc on conv2-5: there one tap (<= 0.036
//     per output) is below the half running sum's own rounding noise (tolerance.hpp's
//     comment, the documented gap), so nothing is asserted and max_bound_ratio is printed.
//
// STATUS: it runs in the GPU tests on the H200 (plots/h200/gpu_tests.log, the reference
// sweep's call at f83d02e), and the device printed exactly the prediction below, every
// number of every row (the log adds only the note on fp16acc's documented gap). It was
// written without device time and predicted on the CPU first, as follows. Its kernel
// body (between the "replay" markers below) was replayed on the CPU by a throw-away program
// that compiles that text as host code, with each class's arithmetic done by bit-exact
// roundings (half and bf16 to nearest even, tf32 to nearest with ties away, as cvt.rna; the
// half fma as one rounding of the exact x*w+s), on the same data (seed 7), and put through
// bench/tolerance.cpp's compare()/passes() with min_terms(), as the harness does. Its
// prediction, max_rel_err / max_bound_ratio (PASS needs <= threshold / <= 1):
//   layer  class    none                     drop_tap                 wrong_channel            shifted_pad
//   conv1  fp32     6.31e-07/0.0024    PASS  2.98e-02/123       FAIL  9.60e-01/3.48e+03  FAIL  9.87e-01/3.77e+03  FAIL
//   conv1  tf32     2.46e-04/0.159     PASS  2.99e-02/20.5      FAIL  9.60e-01/580       FAIL  9.87e-01/628       FAIL
//   conv1  fp16     4.12e-04/0.288     PASS  2.99e-02/29        FAIL  9.60e-01/685       FAIL  9.87e-01/766       FAIL
//   conv1  bf16     3.00e-03/0.396     PASS  3.20e-02/5.71      FAIL  9.60e-01/132       FAIL  9.87e-01/138       FAIL
//   conv1  fp16acc  5.31e-03/0.311     PASS  3.06e-02/2.01      FAIL  9.61e-01/56.9      FAIL  9.88e-01/61.9      FAIL
//   conv2  fp32     1.96e-06/0.00237   PASS  1.38e-02/42        FAIL  1.13e+00/1.53e+03  FAIL  1.08e+00/1.75e+03  FAIL
//   conv2  tf32     2.64e-04/0.0726    PASS  1.39e-02/7         FAIL  1.13e+00/254       FAIL  1.08e+00/292       FAIL
//   conv2  fp16     4.77e-04/0.167     PASS  1.40e-02/9.29      FAIL  1.13e+00/358       FAIL  1.08e+00/390       FAIL
//   conv2  bf16     3.63e-03/0.198     PASS  1.46e-02/1.8       FAIL  1.13e+00/69.1      FAIL  1.08e+00/73.3      FAIL
//   conv2  fp16acc  1.43e-02/0.389     PASS  2.02e-02/0.763     PASS  1.13e+00/25.3      FAIL  1.09e+00/29.1      FAIL
//   conv3  fp32     1.44e-06/0.00226   PASS  1.45e-02/38.3      FAIL  9.92e-01/1.18e+03  FAIL  8.35e-01/1.23e+03  FAIL
//   conv3  tf32     2.89e-04/0.0776    PASS  1.46e-02/6.38      FAIL  9.92e-01/197       FAIL  8.35e-01/205       FAIL
//   conv3  fp16     4.22e-04/0.136     PASS  1.46e-02/9.06      FAIL  9.92e-01/281       FAIL  8.35e-01/294       FAIL
//   conv3  bf16     3.16e-03/0.214     PASS  1.51e-02/1.73      FAIL  9.91e-01/54.6      FAIL  8.35e-01/57.3      FAIL
//   conv3  fp16acc  1.36e-02/0.267     PASS  1.65e-02/0.635     PASS  9.89e-01/19.6      FAIL  8.36e-01/20.3      FAIL
//   conv4  fp32     1.84e-06/0.00209   PASS  9.72e-03/16.5      FAIL  7.99e-01/959       FAIL  7.06e-01/987       FAIL
//   conv4  tf32     2.46e-04/0.0488    PASS  9.76e-03/2.74      FAIL  7.99e-01/160       FAIL  7.06e-01/165       FAIL
//   conv4  fp16     3.61e-04/0.108     PASS  9.79e-03/4.11      FAIL  7.99e-01/227       FAIL  7.06e-01/237       FAIL
//   conv4  bf16     2.99e-03/0.151     PASS  1.02e-02/0.79      FAIL  7.99e-01/44.1      FAIL  7.06e-01/46.3      FAIL
//   conv4  fp16acc  1.45e-02/0.373     PASS  1.45e-02/0.373     PASS  7.97e-01/15.9      FAIL  7.06e-01/16.4      FAIL
//   conv5  fp32     2.26e-06/0.00209   PASS  1.23e-02/21        FAIL  8.78e-01/1e+03     FAIL  1.03e+00/939       FAIL
//   conv5  tf32     2.78e-04/0.05      PASS  1.23e-02/3.53      FAIL  8.78e-01/167       FAIL  1.03e+00/157       FAIL
//   conv5  fp16     4.63e-04/0.0991    PASS  1.23e-02/4.91      FAIL  8.78e-01/240       FAIL  1.03e+00/220       FAIL
//   conv5  bf16     3.65e-03/0.174     PASS  1.33e-02/0.988     FAIL  8.80e-01/47.1      FAIL  1.03e+00/42.3      FAIL
//   conv5  fp16acc  1.71e-02/0.277     PASS  1.71e-02/0.346     PASS  8.86e-01/16.6      FAIL  1.03e+00/15.6      FAIL
//   (m0 = 27, 238, 262, 318, 101 on conv1-5; the dropped tap's |w| is 0.991, 1.000, 0.997,
//   0.996, 0.998 of the weight scale.) The GPU should reproduce these bit for bit: same data,
//   same fma order, roundings that are each one IEEE rounding to nearest. Thin margins: bf16's
//   dropped tap on conv4 fails only through max_rel_err (1.02e-2 against 1e-2; the bound
//   ratio is 0.79) and on conv5 by 1.3x (max_rel_err) and 0.988 (bound): one tap of a
//   K = 3456 sum is at the edge of what bf16's check sees (tolerance.hpp: bf16 catches taps
//   down to 0.15-0.76 of the weight scale). The correct results use at most 0.40 of the
//   per-element allowance and 0.34 of the max_rel_err threshold (fp16acc conv5, 1.71e-2).
#include "catch.hpp"
#include "gpu_test_util.hpp"
#include "simple_plan.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::alexnet;
using cs::test::device;
using cs::test::make_ref_problem;
using cs::test::run_checked;

namespace {

// The arithmetic of each class: operand type T, accumulator Acc, one fma step, the store.
enum class Arith { fp32, tf32, fp16, bf16, fp16acc };

template <Arith A>
struct Ops;

template <>
struct Ops<Arith::fp32> {
    using T = float;
    using Acc = float;
    static __device__ __forceinline__ Acc zero() { return 0.0f; }
    static __device__ __forceinline__ Acc fma(T x, T w, Acc s) { return __fmaf_rn(x, w, s); }
    static __device__ __forceinline__ void store(T* out, long long i, Acc s) { out[i] = s; }
};

// Round to tf32 (10 mantissa bits), to nearest, ties away from zero: the result is a float
// whose low 13 mantissa bits are zero.
__device__ __forceinline__ float tf32_rna(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

template <>
struct Ops<Arith::tf32> {
    using T = float;
    using Acc = float;
    static __device__ __forceinline__ Acc zero() { return 0.0f; }
    static __device__ __forceinline__ Acc fma(T x, T w, Acc s) { return __fmaf_rn(tf32_rna(x), tf32_rna(w), s); }
    static __device__ __forceinline__ void store(T* out, long long i, Acc s) { out[i] = s; }
};

template <>
struct Ops<Arith::fp16> {
    using T = __half;
    using Acc = float;
    static __device__ __forceinline__ Acc zero() { return 0.0f; }
    static __device__ __forceinline__ Acc fma(T x, T w, Acc s) {
        return __fmaf_rn(__half2float(x), __half2float(w), s);
    }
    static __device__ __forceinline__ void store(T* out, long long i, Acc s) { out[i] = __float2half_rn(s); }
};

template <>
struct Ops<Arith::bf16> {
    using T = __nv_bfloat16;
    using Acc = float;
    static __device__ __forceinline__ Acc zero() { return 0.0f; }
    static __device__ __forceinline__ Acc fma(T x, T w, Acc s) {
        return __fmaf_rn(__bfloat162float(x), __bfloat162float(w), s);
    }
    static __device__ __forceinline__ void store(T* out, long long i, Acc s) { out[i] = __float2bfloat16_rn(s); }
};

template <>
struct Ops<Arith::fp16acc> {
    using T = __half;
    using Acc = __half;
    static __device__ __forceinline__ Acc zero() { return __float2half_rn(0.0f); }
    // One rounding of x*w + s to half (HFMA), as the emulation's round_half(x*w + s).
    static __device__ __forceinline__ Acc fma(T x, T w, Acc s) { return __hfma(x, w, s); }
    static __device__ __forceinline__ void store(T* out, long long i, Acc s) { out[i] = s; }
};

// ---- replay: begin (the CPU replay compiles this text as host code) -----------------------
enum Inject : int { inject_none = 0, inject_drop_tap = 1, inject_wrong_channel = 2, inject_shifted_pad = 3 };

struct Shape {
    int C, H, W, M, R, S, stride, pad, E, F;
};

struct Bug {
    int mode;  // Inject
    int m0;    // the output channel it goes into
};

// One thread per output element (grid-stride), NCHW input, MCRS weights, NCHW output.
template <Arith A>
__global__ void injected_direct(const typename Ops<A>::T* in, const typename Ops<A>::T* w, typename Ops<A>::T* out,
                                long long N, Shape s, Bug bug) {
    const long long total = N * s.M * s.E * s.F;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int f = int(i % s.F);
        const int e = int(i / s.F % s.E);
        const int m = int(i / ((long long)s.E * s.F) % s.M);
        const long long n = i / ((long long)s.M * s.E * s.F);
        const bool hit = bug.mode != inject_none && m == bug.m0;
        const int mw = (hit && bug.mode == inject_wrong_channel) ? (m + 1) % s.M : m;  // filter used
        const int dh = (hit && bug.mode == inject_shifted_pad) ? 1 : 0;                // row shift
        const bool drop = hit && bug.mode == inject_drop_tap;
        typename Ops<A>::Acc acc = Ops<A>::zero();
        for (int c = 0; c < s.C; ++c)
            for (int r = 0; r < s.R; ++r) {
                const int h = e * s.stride - s.pad + r + dh;
                if (h < 0 || h >= s.H) continue;
                for (int q = 0; q < s.S; ++q) {
                    const int x = f * s.stride - s.pad + q;
                    if (x < 0 || x >= s.W) continue;
                    if (drop && c == 0 && r == s.R / 2 && q == s.S / 2) continue;
                    acc = Ops<A>::fma(in[((n * s.C + c) * s.H + h) * s.W + x],
                                      w[(((long long)mw * s.C + c) * s.R + r) * s.S + q], acc);
                }
            }
        Ops<A>::store(out, i, acc);
    }
}
// ---- replay: end ---------------------------------------------------------------------------

const char* inject_name(int mode) {
    switch (mode) {
        case inject_none: return "none";
        case inject_drop_tap: return "drop_tap";
        case inject_wrong_channel: return "wrong_channel";
        case inject_shifted_pad: return "shifted_pad";
    }
    return "?";
}

template <Arith A>
Variant injected_variant(const char* cls, Precision prec, DType io, Bug bug) {
    Variant v;
    v.name = std::string("test-injected-") + cls + "-" + inject_name(bug.mode);
    v.family = "test";
    v.precision = prec;
    v.io = io;
    v.idea = "test-local direct convolution with an injected bug";
    v.layouts = {Layout::nchw};
    v.supports = [](const Problem&, const cudaDeviceProp&) -> std::optional<std::string> { return std::nullopt; };
    v.make_plan = [bug](const Problem& p, const PlanContext&) -> std::unique_ptr<Plan> {
        const Layer l = p.layer;
        const Shape s{l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, l.E(), l.F()};
        using T = typename Ops<A>::T;
        return make_simple_plan(
            [s, bug](const DeviceIO& io, cudaStream_t st) {
                const long long total = io.N * s.M * s.E * s.F;
                const int blocks = int(std::min<long long>((total + 255) / 256, 8192));
                injected_direct<A><<<blocks, 256, 0, st>>>(static_cast<const T*>(io.in), static_cast<const T*>(io.w),
                                                           static_cast<T*>(io.out), io.N, s, bug);
                if (const cudaError_t err = cudaPeekAtLastError(); err != cudaSuccess)
                    throw std::runtime_error(std::string("injected_direct launch: ") + cudaGetErrorString(err));
            },
            std::string("test injected direct nchw, ") + inject_name(bug.mode) + " m0=" + std::to_string(bug.m0));
    };
    return v;
}

struct ClassCase {
    const char* name;
    Precision precision;
};

const ClassCase kClasses[] = {
    {"fp32", Precision::fp32}, {"tf32", Precision::tf32},       {"fp16", Precision::fp16},
    {"bf16", Precision::bf16}, {"fp16acc", Precision::fp16acc},
};

Variant make_variant(const ClassCase& c, Bug bug) {
    switch (c.precision) {
        case Precision::fp32: return injected_variant<Arith::fp32>(c.name, c.precision, DType::f32, bug);
        case Precision::tf32: return injected_variant<Arith::tf32>(c.name, c.precision, DType::f32, bug);
        case Precision::fp16: return injected_variant<Arith::fp16>(c.name, c.precision, DType::f16, bug);
        case Precision::bf16: return injected_variant<Arith::bf16>(c.name, c.precision, DType::bf16, bug);
        case Precision::fp16acc: return injected_variant<Arith::fp16acc>(c.name, c.precision, DType::f16, bug);
    }
    throw std::logic_error("unknown precision class");
}

// The output channel whose tap (c=0, r=R/2, s=S/2) has the largest |w| (first on ties).
int loudest_center_tap_channel(const Layer& l, const std::vector<float>& w) {
    int best = 0;
    float best_abs = -1;
    for (int m = 0; m < l.M; ++m) {
        const float a = std::fabs(w[std::size_t(((std::int64_t(m) * l.C + 0) * l.R + l.R / 2) * l.S + l.S / 2)]);
        if (a > best_abs) best_abs = a, best = m;
    }
    return best;
}

// Under half accumulation one tap of conv2-5 (K >= 2304) is below the running sum's
// rounding noise (tolerance.hpp): the documented gap, where a dropped tap is not asserted.
bool drop_tap_below_noise(Precision p, const Layer& l) { return p == Precision::fp16acc && l.K() > 1000; }

}  // namespace

TEST_CASE("on the GPU, every precision class passes the correct convolution and fails a dropped tap, a wrong "
          "channel and a shifted padding on every AlexNet layer",
          "[gpu][injected]") {
    auto& ctx = device();
    const int modes[] = {inject_none, inject_drop_tap, inject_wrong_channel, inject_shifted_pad};
    std::printf("GPU injected errors, AlexNet N=1: max_rel_err/max_bound_ratio status (PASS needs <= threshold / "
                "<= 1)\n");
    std::printf("%-6s %-8s %-24s %-24s %-24s %-24s\n", "layer", "class", "none", "drop_tap", "wrong_channel",
                "shifted_pad");
    for (const char* name : {"conv1", "conv2", "conv3", "conv4", "conv5"}) {
        const Layer l = alexnet(name);
        const auto rp = make_ref_problem(l, 1);
        const int m0 = loudest_center_tap_channel(l, rp.w);
        const float tap =
            rp.w[std::size_t(((std::int64_t(m0) * l.C + 0) * l.R + l.R / 2) * l.S + l.S / 2)];
        std::printf("%s: m0 = %d, dropped tap w = %.4g (%.3f of the weight scale)\n", name, m0, double(tap),
                    std::fabs(double(tap)) / double(weight_scale(l)));
        for (const auto& cls : kClasses) {
            std::string line;
            for (const int mode : modes) {
                const Variant v = make_variant(cls, Bug{mode, m0});
                const auto r = run_checked(ctx, v, MemoryMode::pageable, rp, test::test_options());
                char cell[96];
                std::snprintf(cell, sizeof cell, "%.2e/%-9.3g %-5s ", r.err.max_rel_err, r.err.max_bound_ratio,
                              std::string(to_string(r.status)).c_str());
                line += cell;

                INFO(name << " " << cls.name << " " << inject_name(mode) << " m0=" << m0 << ": "
                          << to_string(r.status) << " " << r.reason << " [" << r.detail << "] max_rel_err "
                          << r.err.max_rel_err << " (threshold " << r.threshold << "), max_bound_ratio "
                          << r.err.max_bound_ratio << " (tau " << r.err.bound_tau << ")");
                // A FAIL must come from the check of the values: every element written, the
                // golden output and the bound both used.
                REQUIRE((r.status == Status::pass || r.status == Status::fail));
                CHECK(r.check == "golden");
                CHECK(r.err.bound_checked);
                CHECK(r.err.nonfinite == 0);
                switch (mode) {
                    case inject_none: CHECK(r.status == Status::pass); break;
                    case inject_wrong_channel:
                    case inject_shifted_pad: CHECK(r.status == Status::fail); break;
                    case inject_drop_tap:
                        if (!drop_tap_below_noise(cls.precision, l)) CHECK(r.status == Status::fail);
                        break;
                }
            }
            std::printf("%-6s %-8s %s%s\n", name, cls.name, line.c_str(),
                        drop_tap_below_noise(cls.precision, l) ? " (drop_tap: documented gap, not asserted)" : "");
        }
    }
}
