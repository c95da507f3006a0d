// The ceilings of each precision class, measured with cuBLAS on the device the rows ran on,
// and the cuBLAS GEMM of a layer's im2col shape (see ceilings.hpp for what each measures).
//
// Why measured and not from the data sheet: the H200's tensor-core rate on random data is
// power-limited (well below the data sheet's bf16 dense rate), and the fp32 FMA
// rate depends on the clocks the card holds under load; a row's pct_peak should divide by
// what the best library reaches on this card today, in the row's own precision class.
//
// fp32's ceiling is cuBLAS SGEMM at the FMA rate; the copy counts the bytes read and written.
// The values are columns of every results CSV (csv-columns.md; docs/findings.md uses them);
// the first H200 runs: git show 3ab0d79:gpu/ceilings.cu.
#include "ceilings.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "elements.cuh"
#include "error.hpp"
#include "tolerance.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace cs::gpu {
namespace {

void check_cublas(cublasStatus_t st, const char* call) {
    if (st == CUBLAS_STATUS_SUCCESS) return;
    throw std::runtime_error(std::string("cuBLAS error in the ceilings: ") + call + ": " + cublasGetStatusString(st));
}
#define CS_CEIL_CUBLAS(call) check_cublas((call), #call)

// Uniform in [-1, 1) from a hash of the index, never exactly zero.
template <typename T>
__global__ void fill_kernel(T* p, std::int64_t n, unsigned long long seed) {
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        float u = uniform_pm1(seed, i);
        if (u == 0.0f) u = 0.5f;
        p[i] = from_float<T>(u);
    }
}

enum class Kind { f32, tf32, f16, bf16 };

Kind kind_of(Precision p) {
    switch (ceiling_class(p)) {  // fp16acc is measured as fp16 (tolerance.hpp)
        case Precision::fp32: return Kind::f32;
        case Precision::tf32: return Kind::tf32;
        case Precision::fp16:
        case Precision::fp16acc: return Kind::f16;
        case Precision::bf16: return Kind::bf16;
    }
    return Kind::f32;
}

std::size_t elem_bytes(Kind k) { return k == Kind::f16 || k == Kind::bf16 ? 2 : 4; }
cudaDataType_t data_type(Kind k) {
    return k == Kind::f16 ? CUDA_R_16F : k == Kind::bf16 ? CUDA_R_16BF : CUDA_R_32F;
}

void fill(void* p, Kind k, std::int64_t n, unsigned long long seed, cudaStream_t s) {
    const unsigned grid = unsigned(std::clamp<std::int64_t>((n + 255) / 256, 1, 8192));
    if (k == Kind::f16)
        fill_kernel<<<grid, 256, 0, s>>>(static_cast<__half*>(p), n, seed);
    else if (k == Kind::bf16)
        fill_kernel<<<grid, 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed);
    else
        fill_kernel<<<grid, 256, 0, s>>>(static_cast<float*>(p), n, seed);
    CS_CUDA_CHECK_LAUNCH();
}

// One cuBLAS handle per device for the command, with cuBLAS's recommended workspace on Hopper
// (32 MiB), as cublas_im2col.cu gives it; release_ceilings destroys them when the command ends
// (a static destructor would run after the CUDA context is gone).
struct Blas {
    cublasHandle_t h = nullptr;
    void* ws = nullptr;
    std::size_t ws_bytes = std::size_t(32) << 20;
    cudaStream_t stream = nullptr;
};

std::mutex g_mutex;

std::map<int, Blas>& blas_handles() {
    static std::map<int, Blas> handles;
    return handles;
}

Blas& blas_for(int device) {
    Blas& b = blas_handles()[device];
    if (!b.h) {
        CS_CEIL_CUBLAS(cublasCreate(&b.h));
        CS_CUDA_CHECK(cudaMalloc(&b.ws, b.ws_bytes));
    }
    return b;
}

