// The chain's network ops on the GPU (chain_ops.hpp): bias + ReLU in place and the 3x3 stride-2
// max-pool, for f32, f16 and bf16 tensors in NCHW or NHWC. Both are memory-bound: every thread
// moves 16-byte packs (4 floats, 8 halves) where the pointers and the innermost extent allow,
// and the index arithmetic is 32-bit when the tensor has fewer than 2^32 elements (a 64-bit
// division is several times the instructions of a 32-bit one). Grid-stride loops; no atomics,
// no shared memory, no allocation and no sync, so a chain can capture them into a CUDA graph.
#include "chain_ops.hpp"

#include "cuda_check.hpp"
#include "elements.cuh"
#include "error.hpp"
#include "mbarrier.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace cs::gpu {
namespace {

constexpr int kThreads = 256;

// V elements of T, moved as one access of their size: a 16-byte pack is one 128-bit load or
// store (Raw: the unsigned type of that size, which __ldg and the vector stores take).
template <int Bytes> struct RawOf;
template <> struct RawOf<2> { using type = unsigned short; };
template <> struct RawOf<4> { using type = unsigned int; };
template <> struct RawOf<8> { using type = uint2; };
template <> struct RawOf<16> { using type = uint4; };

template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
    using Raw = typename RawOf<int(sizeof(T)) * V>::type;
    T v[V];
};

// Through the read-only path: for tensors the kernel does not write.
template <typename T, int V>
__device__ __forceinline__ Pack<T, V> load_pack(const T* p) {
    using Raw = typename Pack<T, V>::Raw;
    const Raw r = __ldg(reinterpret_cast<const Raw*>(p));
    Pack<T, V> x;
    memcpy(&x, &r, sizeof r);
    return x;
}

template <typename T, int V>
__device__ __forceinline__ Pack<T, V> load_pack_rw(const T* p) {
    using Raw = typename Pack<T, V>::Raw;
    const Raw r = *reinterpret_cast<const Raw*>(p);
    Pack<T, V> x;
    memcpy(&x, &r, sizeof r);
    return x;
}

template <typename T, int V>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, V>& x) {
    using Raw = typename Pack<T, V>::Raw;
    Raw r;
    memcpy(&r, &x, sizeof r);
    *reinterpret_cast<Raw*>(p) = r;
}

// How the bias of each element of a pack is found.
//   none      no bias (ReLU alone)
//   nchw      channel (e / HW) % C of the pack's first element e, then walked element by element
//             (a pack spans a plane boundary at most once when HW >= V, but any HW works)
//   nhwc      channel e % C, walked (C not a multiple of the pack)
//   nhwc_pack C a multiple of the pack: the pack's V channels are consecutive, one bias pack
enum class BiasMode { none, nchw, nhwc, nhwc_pack };

// y[e] = relu?(y[e] + bias[channel(e)]) over the first nvec * V elements as packs, then the
// tail (n - nvec * V < V elements) one element per thread. The sum in float, rounded once;
// ReLU on the float sum before that rounding (the same result as after it: rounding is
// monotone and keeps 0), and `!(v > 0) -> 0` as the reference's epilogue: -0 and NaN give +0.
template <typename T, int V, BiasMode M, typename Idx>
__global__ void __launch_bounds__(kThreads)
    bias_relu_kernel(T* __restrict__ y, const T* __restrict__ bias, Idx n, Idx hw, int C, bool relu) {
    grid_dependency_wait();    // launched as a dependent: the kernel before it has completed
    grid_launch_dependents();  // the next kernel may launch (it waits for this one before it reads)
    const Idx stride = Idx(gridDim.x) * kThreads;
    const Idx first = Idx(blockIdx.x) * kThreads + threadIdx.x;
    const Idx nvec = n / V;
    for (Idx p = first; p < nvec; p += stride) {
        const Idx e = p * V;
        Pack<T, V> x = load_pack_rw<T, V>(y + e);
        float b[V] = {};
        if constexpr (M == BiasMode::nhwc_pack) {
            const Pack<T, V> bp = load_pack<T, V>(bias + int(e % Idx(C)));
#pragma unroll
            for (int k = 0; k < V; ++k) b[k] = to_float(bp.v[k]);
        } else if constexpr (M != BiasMode::none) {
            // Walk the channel along the pack: one division per pack, a bias load per channel met.
            Idx r = 0;
            int c;
            if constexpr (M == BiasMode::nchw) {
                const Idx q = e / hw;
                r = e - q * hw;
                c = int(q % Idx(C));
            } else {
                c = int(e % Idx(C));
            }
            b[0] = to_float(__ldg(bias + c));
#pragma unroll
            for (int k = 1; k < V; ++k) {
                bool next = true;
                if constexpr (M == BiasMode::nchw) {
                    next = ++r == hw;
                    if (next) r = 0;
                }
                if (next) {
                    c = c + 1 == C ? 0 : c + 1;
                    b[k] = to_float(__ldg(bias + c));
                } else {
                    b[k] = b[k - 1];
                }
            }
        }
#pragma unroll
        for (int k = 0; k < V; ++k) {
            x.v[k] = from_float<T>(chain_bias_relu(to_float(x.v[k]), b[k], M != BiasMode::none, relu));
        }
        store_pack<T, V>(y + e, x);
    }
    for (Idx e = nvec * V + first; e < n; e += stride) {
        float b = 0.0f;
        if constexpr (M != BiasMode::none) {
            const Idx c = M == BiasMode::nchw ? e / hw % Idx(C) : e % Idx(C);
            b = to_float(__ldg(bias + c));
        }
        y[e] = from_float<T>(chain_bias_relu(to_float(y[e]), b, M != BiasMode::none, relu));
    }
}

