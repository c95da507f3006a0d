#include "output_check.hpp"

#include "cuda_check.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace cs::gpu {

namespace {

__device__ __forceinline__ unsigned long long mix(unsigned long long x) {  // SplitMix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

template <DType D>
__device__ __forceinline__ unsigned bits_at(const void* p, long long i) {
    if constexpr (D == DType::f32) return static_cast<const unsigned*>(p)[i];
    else return static_cast<const unsigned short*>(p)[i];
}

template <DType D>
__device__ __forceinline__ bool nonfinite_bits(unsigned b) {
    if constexpr (D == DType::f32) return (b & 0x7f800000u) == 0x7f800000u;
    else if constexpr (D == DType::f16) return (b & 0x7c00u) == 0x7c00u;
    else return (b & 0x7f80u) == 0x7f80u;
}

template <DType D>
__device__ __forceinline__ float value_at(const void* p, long long i) {
    if constexpr (D == DType::f32) return static_cast<const float*>(p)[i];
    else if constexpr (D == DType::f16) return __half2float(static_cast<const __half*>(p)[i]);
    else return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
}

// acc[0] += sum of mix(index, bits); acc[1] += non-finite count.
template <DType D>
__global__ void digest_kernel(const void* out, long long n, unsigned long long* acc) {
    unsigned long long h = 0, bad = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned b = bits_at<D>(out, i);
        h += mix(mix(static_cast<unsigned long long>(i)) ^ b);
        bad += nonfinite_bits<D>(b);
    }
    for (int o = 16; o > 0; o >>= 1) {
        h += __shfl_down_sync(0xffffffffu, h, o);
        bad += __shfl_down_sync(0xffffffffu, bad, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(acc, h);
        if (bad) atomicAdd(acc + 1, bad);
    }
}

// samples[k] = out at NCHW index idx[k], read where `nhwc` puts it.
template <DType D>
__global__ void gather_kernel(const void* out, const long long* idx, long long count, int M, int E, int F, bool nhwc,
                              float* samples) {
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    long long i = idx[k];
    if (nhwc) {
        const long long f = i % F, e = i / F % E, m = i / ((long long)E * F) % M, n = i / ((long long)E * F * M);
        i = ((n * E + e) * F + f) * M + m;
    }
    samples[k] = value_at<D>(out, i);
}

template <DType D>
void launch(const void* out, long long elems, unsigned long long* acc, const long long* idx, long long count, int M,
            int E, int F, bool nhwc, float* samples, cudaStream_t s) {
    digest_kernel<D><<<1024, 256, 0, s>>>(out, elems, acc);
    CS_CUDA_CHECK(cudaGetLastError());
    if (count > 0) {
        gather_kernel<D><<<unsigned((count + 255) / 256), 256, 0, s>>>(out, idx, count, M, E, F, nhwc, samples);
        CS_CUDA_CHECK(cudaGetLastError());
    }
}

}  // namespace

OutputVerifier::OutputVerifier(const Layer& l, std::int64_t N, Layout layout, DType dtype,
                               const std::vector<std::int64_t>& sample)
    : layer_(l), N_(N), layout_(layout), dtype_(dtype), indices_(sample) {
    d_acc_ = Buffer(MemKind::device, 2 * sizeof(unsigned long long));
    h_acc_ = Buffer(MemKind::pinned, 2 * sizeof(unsigned long long));
    if (!indices_.empty()) {
        d_indices_ = Buffer(MemKind::device, indices_.size() * sizeof(long long));
        d_samples_ = Buffer(MemKind::device, indices_.size() * sizeof(float));
        CS_CUDA_CHECK(cudaMemcpy(d_indices_.get(), indices_.data(), d_indices_.bytes(), cudaMemcpyHostToDevice));
    }
    host_samples_.resize(indices_.size());
}

OutputDigest OutputVerifier::digest(const void* out, cudaStream_t s) {
    CS_CUDA_CHECK(cudaMemsetAsync(d_acc_.get(), 0, d_acc_.bytes(), s));
    const long long elems = layer_.output_elems(N_);
    const long long count = static_cast<long long>(indices_.size());
    const bool nhwc = layout_ == Layout::nhwc;
    auto* acc = d_acc_.as<unsigned long long>();
    const auto* idx = d_indices_.as<long long>();
    auto* smp = d_samples_.as<float>();
    switch (dtype_) {
        case DType::f32: launch<DType::f32>(out, elems, acc, idx, count, layer_.M, layer_.E(), layer_.F(), nhwc, smp, s); break;
        case DType::f16: launch<DType::f16>(out, elems, acc, idx, count, layer_.M, layer_.E(), layer_.F(), nhwc, smp, s); break;
        case DType::bf16: launch<DType::bf16>(out, elems, acc, idx, count, layer_.M, layer_.E(), layer_.F(), nhwc, smp, s); break;
    }
    CS_CUDA_CHECK(cudaMemcpyAsync(h_acc_.get(), d_acc_.get(), d_acc_.bytes(), cudaMemcpyDeviceToHost, s));
    if (count > 0)
        CS_CUDA_CHECK(cudaMemcpyAsync(host_samples_.data(), smp, std::size_t(count) * sizeof(float),
                                      cudaMemcpyDeviceToHost, s));
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    const auto* h = h_acc_.as<unsigned long long>();
    return OutputDigest{h[0], static_cast<std::int64_t>(h[1])};
}

}  // namespace cs::gpu