void bind(Blas& b, cudaStream_t s, Kind k) {
    // cublasSetStream resets the handle to cuBLAS's default workspace: set ours again.
    CS_CEIL_CUBLAS(cublasSetStream(b.h, s));
    CS_CEIL_CUBLAS(cublasSetWorkspace(b.h, b.ws, b.ws_bytes));
    b.stream = s;
    const cublasMath_t math = (k == Kind::f16 || k == Kind::bf16)
                                  ? cublasMath_t(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)
                                  : CUBLAS_DEFAULT_MATH;
    CS_CEIL_CUBLAS(cublasSetMathMode(b.h, math));
}

// C (M x Ncols, row-major) = W (M x K, row-major) x col (K x Ncols, row-major), i.e. the
// column-major C^T (Ncols x M) = col^T (Ncols x K) x W^T (K x M), as cublas_im2col.cu does.
void gemm(Blas& b, Kind k, std::int64_t M, std::int64_t Ncols, std::int64_t K, const void* w, const void* col,
          void* c) {
    const float alpha = 1.0f, beta = 0.0f;
    const cudaDataType_t t = data_type(k);
    const cublasComputeType_t ct = k == Kind::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    CS_CEIL_CUBLAS(cublasGemmEx_64(b.h, CUBLAS_OP_N, CUBLAS_OP_N, Ncols, M, K, &alpha, col, t, Ncols, w, t, K, &beta, c,
                                   t, Ncols, ct, CUBLAS_GEMM_DEFAULT));
}

double median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? double(v[n / 2]) : 0.5 * (double(v[n / 2 - 1]) + double(v[n / 2]));
}

// Device buffers for one GEMM, or nothing when they do not fit (the error is cleared).
struct GemmBuffers {
    Buffer w, col, c;
    bool ok = false;
};

GemmBuffers allocate(Kind k, std::int64_t M, std::int64_t Ncols, std::int64_t K) {
    GemmBuffers g;
    const std::size_t eb = elem_bytes(k);
    try {
        g.w = Buffer(MemKind::device, std::size_t(M * K) * eb);
        g.col = Buffer(MemKind::device, std::size_t(K * Ncols) * eb);
        g.c = Buffer(MemKind::device, std::size_t(M * Ncols) * eb);
        g.ok = true;
    } catch (const CudaError& e) {
        if (e.code() != cudaErrorMemoryAllocation) throw;
        (void)cudaGetLastError();
        g = GemmBuffers{};
    }
    return g;
}

// Median ms of `samples` GEMMs after `warmup`, optionally flushing L2 before each.
double time_gemm(DeviceContext& ctx, Blas& b, Kind k, std::int64_t M, std::int64_t Ncols, std::int64_t K,
                 const GemmBuffers& g, int warmup, int samples, bool flush) {
    const cudaStream_t s = ctx.stream();
    for (int i = 0; i < warmup; ++i) gemm(b, k, M, Ncols, K, g.w.get(), g.col.get(), g.c.get());
    const std::size_t ns = std::size_t(samples);
    std::vector<Event> e0(ns), e1(ns);
    for (int i = 0; i < samples; ++i) {
        if (flush) ctx.flush_l2(s);
        e0[std::size_t(i)].record(s);
        gemm(b, k, M, Ncols, K, g.w.get(), g.col.get(), g.c.get());
        e1[std::size_t(i)].record(s);
    }
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> ms;
    for (int i = 0; i < samples; ++i) ms.push_back(elapsed_ms(e0[std::size_t(i)], e1[std::size_t(i)]));
    return median(ms);
}

double peak_tflops(DeviceContext& ctx, Blas& b, Kind k) {
    for (std::int64_t n : {8192, 4096}) {  // the smaller one only if 8192^2 matrices do not fit
        GemmBuffers g = allocate(k, n, n, n);
        if (!g.ok) continue;
        fill(g.w.get(), k, n * n, 0xC0FFEE01ull, ctx.stream());
        fill(g.col.get(), k, n * n, 0xC0FFEE02ull, ctx.stream());
        bind(b, ctx.stream(), k);
        const double ms = time_gemm(ctx, b, k, n, n, n, g, 2, 7, false);
        return 2.0 * double(n) * double(n) * double(n) / (ms * 1e-3) / 1e12;
    }
    return std::numeric_limits<double>::quiet_NaN();
}

