// Standalone check of the graph-API cuDNN anchors (gpu/variants/cudnn_graph.cu), the cuBLAS
// bf16 anchor and the ceilings (gpu/ceilings.cu), without the rest of the tree: builds
// Problems for conv2 and conv3 at N=1 and N=32 in both layouts and all four precision
// classes, plans them with a PlanContext as the harness would, runs each plan on random data
// against a naive GPU reference (float products, double sums), times it (L2 flushed before
// each repeat, CUDA events, median of 30) and prints the engine it chose. Also: a chunked
// run (max_chunk_N=7: misaligned chunk starts) and the ceilings. Build and run: run.sh.
//
// Output: one line per case on stdout, and a CSV (argv[1], default graph.csv) with
// layer,N,precision,layout,variant,ms,err,status,plan_s,algo,detail.
#include "buffers.hpp"
#include "ceilings.hpp"
#include "cuda_check.hpp"
#include "device.hpp"
#include "error.hpp"
#include "tolerance.hpp"
#include "variants.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;

namespace {

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__global__ void fill_kernel(T* p, long long n, float scale, unsigned long long seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned long long z = seed + (unsigned long long)i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        p[i] = from_float<T>((float(z >> 40) * (2.0f / 16777216.0f) - 1.0f) * scale);
    }
}

struct Shape {
    int C, H, W, M, R, S, stride, pad, E, F;
    bool nhwc;
};

template <typename T>
__global__ void ref_kernel(const T* x, const T* w, float* y, Shape s, long long total) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        long long r0 = i;
        int m, e, f;
        if (s.nhwc) {
            m = int(r0 % s.M); r0 /= s.M; f = int(r0 % s.F); r0 /= s.F; e = int(r0 % s.E); r0 /= s.E;
        } else {
            f = int(r0 % s.F); r0 /= s.F; e = int(r0 % s.E); r0 /= s.E; m = int(r0 % s.M); r0 /= s.M;
        }
        const long long n = r0;
        double acc = 0;
        for (int c = 0; c < s.C; ++c)
            for (int r = 0; r < s.R; ++r)
                for (int q = 0; q < s.S; ++q) {
                    const int h = e * s.stride + r - s.pad, ww = f * s.stride + q - s.pad;
                    if (h < 0 || h >= s.H || ww < 0 || ww >= s.W) continue;
                    const long long xi = s.nhwc ? ((n * s.H + h) * s.W + ww) * s.C + c : ((n * s.C + c) * s.H + h) * s.W + ww;
                    const long long wi = s.nhwc ? ((m * (long long)s.R + r) * s.S + q) * s.C + c
                                                : ((m * (long long)s.C + c) * s.R + r) * s.S + q;
                    acc += double(to_float(x[xi]) * to_float(w[wi]));
                }
        y[i] = float(acc);
    }
}

template <typename T>
__global__ void diff_kernel(const T* a, const float* ref, long long n, unsigned* out) {
    float d = 0, m = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float v = fabsf(to_float(a[i]) - ref[i]);
        if (!(v <= 3e38f)) v = __int_as_float(0x7f800000);
        d = fmaxf(d, v);
        m = fmaxf(m, fabsf(ref[i]));
    }
    atomicMax(&out[0], __float_as_uint(d));
    atomicMax(&out[1], __float_as_uint(m));
}

template <typename T>
void fill_t(void* p, long long n, float scale, unsigned long long seed) {
    fill_kernel<<<2048, 256>>>(static_cast<T*>(p), n, scale, seed);
    CS_CUDA_CHECK_LAUNCH();
}
template <typename T>
void ref_t(const void* x, const void* w, float* y, Shape s, long long n) {
    ref_kernel<<<4096, 256>>>(static_cast<const T*>(x), static_cast<const T*>(w), y, s, n);
    CS_CUDA_CHECK_LAUNCH();
}
template <typename T>
double diff_t(const void* a, const float* ref, long long n, unsigned* scratch) {
    CS_CUDA_CHECK(cudaMemset(scratch, 0, 8));
    diff_kernel<<<2048, 256>>>(static_cast<const T*>(a), ref, n, scratch);
    CS_CUDA_CHECK_LAUNCH();
    float v[2];
    CS_CUDA_CHECK(cudaMemcpy(v, scratch, 8, cudaMemcpyDeviceToHost));
    return v[1] > 0 ? v[0] / v[1] : v[0];
}

