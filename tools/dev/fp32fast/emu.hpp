// emu.hpp — runs the fp32-fast family's CUDA kernels on the CPU, for correctness tests on a
// machine without a GPU (the development machine). Not a simulator of timing: a semantic
// model of what the kernels rely on.
//
// - Each thread of a block is a ucontext fiber; __syncthreads() switches to the scheduler,
//   which runs every fiber up to its next barrier, then releases them all. Blocks run one
//   after another. A barrier reached by some threads of a block while others finish is
//   reported (divergent barrier) and aborts.
// - Fibers run in forward or reverse thread order (EMU_REVERSE=1), so a missing barrier
//   between a write and another thread's read shows up in one of the two orders.
// - cp.async copies are queued per thread and land only at the cp.async.wait_group that
//   covers them (data read from global at issue time, written to shared memory at the
//   wait): a read of shared memory before its wait sees the old (NaN-poisoned) contents.
// - Dynamic shared memory is filled with NaN before each block.
// - mma.sync m16n8k8 tf32 is computed from the 32 lanes' fragments with the PTX ISA's
//   fragment layout (two block barriers per call: all threads of the block must call it
//   the same number of times, as the kernels here do). cvt.rna.tf32 rounds to nearest,
//   ties away from zero, keeping 10 mantissa bits.
//
// Included before the kernel sources with -include and -DFP32FAST_EMU (see emu_test.cpp).
#pragma once

#include <cuda_runtime_api.h>  // declarations only (cudaStream_t, ...), before the macros below
#include <ucontext.h>
#include <vector_types.h>  // float4, int2, uint3, dim3 (host-usable)

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

namespace emu {

struct Pending {
    void* dst;
    unsigned char data[16];
    int bytes;
    int group;
};

struct Fiber {
    ucontext_t ctx;
    std::vector<char> stack;
    uint3 tid;
    int linear = 0;
    bool at_barrier = false;
    bool done = false;
    std::vector<Pending> pending;
    int committed = 0;  // groups committed so far
};

struct State {
    ucontext_t sched;
    std::vector<Fiber> fibers;
    int cur = -1;
    uint3 block_idx{0, 0, 0};
    dim3 block_dim, grid_dim;
    std::vector<float> dyn_smem;  // as floats, 16-byte aligned by vector's allocator (>= 16)
    std::function<void()> body;
    bool reverse = false;
    // mma exchange: per warp, per lane: a[4], b[2], c[4]
    std::vector<std::uint32_t> mma_a, mma_b;
    std::vector<float> mma_c;
};

inline State& st() {
    static State s;
    return s;
}
inline Fiber& cur() { return st().fibers[std::size_t(st().cur)]; }

inline void trampoline() {
    st().body();
    cur().done = true;
    swapcontext(&cur().ctx, &st().sched);
}

inline void barrier() {
    cur().at_barrier = true;
    swapcontext(&cur().ctx, &st().sched);
}

inline void run_block(int nthreads) {
    State& s = st();
    s.fibers.resize(std::size_t(nthreads));
    for (int i = 0; i < nthreads; ++i) {
        Fiber& f = s.fibers[std::size_t(i)];
        f.stack.resize(256 * 1024);
        f.linear = i;
        f.tid = uint3{unsigned(i % int(s.block_dim.x)), unsigned((i / int(s.block_dim.x)) % int(s.block_dim.y)),
                      unsigned(i / int(s.block_dim.x * s.block_dim.y))};
        f.at_barrier = false;
        f.done = false;
        f.pending.clear();
        f.committed = 0;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack.data();
        f.ctx.uc_stack.ss_size = f.stack.size();
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, trampoline, 0);
    }
    for (;;) {
        int ndone = 0, nbar = 0;
        for (int k = 0; k < nthreads; ++k) {
            const int i = s.reverse ? nthreads - 1 - k : k;
            Fiber& f = s.fibers[std::size_t(i)];
            if (f.done) {
                ++ndone;
                continue;
            }
            s.cur = i;
            swapcontext(&s.sched, &f.ctx);
            if (f.done)
                ++ndone;
            else
                ++nbar;
        }
        if (ndone == nthreads) break;
        if (ndone != 0 && nbar != 0) {
            std::fprintf(stderr, "emu: divergent barrier (%d threads finished, %d at a barrier)\n", ndone, nbar);
            std::abort();
        }
        for (auto& f : s.fibers) f.at_barrier = false;
    }
    s.cur = -1;
}