double copy_gbs(DeviceContext& ctx) {
    for (std::size_t bytes : {std::size_t(1) << 30, std::size_t(256) << 20}) {
        Buffer src, dst;
        try {
            src = Buffer(MemKind::device, bytes);
            dst = Buffer(MemKind::device, bytes);
        } catch (const CudaError& e) {
            if (e.code() != cudaErrorMemoryAllocation) throw;
            (void)cudaGetLastError();
            continue;
        }
        const cudaStream_t s = ctx.stream();
        CS_CUDA_CHECK(cudaMemsetAsync(src.get(), 0x5a, bytes, s));
        for (int i = 0; i < 2; ++i) CS_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
        constexpr int kSamples = 9;
        std::vector<Event> e0(kSamples), e1(kSamples);
        for (int i = 0; i < kSamples; ++i) {
            e0[std::size_t(i)].record(s);
            CS_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
            e1[std::size_t(i)].record(s);
        }
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        std::vector<float> ms;
        for (int i = 0; i < kSamples; ++i) ms.push_back(elapsed_ms(e0[std::size_t(i)], e1[std::size_t(i)]));
        return 2.0 * double(bytes) / (median(ms) * 1e-3) / 1e9;
    }
    return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

void release_ceilings() noexcept {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto& [dev, b] : blas_handles()) {
        if (cudaSetDevice(dev) != cudaSuccess) continue;
        if (b.h) (void)cublasDestroy(b.h);
        if (b.ws) (void)cudaFree(b.ws);
        b.h = nullptr, b.ws = nullptr;
    }
    blas_handles().clear();
}

Ceilings measure_ceilings(DeviceContext& ctx) {
    static std::map<int, Ceilings> cache;
    std::lock_guard<std::mutex> lock(g_mutex);
    const int dev = ctx.info().device;
    if (auto it = cache.find(dev); it != cache.end()) return it->second;
    Blas& b = blas_for(dev);
    Ceilings c;
    // A class this GPU or cuBLAS cannot run (bf16 before sm_80, say) gets no ceiling (0: the
    // CSV leaves its peak_tflops and pct_peak empty); it must not stop the sweep. A sticky
    // CUDA error (the context is gone) still propagates.
    auto measure = [&](Kind k, const char* name) {
        try {
            return peak_tflops(ctx, b, k);
        } catch (const CudaError&) {
            throw;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "warning: no %s ceiling on this device: %s\n", name, e.what());
            (void)cudaGetLastError();
            return 0.0;
        }
    };
    c.fp32 = measure(Kind::f32, "fp32");
    c.tf32 = measure(Kind::tf32, "tf32");
    c.fp16 = measure(Kind::f16, "fp16");
    c.bf16 = measure(Kind::bf16, "bf16");
    c.copy_gbs = copy_gbs(ctx);
    cache[dev] = c;
    return c;
}

double im2col_gemm_ms(DeviceContext& ctx, Precision p, int M, long long Ncols, int K) {
    using Key = std::tuple<int, int, int, long long, int>;
    static std::map<Key, double> cache;
    std::lock_guard<std::mutex> lock(g_mutex);
    const Kind k = kind_of(p);
    const Key key{ctx.info().device, int(k), M, Ncols, K};
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    if (M <= 0 || Ncols <= 0 || K <= 0) return std::numeric_limits<double>::quiet_NaN();
    Blas& b = blas_for(ctx.info().device);
    double ms = std::numeric_limits<double>::quiet_NaN();
    GemmBuffers g = allocate(k, M, Ncols, K);
    if (g.ok) {
        fill(g.w.get(), k, std::int64_t(M) * K, 0xC0FFEE11ull, ctx.stream());
        fill(g.col.get(), k, std::int64_t(K) * Ncols, 0xC0FFEE12ull, ctx.stream());
        bind(b, ctx.stream(), k);
        ms = time_gemm(ctx, b, k, M, Ncols, K, g, 2, 9, true);
    }
    cache[key] = ms;
    return ms;
}

}  // namespace cs::gpu
