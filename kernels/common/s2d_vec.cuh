// Space-to-depth of an NHWC image into NHWC (space_to_depth.hpp's map, C' = (dy*b + dx)*C + c)
// as a copy at full width: the transform of conv1's rewrite for the Hopper family (its
// operands, hopper_transforms.cuh) and for the cudnn-*-s2d rows (space_to_depth.cu), one kernel.
//
// A block takes `rows` (up to 4) output rows of one image. The source rows they need are one
// contiguous run of the NHWC input; it goes to shared memory by bulk copies of its 16-byte-
// aligned interior (cp.async.bulk on sm_90, completing on an mbarrier: the TMA engine holds the
// bytes in flight, not the threads' request slots; element by element only at the run's two
// unaligned ends: nothing outside the run is read), from the run's start rounded down to 16
// bytes. The output rows are one contiguous run too, written in 16-byte stores, each gathered
// from shared memory: for a pixel whose source block lies inside the image through one flat
// offset per channel (dy W C + dx C + c), else through the table of (dy, dx*C + c) with bounds.
// A thread keeps one vector position of a pixel, its flat offsets in registers, and walks the
// pixels: a vector costs its shared loads and a store, no division and no table read (the
// kernel is issue-bound, not memory-bound: ncu in NOTES.md "conv1: space-to-depth in the loader").
// Op::op is applied to every element written (the Hopper tf32 operand's rounding; a plain copy
// otherwise). Each block triggers its grid's programmatic dependent (the halo GEMM) once its
// loads are issued.
// Bytes, conv1 at N=128 (fp16): 39.6 MB read + 39.9 MB written, bound by the copy bandwidth.
// Measured under ncu near that bound in fp16, tf32 slower (the rounding) (git show
// 3ab0d79:gpu/variants/s2d_vec.cuh). A double-buffered persistent grid
// (loads of the next rows under this block's stores) measured no faster (docs/findings.md,
// "The Hopper family"): what is left is the gather's instructions per element, two-byte
// shared loads, since every other source row of conv1 is only 2-byte aligned in shared memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda_check.hpp"
#include "mbarrier.cuh"
#include "s2d_vec_geom.hpp"
#include "space_to_depth.hpp"