template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem_bytes, Args... args) {
    State& s = st();
    s.grid_dim = grid;
    s.block_dim = block;
    const int nthreads = int(block.x * block.y * block.z);
    s.mma_a.assign(std::size_t((nthreads + 31) / 32) * 32 * 4, 0);
    s.mma_b.assign(std::size_t((nthreads + 31) / 32) * 32 * 2, 0);
    s.mma_c.assign(std::size_t((nthreads + 31) / 32) * 32 * 4, 0);
    for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
            for (unsigned x = 0; x < grid.x; ++x) {
                s.block_idx = uint3{x, y, z};
                s.dyn_smem.assign(smem_bytes / sizeof(float) + 4, std::nanf(""));
                s.body = [&]() { kernel(Params(args)...); };
                run_block(nthreads);
            }
}

template <class T>
T* dyn_smem() {
    return reinterpret_cast<T*>(st().dyn_smem.data());
}

// ---- cp.async model ----
inline void cp_async(void* dst, const void* src, int bytes, bool valid) {
    Pending p;
    p.dst = dst;
    p.bytes = bytes;
    p.group = cur().committed;  // belongs to the next commit
    if (valid)
        std::memcpy(p.data, src, std::size_t(bytes));
    else
        std::memset(p.data, 0, std::size_t(bytes));
    cur().pending.push_back(p);
}
inline void cp_async_commit() { ++cur().committed; }
inline void cp_async_wait(int n) {
    Fiber& f = cur();
    const int limit = f.committed - n;  // groups [0, limit) must be complete
    std::vector<Pending> keep;
    for (auto& p : f.pending) {
        if (p.group < limit)
            std::memcpy(p.dst, p.data, std::size_t(p.bytes));
        else
            keep.push_back(p);
    }
    f.pending.swap(keep);
}

// ---- tf32 and mma.sync model ----
inline std::uint32_t f2u(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
}
inline float u2f(std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}
inline std::uint32_t cvt_rna_tf32(float x) {
    std::uint32_t u = f2u(x);
    if ((u & 0x7f800000u) == 0x7f800000u) return u;  // inf / nan unchanged
    u += 0x1000u;                                     // half of the dropped 13 bits: ties away
    return u & 0xffffe000u;
}
inline float tf32_value(std::uint32_t u) { return u2f(u & 0xffffe000u); }

inline void mma_tf32(float d[4], const std::uint32_t a[4], const std::uint32_t b[2], const float c[4]) {
    State& s = st();
    const int me = cur().linear, warp = me / 32, lane = me % 32;
    std::uint32_t* A = &s.mma_a[std::size_t(warp) * 128];
    std::uint32_t* B = &s.mma_b[std::size_t(warp) * 64];
    float* Cc = &s.mma_c[std::size_t(warp) * 128];
    for (int i = 0; i < 4; ++i) A[lane * 4 + i] = a[i], Cc[lane * 4 + i] = c[i];
    for (int i = 0; i < 2; ++i) B[lane * 2 + i] = b[i];
    barrier();
    const int g = lane >> 2, t = lane & 3;
    // A(row, k): lane (row%8)*4 + k%4, register (row>=8) + 2*(k>=4)
    auto Aat = [&](int row, int k) { return tf32_value(A[((row % 8) * 4 + k % 4) * 4 + (row >= 8) + 2 * (k >= 4)]); };
    // B(k, n): lane n*4 + k%4, register k>=4
    auto Bat = [&](int k, int n) { return tf32_value(B[(n * 4 + k % 4) * 2 + (k >= 4)]); };
    float out[4];
    for (int r = 0; r < 4; ++r) {
        const int row = g + 8 * (r >> 1), col = 2 * t + (r & 1);
        double sum = 0;
        for (int k = 0; k < 8; ++k) sum += double(Aat(row, k)) * double(Bat(k, col));
        out[r] = float(double(Cc[lane * 4 + r]) + sum);
    }
    barrier();
    for (int r = 0; r < 4; ++r) d[r] = out[r];
}

}  // namespace emu

#define threadIdx (::emu::cur().tid)
#define blockIdx (::emu::st().block_idx)
inline void __syncthreads() { ::emu::barrier(); }
template <class T>
inline T __ldg(const T* p) {
    return *p;
}
inline unsigned __float_as_uint(float x) { return ::emu::f2u(x); }
inline float __uint_as_float(unsigned u) { return ::emu::u2f(u); }
