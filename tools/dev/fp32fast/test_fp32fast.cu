// test_fp32fast.cu — checks and times the exact-fp32 fast family on the GPU,
// standalone (no harness, no golden files): every plan of winograd-f2x2, winograd-f4x4,
// winograd-f2x2-5x5, winograd-f3x3-5x5, simt-gemm, split-tf32 and tf32-mma-1x (plus tile probes that are not registered) on
// AlexNet conv1-conv5 at N = 1, 32, 128 and on odd shapes, against a double-precision direct
// convolution on the GPU; outputs NaN-poisoned before the checked run; time = median of 20
// runs, CUDA events, L2 flushed (256 MiB memset) before each; beside it cuBLAS SGEMM (FP32,
// no TF32) of the layer's im2col GEMM shape (M x N*E*F x C*R*S) on random operands.
//
// Build (device or development machine):
//   nvcc -std=c++17 -O3 -arch=sm_90 -I gpu -I gpu/variants -I layers -o build-fp32fast/test_fp32fast \
//     tools/dev/fp32fast/test_fp32fast.cu gpu/variants/winograd_f2x2_3x3.cu gpu/variants/winograd_f4x4_3x3.cu \
//     gpu/variants/winograd_f2x2_5x5.cu gpu/variants/winograd_f3x3_5x5.cu \
//     gpu/variants/simt_gemm.cu gpu/variants/split_tf32.cu gpu/cuda_check.cpp -lcublas
// Run: build-fp32fast/test_fp32fast [--quick] [--only NAME-PART]   (--quick: odd shapes only,
// no timing: for compute-sanitizer). Exit 0 when every checked row is within its threshold.
#include "variants.hpp"
#include "winograd_fused.cuh"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#define CK(x)                                                                                          \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
            std::exit(2);                                                                              \
        }                                                                                              \
    } while (0)
#define CB(x)                                                                              \
    do {                                                                                   \
        cublasStatus_t s_ = (x);                                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
            std::fprintf(stderr, "cuBLAS error %d at %s:%d\n", int(s_), __FILE__, __LINE__); \
            std::exit(2);                                                                  \
        }                                                                                  \
    } while (0)

using cs::Layer;
using namespace cs::gpu;

// ---- data, reference, comparison --------------------------------------------------------------

__device__ __forceinline__ unsigned long long splitmix(unsigned long long x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
__global__ void fill_kernel(float* p, std::int64_t n, unsigned long long seed, float scale) {
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const unsigned long long h = splitmix(seed * 0x100000001B3ull + std::uint64_t(i));
        p[i] = (float(h >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * scale;  // [-1, 1) * scale
    }
}
static void fill(float* p, std::int64_t n, unsigned long long seed, float scale) {
    fill_kernel<<<1024, 256>>>(p, n, seed, scale);
    CK(cudaPeekAtLastError());
}

// Direct convolution, double accumulation; one thread per output, f fastest (a warp shares m).
__global__ void ref_kernel(const float* __restrict__ in, const float* __restrict__ w, double* __restrict__ out, int N,
                           int C, int H, int W, int M, int R, int S, int stride, int pad, int E, int F) {
    const std::int64_t total = std::int64_t(N) * M * E * F;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const int f = int(i % F), e = int((i / F) % E), m = int((i / (std::int64_t(F) * E)) % M);
        const int n = int(i / (std::int64_t(F) * E * M));
        double acc = 0;
        for (int c = 0; c < C; ++c) {
            const float* ip = in + (std::int64_t(n) * C + c) * H * W;
            const float* wp = w + (std::int64_t(m) * C + c) * R * S;
            for (int r = 0; r < R; ++r) {
                const int ih = e * stride - pad + r;
                if (ih < 0 || ih >= H) continue;
                for (int s = 0; s < S; ++s) {
                    const int iw = f * stride - pad + s;
                    if (iw < 0 || iw >= W) continue;
                    acc += double(ip[ih * W + iw]) * double(wp[r * S + s]);
                }
            }
        }
        out[i] = acc;
    }
}

// stats[0] = max |out - ref| bits, stats[1] = max |ref| bits, stats[2] = non-finite count.
__global__ void cmp_kernel(const float* __restrict__ out, const double* __restrict__ ref, std::int64_t n,
                           unsigned long long* stats) {
    double me = 0, mr = 0;
    unsigned long long bad = 0;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const float o = out[i];
        if (!isfinite(o)) {
            ++bad;
            continue;
        }
        me = fmax(me, fabs(double(o) - ref[i]));
        mr = fmax(mr, fabs(ref[i]));
    }
    atomicMax(&stats[0], (unsigned long long)__double_as_longlong(me));
    atomicMax(&stats[1], (unsigned long long)__double_as_longlong(mr));
    if (bad) atomicAdd(&stats[2], bad);
}