// The epilogue a pool may apply to each element it reads (bias_relu_maxpool3x3s2): exactly
// bias_relu_kernel's arithmetic (the sum in float, `!(v > 0) -> 0`, one rounding to T), so the
// pool of these values is bit for bit the pool of bias_relu's output. b: the element's channel's
// bias (0 and has_bias false without one).
template <typename T>
__device__ __forceinline__ float post_op(float v, float b, bool has_bias, bool relu) {
    return to_float(from_float<T>(chain_bias_relu(v, b, has_bias, relu)));
}

// NCHW: one thread per output element, consecutive threads along the output's w, so a warp
// reads three input rows of about 64 consecutive elements (the row below is the next output
// row's top row, from L1/L2).
template <typename T, typename Idx, bool Op>
__global__ void __launch_bounds__(kThreads)
    pool_nchw_kernel(const T* __restrict__ in, T* __restrict__ out, Idx total, int C, int H, int W, int E, int F,
                     const T* __restrict__ bias, bool relu) {
    grid_dependency_wait();    // launched as a dependent: the kernel before it has completed
    grid_launch_dependents();  // the next kernel may launch (it waits for this one before it reads)
    const Idx stride = Idx(gridDim.x) * kThreads;
    for (Idx o = Idx(blockIdx.x) * kThreads + threadIdx.x; o < total; o += stride) {
        const Idx row = o / Idx(F);
        const int j = int(o - row * Idx(F));
        const Idx plane = row / Idx(E);
        const int i = int(row - plane * Idx(E));
        const T* win = in + plane * Idx(H) * Idx(W) + Idx(2 * i) * Idx(W) + Idx(2 * j);
        const float bc = Op && bias ? to_float(__ldg(bias + int(plane % Idx(C)))) : 0.0f;
        auto at = [&](int a, int b) {
            const float v = to_float(__ldg(win + a * W + b));
            return Op ? post_op<T>(v, bc, bias != nullptr, relu) : v;
        };
        float m = at(0, 0);
#pragma unroll
        for (int a = 0; a < 3; ++a)
#pragma unroll
            for (int b = 0; b < 3; ++b)
                if (a + b > 0) m = pool_step(m, at(a, b));
        out[o] = from_float<T>(m);
    }
}

// NHWC: one thread per V consecutive channels of a vertical strip of `strip` output pixels
// (rows i0 .. i0 + strip - 1 of column j; V = 1 when C is not a multiple of a wider pack),
// consecutive threads along C: every window load of a warp is contiguous. The strip walks the
// input rows once: each row's maximum over the window's three columns is taken once, and the
// row two output rows share (2i + 2) is loaded once, so 2 strip + 1 rows of 3 loads make
// `strip` outputs (27 loads for 4, against 36 one output a thread). The maximum of a window is
// the same set's (pool_step: any NaN wins, else the largest; only which NaN, or the sign of a
// zero, could depend on the order).
// Strips of kStrip where the grid keeps kStripThreadsPerSm threads an SM busy even so, else of one
// (the N=1 chain: 2,187 threads for conv1's pool in strips of 4, each walking its four in turn,
// cost more than the loads they save).
constexpr int kStrip = 4;
constexpr int kStripThreadsPerSm = 512;

template <int V>
struct Row {
    float m[V];
};

