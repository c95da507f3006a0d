// The ping-pong schedule of ws_kernel.cuh (CUTLASS's KernelTmaWarpSpecializedPingpong): each
// consumer warpgroup owns whole 128 x BN tiles (two wgmma m64nBN per 32 bytes of K, BN fp32
// accumulators per thread, so BN <= 128) and the two take turns: warpgroup 0 runs unit i's
// mainloop while warpgroup 1 runs the epilogue of unit i-1, then they swap. The producer is
// the cooperative schedule's: it streams the CTA's units through one ring in order; both
// consumer warpgroups walk the same units (TileSched::for_each_unit), warpgroup c running
// units c, c+2, ... and counting the slices of the other's, so a unit starts at the ring
// position of every slice before it (units may differ in length: split-tail's and stream-K's
// cut tiles). An order barrier per warpgroup (one arrival per finished mainloop) keeps the
// turns, which also makes the ring's parity waits sound: every round before the awaited one
// has completed. Each stage is released by one warpgroup (empty count 1); in a cluster of two
// (kCL = 2: the B tile multicast to a pair of pixel rows, or the A tile to a pair of filter
// tiles, whose CTAs walk the same units) by one of each CTA, on its own barrier and on the
// peer's (release<kCL>, empty count 2).
//
// The cut tiles' roles (kCut: split-tail, stream-K) as finish_unit's, for one warpgroup's
// whole tile: a contributor writes both accumulators into its slot (128 x BN floats, the size
// of a cooperative 128-pixel tile's slot) and raises its flag; the finisher waits for its
// contributors' flags, adds their slots and runs the epilogue. The warpgroup's own named
// barrier (4 + cw, 128 threads) orders its stores before the flag and its flag waits before
// its loads; the other warpgroup's mainloop runs on meanwhile.
#pragma once

namespace cs::gpu::variants::hopper {

template <class TO, int BN, int kDown, class Epi, bool kCuts>
__device__ __forceinline__ void pingpong_finish(float (&acc0)[BN / 2], float (&acc1)[BN / 2], const Work& w,
                                                const WsArgs<TO>& a, const EpiArgs<TO>& ea, const TileOrigin& o,
                                                int cw, int t, int& nsub) {
    if (w.role == Role::split_part) {
        float* dst = a.partial + std::int64_t(w.part) * a.g.P * a.g.M;
        store_tile<float, BN>(acc0, dst, a.g, o.p0, o.m0, false, t);
        store_tile<float, BN>(acc1, dst, a.g, o.p0 + 64, o.m0, false, t);
        return;
    }
    if constexpr (kCuts) {
        constexpr int kHalf = 128 * (BN / 2);  // floats of one accumulator of the warpgroup
        if (w.role == Role::sk_contrib) {
            float* slot = a.partial + std::int64_t(w.slot) * (2 * kHalf);
#pragma unroll
            for (int j = 0; j < BN / 2; ++j) slot[j * 128 + t] = acc0[j];
#pragma unroll
            for (int j = 0; j < BN / 2; ++j) slot[kHalf + j * 128 + t] = acc1[j];
            publish_slot(a, w.slot, t == 0, 4 + cw, 128);
            return;
        }
        if (w.role == Role::sk_finish) {
            int first = 0, last = -1;
            a.sched.contributors(w, first, last);
            await_contributors(a, first, last, t == 0, 4 + cw, 128);
            for (int c = first; c <= last; ++c) {
                const float* slot = a.partial + std::int64_t(c) * (2 * kHalf);
#pragma unroll
                for (int j = 0; j < BN / 2; ++j) acc0[j] += __ldcg(slot + j * 128 + t);
#pragma unroll
                for (int j = 0; j < BN / 2; ++j) acc1[j] += __ldcg(slot + kHalf + j * 128 + t);
            }
        }
    }
    Epi::template store<TO, BN, kDown>(acc0, ea, o.p0, o.m0, cw, t, nsub);
    Epi::template store<TO, BN, kDown>(acc1, ea, o.p0 + 64, o.m0, cw, t, nsub);
}

template <class T, int BN, int ROWB, int STAGES, class TO, int kDown, class Epi, int kCL = 1, int kCut = kCutNone>
__device__ __forceinline__ void pingpong_consume(const WsArgs<TO>& a, const EpiArgs<TO>& ea, std::uint32_t sbase,
                                                 std::uint32_t full0, std::uint32_t empty0, std::uint32_t order0,
                                                 int ct, int& nsub, int rank) {
    if constexpr (BN <= 128) {
        using St = StageShape<BN, ROWB>;
        const int cw = ct >> 7, t = ct & 127;
        const PingPongOrder order{order0};
        int i = 0;         // the unit's index in the CTA's walk
        long long at = 0;  // its first slice's ring position: the slices of every unit before it
        a.sched.template for_each_unit<kCut, false>(int(blockIdx.x), [&](const Work& w) {
            const int ui = i++;
            const long long first = at;
            at += w.k1 - w.k0;
            if ((ui & 1) != cw) return;  // the other warpgroup's unit
            order.wait(cw, ui);          // the other warpgroup's mainloop of unit ui-1
            const TileOrigin o = TileOrigin::of(w.tile, a.sched.tiles_n, BN, a.g);
            float acc0[BN / 2], acc1[BN / 2];
            zero(acc0);
            zero(acc1);
            Ring<STAGES> r = Ring<STAGES>::at(first);
            int prev = -1;
            for (int kt = w.k0; kt < w.k1; ++kt) {
                mbar_wait(full0 + 8 * r.stage, r.phase);
                const std::uint32_t st = sbase + std::uint32_t(r.stage) * St::kBytes;
                mma_slice2<T, BN, ROWB>(acc0, acc1, st, st + St::kABytes);
                wgmma_wait<1>();
                if (prev >= 0 && t == 0) release<kCL>(empty0 + 8 * prev, rank);
                prev = r.stage;
                r.advance();
            }
            // Every slice of this unit has arrived: the other warpgroup may start its unit.
            order.arrive(cw, t);
            wgmma_wait<0>();
            fence_regs(acc0);
            fence_regs(acc1);
            if (t == 0) release<kCL>(empty0 + 8 * prev, rank);
            pingpong_finish<TO, BN, kDown, Epi, kCut != kCutNone>(acc0, acc1, w, a, ea, o, cw, t, nsub);
        });
    } else {
        (void)a, (void)ea, (void)sbase, (void)full0, (void)empty0, (void)order0, (void)ct, (void)nsub, (void)rank;
    }
}

}  // namespace cs::gpu::variants::hopper
