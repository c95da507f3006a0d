// The persistent warp-specialised Hopper kernel, composed from policies (after CUTLASS 3's
// split of collective mainloop / kernel schedule / tile scheduler / epilogue):
//   mainloop       TMA im2col + tiled loads (pipeline.cuh: tma_load_slice) into a ring of
//                  STAGES stages with full / empty mbarriers; MMAs by mma_slice
//   schedule       kPP = false: cooperative — both consumer warpgroups on one tile (CoopShape:
//                  of 128 pixels 64 rows each, of 256 pixels 128 rows each, of 64 pixels all
//                  rows and half the filters each); true: ping-pong — each consumer warpgroup a
//                  whole 128-pixel tile, in turns, one's epilogue under the other's mainloop
//                  (schedule_pingpong.cuh)
//   tile scheduler TileSched (tile_scheduler.cuh): data-parallel, split-K, stream-K, split-tail;
//                  split-K's sum in the kernel: fused (splitk_fixup: partials through L2 after a
//                  flag wait) or, kClK, over a cluster of the tile's parts (cluster_split_finish:
//                  through distributed shared memory)
//   epilogue       Epi: EpiDirect or EpiTmaStore (epilogue.cuh)
//   tile           kTiles[TILE] (tiles.hpp)
//   cluster        kCL = 1, or 2: clusters of two CTAs on the same filters, the B tile loaded
//                  half by each and multicast to both (pipeline.cuh); kMcA: on the same pixel
//                  rows instead, the A tile loaded half by each; a stage is refilled
//                  only when the consumers of both CTAs have released it (each consumer
//                  warpgroup arrives on its own CTA's empty barrier and on the peer's)
// One CTA per SM, 3 warpgroups: warpgroup 0 the producer (setmaxnreg 40; one thread issues
// the loads of every unit the scheduler gives this CTA, running ahead across tile
// boundaries), warpgroups 1-2 the consumers (setmaxnreg 232). T: operand type; TO: output
// type (T, or float for 3xFP16); kDown: the epilogue's 2^-kDown (3xFP16's scale).
#pragma once

#include "epilogue.cuh"
#include "pipeline.cuh"
#include "tile_scheduler.cuh"
#include "tiles.hpp"