// One input row's maximum over a window's three columns (p: the row's first pixel of the
// window, at its V channels), each value through the pool's epilogue first (Op).
template <typename T, int V, typename Idx, bool Op>
__device__ __forceinline__ Row<V> row_max(const T* p, int C, const Row<V>& bc, bool has_bias, bool relu) {
    Row<V> r;
#pragma unroll
    for (int b = 0; b < 3; ++b) {
        const Pack<T, V> x = load_pack<T, V>(p + Idx(b) * Idx(C));
#pragma unroll
        for (int k = 0; k < V; ++k) {
            float v = to_float(x.v[k]);
            if (Op) v = post_op<T>(v, bc.m[k], has_bias, relu);
            r.m[k] = b == 0 ? v : pool_step(r.m[k], v);
        }
    }
    return r;
}

// 80 registers at most (a 256-thread block is 20K): with __launch_bounds__ alone ptxas held the
// 64-bit-index V=2 kernels to 32 and spilled 4 bytes.
template <typename T, int V, typename Idx, bool Op>
__global__ void __maxnreg__(80)
    pool_nhwc_kernel(const T* __restrict__ in, T* __restrict__ out, Idx total, int C, int H, int W, int E, int F,
                     const T* __restrict__ bias, bool relu, int strip) {
    grid_dependency_wait();    // launched as a dependent: the kernel before it has completed
    grid_launch_dependents();  // the next kernel may launch (it waits for this one before it reads)
    const Idx stride = Idx(gridDim.x) * kThreads;
    const int CV = C / V;
    const int strips = (E + strip - 1) / strip;
    for (Idx o = Idx(blockIdx.x) * kThreads + threadIdx.x; o < total; o += stride) {
        // o = ((n * strips + strip) * F + j) * CV + cv
        const Idx col = o / Idx(CV);
        const int cv = int(o - col * Idx(CV));
        const Idx t = col / Idx(F);
        const int j = int(col - t * Idx(F));
        const Idx n = t / Idx(strips);
        const int i0 = int(t - n * Idx(strips)) * strip;
        const int rows = E - i0 < strip ? E - i0 : strip;
        const T* win = in + ((n * Idx(H) + Idx(2 * i0)) * Idx(W) + Idx(2 * j)) * Idx(C) + Idx(cv * V);
        Row<V> bc;
#pragma unroll
        for (int k = 0; k < V; ++k) bc.m[k] = Op && bias ? to_float(__ldg(bias + cv * V + k)) : 0.0f;
        // Input row r (relative to 2 i0): its maximum over the window's three columns.
        const Idx row_step = Idx(W) * Idx(C);
        Row<V> top = row_max<T, V, Idx, Op>(win, C, bc, bias != nullptr, relu);
#pragma unroll
        for (int q = 0; q < kStrip && q < rows; ++q) {
            const Row<V> mid = row_max<T, V, Idx, Op>(win + Idx(2 * q + 1) * row_step, C, bc, bias != nullptr, relu);
            const Row<V> bot = row_max<T, V, Idx, Op>(win + Idx(2 * q + 2) * row_step, C, bc, bias != nullptr, relu);
            Pack<T, V> r;
#pragma unroll
            for (int k = 0; k < V; ++k) r.v[k] = from_float<T>(pool_step(pool_step(top.m[k], mid.m[k]), bot.m[k]));
            store_pack<T, V>(out + ((n * Idx(E) + Idx(i0 + q)) * Idx(F) + Idx(j)) * Idx(C) + Idx(cv * V), r);
            top = bot;
        }
    }
}

// maxpool3x3s2_size of reference/network_ref.hpp (floor, no padding), which cs_gpu does not
// include: the reference is not on its include path.
int pooled_size(int size) { return size < 3 ? 0 : (size - 3) / 2 + 1; }

bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

// Enough blocks to fill the GPU several times over, few enough that each thread loops.
unsigned blocks_for(std::int64_t work) {
    return unsigned(std::clamp<std::int64_t>((work + kThreads - 1) / kThreads, 1, 8192));
}

// An attribute of the current device (the one the launch goes to), or `fallback` where the
// runtime cannot say. Asked at each launch, not cached: a process may move between devices.
int current_device_attr(cudaDeviceAttr attr, int fallback) {
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, attr, dev) != cudaSuccess) return fallback;
    return v;
}

// The current device's SM count (the pool's strip choice).
int device_sms() { return current_device_attr(cudaDevAttrMultiProcessorCount, 132); }

// Whether the current device runs programmatic dependent launch (sm_90 and later).
bool device_has_pdl() { return current_device_attr(cudaDevAttrComputeCapabilityMajor, 0) >= 9; }

