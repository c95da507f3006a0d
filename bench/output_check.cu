#include "output_check.hpp"

#include "copy_now.hpp"
#include "cuda_check.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>
#include <string>
#include <vector>

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

// samples[k] = out at NCHW index idx[k], read where `nhwc` puts it. An index outside the
// output (the device copy of the sample overwritten) reads nothing: acc[2] counts it.
template <DType D>
__global__ void gather_kernel(const void* out, long long elems, const long long* idx, long long count, int M, int E,
                              int F, bool nhwc, float* samples, unsigned long long* acc) {
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    long long i = idx[k];
    if (i < 0 || i >= elems) {
        atomicAdd(acc + 2, 1ull);
        samples[k] = __int_as_float(0x7fc00000);
        return;
    }
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
        gather_kernel<D><<<unsigned((count + 255) / 256), 256, 0, s>>>(out, elems, idx, count, M, E, F, nhwc, samples,
                                                                         acc);
        CS_CUDA_CHECK(cudaGetLastError());
    }
}

}  // namespace

OutputVerifier::OutputVerifier(const Layer& l, std::int64_t N, Layout layout, DType dtype,
                               const std::vector<std::int64_t>& sample)
    : layer_(l), N_(N), layout_(layout), dtype_(dtype), indices_(sample) {
    d_acc_ = Buffer(MemKind::device, 3 * sizeof(unsigned long long));
    h_acc_ = Buffer(MemKind::pinned, 3 * sizeof(unsigned long long));
    if (!indices_.empty()) {
        d_indices_ = Buffer(MemKind::device, indices_.size() * sizeof(long long));
        d_samples_ = Buffer(MemKind::device, indices_.size() * sizeof(float));
        copy_to_device_now(d_indices_.get(), indices_.data(), d_indices_.bytes());
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
    if (h[2] != 0) {
        std::vector<long long> dev(indices_.size());
        CS_CUDA_CHECK(cudaMemcpy(dev.data(), d_indices_.get(), d_indices_.bytes(), cudaMemcpyDeviceToHost));
        std::size_t changed = 0, first = 0;
        for (std::size_t k = 0; k < dev.size(); ++k)
            if (dev[k] != indices_[k] && changed++ == 0) first = k;
        throw std::runtime_error("the verifier's device copy of the sample was overwritten: " + std::to_string(h[2]) +
                                 " of its " + std::to_string(indices_.size()) + " indices fall outside the output, " +
                                 std::to_string(changed) + " differ from the host's, the first at position " +
                                 std::to_string(first) + " (a kernel wrote into the verifier's memory)");
    }
    return OutputDigest{h[0], static_cast<std::int64_t>(h[1])};
}

}  // namespace cs::gpu