namespace cs::gpu::variants::hopper {

constexpr int kWsThreads = 384;  // producer warpgroup + 2 consumer warpgroups

template <class TO>
struct WsArgs {
    TO* out;
    ConvGeom g;
    TileSched sched;
    int cslices;          // channel slices per filter tap
    int nchw;             // output layout
    float* partial;       // split-K (fused too): ksplit x P x M; stream-K / split-tail: 128 x BN slots (TileSched::slots)
    int* flags;           // stream-K / split-tail: one per slot, set to `epoch` when it is written; fused
                          // split-K: one per unit
    int epoch;
    OutOps<TO> ops;        // the split variants' scale, the chain's fused bias and ReLU (hopper_store.cuh)
};

__device__ __forceinline__ void st_release(int* p, int v) {
    CS_HOPPER_ASM("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ int ld_acquire(const int* p) {
    int v = 0;
    CS_HOPPER_ASM("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Dynamic shared memory of the persistent kernel for tile t and an epilogue staging of
// epi_bytes: the 1024-byte alignment slack, the ring, the staging, the barriers. The kernel's
// launch (WsSmem) and the plan's fit check (ws_smem_bytes) both take it from here.
constexpr int ws_smem_total(const Tile& t, int epi_bytes) {
    return 1024 + t.stages * (t.bm + t.bn) * t.rowb + epi_bytes + t.stages * 16 + 16;
}

// Shared-memory layout: the ring, the epilogue's staging, the barriers.
template <class T, int TILE, class Epi>
struct WsSmem {
    static constexpr Tile kT = kTiles[TILE];
    using St = StageShape<kT.bn, kT.rowb, kT.bm>;
    static constexpr int kRing = kT.stages * St::kBytes;
    static constexpr int kEpi = Epi::kSmemBytes;
    static constexpr int kTotal = ws_smem_total(kT, kEpi);
    static_assert(kTotal == 1024 + kRing + kEpi + kT.stages * 16 + 16, "the ring, staging and barriers above");
};

// How the cooperative schedule's two consumer warpgroups share a BM x BN tile: 128 pixels,
// rows 64 cw.. each (one m64 accumulator); 256 pixels, rows 128 cw.. each (two accumulators
// sharing each B read); 64 pixels (kSplitN, for the few tiles of N=1), all 64 rows each and
// filters kAN cw.. (one m64 n BN/2 accumulator from its half of the B tile).
template <int BM, int BN>
struct CoopShape {
    static constexpr int kRows = BM, kCols = BN;
    static constexpr bool kSplitN = BM < kBM;
    static constexpr int kAcc = kSplitN ? 1 : BM / kBM;  // accumulators per thread
    static constexpr int kAN = Tile::wg_filters(BM, BN);  // filters of a warpgroup's accumulator
    static_assert(BM == kBM / 2 || BM == kBM || BM == 2 * kBM, "tiles of 64, 128 or 256 pixels");
    // warpgroup cw's accumulator i: its first row and first filter within the tile
    __device__ __forceinline__ static int row0(int cw, int i) { return kSplitN ? 0 : 64 * (kAcc * cw + i); }
    __device__ __forceinline__ static int col0(int cw) { return kSplitN ? cw * kAN : 0; }
};

// A consumer warpgroup's release of a ring stage: its own CTA's empty barrier, and with a
// cluster of two also the peer's (whose producer multicasts into this CTA's stage).
template <int kCL>
__device__ __forceinline__ void release(std::uint32_t empty_bar, int rank) {
    mbar_arrive(empty_bar);
    if constexpr (kCL == 2) mbar_arrive_remote(mapa_shared(empty_bar, std::uint32_t(rank ^ 1)));
}

// Fused split-K (TileSched::kSplitKFused): after this part's fp32 partial tile is written
// (finish_unit), the part raises its flag (unit tile * ksplit + part, set to the launch's
// epoch), waits for the flags of its tile's other parts (all resident: one unit per CTA), then
// finishes rows [part BM / ksplit, (part + 1) BM / ksplit) of the BM x BN tile from all
// parts (splitk_sum / splitk_store: part order, as the reduction kernel; float4 loads with 8
// parts in flight, where M allows). Consumer threads ct 0..255.
template <class TO, int BN, int BM, int kDown>
__device__ __forceinline__ void splitk_fixup(const Work& w, const WsArgs<TO>& a, int ct) {
    const int k = a.sched.ksplit;
    int* const flags = a.flags + w.tile * k;
    named_sync(3, 256);  // every consumer thread's partial stores issued
    if (ct == 0) {
        __threadfence();
        st_release(flags + w.part, a.epoch);
    }
    if (ct < k)
        while (ld_acquire(flags + ct) != a.epoch) {
        }
    named_sync(3, 256);
    const TileOrigin o = TileOrigin::of(w.tile, a.sched.tiles_n, BN, a.g, BM);
    const int p0 = o.p0, m0 = o.m0;
    const int r0 = w.part * BM / k, rows = (w.part + 1) * BM / k - r0;
    const std::int64_t stride = std::int64_t(a.g.P) * a.g.M;  // one part's floats
    if (a.g.M % 4 == 0) {  // float4 groups of 4 filters (m0 and M multiples of 4: whole groups)
        for (int e = ct; e < rows * (BN / 4); e += 256) {
            const int r = e / (BN / 4), m = m0 + 4 * (e - r * (BN / 4)), p = p0 + r0 + r;
            if (p >= a.g.P || m >= a.g.M) continue;
            float v[4];
            splitk_sum<4>(a.partial, stride, k, std::int64_t(p) * a.g.M + m, v);
#pragma unroll
            for (int i = 0; i < 4; ++i) splitk_store<TO, kDown>(v[i], a.out, a.g, a.nchw != 0, a.ops, p, m + i);
        }
    } else {
        for (int e = ct; e < rows * BN; e += 256) {
            const int r = e / BN, m = m0 + e - r * BN, p = p0 + r0 + r;
            if (p >= a.g.P || m >= a.g.M) continue;
            float v[1];
            splitk_sum<1>(a.partial, stride, k, std::int64_t(p) * a.g.M + m, v);
            splitk_store<TO, kDown>(v[0], a.out, a.g, a.nchw != 0, a.ops, p, m);
        }
    }
}

// Cluster split-K (TileSched::kSplitKCluster): the k parts of a tile are the k CTAs of one
// cluster, each running one unit. After its k-slices a part writes its fp32 accumulators into
// its own ring (free: every stage consumed, no unit follows) as a BM x (BN + 4) matrix (each
// accumulator at its place in the tile, CoopShape; the pad spreads store_tile's rows over the
// banks); after a cluster barrier rank r sums rows
// [r BM / k, (r + 1) BM / k) over the cluster's k rings in rank order through distributed
// shared memory (float4 loads, every rank's in flight at once) and writes them
// (splitk_store); a second barrier keeps each ring alive until its peers have read it. The
// producer warpgroup arrives on both barriers too (ws_kernel).
template <class TO, class CS, int kDown>
__device__ __forceinline__ void cluster_split_finish(float (&acc)[CS::kAcc][CS::kAN / 2], const Work& w,
                                                     const TileOrigin& o, const WsArgs<TO>& a, float* ring,
                                                     std::uint32_t ring_s, int ct) {
    constexpr int BM = CS::kRows, BN = CS::kCols, kPitch = BN + 4;
    const int cw = ct >> 7, t = ct & 127;
    named_sync(3, 256);  // both consumer warpgroups' MMAs done reading the ring
    ConvGeom tg{};  // the tile as a BM x kPitch matrix (store_tile's NHWC path)
    tg.P = BM, tg.M = kPitch;
    store_tile<float, CS::kAN>(acc[0], ring, tg, CS::row0(cw, 0), CS::col0(cw), false, t);
    if constexpr (CS::kAcc == 2) store_tile<float, CS::kAN>(acc[1], ring, tg, CS::row0(cw, 1), CS::col0(cw), false, t);
    cluster_sync_all();
    const int k = a.sched.ksplit, rk = w.part;
    const int p0 = o.p0, m0 = o.m0;
    const int r0 = rk * BM / k, rows = (rk + 1) * BM / k - r0;
    for (int e = ct; e < rows * (BN / 4); e += 256) {
        const int row = e / (BN / 4), c4 = 4 * (e - row * (BN / 4));
        const std::uint32_t off = ring_s + std::uint32_t(((r0 + row) * kPitch + c4) * 4);
        float v[4] = {0.f, 0.f, 0.f, 0.f};
        // 8 ranks' loads in flight at a time (a 16-CTA cluster in two rounds), summed in rank order
#pragma unroll
        for (int j0 = 0; j0 < TileSched::kMaxClusterParts; j0 += TileSched::kPortableClusterParts) {
            if (j0 >= k) break;
            float4 x[TileSched::kPortableClusterParts];
#pragma unroll
            for (int j = 0; j < TileSched::kPortableClusterParts; ++j)
                if (j0 + j < k) x[j] = ld_shared_cluster_v4(mapa_shared(off, std::uint32_t(j0 + j)));
#pragma unroll
            for (int j = 0; j < TileSched::kPortableClusterParts; ++j)
                if (j0 + j < k) v[0] += x[j].x, v[1] += x[j].y, v[2] += x[j].z, v[3] += x[j].w;
        }
        const int p = p0 + r0 + row, m = m0 + c4;
        if (p < a.g.P)
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (m + i < a.g.M) splitk_store<TO, kDown>(v[i], a.out, a.g, a.nchw != 0, a.ops, p, m + i);
    }
    cluster_sync_all();
}

// The cut tiles' handshake (stream-K, split-tail), for both schedules: a contributor's slot is
// published once the named barrier `bar` of `count` threads has ordered every thread's stores
// (the leader raises the flag to the launch's epoch); a finisher's leader waits for its
// contributors' flags, then the barrier lets every thread read their slots.
template <class TO>
__device__ __forceinline__ void publish_slot(const WsArgs<TO>& a, int slot, bool leader, int bar, int count) {
    named_sync(bar, count);
    if (leader) {
        __threadfence();
        st_release(a.flags + slot, a.epoch);
    }
}
template <class TO>
__device__ __forceinline__ void await_contributors(const WsArgs<TO>& a, int first, int last, bool leader, int bar,
                                                   int count) {
    if (leader)
        for (int c = first; c <= last; ++c)
            while (ld_acquire(a.flags + c) != a.epoch) {
            }
    named_sync(bar, count);
}

// The consumer side of the cooperative schedule for one unit's accumulators: what the
// scheduler's role asks (epilogue, split-K partial, stream-K slot or fix-up). acc is warpgroup
// cw's accumulator i (CoopShape CS), rows pw.. and filters mw.. of the output. A 256-pixel
// tile has kAcc = 2 accumulators per thread, finished one after the other (i = 0, 1): a
// stream-K / split-tail slot holds both halves (kAcc x 128 x BN floats), its flag is raised
// after the last half is written and waited for before the first is read.
template <class TO, class CS, int kDown, class Epi, bool kCuts = false>
__device__ __forceinline__ void finish_unit(float (&acc)[CS::kAN / 2], int i, const Work& w, const WsArgs<TO>& a,
                                            const EpiArgs<TO>& ea, int pw, int mw, int cw, int ct, int& nsub) {
    constexpr int AN = CS::kAN, kAcc = CS::kAcc;
    const int t = ct & 127;
    if (w.role == Role::split_part || w.role == Role::split_fused) {
        store_tile<float, AN>(acc, a.partial + std::int64_t(w.part) * a.g.P * a.g.M, a.g, pw, mw, false, t);
        if constexpr (kCuts)
            if (w.role == Role::split_fused && i == kAcc - 1) splitk_fixup<TO, CS::kCols, CS::kRows, kDown>(w, a, ct);
        return;
    }
    // The cut tiles' roles: only in a kernel for stream-K, split-tail or fused split-K (kCuts).
    if constexpr (kCuts) {
        constexpr int kSlot = 256 * (AN / 2);  // floats of one accumulator of both warpgroups
        if (w.role == Role::sk_contrib) {
            float* slot = a.partial + (std::int64_t(w.slot) * kAcc + i) * kSlot;
#pragma unroll
            for (int j = 0; j < AN / 2; ++j) slot[j * 256 + ct] = acc[j];
            publish_slot(a, w.slot, ct == 0 && i == kAcc - 1, 3, 256);  // after the last accumulator
            return;
        }
        if (w.role == Role::sk_finish) {
            int first = 0, last = -1;
            a.sched.contributors(w, first, last);
            if (i == 0) await_contributors(a, first, last, ct == 0, 3, 256);
            for (int c = first; c <= last; ++c) {
                const float* slot = a.partial + (std::int64_t(c) * kAcc + i) * kSlot;
#pragma unroll
                for (int j = 0; j < AN / 2; ++j) acc[j] += __ldcg(slot + j * 256 + ct);
            }
        }
    }
    // One epilogue instance for whole tiles and finished stream-K tiles (one copy of the long
    // store sequence in the kernel, not two).
    Epi::template store<TO, AN, kDown>(acc, ea, pw, mw, cw, t, nsub);
}

}  // namespace cs::gpu::variants::hopper

#include "schedule_pingpong.cuh"

namespace cs::gpu::variants::hopper {

template <class T, int TILE, bool kPP, class Epi, class TO, int kDown, int kCL = 1, bool kMcA = false,
          int kCut = kCutNone, bool kClK = false>
__global__ void __launch_bounds__(kWsThreads, 1)
    ws_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
              const __grid_constant__ CUtensorMap tmO, const WsArgs<TO> a) {
#ifdef CS_HOPPER_DEVICE
    constexpr bool kCuts = kCut != kCutNone;  // the cut tiles' roles (finish_unit)
    static_assert(kCL == 1 || kCL == 2, "clusters of one or two CTAs");
    static_assert(!kCuts || (kCL == 1 && (!kPP || kCut != kCutFused)),
                  "stream-K and split-tail: no cluster; fused split-K: cooperative");
    static_assert(!kClK || (kCL == 1 && !kPP && !kCuts), "cluster split-K: cooperative, clusters of its own");
    constexpr Tile kT = kTiles[TILE];
    constexpr int BN = kT.bn, ROWB = kT.rowb, STAGES = kT.stages, BK = ROWB / int(sizeof(T)), BM = kT.bm;
    static_assert(BM == kBM || (!kPP && kCL == 1), "64- and 256-pixel tiles: cooperative, no cluster of two");
    using St = StageShape<BN, ROWB, BM>;
    using L = WsSmem<T, TILE, Epi>;
    static_assert(!kClK || BM * (BN + 4) * 4 <= L::kRing, "cluster split-K: the accumulators fit the ring");
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t sbase = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const std::uint32_t epi0 = sbase + L::kRing;
    const std::uint32_t full0 = epi0 + L::kEpi;
    const std::uint32_t empty0 = full0 + STAGES * 8;
    const std::uint32_t order0 = empty0 + STAGES * 8;  // ping-pong: one per consumer warpgroup

    const int tid = int(threadIdx.x);
    const int wg = tid >> 7;
    if (tid == 0) {
        tma_prefetch_desc(&tmA);  // under the barriers' set-up, not before the first load
        tma_prefetch_desc(&tmB);
        if constexpr (std::is_same_v<Epi, EpiTmaStore>) tma_prefetch_desc(&tmO);
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);
            mbar_init(empty0 + 8 * s, (kPP ? 1 : 2) * kCL);
        }
        mbar_init(order0, 1);
        mbar_init(order0 + 8, 1);
        mbar_fence_init();
    }
    // A cluster's CTAs multicast into each other's stages and arrive on each other's
    // barriers: both must have initialised theirs first, and neither may exit while the
    // other still can (the barrier at the end).
    const int rank = kCL == 2 ? int(cluster_rank()) : 0;
    if constexpr (kCL == 2)
        cluster_sync_all();
    else
        __syncthreads();

    if (wg == 0) {
        // ---- producer ----
        setmaxnreg_dec<40>();
        if (tid == 0) {
            // Launched as the input transform's programmatic dependent (WsLaunch::pdl), the
            // kernel got here while the transform may still run: the operands are read once it
            // has completed and its writes are visible. A no-op in a plain launch.
            grid_dependency_wait();
            Ring<STAGES> r;
            bool first_round = true;  // the ring's stages start free
            const int cslices = a.cslices, S = a.g.S;
            a.sched.template for_each_unit<kCut, kClK>(int(blockIdx.x), [&](const Work& w) {
                const TileOrigin o = TileOrigin::of(w.tile, a.sched.tiles_n, BN, a.g, BM);
                // kMcA: this CTA's half of the shared A tile; BM = 256: the second 128 pixels
                const TileOrigin oA = kMcA ? TileOrigin::at(o.p0 + rank * (kBM / 2), o.m0, a.g)
                                           : (BM == 2 * kBM ? TileOrigin::at(o.p0 + kBM, o.m0, a.g) : o);
                KSlice k = KSlice::of(w.k0, cslices, S);
                for (int kt = w.k0; kt < w.k1; ++kt) {
                    // round k of a stage waits for the consumers' release of round k-1.
                    if (!first_round) mbar_wait(empty0 + 8 * r.stage, r.phase ^ 1u);
                    tma_load_slice<BN, ROWB, BK, kCL, kMcA, BM>(&tmA, &tmB, sbase + std::uint32_t(r.stage) * St::kBytes,
                                                                full0 + 8 * r.stage, o, k, rank, &oA);
                    k.advance(cslices, S);
                    r.advance();
                    if (r.stage == 0) first_round = false;
                }
            });
        }
        if constexpr (kCL == 2) cluster_sync_all();
        if constexpr (kClK) {  // cluster_split_finish's two barriers
            cluster_sync_all();
            cluster_sync_all();
        }
        return;
    }
    // ---- consumers ----
    setmaxnreg_inc<232>();
    const int ct = tid - 128;  // 0..255
    const int cw = ct >> 7;    // consumer warpgroup
    const EpiArgs<TO> ea{a.out, &tmO, a.g, a.nchw != 0, epi0, a.ops};
    int nsub = 0;
    if constexpr (kPP) {
        pingpong_consume<T, BN, ROWB, STAGES, TO, kDown, Epi, kCL, kCut>(a, ea, sbase, full0, empty0, order0, ct, nsub,
                                                                        rank);
    } else {
        // Cooperative: consumer warpgroup cw owns the accumulators CoopShape places (one m64
        // accumulator; two sharing each B read, mma_slice2, on 256 pixels; on 64 pixels one
        // over its half of the filters, read from its half of the B tile). 64- and 256-pixel
        // tiles run every tile scheduler but clusters of two (the plan refuses those).
        using CS = CoopShape<BM, BN>;
        constexpr int kAcc = CS::kAcc, AN = CS::kAN;
        Ring<STAGES> r;
        a.sched.template for_each_unit<kCut, kClK>(int(blockIdx.x), [&](const Work& w) {
            const TileOrigin o = TileOrigin::of(w.tile, a.sched.tiles_n, BN, a.g, BM);
            float acc[kAcc][AN / 2];
            zero(acc[0]);
            if constexpr (kAcc == 2) zero(acc[1]);
            int prev = -1;
            for (int kt = w.k0; kt < w.k1; ++kt) {
                mbar_wait(full0 + 8 * r.stage, r.phase);
                const std::uint32_t st = sbase + std::uint32_t(r.stage) * St::kBytes;
                const std::uint32_t sa = st + std::uint32_t(CS::row0(cw, 0)) * ROWB;
                const std::uint32_t sb = st + St::kABytes + std::uint32_t(CS::col0(cw)) * ROWB;
                if constexpr (kAcc == 1)
                    mma_slice<T, AN, ROWB, kT.mma_bytes()>(acc[0], sa, sb);
                else
                    mma_slice2<T, BN, ROWB, kT.mma_bytes()>(acc[0], acc[1], sa, sb);
                wgmma_wait<1>();
                if (prev >= 0 && (ct & 127) == 0) release<kCL>(empty0 + 8 * prev, rank);
                prev = r.stage;
                r.advance();
            }
            wgmma_wait<0>();
            fence_regs(acc[0]);
            if constexpr (kAcc == 2) fence_regs(acc[1]);
            if ((ct & 127) == 0) release<kCL>(empty0 + 8 * prev, rank);
            if constexpr (kClK) {
                cluster_split_finish<TO, CS, kDown>(acc, w, o, a,
                                                        reinterpret_cast<float*>(smem_raw + (sbase - smem_u32(smem_raw))),
                                                        sbase, ct);
                return;
            }
            // constant indices only: a loop here is not unrolled and puts acc in local memory
            const int mw = o.m0 + CS::col0(cw);
            finish_unit<TO, CS, kDown, Epi, kCuts>(acc[0], 0, w, a, ea, o.p0 + CS::row0(cw, 0), mw, cw, ct, nsub);
            if constexpr (kAcc == 2)
                finish_unit<TO, CS, kDown, Epi, kCuts>(acc[1], 1, w, a, ea, o.p0 + CS::row0(cw, 1), mw, cw, ct, nsub);
        });
    }
    Epi::drain(ct & 127);
    if constexpr (kCL == 2) cluster_sync_all();
#else
    (void)tmA, (void)tmB, (void)tmO, (void)a;
#endif
}

}  // namespace cs::gpu::variants::hopper
