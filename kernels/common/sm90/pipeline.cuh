// The pieces every Hopper GEMM kernel composes (after CUTLASS 3's collective mainloop): the
// TMA loads of one k-slice into a ring stage, the MMAs of one k-slice from that stage, the
// ring's position, named barriers and the bulk-store PTX. The rungs' kernels (wgmma_tma.cu,
// ws_kernel.cuh and its schedules) write no k-loop arithmetic of their own.
#pragma once

#include "hopper_core.cuh"

#include <cuda.h>

#include <cstdint>

namespace cs::gpu::variants::hopper {

// The bytes of one ring stage for a tile of BM pixels, BN filters and ROWB-byte k-slices.
template <int BN, int ROWB, int BM = kBM>
struct StageShape {
    static constexpr int kABytes = BM * ROWB;
    static constexpr int kBBytes = BN * ROWB;
    static constexpr int kBytes = kABytes + kBBytes;
    static_assert(kBytes % 1024 == 0, "stage buffers keep the 1024-byte swizzle alignment");
};

// Position in the ring of STAGES stages: the stage and the parity of its current round.
template <int STAGES>
struct Ring {
    int stage = 0;
    std::uint32_t phase = 0;
    __device__ __forceinline__ void advance() {
        if (++stage == STAGES) stage = 0, phase ^= 1u;
    }
    // The position after q slices from the start.
    __device__ __forceinline__ static Ring at(long long q) {
        Ring r;
        r.stage = int(q % STAGES);
        r.phase = std::uint32_t(q / STAGES) & 1u;
        return r;
    }
};

// k-slice kt of a tile as (filter tap r, s; channel slice cs) for cslices slices per tap.
struct KSlice {
    int r, s, tap, cs;
    __device__ __forceinline__ static KSlice of(int kt, int cslices, int S) {
        KSlice k;
        k.tap = kt / cslices;
        k.cs = kt - k.tap * cslices;
        k.r = k.tap / S;
        k.s = k.tap - k.r * S;
        return k;
    }
    // The next slice, without a division: a persistent producer walks slices in order and
    // must not put a division chain between a stage's release and its refill.
    __device__ __forceinline__ void advance(int cslices, int S) {
        if (++cs == cslices) {
            cs = 0;
            ++tap;
            if (++s == S) s = 0, ++r;
        }
    }
};

// The tile's first output pixel as im2col start coordinates (w0, h0, n0) and its filters m0.
struct TileOrigin {
    int p0, m0, n0, w0, h0;
    // Output pixel p's im2col start (p0 = p) for filters from m0.
    __device__ __forceinline__ static TileOrigin at(int p, int m0, const ConvGeom& g) {
        TileOrigin o;
        o.p0 = p;
        o.m0 = m0;
        o.n0 = p / g.EF;
        const int rem = p - o.n0 * g.EF;
        const int e0 = rem / g.F, f0 = rem - e0 * g.F;
        o.w0 = f0 * g.stride - g.pad;
        o.h0 = e0 * g.stride - g.pad;
        return o;
    }
    __device__ __forceinline__ static TileOrigin of(int tile, int tiles_n, int BN, const ConvGeom& g, int BM = kBM) {
        const int pt = tile / tiles_n, nt = tile - pt * tiles_n;
        return at(pt * BM, nt * BN, g);
    }
};

// Mainloop, producer side (TMA): one k-slice of the tile into `stage_addr`, completing on
// `bar` with the stage's transaction bytes — the im2col box of 128 pixels x BK channels of
// one tap, and the tiled box of BN filters x BK channels of the same tap.
// kCL = 2 (a cluster of two CTAs on the same filters, adjacent pixel rows): the B tile is
// shared, so CTA `rank` loads its half (BN/2 filters; the weight map's box is BN/2 rows) and
// multicasts it to both CTAs, at the same offset and onto the same mbarrier in each; each
// CTA's barrier still expects the whole stage (its A, both halves of B). The halves keep the
// swizzle: BN/2 rows of ROWB bytes are whole 1024-byte swizzle atoms.
// kMcA (a cluster of two CTAs on the same pixel rows, adjacent filter tiles): the A tile is
// shared instead, so CTA `rank` loads its 64 pixels (origin oA: pixel p0 + 64 rank; the input
// map's box is 64 pixels) into rows 64 rank .. of both CTAs' stages, and its own B tile whole.
// BM = 256: the A tile is two boxes of 128 pixels, the second from origin oA (pixel p0 + 128);
// BM = 64: one box of 64 pixels (the input map's box is 64 pixels).
template <int BN, int ROWB, int BK, int kCL = 1, bool kMcA = false, int BM = kBM>
__device__ __forceinline__ void tma_load_slice(const CUtensorMap* tmA, const CUtensorMap* tmB, std::uint32_t stage_addr,
                                               std::uint32_t bar, const TileOrigin& o, const KSlice& k,
                                               int rank = 0, const TileOrigin* oA = nullptr) {
    using St = StageShape<BN, ROWB, BM>;
    mbar_arrive_expect_tx(bar, St::kBytes);
    if constexpr (BM == 2 * kBM) {
        static_assert(kCL == 1 && !kMcA, "256-pixel tiles run without clusters");
        tma_load_im2col_4d(stage_addr, tmA, bar, k.cs * BK, o.w0, o.h0, o.n0, k.s, k.r);
        tma_load_im2col_4d(stage_addr + std::uint32_t(kBM * ROWB), tmA, bar, k.cs * BK, oA->w0, oA->h0, oA->n0, k.s,
                           k.r);
        tma_load_3d(stage_addr + St::kABytes, tmB, bar, k.cs * BK, k.tap, o.m0);
        return;
    }
    if constexpr (kMcA) {
        static_assert(kCL == 2, "the A tile is shared by a cluster of two");
        tma_load_im2col_4d_multicast(stage_addr + std::uint32_t(rank * (kBM / 2) * ROWB), tmA, bar, k.cs * BK, oA->w0,
                                     oA->h0, oA->n0, k.s, k.r, std::uint16_t(0x3));
        tma_load_3d(stage_addr + St::kABytes, tmB, bar, k.cs * BK, k.tap, o.m0);
        return;
    }
    tma_load_im2col_4d(stage_addr, tmA, bar, k.cs * BK, o.w0, o.h0, o.n0, k.s, k.r);
    if constexpr (kCL == 1) {
        tma_load_3d(stage_addr + St::kABytes, tmB, bar, k.cs * BK, k.tap, o.m0);
    } else {
        static_assert(kCL == 2 && (BN / 2) * ROWB % 1024 == 0, "a B half must be whole swizzle atoms");
        tma_load_3d_multicast(stage_addr + St::kABytes + std::uint32_t(rank * (BN / 2) * ROWB), tmB, bar, k.cs * BK,
                              k.tap, o.m0 + rank * (BN / 2), std::uint16_t(0x3));
    }
}

// Mainloop, consumer side: the MMAs of one k-slice — the warpgroup's 64 rows at sA times the
// BN filters at sB, one wgmma per 32 bytes of K — issued and committed as one group. KB < ROWB
// (Tile::kb): the MMAs cover the first KB bytes of each row only (the rest is the zero tail
// past the layer's last channel, which the plan checks).
template <class T, int BN, int ROWB, int KB = ROWB>
__device__ __forceinline__ void mma_slice(float (&acc)[BN / 2], std::uint32_t sA, std::uint32_t sB) {
    using Sw = SwizzleOf<ROWB / int(sizeof(T)), int(sizeof(T))>;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < KB / 32; ++kk)
        WgmmaSS<T, BN>::mma(acc, smem_desc(sA + kk * 32, Sw::kSbo, Sw::kLayout),
                            smem_desc(sB + kk * 32, Sw::kSbo, Sw::kLayout));
    wgmma_commit();
}
// The same for a warpgroup that owns all 128 rows (two accumulators sharing each B read).
template <class T, int BN, int ROWB, int KB = ROWB>
__device__ __forceinline__ void mma_slice2(float (&acc0)[BN / 2], float (&acc1)[BN / 2], std::uint32_t sA,
                                           std::uint32_t sB) {
    using Sw = SwizzleOf<ROWB / int(sizeof(T)), int(sizeof(T))>;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < KB / 32; ++kk) {
        const std::uint64_t db = smem_desc(sB + kk * 32, Sw::kSbo, Sw::kLayout);
        WgmmaSS<T, BN>::mma(acc0, smem_desc(sA + kk * 32, Sw::kSbo, Sw::kLayout), db);
        WgmmaSS<T, BN>::mma(acc1, smem_desc(sA + 64 * ROWB + kk * 32, Sw::kSbo, Sw::kLayout), db);
    }
    wgmma_commit();
}