namespace cs::gpu::s2d {

// The plain copy.
struct VecCopy {
    template <class T>
    __host__ __device__ __forceinline__ static T op(T x) { return x; }
};

// Channel cp of the rewrite in the gather's two tables: table[cp] = (dy, dx C + c), the source
// row and the element in it of C' = (dy b + dx) C + c (dy = -1: a padding channel, zero), and
// flat[cp] = dy row_elems + dx C + c, its offset from an inner pixel's block. The copy here and
// the halo rung's s2d=loader gatherers (kernels/hopper/halo_conv.cu) build the same tables.
__device__ __forceinline__ void vec_channel(int cp, int C, int b, int row_elems, int2* table, int* flat) {
    int2 e = make_int2(-1, 0);
    if (cp < C * b * b) {
        const Channel ch = channel(cp, C, b);
        e = make_int2(ch.dy, ch.dx * C + ch.c);
    }
    table[cp] = e;
    flat[cp] = e.x >= 0 ? e.x * row_elems + e.y : 0;
}

// One 16-byte vector of the rewrite: channels cp0 .. cp0+kV-1 of the output pixel whose source
// block starts at row ys, column xs of an H x W x C image, gathered from a run of the source in
// which element a holds (ys, xs, c = 0) (only the block's in-image elements are read); valid =
// false (a pixel past the tensor): zeros. A block inside the image with channels short of the
// padding reads one flat offset per element (fl: the vector's, in registers or in shared
// memory) with no bounds: 96% of conv1's vectors, where the bounds cost ~3x the instructions;
// any other through the table, with bounds. The copy below and the halo rung's s2d=loader
// gatherers (kernels/hopper/halo_conv.cu) read their vectors through it.
template <class Op, int kV, class T>
__device__ __forceinline__ void vec_gather(T (&val)[kV], const T* run, int a, const int* fl, const int2* table, int cp0,
                                           int ys, int xs, int H, int W, int C, int b, bool valid, T zero) {
    const int row_elems = W * C;
    if (valid && ys >= 0 && ys + b <= H && xs >= 0 && xs + b <= W && cp0 + kV <= C * b * b) {
#pragma unroll
        for (int j = 0; j < kV; ++j) val[j] = Op::op(run[a + fl[j]]);
    } else {
#pragma unroll
        for (int j = 0; j < kV; ++j) {
            const int2 t = table[cp0 + j];
            const int y = ys + t.x;
            const int x = xs * C + t.y;  // element offset in the source row
            const bool ok = valid && t.x >= 0 && y >= 0 && y < H && x >= 0 && x < row_elems;
            val[j] = ok ? Op::op(run[a + t.x * row_elems + t.y]) : zero;
        }
    }
}

template <class T, class Op>
__global__ void __launch_bounds__(kVecThreads) vec_kernel(const T* __restrict__ in, T* __restrict__ out, const VecGeom g,
                                                          int rows, T zero) {
    constexpr int kV = 16 / int(sizeof(T));  // elements per 16-byte vector
    extern __shared__ __align__(16) unsigned char s2d_vec_smem[];
    int2* table = reinterpret_cast<int2*>(s2d_vec_smem);  // per c': (dy, dx*C + c); dy = -1: a zero channel
    int* flat = reinterpret_cast<int*>(s2d_vec_smem + g.Cp * 8);  // per c': dy W C + dx C + c (the inner pixels' offset)
    T* run = reinterpret_cast<T*>(s2d_vec_smem + ((g.Cp * 12 + 15) & ~15));
    const int row_elems = g.W * g.C;
    const int blocks_per_img = (g.Hp + rows - 1) / rows;
    const int n = int(blockIdx.x) / blocks_per_img;
    const int Y0 = (int(blockIdx.x) - n * blocks_per_img) * rows;
    const int nrows = min(rows, g.Hp - Y0);
    const int tid = int(threadIdx.x);
    for (int cp = tid; cp < g.Cp; cp += kVecThreads) vec_channel(cp, g.C, g.b, row_elems, table, flat);
    // Source rows y0 .. y1-1 (clipped to the image): one contiguous run of the input.
    const int y0 = max(0, g.b * Y0 - g.pad), y1 = min(g.H, g.b * (Y0 + nrows) - g.pad);
    const std::int64_t first = (std::int64_t(n) * g.H + y0) * row_elems;
    const std::int64_t last = first + std::int64_t(max(0, y1 - y0)) * row_elems;  // one past
    const std::int64_t base = first & ~std::int64_t(kV - 1);  // `in` is 16-byte aligned
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // The run's 16-byte-aligned interior by bulk copies (the TMA engine: no per-thread request
    // slots, which held back the 16-byte cp.async form), completing on an mbarrier; the
    // two unaligned ends element by element.
    __shared__ alignas(8) unsigned long long s2d_bar;
    const std::uint32_t bar = std::uint32_t(__cvta_generic_to_shared(&s2d_bar));
    const std::int64_t a0 = min(last, (first + kV - 1) & ~std::int64_t(kV - 1));  // aligned interior [a0, a1)
    const std::int64_t a1 = max(a0, last & ~std::int64_t(kV - 1));
    const std::uint32_t bytes = std::uint32_t(a1 - a0) * std::uint32_t(sizeof(T));
    if (tid == 0) {
        mbar_init(bar, 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (tid == 0 && bytes > 0) {
        mbar_arrive_expect_tx(bar, bytes);
        bulk_copy_run<1>(std::uint32_t(__cvta_generic_to_shared(run + (a0 - base))),
                      reinterpret_cast<const unsigned char*>(in + a0), bytes, bar, 0);
    }
    for (std::int64_t e = first + tid; e < a0; e += kVecThreads) run[e - base] = in[e];
    for (std::int64_t e = a1 + tid; e < last; e += kVecThreads) run[e - base] = in[e];
    // A GEMM launched as this grid's programmatic dependent (the halo rung) may start its
    // prologue once every block of this grid is running; it waits (griddepcontrol.wait) for
    // this grid's completion before it reads `out`.
    grid_launch_dependents();
    if (bytes > 0) mbar_wait(bar, 0);
#else
    const int nvec = int((last - base + kV - 1) / kV);
    for (int v = tid; v < nvec; v += kVecThreads) {
        const std::int64_t e0 = base + std::int64_t(v) * kV;
        if (e0 >= first && e0 + kV <= last) {
            *reinterpret_cast<uint4*>(run + v * kV) = __ldg(reinterpret_cast<const uint4*>(in + e0));
        } else {
#pragma unroll
            for (int j = 0; j < kV; ++j)
                if (e0 + j >= first && e0 + j < last) run[v * kV + j] = in[e0 + j];
        }
    }
#endif
    __syncthreads();
    const int shift = int(first - base);
    const int row_out = g.Wp * g.Cp;  // elements of one output row (a multiple of kV)
    T* o = out + (std::int64_t(n) * g.Hp + Y0) * row_out;
    // One 16-byte vector of output: channels cp0 .. cp0+kV-1 of pixel (Y0 + r, X); fl: the
    // vector's flat offsets (its channels' `flat`, in registers or in shared memory).
    const auto vector = [&](int r, int X, int cp0, const int* fl) {
        const int ys = g.b * (Y0 + r) - g.pad, xs = g.b * X - g.pad;  // the pixel's block in the source
        alignas(16) T val[kV];
        vec_gather<Op>(val, run, shift + (ys - y0) * row_elems + xs * g.C, fl, table, cp0, ys, xs, g.H,
                       g.W, g.C, g.b, true, zero);
        *reinterpret_cast<uint4*>(o + (r * g.Wp + X) * g.Cp + cp0) = *reinterpret_cast<const uint4*>(val);
    };
    const int P = g.Cp / kV;  // vectors per pixel
    if (P <= kVecThreads) {
        // Each thread keeps one vector position p of a pixel (its flat offsets in registers) and
        // walks the pixels `per` at a time: consecutive threads store consecutive vectors, and a
        // vector costs its kV shared loads, no division and no table read.
        const int per = kVecThreads / P, p = tid % P, q = tid / P;
        if (q < per) {
            int fl[kV];
#pragma unroll
            for (int j = 0; j < kV; ++j) fl[j] = flat[p * kV + j];
            int r = 0, X = q;
            while (X >= g.Wp) X -= g.Wp, ++r;
            for (; r < nrows;) {
                vector(r, X, p * kV, fl);
                X += per;
                while (X >= g.Wp) X -= g.Wp, ++r;
            }
        }
    } else {
        const int nout = nrows * row_out / kV;
        for (int v = tid; v < nout; v += kVecThreads) {
            const int e = v * kV, r = e / row_out, rem = e - r * row_out, X = rem / g.Cp;
            const int cp0 = rem - X * g.Cp;
            vector(r, X, cp0, flat + cp0);
        }
    }
}

// n images from `in` to `out` (vec_ok must hold).
template <class T, class Op = VecCopy>
void launch_vec(const VecGeom& g, const T* in, T* out, std::int64_t n, T zero, cudaStream_t stream) {
    const int es = int(sizeof(T));
    const int rows = vec_rows_per_block(g, es);
    const std::int64_t blocks = n * ((g.Hp + rows - 1) / rows);
    if (blocks == 0) return;
    vec_kernel<T, Op><<<unsigned(blocks), kVecThreads, vec_smem_bytes(g, es, rows), stream>>>(in, out, g, rows, zero);
    CS_CUDA_CHECK_LAUNCH();
}

}  // namespace cs::gpu::s2d