// One op's launch: `dependent` (a chain's op after its layer's convolution) as the programmatic
// dependent of the kernel before it on the stream where the device has it, so that its blocks
// launch under that kernel's tail; every op kernel waits (grid_dependency_wait, a no-op in a
// plain launch) before it reads.
template <typename... KArgs, typename... Args>
void launch_op(void (*k)(KArgs...), std::int64_t work, bool dependent, cudaStream_t s, Args... args) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(blocks_for(work));
    cfg.blockDim = dim3(kThreads);
    cfg.stream = s;
    cudaLaunchAttribute at{};
    at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at.val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = &at;
    cfg.numAttrs = dependent && device_has_pdl() ? 1 : 0;
    CS_CUDA_CHECK(cudaLaunchKernelEx(&cfg, k, KArgs(args)...));
}

// Whether 32-bit indices reach every element (and an index plus the grid's stride).
bool fits_u32(std::int64_t n) { return n < (std::int64_t(1) << 32) - std::int64_t(8192) * kThreads; }

std::string shape_text(const ChainTensor4& t) {
    return std::to_string(t.N) + "x" + std::to_string(t.C) + "x" + std::to_string(t.H) + "x" + std::to_string(t.W);
}

void check_shape(const ChainTensor4& t, const char* op) {
    if (t.N < 0 || t.C < 0 || t.H < 0 || t.W < 0)
        throw Error(std::string(op) + ": tensor shape " + shape_text(t) + " (N x C x H x W) has a negative extent");
}

template <typename T, int V, BiasMode M, typename Idx>
void launch_bias(T* y, const T* bias, std::int64_t n, std::int64_t hw, int C, bool relu, bool dep, cudaStream_t s) {
    launch_op(bias_relu_kernel<T, V, M, Idx>, n / V + 1, dep, s, y, bias, Idx(n), Idx(hw), C, relu);
}

template <typename T, typename Idx>
void bias_relu_typed(T* y, const ChainTensor4& t, const T* bias, bool relu, bool dep, cudaStream_t s) {
    constexpr int V = 16 / sizeof(T);
    const std::int64_t n = t.elems(), hw = std::int64_t(t.H) * t.W;
    const bool pack = aligned(y, 16);
    const bool nhwc = t.layout == Layout::nhwc;
    if (!bias) {
        if (pack) launch_bias<T, V, BiasMode::none, Idx>(y, bias, n, hw, t.C, relu, dep, s);
        else launch_bias<T, 1, BiasMode::none, Idx>(y, bias, n, hw, t.C, relu, dep, s);
    } else if (!nhwc) {
        if (pack) launch_bias<T, V, BiasMode::nchw, Idx>(y, bias, n, hw, t.C, relu, dep, s);
        else launch_bias<T, 1, BiasMode::nchw, Idx>(y, bias, n, hw, t.C, relu, dep, s);
    } else if (pack && t.C % V == 0 && aligned(bias, 16)) {
        launch_bias<T, V, BiasMode::nhwc_pack, Idx>(y, bias, n, hw, t.C, relu, dep, s);
    } else if (pack) {
        launch_bias<T, V, BiasMode::nhwc, Idx>(y, bias, n, hw, t.C, relu, dep, s);
    } else {
        launch_bias<T, 1, BiasMode::nhwc, Idx>(y, bias, n, hw, t.C, relu, dep, s);
    }
}

template <typename T>
void bias_relu_as(void* y, const ChainTensor4& t, const void* bias, bool relu, bool dep, cudaStream_t s) {
    if (fits_u32(t.elems()))
        bias_relu_typed<T, std::uint32_t>(static_cast<T*>(y), t, static_cast<const T*>(bias), relu, dep, s);
    else
        bias_relu_typed<T, std::uint64_t>(static_cast<T*>(y), t, static_cast<const T*>(bias), relu, dep, s);
}

// The pool's epilogue (bias_relu_maxpool3x3s2): the bias (null: none) and ReLU applied to every
// element it reads; `on` false: the plain pool.
template <typename T>
struct PoolOp {
    const T* bias = nullptr;
    bool relu = false;
    bool dependent = false;  // launch_op's
    bool on() const { return bias != nullptr || relu; }
};

template <typename T, int V, typename Idx>
void launch_pool_nhwc(const T* in, T* out, const ChainTensor4& t, int E, int F, PoolOp<T> op, cudaStream_t s) {
    const std::int64_t outputs = t.N * E * std::int64_t(F) * (t.C / V);
    const int strip = outputs / kStrip >= std::int64_t(device_sms()) * kStripThreadsPerSm ? kStrip : 1;
    const std::int64_t total = t.N * ((E + strip - 1) / strip) * std::int64_t(F) * (t.C / V);
    if (op.on())
        launch_op(pool_nhwc_kernel<T, V, Idx, true>, total, op.dependent, s, in, out, Idx(total), t.C, t.H, t.W, E, F,
                  op.bias, op.relu, strip);
    else
        launch_op(pool_nhwc_kernel<T, V, Idx, false>, total, op.dependent, s, in, out, Idx(total), t.C, t.H, t.W, E,
                  F, static_cast<const T*>(nullptr), false, strip);
}