struct Ops {
    void (*fill)(void*, long long, float, unsigned long long);
    void (*ref)(const void*, const void*, float*, Shape, long long);
    double (*diff)(const void*, const float*, long long, unsigned*);
};
Ops ops_for(DType d) {
    if (d == DType::f16) return {fill_t<__half>, ref_t<__half>, diff_t<__half>};
    if (d == DType::bf16) return {fill_t<__nv_bfloat16>, ref_t<__nv_bfloat16>, diff_t<__nv_bfloat16>};
    return {fill_t<float>, ref_t<float>, diff_t<float>};
}

const char* pname(Precision p) {
    switch (p) {
        case Precision::fp32: return "fp32";
        case Precision::tf32: return "tf32";
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        default: return "?";
    }
}

struct Row {
    const char* variant;
    Precision prec;
    DType io;
    variants::PlanFn plan;
};

double thr_of(Precision p) {
    const double t = threshold(p);
    return t > 0 ? t : 1e-2;  // bf16 before tolerance.cpp knew it
}

FILE* g_csv = nullptr;

void run_case(const cudaDeviceProp& prop, DeviceContext& dctx, const Row& row, const Layer& l, long long N,
              Layout lay, long long chunk = 0) {
    const char* lname = lay == Layout::nchw ? "nchw" : "nhwc";
    Problem p{l, N, lay};
    PlanContext pc{prop, 0, std::size_t(8) << 30, chunk > 0 ? chunk : N};
    const std::size_t eb = dtype_bytes(row.io);
    const Ops ops = ops_for(row.io);
    std::string status = "PASS", detail, algo;
    double ms = NAN, err = NAN, plan_s = NAN;
    try {
        const auto t0 = std::chrono::steady_clock::now();
        auto plan = row.plan(p, pc);
        plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        detail = plan->detail();
        algo = plan->algo();
        const long long nx = l.input_elems(N), nw = l.weight_elems(), ny = l.output_elems(N);
        Buffer x(MemKind::device, nx * eb), w(MemKind::device, nw * eb), y(MemKind::device, ny * eb),
            ref(MemKind::device, ny * 4), scratch(MemKind::device, 8);
        ops.fill(x.get(), nx, 1.0f, 0xabc1 + N);
        ops.fill(w.get(), nw, float(std::sqrt(3.0 / double(l.K()))), 0xabc2 + N);
        const Shape s{l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, l.E(), l.F(), lay == Layout::nhwc};
        ops.ref(x.get(), w.get(), ref.as<float>(), s, ny);
        CS_CUDA_CHECK(cudaMemset(y.get(), 0xff, ny * eb));  // NaN poison
        // fill, reference and poison ran on the legacy default stream; the plan runs on a
        // non-blocking stream, which does not wait for it.
        CS_CUDA_CHECK(cudaDeviceSynchronize());
        const cudaStream_t st = dctx.stream();
        auto run_all = [&] {
            const long long step = chunk > 0 ? chunk : N;
            for (long long first = 0; first < N; first += step) {
                const long long n = std::min(step, N - first);
                DeviceIO io{static_cast<const char*>(x.get()) + l.input_elems(first) * eb, w.get(),
                            static_cast<char*>(y.get()) + l.output_elems(first) * eb, n};
                plan->run(io, st);
            }
        };
        run_all();
        CS_CUDA_CHECK(cudaStreamSynchronize(st));
        err = ops.diff(y.get(), ref.as<float>(), ny, scratch.as<unsigned>());
        if (!(err <= thr_of(row.prec))) status = "FAIL";
        for (int i = 0; i < 3; ++i) run_all();
        std::vector<Event> e0(30), e1(30);
        for (int i = 0; i < 30; ++i) {
            dctx.flush_l2(st);
            e0[i].record(st);
            run_all();
            e1[i].record(st);
        }
        CS_CUDA_CHECK(cudaStreamSynchronize(st));
        std::vector<float> t;
        for (int i = 0; i < 30; ++i) t.push_back(elapsed_ms(e0[i], e1[i]));
        std::sort(t.begin(), t.end());
        ms = 0.5 * (t[14] + t[15]);
    } catch (const cs::Skip& e) {
        status = "SKIP";
        detail = e.what();
    } catch (const std::exception& e) {
        status = "ERROR";
        detail = e.what();
        (void)cudaGetLastError();
    }
    std::string shortd = detail.substr(0, detail.find(" (cuDNN"));
    std::printf("%-5s N=%-3lld %-4s %s %-20s %-5s %8.4f ms err %.1e plan %.2fs algo %s | %s\n", l.name.c_str(), N,
                pname(row.prec), lname, row.variant, status.c_str(), ms, err, plan_s, algo.c_str(),
                (chunk ? ("chunk " + std::to_string(chunk) + ": ").c_str() : ""));
    std::printf("      %s\n", detail.c_str());
    std::fflush(stdout);
    if (g_csv) {
        std::string d = detail;
        for (char& c : d)
            if (c == '"') c = '\'';
        std::fprintf(g_csv, "%s,%lld,%s,%s,%s%s,%.5f,%.3e,%s,%.2f,%s,\"%s\"\n", l.name.c_str(), N, pname(row.prec),
                     lname, row.variant, chunk ? "-chunk7" : "", ms, err, status.c_str(), plan_s, algo.c_str(),
                     d.c_str());
        std::fflush(g_csv);
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        g_csv = std::fopen(argc > 1 ? argv[1] : "graph.csv", "w");
        if (g_csv) std::fprintf(g_csv, "layer,N,precision,layout,variant,ms,err,status,plan_s,algo,detail\n");
        DeviceContext dctx(0);
        const cudaDeviceProp& prop = dctx.prop();
        std::printf("device %s, cc %d.%d, thresholds fp32 %.0e tf32 %.0e fp16 %.0e bf16 %.0e (tolerance.cpp)\n",
                    prop.name, prop.major, prop.minor, threshold(Precision::fp32), threshold(Precision::tf32),
                    threshold(Precision::fp16), threshold(Precision::bf16));
        const Layer conv2{"conv2", 96, 27, 27, 256, 5, 5, 1, 2};
        const Layer conv3{"conv3", 256, 13, 13, 384, 3, 3, 1, 1};
        const Row rows[] = {{"cudnn-fp32", Precision::fp32, DType::f32, variants::cudnn_fp32_plan},
                            {"cudnn-tf32", Precision::tf32, DType::f32, variants::cudnn_tf32_plan},
                            {"cudnn-fp16", Precision::fp16, DType::f16, variants::cudnn_fp16_plan},
                            {"cudnn-bf16", Precision::bf16, DType::bf16, variants::cudnn_bf16_plan}};
        const auto t0 = std::chrono::steady_clock::now();
        for (long long N : {1LL, 32LL})
            for (const Layer* l : {&conv2, &conv3})
                for (const Row& r : rows)
                    for (Layout lay : {Layout::nchw, Layout::nhwc}) run_case(prop, dctx, r, *l, N, lay);
        // The streams mode's chunks: 7 images per run(), starts only 2-byte aligned.
        run_case(prop, dctx, rows[2], conv2, 32, Layout::nhwc, 7);
        run_case(prop, dctx, rows[0], conv3, 32, Layout::nchw, 7);
        // The cuBLAS bf16 anchor.
        const Row cb{"cublas-im2col-bf16", Precision::bf16, DType::bf16, variants::cublas_im2col_bf16_plan};
        for (const Layer* l : {&conv2, &conv3}) run_case(prop, dctx, cb, *l, 32, Layout::nchw);
        std::printf("cases: %.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        // Ceilings.
        const auto t1 = std::chrono::steady_clock::now();
        const Ceilings c = measure_ceilings(dctx);
        std::printf("ceilings: fp32 %.1f, tf32 %.1f, fp16 %.1f, bf16 %.1f TFLOP/s; copy %.0f GB/s (%.1f s)\n", c.fp32,
                    c.tf32, c.fp16, c.bf16, c.copy_gbs,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
        for (const Layer* l : {&conv2, &conv3})
            for (long long N : {1LL, 32LL, 128LL})
                for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16}) {
                    const long long cols = N * l->E() * l->F();
                    const double ms = gemm_ceiling_ms(dctx, p, l->M, cols, int(l->K()));
                    std::printf("gemm ceiling %s N=%lld %s: %.4f ms (%.0f TFLOP/s)\n", l->name.c_str(), N, pname(p), ms,
                                2.0 * l->M * double(cols) * double(l->K()) / (ms * 1e-3) / 1e12);
                }
        if (g_csv) std::fclose(g_csv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "check: %s\n", e.what());
        return 1;
    }
    return 0;
}
