// Standalone check and timing of the Hopper family, independent of the harness:
// builds Problems for the five AlexNet layers and odd shapes, runs the plans of each rung on
// random data (fp16, bf16 and tf32, NHWC and NCHW), compares with a naive fp32 GPU direct
// convolution (max|err| / max|ref| <= 5e-3 fp16, 1e-2 bf16, 5e-3 tf32: the tool's class
// thresholds), with NaN-poisoned outputs; then times each (CUDA events, L2 flushed, median of
// 20) and a cuBLAS GEMM of the same M x K x N*E*F shape (fp16, and tf32:
// CUBLAS_COMPUTE_32F_FAST_TF32 on fp32 data).
// Reference operands: fp16 / bf16 compare with the convolution of the same rounded operands
// (the harness converts before the kernel); tf32 with the convolution of the fp32 operands as
// they are (the tf32 rounding / truncation is the variant's error, as in the tool). tf32 also
// gets the tool's per-element check: |err| <= bound * sum|w*x| of that output (bound =
// tolerance.cpp's bound_factor(tf32, min_terms(layer)): 6e-4 where >= 363 products), "elem"
// in the log is the largest |err| / sum|w*x| found.
//
// Build (on this machine or the device; see tools/dev/hopper/build.sh):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I gpu -I gpu/variants
//        -I gpu/variants/hopper -I layers tools/dev/hopper/test_hopper.cu
//        gpu/variants/hopper/wgmma_{cpasync,tma,ws}.cu gpu/cuda_check.cpp
//        -lcublas -o test_hopper
// Options: --rung cp|tma|ws|pp|all (comma-separated list allowed)   --quick (odd shapes only, no timing)   --cublas-only (ceilings only)
//          --no-cublas   --no-tune (default tile only)   --reps N   --no-time (correctness only)
//          --big-only (only the N=128 cases: checked, then timed)
//          --dt fp16,bf16,tf32 (any subset, comma-separated; default all three). Every tile
//          config is run (correctness, and timed at N=128) for fp16 NHWC and tf32 NHWC.
#include "cuda_check.hpp"
#include "hopper_api.hpp"
#include "tolerance.hpp"
#include "variant.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace cs;
using namespace cs::gpu;
namespace hp = cs::gpu::variants::hopper;

#define CK(x) CS_CUDA_CHECK(x)