// The ping-pong schedule's turns (CUTLASS's math warpgroup order barrier): the CTA's units
// alternate between consumer warpgroups 0 and 1, and warpgroup cw issues unit i's MMAs only
// after the other has issued unit i-1's (its arrival number i/2 for warpgroup 1, i/2 - 1 for
// warpgroup 0), so the tensor pipe holds one warpgroup's tile while the other waits for its
// accumulators and writes them out. Two mbarriers of count 1 at `bar0`, one per warpgroup.
struct PingPongOrder {
    std::uint32_t bar0;
    __device__ __forceinline__ void wait(int cw, int i) const {
        if (i > 0) mbar_wait(bar0 + 8u * std::uint32_t(1 - cw), std::uint32_t(cw ? i >> 1 : (i >> 1) - 1) & 1u);
    }
    // Warpgroup cw has issued its unit's MMAs (thread t of the warpgroup; one arrival).
    __device__ __forceinline__ void arrive(int cw, int t) const {
        if (t == 0) mbar_arrive(bar0 + 8u * std::uint32_t(cw));
    }
};

template <int N>
__device__ __forceinline__ void zero(float (&a)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) a[i] = 0.0f;
}

// Named barrier `id` (1..15; 0 is __syncthreads) over `count` threads.
__device__ __forceinline__ void named_sync(int id, int count) {
    CS_HOPPER_ASM("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// Bulk (TMA) store of a 2D box from shared memory, its bulk group, and the waits.
__device__ __forceinline__ void tma_store_2d(const void* tmap, std::uint32_t src, int c0, int c1) {
    CS_HOPPER_ASM("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                     reinterpret_cast<std::uint64_t>(tmap)),
                 "r"(src), "r"(c0), "r"(c1)
                 : "memory");
}
// The tiled 3D store (the row-halo mainloop's staged output row).
__device__ __forceinline__ void tma_store_3d(const void* tmap, std::uint32_t src, int c0, int c1, int c2) {
    CS_HOPPER_ASM("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                      reinterpret_cast<std::uint64_t>(tmap)),
                  "r"(src), "r"(c0), "r"(c1), "r"(c2)
                  : "memory");
}
__device__ __forceinline__ void bulk_commit() {
    CS_HOPPER_ASM("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Until at most N of this thread's bulk groups still read their shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
    CS_HOPPER_ASM("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void bulk_wait() {
    CS_HOPPER_ASM("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

}  // namespace cs::gpu::variants::hopper