__global__ void bitdiff_kernel(const unsigned* __restrict__ a, const unsigned* __restrict__ b, std::int64_t n,
                               unsigned long long* count) {
    unsigned long long d = 0;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x)
        d += a[i] != b[i];
    if (d) atomicAdd(count, d);
}

struct Case {
    Layer layer;
    std::int64_t N;
};

struct Row {
    std::string layer, variant;
    std::int64_t N;
    std::string status;
    double rel = 0, ms = 0, blas_ms = 0;
    double flops = 0;
};

static cudaDeviceProp g_prop;
static float* g_flush = nullptr;
static const std::size_t kFlushBytes = 256u << 20;

static double time_median(const std::function<void()>& fn, int reps) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i) fn();
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
        CK(cudaMemsetAsync(g_flush, i & 0xff, kFlushBytes, 0));
        CK(cudaEventRecord(a, 0));
        fn();
        CK(cudaEventRecord(b, 0));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
}

struct VariantUnderTest {
    const char* name;
    double threshold;
    variants::SupportsFn supports;
    variants::PlanFn plan;
};

// Tile probes: the fused kernel with other tiles (not registered; winograd-f4x4's plan picks
// one of the two F(4x4) tiles), for the choice of tiles.
template <class Cfg>
std::optional<std::string> wino_probe_supports(const Problem& p, const cudaDeviceProp& prop) {
    return variants::fp32fast::wino_supports<Cfg>(p, prop);
}
template <class Cfg>
std::unique_ptr<Plan> wino_probe_plan(const Problem& p, const PlanContext& ctx) {
    if (auto why = wino_probe_supports<Cfg>(p, ctx.prop)) throw cs::Skip(*why);
    return std::make_unique<variants::fp32fast::WinoPlan<Cfg>>(p, ctx, "probe");
}
using F2Bc16 = variants::fp32fast::WinoCfg<2, 64, 32, 32, 16, false>;  // 16 channels/stage (12-byte spill)
using F4Narrow = variants::fp32fast::WinoCfg<4, 32, 16, 8, 8>;
using F4Wide = variants::fp32fast::WinoCfg<4, 32, 32, 16, 8>;
using F25Narrow = variants::fp32fast::WinoCfgR<2, 5, 32, 16, 8, 8>;  // winograd-f2x2-5x5's two tiles
using F25Wide = variants::fp32fast::WinoCfgR<2, 5, 32, 32, 16, 8>;

// The 5x5 variants' entry points (gpu/variants/winograd_f2x2_5x5.cu, winograd_f3x3_5x5.cu),
// declared here as well so that this test builds before variants.hpp lists them.
namespace cs::gpu::variants {
std::optional<std::string> winograd_f2x2_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f2x2_5x5_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f3x3_5x5_plan(const Problem&, const PlanContext&);
}  // namespace cs::gpu::variants

namespace cs::gpu::variants::fp32fast {
std::unique_ptr<Plan> simt_gemm_plan_with_tile(const Problem& p, const PlanContext& ctx, int cfg, int split);
}
template <int CFG, int SPLIT = 0>
std::unique_ptr<Plan> simt_probe_plan(const Problem& p, const PlanContext& ctx) {
    return variants::fp32fast::simt_gemm_plan_with_tile(p, ctx, CFG, SPLIT);
}

