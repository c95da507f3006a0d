// The split variants' per-tensor power-of-two scales (range_scale.hpp says why and what they
// guarantee): one reduction kernel whose last block computes the scales.
#include "range_scale.hpp"

#include "copy_now.hpp"
#include "cuda_check.hpp"
#include "error.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <utility>

namespace cs::gpu::variants {
namespace {

constexpr int kThreads = 256;

// floor(log2 v) of a positive finite float given by its bits (subnormals included).
__host__ __device__ int floor_log2_bits(unsigned bits) {
    const int e = int(bits >> 23);
    if (e > 0) return e - 127;
    int lz = 0;  // subnormal: value = m 2^-149
    for (unsigned m = bits; (m & 0x80000000u) == 0; m <<= 1) ++lz;
    return (31 - lz) - 149;
}
// 2^k as a float, k in [-126, 127].
__device__ float pow2f(int k) { return __uint_as_float(unsigned(k + 127) << 23); }
// 2^s as two floats whose product is 2^s (s within [-252, 252]).
__device__ void pow2_pair(int s, float (&m)[2]) {
    s = s < -252 ? -252 : (s > 252 ? 252 : s);
    const int a = s < -126 ? -126 : (s > 126 ? 126 : s);
    m[0] = pow2f(a);
    m[1] = pow2f(s - a);
}

__device__ unsigned block_max(unsigned v) {
    __shared__ unsigned warp_max[kThreads / 32];
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < kThreads / 32 ? warp_max[threadIdx.x] : 0u;
        for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    }
    return v;
}

// Grid (gx, 2): blockIdx.y 0 reduces the input, 1 the weights. |v| as bits: for non-negative
// floats the bit order is the value order, and inf / NaN (>= 0x7F800000) sort above every
// finite value, so one unsigned max finds both the maximum and a non-finite element.
__global__ void __launch_bounds__(kThreads) range_scale_kernel(const float* __restrict__ in, std::int64_t n_in,
                                                                const float* __restrict__ w, std::int64_t n_w,
                                                                RangeScale* rs, RangeTargets t) {
    const float* src = blockIdx.y == 0 ? in : w;
    const std::int64_t n = blockIdx.y == 0 ? n_in : n_w;
    unsigned m = 0;
    const std::int64_t step = std::int64_t(gridDim.x) * kThreads;
    std::int64_t i = std::int64_t(blockIdx.x) * kThreads + threadIdx.x;
    for (; i + 3 * step < n; i += 4 * step) {
        const float a = __ldg(src + i), b = __ldg(src + i + step), c = __ldg(src + i + 2 * step),
                    d = __ldg(src + i + 3 * step);
        m = max(m, max(max(__float_as_uint(a) & 0x7FFFFFFFu, __float_as_uint(b) & 0x7FFFFFFFu),
                       max(__float_as_uint(c) & 0x7FFFFFFFu, __float_as_uint(d) & 0x7FFFFFFFu)));
    }
    for (; i < n; i += step) m = max(m, __float_as_uint(__ldg(src + i)) & 0x7FFFFFFFu);
    m = block_max(m);
    __shared__ bool last;
    if (threadIdx.x == 0) {
        atomicMax(blockIdx.y == 0 ? &rs->max_in_bits : &rs->max_w_bits, m);
        __threadfence();
        last = atomicAdd(&rs->blocks_done, 1u) == gridDim.x * gridDim.y - 1;
    }
    __syncthreads();
    if (!last || threadIdx.x != 0) return;
    __threadfence();
    const unsigned mx = atomicExch(&rs->max_in_bits, 0u), mw = atomicExch(&rs->max_w_bits, 0u);
    rs->blocks_done = 0;
    rs->last_in_bits = mx;
    rs->last_w_bits = mw;
    int flag = 0;
    if (mx >= 0x7F800000u) flag = 1;
    else if (mw >= 0x7F800000u) flag = 2;
    const int lx = mx ? floor_log2_bits(mx) : 0, lw = mw ? floor_log2_bits(mw) : 0;
    int lk = 0;
    while ((std::int64_t(1) << lk) < t.terms) ++lk;
    if (!flag && mx && mw && (lx + 1) + (lw + 1) + lk > 127) flag = 3;
    const int ex = mx && mx < 0x7F800000u ? lx - t.in_log2 : 0;
    const int ew = mw && mw < 0x7F800000u ? lw - t.w_log2 : 0;
    pow2_pair(-ex, rs->in_mul);
    pow2_pair(-ew, rs->w_mul);
    pow2_pair(ex + ew, rs->out_mul);
    rs->ex = ex;
    rs->ew = ew;
    rs->flag = flag;
}

std::string bits_text(unsigned bits) {
    float v;
    std::memcpy(&v, &bits, 4);
    char b[48];
    std::snprintf(b, sizeof b, "%.6g", double(v));
    return b;
}

}  // namespace