// ---- device helpers -------------------------------------------------------------------------
__device__ __forceinline__ std::uint64_t splitmix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
__global__ void gen_kernel(float* x, std::int64_t n, std::uint64_t seed, float scale) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const std::uint64_t h = splitmix(seed * 0x100000001B3ull ^ std::uint64_t(i));
    x[i] = (float(h >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * scale;
}
template <class T>
__device__ __forceinline__ T to_t(float x);
template <>
__device__ __forceinline__ __half to_t<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 to_t<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <>
__device__ __forceinline__ float to_t<float>(float x) { return x; }  // tf32: fp32 operands as they are
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_f(float x) { return x; }

template <class T>
__global__ void round_kernel(const float* x, T* y, float* xr, std::int64_t n) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const T v = to_t<T>(x[i]);
    y[i] = v;
    xr[i] = to_f(v);
}
// [A][B][H][W] -> [A][H][W][B]  (NCHW -> NHWC, KCRS -> KRSC)
template <class T>
__global__ void to_channels_last(const T* s, T* d, int A, int B, int H, int W) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t n = std::int64_t(A) * B * H * W;
    if (i >= n) return;
    const int b = int(i % B);
    std::int64_t q = i / B;
    const int w = int(q % W);
    q /= W;
    const int h = int(q % H);
    const int a = int(q / H);
    d[i] = s[((std::int64_t(a) * B + b) * H + h) * W + w];
}
// The variant's output (layout) -> float NCHW.
template <class T>
__global__ void out_to_nchw_float(const T* o, float* f, int N, int M, int E, int F, int nhwc) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t tot = std::int64_t(N) * M * E * F;
    if (i >= tot) return;
    const int x = int(i % F);
    std::int64_t q = i / F;
    const int y = int(q % E);
    q /= E;
    const int m = int(q % M);
    const int n = int(q / M);
    const std::int64_t src = nhwc ? ((std::int64_t(n) * E + y) * F + x) * M + m : i;
    f[i] = to_f(o[src]);
}
struct ConvDesc {
    int N, C, H, W, M, R, S, st, pad, E, F;
};
// out = the convolution, aout = sum |w*x| of each output (the per-element error scale).
__global__ void ref_conv_kernel(const float* __restrict__ in, const float* __restrict__ w, float* __restrict__ out,
                                float* __restrict__ aout, ConvDesc d) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t tot = std::int64_t(d.N) * d.M * d.E * d.F;
    if (i >= tot) return;
    const int f = int(i % d.F);
    std::int64_t q = i / d.F;
    const int e = int(q % d.E);
    q /= d.E;
    const int m = int(q % d.M);
    const int n = int(q / d.M);
    float acc = 0.0f, aacc = 0.0f;
    for (int c = 0; c < d.C; ++c) {
        const float* ip = in + (std::int64_t(n) * d.C + c) * d.H * d.W;
        const float* wp = w + (std::int64_t(m) * d.C + c) * d.R * d.S;
        for (int r = 0; r < d.R; ++r) {
            const int y = e * d.st + r - d.pad;
            if (y < 0 || y >= d.H) continue;
            for (int s = 0; s < d.S; ++s) {
                const int x = f * d.st + s - d.pad;
                if (x < 0 || x >= d.W) continue;
                const float pr = ip[y * d.W + x] * wp[r * d.S + s];
                acc = fmaf(ip[y * d.W + x], wp[r * d.S + s], acc);
                aacc += fabsf(pr);
            }
        }
    }
    out[i] = acc;
    aout[i] = aacc;
}
struct CmpOut {
    unsigned maxerr, maxref, maxelem;  // maxelem: max |err| / sum|w*x| (float bits)
    unsigned long long nonfinite, worst;
};
// Warp-reduced (one atomic per warp and quantity): the N=128 outputs are 10-37 M elements.
__global__ void compare_kernel(const float* a, const float* ref, const float* aref, std::int64_t n, CmpOut* o) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    float mref = 0.0f, merr = 0.0f, melem = 0.0f;
    unsigned bad = 0;
    if (i < n) {
        const float v = a[i], r = ref[i];
        mref = fabsf(r);
        if (!isfinite(v)) {
            bad = 1;
            atomicMin(&o->worst, (unsigned long long)i);
        } else {
            merr = fabsf(v - r);
            const float sa = aref[i];
            melem = sa > 0.0f ? merr / sa : (merr > 0.0f ? INFINITY : 0.0f);
        }
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        mref = fmaxf(mref, __shfl_xor_sync(0xffffffffu, mref, d));
        merr = fmaxf(merr, __shfl_xor_sync(0xffffffffu, merr, d));
        melem = fmaxf(melem, __shfl_xor_sync(0xffffffffu, melem, d));
        bad += __shfl_xor_sync(0xffffffffu, bad, d);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMax(&o->maxref, __float_as_uint(mref));
        atomicMax(&o->maxerr, __float_as_uint(merr));
        atomicMax(&o->maxelem, __float_as_uint(melem));
        if (bad) atomicAdd(&o->nonfinite, (unsigned long long)bad);
    }
}

// ---- host helpers -------------------------------------------------------------------------
static void gen(float* x, std::int64_t n, std::uint64_t seed, float scale) {
    gen_kernel<<<unsigned((n + 255) / 256), 256>>>(x, n, seed, scale);
    CS_CUDA_CHECK_LAUNCH();
}
static unsigned blocks(std::int64_t n) { return unsigned((n + 255) / 256); }