int main(int argc, char** argv) {
    bool quick = false;
    std::string only;  // run only variants whose name contains this
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) quick = true;
        if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    }
    CK(cudaGetDeviceProperties(&g_prop, 0));
    std::printf("device: %s, %d SMs, sm_%d%d, smem opt-in %zu\n", g_prop.name, g_prop.multiProcessorCount,
                g_prop.major, g_prop.minor, g_prop.sharedMemPerBlockOptin);
    CK(cudaMalloc(&g_flush, kFlushBytes));
    cublasHandle_t blas;
    CB(cublasCreate(&blas));
    CB(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));  // FP32: no TF32

    const VariantUnderTest vuts[] = {
        {"winograd-f2x2", 1e-4, variants::winograd_f2x2_supports, variants::winograd_f2x2_plan},
        {"probe-f2x2-bc16", 1e-4, wino_probe_supports<F2Bc16>, wino_probe_plan<F2Bc16>},
        {"winograd-f4x4", 1e-4, variants::winograd_f4x4_supports, variants::winograd_f4x4_plan},
        {"probe-f4x4-32x16", 1e-4, wino_probe_supports<F4Narrow>, wino_probe_plan<F4Narrow>},
        {"probe-f4x4-32x32", 1e-4, wino_probe_supports<F4Wide>, wino_probe_plan<F4Wide>},
        {"winograd-f2x2-5x5", 1e-4, variants::winograd_f2x2_5x5_supports, variants::winograd_f2x2_5x5_plan},
        {"probe-f2x2-5x5-32x16", 1e-4, wino_probe_supports<F25Narrow>, wino_probe_plan<F25Narrow>},
        {"probe-f2x2-5x5-32x32", 1e-4, wino_probe_supports<F25Wide>, wino_probe_plan<F25Wide>},
        {"winograd-f3x3-5x5", 1e-4, variants::winograd_f3x3_5x5_supports, variants::winograd_f3x3_5x5_plan},
        {"simt-gemm", 1e-4, variants::simt_gemm_supports, variants::simt_gemm_plan},
        {"probe-simt-128x64x8", 1e-4, variants::simt_gemm_supports, simt_probe_plan<2, 1>},
        {"probe-simt-64x64x8", 1e-4, variants::simt_gemm_supports, simt_probe_plan<3, 1>},
        {"probe-simt-k16-s1", 1e-4, variants::simt_gemm_supports, simt_probe_plan<4, 1>},
        {"probe-simt-k16-s2", 1e-4, variants::simt_gemm_supports, simt_probe_plan<4, 2>},
        {"probe-simt-k16-s3", 1e-4, variants::simt_gemm_supports, simt_probe_plan<4, 3>},
        {"probe-simt-k16-s4", 1e-4, variants::simt_gemm_supports, simt_probe_plan<4, 4>},
        {"probe-simt-k16-s8", 1e-4, variants::simt_gemm_supports, simt_probe_plan<4, 8>},
        {"probe-simt-k16-s16", 1e-4, variants::simt_gemm_supports, simt_probe_plan<4, 16>},
        {"split-tf32", 1e-4, variants::split_tf32_supports, variants::split_tf32_plan},
        {"tf32-mma-1x", 5e-3, variants::tf32_mma_supports, variants::tf32_mma_plan},
    };

    auto L = [](const char* name, int C, int H, int W, int M, int R, int S, int stride, int pad) {
        Layer l;
        l.name = name;
        l.C = C, l.H = H, l.W = W, l.M = M, l.R = R, l.S = S, l.stride = stride, l.pad = pad;
        return l;
    };
    std::vector<Case> cases;
    cases.push_back({L("odd1", 5, 11, 11, 7, 3, 3, 1, 1), 3});
    cases.push_back({L("odd2", 19, 9, 14, 70, 3, 3, 1, 2), 5});
    cases.push_back({L("odd3", 6, 20, 20, 9, 5, 5, 2, 1), 2});
    cases.push_back({L("odd4", 33, 11, 13, 9, 5, 5, 1, 2), 3});   // 5x5 stride 1 (tests/gpu's shape)
    cases.push_back({L("odd5", 19, 14, 10, 40, 5, 5, 1, 1), 2});  // 5x5, pad 1, non-square
    if (!quick) {
        const Layer alex[] = {L("conv1", 3, 227, 227, 96, 11, 11, 4, 0), L("conv2", 96, 27, 27, 256, 5, 5, 1, 2),
                              L("conv3", 256, 13, 13, 384, 3, 3, 1, 1), L("conv4", 384, 13, 13, 384, 3, 3, 1, 1),
                              L("conv5", 384, 13, 13, 256, 3, 3, 1, 1)};
        for (std::int64_t N : {1, 32, 128})
            for (const auto& l : alex) cases.push_back({l, N});
    }

    std::vector<Row> rows;
    int failures = 0;
    unsigned long long* stats;
    CK(cudaMalloc(&stats, 3 * sizeof(unsigned long long)));
    for (const auto& cs_ : cases) {
        const Layer& l = cs_.layer;
        const std::int64_t N = cs_.N;
        const int E = l.E(), F = l.F();
        const std::int64_t nin = l.input_elems(N), nw = l.weight_elems(), nout = l.output_elems(N);
        float *in, *w, *out, *out2;
        double* ref;
        CK(cudaMalloc(&in, nin * 4));
        CK(cudaMalloc(&w, nw * 4));
        CK(cudaMalloc(&out, nout * 4));
        CK(cudaMalloc(&out2, nout * 4));
        CK(cudaMalloc(&ref, nout * 8));
        const unsigned long long seed = 1000ull * (unsigned long long)(l.C + l.M) + (unsigned long long)N;
        fill(in, nin, seed, 1.0f);
        fill(w, nw, seed + 7, std::sqrt(3.0f / float(l.K())));
        ref_kernel<<<4096, 256>>>(in, w, ref, int(N), l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, E, F);
        CK(cudaPeekAtLastError());
        CK(cudaDeviceSynchronize());

        // cuBLAS SGEMM of the im2col shape: C(M x P) = W(M x K) * B(K x P), row-major.
        double blas_ms = 0;
        const std::int64_t P = N * E * F, K = l.K();
        if (!quick) {
            float *bA, *bB, *bC;
            CK(cudaMalloc(&bA, std::size_t(l.M) * K * 4));
            CK(cudaMalloc(&bB, std::size_t(K) * P * 4));
            CK(cudaMalloc(&bC, std::size_t(l.M) * P * 4));
            fill(bA, l.M * K, seed + 11, 0.05f);
            fill(bB, K * P, seed + 13, 1.0f);
            const float one = 1.0f, zero = 0.0f;
            blas_ms = time_median(
                [&] {
                    CB(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, int(P), l.M, int(K), &one, bB, int(P), bA, int(K),
                                   &zero, bC, int(P)));
                },
                20);
            CK(cudaFree(bA));
            CK(cudaFree(bB));
            CK(cudaFree(bC));
        }

        for (const auto& v : vuts) {
            if (!only.empty() && std::string(v.name).find(only) == std::string::npos) continue;
            Row row;
            row.layer = l.name, row.variant = v.name, row.N = N, row.blas_ms = blas_ms, row.flops = l.flops(N);
            Problem p{l, N, Layout::nchw};
            if (auto why = v.supports(p, g_prop)) {
                row.status = "SKIP (" + *why + ")";
                rows.push_back(row);
                std::printf("%-6s N=%-4lld %-19s %s\n", l.name.c_str(), (long long)N, v.name, row.status.c_str());
                continue;
            }
            std::unique_ptr<Plan> plan;
            try {
                PlanContext ctx{g_prop, 0, std::size_t(8) << 30, N};
                plan = v.plan(p, ctx);
            } catch (const std::exception& e) {
                row.status = std::string("SKIP (plan: ") + e.what() + ")";
                rows.push_back(row);
                std::printf("%-6s N=%-4lld %-19s %s\n", l.name.c_str(), (long long)N, v.name, row.status.c_str());
                continue;
            }
            DeviceIO io{in, w, out, N};
            CK(cudaMemset(out, 0xFF, nout * 4));  // NaN
            plan->run(io, 0);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemset(stats, 0, 3 * sizeof(unsigned long long)));
            cmp_kernel<<<1024, 256>>>(out, ref, nout, stats);
            CK(cudaPeekAtLastError());
            unsigned long long hs[3];
            CK(cudaMemcpy(hs, stats, sizeof hs, cudaMemcpyDeviceToHost));
            double me, mr;
            std::memcpy(&me, &hs[0], 8);
            std::memcpy(&mr, &hs[1], 8);
            row.rel = me / mr;
            const bool ok = hs[2] == 0 && row.rel <= v.threshold;
            row.status = ok ? "PASS" : (hs[2] ? "FAIL(nonfinite " + std::to_string(hs[2]) + ")" : "FAIL");
            if (!ok) ++failures;
            if (!quick) {
                DeviceIO io2{in, w, out2, N};
                row.ms = time_median([&] { plan->run(io2, 0); }, 20);
                CK(cudaGetLastError());
                CK(cudaMemset(stats, 0, sizeof(unsigned long long)));
                bitdiff_kernel<<<1024, 256>>>(reinterpret_cast<const unsigned*>(out),
                                              reinterpret_cast<const unsigned*>(out2), nout, stats);
                CK(cudaPeekAtLastError());
                unsigned long long ndiff = 0;
                CK(cudaMemcpy(&ndiff, stats, sizeof ndiff, cudaMemcpyDeviceToHost));
                if (ndiff != 0) {
                    row.status += " NONDETERMINISTIC";
                    ++failures;
                }
            }
            rows.push_back(row);
            std::printf("%-6s N=%-4lld %-19s %-5s max_rel_err %.2e  %8.4f ms  cublas %8.4f ms  cublas/ms %5.2f  "
                        "%6.1f TFLOP/s eff | %s\n",
                        l.name.c_str(), (long long)N, v.name, row.status.c_str(), row.rel, row.ms, blas_ms,
                        row.ms > 0 ? blas_ms / row.ms : 0.0, row.ms > 0 ? row.flops / row.ms * 1e-9 : 0.0,
                        plan->detail().c_str());
            std::fflush(stdout);
        }
        CK(cudaFree(in));
        CK(cudaFree(w));
        CK(cudaFree(out));
        CK(cudaFree(out2));
        CK(cudaFree(ref));
    }

    // Summary: ms per layer and N (PASS rows), then cuBLAS.
    if (!quick) {
        std::printf("\nsummary (ms, median of 20, L2 flushed; err = max_rel_err)\n");
        std::printf("%-19s %-5s %-16s %-16s %-16s %-16s %-16s\n", "variant", "N", "conv1", "conv2", "conv3", "conv4",
                    "conv5");
        std::vector<std::string> names;
        for (const auto& v : vuts) names.push_back(v.name);
        names.push_back("cublas-sgemm");
        for (std::int64_t N : {1, 32, 128})
            for (const auto& name : names) {
                std::printf("%-19s %-5lld", name.c_str(), (long long)N);
                for (const char* ln : {"conv1", "conv2", "conv3", "conv4", "conv5"}) {
                    const Row* r = nullptr;
                    for (const auto& x : rows)
                        if (x.layer == ln && x.N == N && (x.variant == name || name == "cublas-sgemm")) {
                            r = &x;
                            if (x.variant == name) break;
                        }
                    char cell[40] = "-";
                    if (r && name == "cublas-sgemm")
                        std::snprintf(cell, sizeof cell, "%.3f", r->blas_ms);
                    else if (r && r->status.rfind("PASS", 0) == 0)
                        std::snprintf(cell, sizeof cell, "%.3f (%.0e)", r->ms, r->rel);
                    else if (r && r->status.rfind("FAIL", 0) == 0)
                        std::snprintf(cell, sizeof cell, "FAIL %.0e", r->rel);
                    std::printf(" %-16s", cell);
                }
                std::printf("\n");
            }
    }
    std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "ALL PASS", failures);
    CB(cublasDestroy(blas));
    return failures ? 1 : 0;
}