// The widest pack (16 bytes down to one element) that divides C and both pointers' alignment.
template <typename T, int V, typename Idx>
void pool_nhwc_widest(const T* in, T* out, const ChainTensor4& t, int E, int F, PoolOp<T> op, cudaStream_t s) {
    if constexpr (V > 1) {
        if (t.C % V != 0 || !aligned(in, sizeof(T) * V) || !aligned(out, sizeof(T) * V))
            return pool_nhwc_widest<T, V / 2, Idx>(in, out, t, E, F, op, s);
    }
    launch_pool_nhwc<T, V, Idx>(in, out, t, E, F, op, s);
}

template <typename T, typename Idx>
void pool_typed(const T* in, T* out, const ChainTensor4& t, int E, int F, PoolOp<T> op, cudaStream_t s) {
    if (t.layout == Layout::nhwc) return pool_nhwc_widest<T, 16 / sizeof(T), Idx>(in, out, t, E, F, op, s);
    const std::int64_t total = t.N * t.C * std::int64_t(E) * F;
    if (op.on())
        launch_op(pool_nchw_kernel<T, Idx, true>, total, op.dependent, s, in, out, Idx(total), t.C, t.H, t.W, E, F,
                  op.bias, op.relu);
    else
        launch_op(pool_nchw_kernel<T, Idx, false>, total, op.dependent, s, in, out, Idx(total), t.C, t.H, t.W, E, F,
                  static_cast<const T*>(nullptr), false);
}

template <typename T>
void pool_as(const void* in, const ChainTensor4& t, void* out, int E, int F, const void* bias, bool relu, bool dep,
             cudaStream_t s) {
    const T* src = static_cast<const T*>(in);
    T* dst = static_cast<T*>(out);
    const PoolOp<T> op{static_cast<const T*>(bias), relu, dep};
    if (fits_u32(t.elems())) pool_typed<T, std::uint32_t>(src, dst, t, E, F, op, s);
    else pool_typed<T, std::uint64_t>(src, dst, t, E, F, op, s);
}

}  // namespace

void bias_relu(void* y, const ChainTensor4& t, const void* bias, bool relu, cudaStream_t s, bool dependent) {
    if (!relu && !bias) return;
    check_shape(t, "bias_relu");
    if (t.elems() == 0) return;
    if (!y) throw Error("bias_relu: no tensor (null pointer) for shape " + shape_text(t));
    switch (t.type) {
        case DType::f32: bias_relu_as<float>(y, t, bias, relu, dependent, s); break;
        case DType::f16: bias_relu_as<__half>(y, t, bias, relu, dependent, s); break;
        case DType::bf16: bias_relu_as<__nv_bfloat16>(y, t, bias, relu, dependent, s); break;
    }
    CS_CUDA_CHECK(cudaGetLastError());
}

void maxpool3x3s2(const void* in, const ChainTensor4& t, void* out, cudaStream_t s, bool dependent) {
    bias_relu_maxpool3x3s2(in, t, nullptr, false, out, s, dependent);
}

void bias_relu_maxpool3x3s2(const void* in, const ChainTensor4& t, const void* bias, bool relu, void* out,
                            cudaStream_t s, bool dependent) {
    check_shape(t, "maxpool3x3s2");
    if (t.H < 3 || t.W < 3)
        throw Error("maxpool3x3s2: a 3x3 window does not fit in a " + std::to_string(t.H) + "x" +
                    std::to_string(t.W) + " plane (tensor " + shape_text(t) + ")");
    if (t.elems() == 0) throw Error("maxpool3x3s2: empty tensor " + shape_text(t));
    if (!in || !out) throw Error("maxpool3x3s2: null tensor pointer for shape " + shape_text(t));
    const int E = pooled_size(t.H), F = pooled_size(t.W);
    switch (t.type) {
        case DType::f32: pool_as<float>(in, t, out, E, F, bias, relu, dependent, s); break;
        case DType::f16: pool_as<__half>(in, t, out, E, F, bias, relu, dependent, s); break;
        case DType::bf16: pool_as<__nv_bfloat16>(in, t, out, E, F, bias, relu, dependent, s); break;
    }
    CS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cs::gpu