RangeScaleBuffer::RangeScaleBuffer(RangeTargets t, float lo_keep_in, float lo_keep_w_half) : t_(t) {
    CS_CUDA_CHECK(cudaMalloc(&d_, sizeof(RangeScale)));
    RangeScale h{};
    h.in_mul[0] = h.in_mul[1] = h.w_mul[0] = h.w_mul[1] = h.out_mul[0] = h.out_mul[1] = 1.0f;
    h.lo_keep_in = lo_keep_in;
    h.lo_keep_w_half = lo_keep_w_half;
    copy_to_device_now(d_, &h, sizeof h);
    int dev = 0;
    CS_CUDA_CHECK(cudaGetDevice(&dev));
    CS_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev));
}

RangeScaleBuffer::~RangeScaleBuffer() {
    if (d_) (void)cudaFree(d_);
}

RangeScaleBuffer::RangeScaleBuffer(RangeScaleBuffer&& o) noexcept
    : d_(std::exchange(o.d_, nullptr)), t_(o.t_), sms_(o.sms_) {}

RangeScaleBuffer& RangeScaleBuffer::operator=(RangeScaleBuffer&& o) noexcept {
    if (this != &o) {
        if (d_) (void)cudaFree(d_);
        d_ = std::exchange(o.d_, nullptr);
        t_ = o.t_;
        sms_ = o.sms_;
    }
    return *this;
}

void RangeScaleBuffer::compute(const float* in, std::int64_t n_in, const float* w, std::int64_t n_w,
                               cudaStream_t stream) const {
    // Enough blocks to keep the loads in flight (4 per thread per iteration), no more than a
    // few per SM: the input is read once.
    const std::int64_t per_block = std::int64_t(kThreads) * 4;
    std::int64_t gx = (std::max(n_in, n_w) + per_block - 1) / per_block;
    gx = std::max<std::int64_t>(1, std::min<std::int64_t>(gx, std::int64_t(sms_) * 4));
    range_scale_kernel<<<dim3(unsigned(gx), 2), kThreads, 0, stream>>>(in, n_in, w, n_w, d_, t_);
    CS_CUDA_CHECK_LAUNCH();
}

// Addresses inside the device structure (computed, never dereferenced on the host).
static const float* field(const RangeScale* d, std::size_t offset) {
    return d ? reinterpret_cast<const float*>(reinterpret_cast<const unsigned char*>(d) + offset) : nullptr;
}
const float* RangeScaleBuffer::in_mul() const { return field(d_, offsetof(RangeScale, in_mul)); }
const float* RangeScaleBuffer::w_mul() const { return field(d_, offsetof(RangeScale, w_mul)); }
const float* RangeScaleBuffer::out_mul() const { return field(d_, offsetof(RangeScale, out_mul)); }

std::optional<std::string> RangeScaleBuffer::error(const std::string& variant_kind) const {
    if (!d_) return std::nullopt;
    RangeScale h{};
    CS_CUDA_CHECK(cudaDeviceSynchronize());
    CS_CUDA_CHECK(cudaMemcpy(&h, d_, sizeof h, cudaMemcpyDeviceToHost));
    if (h.flag == 0) return std::nullopt;
    const std::string range = variant_kind + " represents finite inputs and weights with max|x| * max|w| * K < 2^127 (K = " +
                              std::to_string(t_.terms) + " products per output)";
    if (h.flag == 1) return "input out of range: max|x| is " + bits_text(h.last_in_bits) + " (not finite); " + range;
    if (h.flag == 2) return "weights out of range: max|w| is " + bits_text(h.last_w_bits) + " (not finite); " + range;
    return "data out of range: max|x| = " + bits_text(h.last_in_bits) + ", max|w| = " + bits_text(h.last_w_bits) +
           ", so an output may exceed fp32's range; " + range;
}

std::string RangeScaleBuffer::describe() const {
    return "per-tensor power-of-two scales found on the device each run (max|x'| in [2^" + std::to_string(t_.in_log2) +
           ", 2^" + std::to_string(t_.in_log2 + 1) + "), max|w'| in [2^" + std::to_string(t_.w_log2) + ", 2^" +
           std::to_string(t_.w_log2 + 1) + "), undone exactly in the epilogue)";
}

}  // namespace cs::gpu::variants