// Synchronise with a deadline: a deadlocked pipeline must not eat the device lease.
static void sync_deadline(cudaStream_t s, const char* what, double seconds = 10.0) {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        const cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) {
            std::printf("FATAL %s: %s\n", what, cudaGetErrorString(e));
            std::fflush(stdout);
            _exit(2);
        }
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) {
            std::printf("FATAL %s: still running after %.0f s (deadlock?)\n", what, seconds);
            std::fflush(stdout);
            _exit(3);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

struct Options {
    bool cp = true, tma = true, ws = true, pp = true, quick = false, cublas = true, tune = true, ours = true;
    bool f16 = true, b16 = true, t32 = true, timing = true, big_only = false;
    int reps = 20;
};

struct Case {
    Layer l;
    std::int64_t N;
    bool time;
    std::size_t ws_limit;  // 0: large; in bytes of 2-byte elements (scaled by sizeof(T) / 2)
};

static Layer mk(const char* n, int C, int H, int W, int M, int R, int S, int st, int pad) {
    Layer l;
    l.name = n;
    l.C = C, l.H = H, l.W = W, l.M = M, l.R = R, l.S = S, l.stride = st, l.pad = pad;
    return l;
}

struct Timer {
    cudaEvent_t a, b;
    void* flush = nullptr;
    std::size_t flush_bytes = std::size_t(256) << 20;
    Timer() {
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        CK(cudaMalloc(&flush, flush_bytes));
    }
    template <class F>
    double median_ms(F&& f, int reps, cudaStream_t s) {
        std::vector<float> t;
        for (int i = 0; i < reps + 3; ++i) {
            CK(cudaMemsetAsync(flush, i & 0xFF, flush_bytes, s));
            CK(cudaEventRecord(a, s));
            f();
            CK(cudaEventRecord(b, s));
            sync_deadline(s, "timing");
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (i >= 3) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }
};

struct Row {
    std::string layer, rung, dt, layout, cfg;
    double ms, tflops;
    bool pass;
};
static std::vector<Row> g_rows;
static int g_fail = 0;

// tf32 = false: half in / out, fp32 accumulation; true: fp32 in / out,
// CUBLAS_COMPUTE_32F_FAST_TF32.
static double cublas_ms(const Layer& l, std::int64_t N, Timer& tm, cudaStream_t s, int reps, bool tf32 = false) {
    const std::int64_t M = l.M, K = l.K(), P = N * l.E() * l.F();
    const std::int64_t es = tf32 ? 4 : 2;
    const cudaDataType_t dty = tf32 ? CUDA_R_32F : CUDA_R_16F;
    const cublasComputeType_t cty = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    float *fa, *fb;
    void *A, *B, *C;
    CK(cudaMalloc(&fa, sizeof(float) * M * K));
    CK(cudaMalloc(&fb, sizeof(float) * K * P));
    CK(cudaMalloc(&A, es * M * K));
    CK(cudaMalloc(&B, es * K * P));
    CK(cudaMalloc(&C, es * M * P));
    gen(fa, M * K, 11, 0.1f);
    gen(fb, K * P, 12, 1.0f);
    float* tmp;
    CK(cudaMalloc(&tmp, sizeof(float) * std::max(M * K, K * P)));
    if (tf32) {
        CK(cudaMemcpy(A, fa, 4 * M * K, cudaMemcpyDeviceToDevice));
        CK(cudaMemcpy(B, fb, 4 * K * P, cudaMemcpyDeviceToDevice));
    } else {
        round_kernel<__half><<<blocks(M * K), 256>>>(fa, static_cast<__half*>(A), tmp, M * K);
        round_kernel<__half><<<blocks(K * P), 256>>>(fb, static_cast<__half*>(B), tmp, K * P);
    }
    CK(cudaDeviceSynchronize());
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return -1;
    cublasSetStream(h, s);
    const float alpha = 1.0f, beta = 0.0f;
    bool ok = true;
    auto run = [&] {
        // C (M x P, col-major, ld M) = W (K x M col-major)^T * B (K x P col-major)
        if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(M), int(P), int(K), &alpha, A, dty, int(K), B, dty,
                         int(K), &beta, C, dty, int(M), cty, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
            ok = false;
    };
    const double ms = tm.median_ms(run, reps, s);
    cublasDestroy(h);
    CK(cudaFree(fa));
    CK(cudaFree(fb));
    CK(cudaFree(tmp));
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    return ok ? ms : -1;
}

template <class T>
static void run_dtype(const Case& cs_, DType dt, const Options& o, const cudaDeviceProp& prop, Timer& tm,
                      cudaStream_t s, const float* f_in, const float* f_w) {
    const Layer& l = cs_.l;
    const std::int64_t N = cs_.N;
    const int E = l.E(), F = l.F();
    const std::int64_t nin = l.input_elems(N), nw = l.weight_elems(), nout = l.output_elems(N);
    const bool tf32 = dt == DType::f32;
    const char* dname = dt == DType::bf16 ? "bf16" : tf32 ? "tf32" : "fp16";
    const Precision prec = dt == DType::bf16 ? Precision::bf16 : tf32 ? Precision::tf32 : Precision::fp16;
    const double tol = cs::gpu::threshold(prec);
    // per-element check (tf32 only): tolerance.cpp's bound for the layer's fewest products
    const double ebound = tf32 ? cs::gpu::bound_factor(prec, cs::gpu::min_terms(l)) : 0;
    constexpr std::int64_t es = sizeof(T);

    T *in_nchw, *w_kcrs, *in_nhwc, *w_krsc, *out;
    float *in_r, *w_r, *ref, *aref, *outf;
    CmpOut* cmp;
    CK(cudaMalloc(&in_nchw, es * nin));
    CK(cudaMalloc(&in_nhwc, es * nin));
    CK(cudaMalloc(&w_kcrs, es * nw));
    CK(cudaMalloc(&w_krsc, es * nw));
    CK(cudaMalloc(&out, es * nout));
    CK(cudaMalloc(&in_r, 4 * nin));
    CK(cudaMalloc(&w_r, 4 * nw));
    CK(cudaMalloc(&ref, 4 * nout));
    CK(cudaMalloc(&aref, 4 * nout));
    CK(cudaMalloc(&outf, 4 * nout));
    CK(cudaMalloc(&cmp, sizeof(CmpOut)));
    round_kernel<T><<<blocks(nin), 256>>>(f_in, in_nchw, in_r, nin);
    round_kernel<T><<<blocks(nw), 256>>>(f_w, w_kcrs, w_r, nw);
    to_channels_last<T><<<blocks(nin), 256>>>(in_nchw, in_nhwc, int(N), l.C, l.H, l.W);
    to_channels_last<T><<<blocks(nw), 256>>>(w_kcrs, w_krsc, l.M, l.C, l.R, l.S);
    const ConvDesc cd{int(N), l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, E, F};
    ref_conv_kernel<<<blocks(nout), 256>>>(in_r, w_r, ref, aref, cd);
    CS_CUDA_CHECK_LAUNCH();
    CK(cudaDeviceSynchronize());

    const double flops = l.flops(N);
    for (int rung = 0; rung < 4; ++rung) {
        if (rung == 0 && !o.cp) continue;
        if (rung == 1 && !o.tma) continue;
        if (rung == 2 && !o.ws) continue;
        if (rung == 3 && !o.pp) continue;
        const char* rname = rung == 0 ? "wgmma-cp" : rung == 1 ? "wgmma-tma" : rung == 2 ? "wgmma-ws" : "wgmma-pp";
        for (Layout lay : {Layout::nhwc, Layout::nchw}) {
            const bool nhwc = lay == Layout::nhwc;
            Problem p{l, N, lay};
            const auto why = rung == 0   ? hp::cpasync_supports(p, prop)
                             : rung == 1 ? hp::tma_supports(p, prop)
                                         : hp::ws_supports(p, prop);
            if (why) {
                std::printf("%-12s N=%-4lld %-9s %s %s SKIP: %s\n", l.name.c_str(), (long long)N, rname, dname,
                            nhwc ? "nhwc" : "nchw", why->c_str());
                continue;
            }
            std::vector<int> cfgs = {-1};
            const int ncfg = rung == 0   ? hp::cpasync_num_configs()
                             : rung == 1 ? hp::tma_num_configs()
                                         : hp::ws_num_configs();
            if (o.tune && nhwc && (dt == DType::f16 || dt == DType::f32))
                for (int c = 0; c < ncfg; ++c) cfgs.push_back(c);
            for (int cfg : cfgs) {
                PlanContext ctx{prop, 0, cs_.ws_limit ? cs_.ws_limit * sizeof(T) / 2 : (std::size_t(8) << 30), N};
                std::unique_ptr<Plan> plan;
                try {
                    plan = rung == 0   ? hp::cpasync_plan(dt, p, ctx, cfg)
                           : rung == 1 ? hp::tma_plan(dt, p, ctx, cfg)
                           : rung == 2 ? hp::ws_plan(dt, p, ctx, cfg)
                                       : hp::pp_plan(dt, p, ctx, cfg);
                } catch (const std::exception& e) {
                    std::printf("%-12s N=%-4lld %-9s %s %s cfg %d PLAN-SKIP: %s\n", l.name.c_str(), (long long)N,
                                rname, dname, nhwc ? "nhwc" : "nchw", cfg, e.what());
                    continue;
                }
                const std::string cname = rung == 0   ? hp::cpasync_config_name(cfg, dt)
                                          : rung == 1 ? hp::tma_config_name(cfg, dt)
                                                      : hp::ws_config_name(cfg, dt);
                DeviceIO io{nhwc ? (const void*)in_nhwc : (const void*)in_nchw,
                            nhwc ? (const void*)w_krsc : (const void*)w_kcrs, out, N};
                CK(cudaMemsetAsync(out, 0xFF, es * nout, s));  // NaN in every type
                try {
                    plan->run(io, s);
                } catch (const std::exception& e) {
                    std::printf("ERROR run: %s\n", e.what());
                    ++g_fail;
                    continue;
                }
                sync_deadline(s, (l.name + " " + rname).c_str());
                out_to_nchw_float<T><<<blocks(nout), 256, 0, s>>>(out, outf, int(N), l.M, E, F, nhwc ? 1 : 0);
                CmpOut z{0, 0, 0, 0, ~0ull};
                CK(cudaMemcpyAsync(cmp, &z, sizeof z, cudaMemcpyHostToDevice, s));
                compare_kernel<<<blocks(nout), 256, 0, s>>>(outf, ref, aref, nout, cmp);
                CmpOut h{};
                CK(cudaMemcpyAsync(&h, cmp, sizeof h, cudaMemcpyDeviceToHost, s));
                sync_deadline(s, "compare");
                float maxerr, maxref, maxelem;
                std::memcpy(&maxerr, &h.maxerr, 4);
                std::memcpy(&maxref, &h.maxref, 4);
                std::memcpy(&maxelem, &h.maxelem, 4);
                const double rel = maxref > 0 ? maxerr / maxref : maxerr;
                const bool elem_ok = !tf32 || maxelem <= ebound;
                const bool pass = h.nonfinite == 0 && rel <= tol && elem_ok;
                if (!pass) {
                    ++g_fail;
                    if (nout <= (std::int64_t(1) << 24)) {  // where the errors are: first mismatches
                        std::vector<float> ho(nout), hr(nout);
                        CK(cudaMemcpy(ho.data(), outf, 4 * nout, cudaMemcpyDeviceToHost));
                        CK(cudaMemcpy(hr.data(), ref, 4 * nout, cudaMemcpyDeviceToHost));
                        std::int64_t bad = 0;
                        int shown = 0;
                        for (std::int64_t i = 0; i < nout; ++i) {
                            const float d = std::fabs(ho[i] - hr[i]);
                            if (!(d <= tol * maxref)) {
                                ++bad;
                                if (shown < 6) {
                                    const int x = int(i % F), y = int(i / F % E), m = int(i / (std::int64_t(E) * F) % l.M);
                                    const int n = int(i / (std::int64_t(E) * F * l.M));
                                    std::printf("    mismatch n=%d m=%d e=%d f=%d: got %g want %g\n", n, m, y, x, ho[i],
                                                hr[i]);
                                    ++shown;
                                }
                            }
                        }
                        std::printf("    %lld of %lld outputs off\n", (long long)bad, (long long)nout);
                    }
                }
                double ms = -1;
                if (cs_.time && pass && o.timing) ms = tm.median_ms([&] { plan->run(io, s); }, o.reps, s);
                const double tf = ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0;
                std::printf("%-12s N=%-4lld %-9s %s %s %-34s %s rel %.2e elem %.2e%s nonfinite %llu", l.name.c_str(),
                            (long long)N, rname, dname, nhwc ? "nhwc" : "nchw",
                            (cfg < 0 ? "default" : cname.c_str()), pass ? "PASS" : "FAIL", rel, double(maxelem),
                            tf32 ? (elem_ok ? "<=bound" : ">BOUND") : "", (unsigned long long)h.nonfinite);
                if (h.nonfinite) std::printf(" (first at %llu)", h.worst);
                if (ms > 0) std::printf("  %.4f ms %.1f TFLOP/s", ms, tf);
                std::printf("\n");
                if (cfg < 0) std::printf("    detail: %s\n", plan->detail().c_str());
                std::fflush(stdout);
                if (ms > 0)
                    g_rows.push_back({l.name, rname, dname, nhwc ? "nhwc" : "nchw", cfg < 0 ? "default" : cname, ms,
                                      tf, pass});
            }
        }
    }
    CK(cudaFree(in_nchw));
    CK(cudaFree(in_nhwc));
    CK(cudaFree(w_kcrs));
    CK(cudaFree(w_krsc));
    CK(cudaFree(out));
    CK(cudaFree(in_r));
    CK(cudaFree(w_r));
    CK(cudaFree(ref));
    CK(cudaFree(aref));
    CK(cudaFree(outf));
    CK(cudaFree(cmp));
}

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--rung" && i + 1 < argc) {
            const std::string r = argv[++i];
            auto has = [&](const char* n) { return r == "all" || ("," + r + ",").find(std::string(",") + n + ",") != std::string::npos; };
            o.cp = has("cp");
            o.tma = has("tma");
            o.ws = has("ws");
            o.pp = has("pp");
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--no-cublas") {
            o.cublas = false;
        } else if (a == "--cublas-only") {
            o.ours = false;
        } else if (a == "--no-tune") {
            o.tune = false;
        } else if (a == "--probe") {
            cudaDeviceProp pr{};
            CK(cudaGetDeviceProperties(&pr, 0));
            std::printf("probe: %s cc %d.%d\n", pr.name, pr.major, pr.minor);
            return 0;
        } else if (a == "--reps" && i + 1 < argc) {
            o.reps = std::atoi(argv[++i]);
        } else if (a == "--big-only") {
            o.big_only = true;
        } else if (a == "--no-time") {
            o.timing = false;
            o.cublas = false;
        } else if (a == "--dt" && i + 1 < argc) {
            const std::string d = argv[++i];
            o.f16 = d.find("fp16") != std::string::npos;
            o.b16 = d.find("bf16") != std::string::npos;
            o.t32 = d.find("tf32") != std::string::npos;
        }
    }
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s cc %d.%d, %d SMs, L2 %d MB\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount, prop.l2CacheSize >> 20);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    Timer tm;

    std::vector<Case> cases;
    // odd shapes: the project's GPU-test shapes (N=3) and a few of ours
    const Layer odd[] = {
        mk("c8_9x9_m24", 8, 9, 9, 24, 3, 3, 1, 1),       mk("c16_7x7_m72", 16, 7, 7, 72, 5, 5, 1, 2),
        mk("c24_9x11_s2", 24, 9, 11, 40, 3, 5, 2, 1),     mk("c40_13_m200", 40, 13, 13, 200, 3, 3, 1, 1),
        mk("c96_6x6_m8", 96, 6, 6, 8, 1, 1, 1, 0),        mk("odd_c3_s2", 3, 19, 23, 5, 5, 3, 2, 1),
        mk("odd_c7_p1", 7, 9, 9, 4, 3, 3, 1, 1),          mk("odd_tile2", 2, 40, 37, 3, 4, 4, 1, 0),
        mk("odd_1x1", 5, 6, 7, 6, 1, 1, 1, 0),            mk("odd_tile3", 1, 70, 70, 2, 3, 3, 1, 1),
        mk("odd_s4_c3", 3, 35, 31, 7, 11, 11, 4, 0),      mk("odd_c33_5x5", 33, 11, 13, 9, 5, 5, 1, 2),
    };
    if (!o.big_only)
        for (const Layer& l : odd) cases.push_back({l, 3, false, 0});
    const Layer alex[] = {
        mk("conv1", 3, 227, 227, 96, 11, 11, 4, 0),  mk("conv2", 96, 27, 27, 256, 5, 5, 1, 2),
        mk("conv3", 256, 13, 13, 384, 3, 3, 1, 1),   mk("conv4", 384, 13, 13, 384, 3, 3, 1, 1),
        mk("conv5", 384, 13, 13, 256, 3, 3, 1, 1),
    };
    // chunked workspace (2 images per chunk) on conv1 / conv2 at N=5
    if (!o.big_only) {
        cases.push_back({alex[0], 5, false, std::size_t(2) * 57 * 57 * 48 * 2 + 96 * 432 * 2 + 64});
        cases.push_back({alex[1], 5, false, std::size_t(2) * 27 * 27 * 96 * 2 + 256 * 2400 * 2 + 64});
    }
    if (!o.quick) {
        if (!o.big_only)
            for (const Layer& l : alex) cases.push_back({l, 1, false, 0});
        for (const Layer& l : alex) cases.push_back({l, 128, true, 0});
        // conv1 after space-to-depth as a plain NHWC layer: the GEMM alone, no transform
        cases.push_back({mk("conv1s2d", 48, 57, 57, 96, 3, 3, 1, 0), 128, true, 0});
    }

    if (o.ours) {
        for (const Case& c : cases) {
            const std::int64_t nin = c.l.input_elems(c.N), nw = c.l.weight_elems();
            float *fi, *fw;
            CK(cudaMalloc(&fi, 4 * nin));
            CK(cudaMalloc(&fw, 4 * nw));
            gen(fi, nin, 1 + c.N, 1.0f);
            gen(fw, nw, 2 + c.N, std::sqrt(3.0f / float(c.l.K())));
            CK(cudaDeviceSynchronize());
            if (o.f16) run_dtype<__half>(c, DType::f16, o, prop, tm, s, fi, fw);
            if (o.b16) run_dtype<__nv_bfloat16>(c, DType::bf16, o, prop, tm, s, fi, fw);
            if (o.t32) run_dtype<float>(c, DType::f32, o, prop, tm, s, fi, fw);
            CK(cudaFree(fi));
            CK(cudaFree(fw));
        }
    }
    std::vector<double> cub(5, -1), cubt(5, -1);
    if (o.cublas && !o.quick)
        for (int i = 0; i < 5; ++i) {
            if (o.f16 || o.b16) cub[i] = cublas_ms(alex[i], 128, tm, s, o.reps, false);
            if (o.t32) cubt[i] = cublas_ms(alex[i], 128, tm, s, o.reps, true);
        }

    auto cell = [](const Row* r) {
        static char b[4][32];
        static int k = 0;
        k = (k + 1) % 4;
        if (r)
            std::snprintf(b[k], 32, "%.4f %4.0f", r->ms, r->tflops);
        else
            std::snprintf(b[k], 32, "-");
        return b[k];
    };
    auto find = [](const std::string& ln, const char* rn, const char* dt, const char* lay) -> const Row* {
        for (const Row& r : g_rows)
            if (r.layer == ln && r.rung == rn && r.dt == dt && r.layout == lay && r.cfg == "default") return &r;
        return nullptr;
    };
    auto best_of = [](const std::string& ln, const char* rn, const char* dt) -> const Row* {
        const Row* best = nullptr;
        for (const Row& r : g_rows)
            if (r.layer == ln && r.rung == rn && r.dt == dt && r.layout == std::string("nhwc") &&
                (!best || r.ms < best->ms))
                best = &r;
        return best;
    };
    // summary at N=128
    if (o.f16 || o.b16) {
        std::printf("\n==== summary N=128 (ms, TFLOP/s; best tile of fp16 NHWC in brackets) ====\n");
        std::printf("%-6s %-9s %-14s %-14s %-14s %-14s %-24s\n", "layer", "rung", "fp16 nhwc", "fp16 nchw",
                    "bf16 nhwc", "bf16 nchw", "best fp16 nhwc tile");
        for (int i = 0; i < 5; ++i) {
            const std::string ln = alex[i].name;
            if (cub[i] > 0)
                std::printf("%-6s %-9s %.4f %.0f (cuBLAS fp16 GEMM, K=%lld)\n", ln.c_str(), "cublas", cub[i],
                            alex[i].flops(128) / (cub[i] * 1e-3) / 1e12, (long long)alex[i].K());
            for (const char* rn : {"wgmma-cp", "wgmma-tma", "wgmma-ws", "wgmma-pp"}) {
                const Row* best = best_of(ln, rn, "fp16");
                if (!best) continue;
                std::printf("%-6s %-9s %-14s %-14s %-14s %-14s %.4f [%s]\n", ln.c_str(), rn,
                            cell(find(ln, rn, "fp16", "nhwc")), cell(find(ln, rn, "fp16", "nchw")),
                            cell(find(ln, rn, "bf16", "nhwc")), cell(find(ln, rn, "bf16", "nchw")), best->ms,
                            best->cfg.c_str());
            }
        }
    }
    if (o.t32) {
        // cuDNN tf32 NHWC (PyTorch, H200, N=128): DESIGN.md's table, not this run.
        const double cudnn_tf32[5] = {0.660, 0.279, 0.112, 0.161, 0.113};
        std::printf("\n==== summary N=128 tf32 (ms, TFLOP/s; best tile of tf32 NHWC in brackets; ratios of the "
                    "default NHWC row) ====\n");
        std::printf("%-6s %-9s %-14s %-14s %-40s %-9s %-9s\n", "layer", "rung", "tf32 nhwc", "tf32 nchw",
                    "best tf32 nhwc tile", "/cuBLAS", "/cuDNN");
        for (int i = 0; i < 5; ++i) {
            const std::string ln = alex[i].name;
            if (cubt[i] > 0)
                std::printf("%-6s %-9s %.4f %.0f (cuBLAS tf32 GEMM, K=%lld); cuDNN tf32 NHWC (PyTorch) %.3f\n",
                            ln.c_str(), "cublas", cubt[i], alex[i].flops(128) / (cubt[i] * 1e-3) / 1e12,
                            (long long)alex[i].K(), cudnn_tf32[i]);
            for (const char* rn : {"wgmma-cp", "wgmma-tma", "wgmma-ws", "wgmma-pp"}) {
                const Row* best = best_of(ln, rn, "tf32");
                if (!best) continue;
                const Row* d = find(ln, rn, "tf32", "nhwc");
                char bt[64];
                std::snprintf(bt, sizeof bt, "%.4f [%s]", best->ms, best->cfg.c_str());
                std::printf("%-6s %-9s %-14s %-14s %-40s %-9.2f %-9.2f\n", ln.c_str(), rn, cell(d),
                            cell(find(ln, rn, "tf32", "nchw")), bt, d && cubt[i] > 0 ? d->ms / cubt[i] : 0.0,
                            d ? d->ms / cudnn_tf32[i] : 0.0);
            }
        }
    }
    std::printf("\nRESULT: %d failure(s)\n", g_fail);
    return g_fail ? 1 : 0;
}
