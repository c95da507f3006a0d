// The ping-pong schedule of ws_kernel.cuh (CUTLASS's KernelTmaWarpSpecializedPingpong): each
// consumer warpgroup owns whole 128 x BN tiles (two wgmma m64nBN per 32 bytes of K, BN fp32
// accumulators per thread, so BN <= 128) and the two take turns: warpgroup 0 runs unit i's
// mainloop while warpgroup 1 runs the epilogue of unit i-1, then they swap. The producer is
// the cooperative schedule's: it streams the CTA's units through one ring in order; warpgroup
// c consumes the slices of units c, c+2, ..., skipping the other's by the ring position
// (unit i starts at slice i * its length: every unit of a data-parallel or split-K schedule
// has the same number of slices; stream-K's do not, and plan() refuses that pairing). An
// order barrier per warpgroup (one arrival per finished mainloop) keeps the turns, which
// also makes the ring's parity waits sound: every round before the awaited one has
// completed. Each stage is released by one warpgroup (empty count 1); in a cluster of two
// (kCL = 2: the B tile multicast to a pair of pixel rows, or the A tile to a pair of filter
// tiles, whose CTAs walk the same units) by one of each CTA, on its own barrier and on the
// peer's (release<kCL>, empty count 2).
#pragma once

namespace cs::gpu::variants::hopper {

template <class T, int BN, int ROWB, int STAGES, class TO, int kDown, class Epi, int kCL = 1>
__device__ __forceinline__ void pingpong_consume(const WsArgs<TO>& a, const EpiArgs<TO>& ea, std::uint32_t sbase,
                                                 std::uint32_t full0, std::uint32_t empty0, std::uint32_t order0,
                                                 int ct, int& nsub, int rank) {
    if constexpr (BN <= 128) {
        using St = StageShape<BN, ROWB>;
        const int cw = ct >> 7, t = ct & 127;
        const int len = a.sched.KT / a.sched.ksplit;  // slices per unit
        TileSched::Cursor cur;
        Work w;
        const PingPongOrder order{order0};
        // Skip the other warpgroup's first unit: units alternate c, c+2, ...
        for (int i = 0;; ++i) {
            if (!a.sched.template next<false>(cur, w)) break;  // ping-pong: data-parallel, split-K
            if ((i & 1) != cw) continue;
            order.wait(cw, i);  // the other warpgroup's mainloop of unit i-1
            const TileOrigin o = TileOrigin::of(w.tile, a.sched.tiles_n, BN, a.g);
            float acc0[BN / 2], acc1[BN / 2];
            zero(acc0);
            zero(acc1);
            Ring<STAGES> r = Ring<STAGES>::at((long long)i * len);
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
            if (w.role == Role::split_part) {
                float* dst = a.partial + std::int64_t(w.part) * a.g.P * a.g.M;
                store_tile<float, BN>(acc0, dst, a.g, o.p0, o.m0, false, t);
                store_tile<float, BN>(acc1, dst, a.g, o.p0 + 64, o.m0, false, t);
            } else {
                Epi::template store<TO, BN, kDown>(acc0, ea, o.p0, o.m0, cw, t, nsub);
                Epi::template store<TO, BN, kDown>(acc1, ea, o.p0 + 64, o.m0, cw, t, nsub);
            }
        }
    } else {
        (void)a, (void)ea, (void)sbase, (void)full0, (void)empty0, (void)order0, (void)ct, (void)nsub, (void)rank;
    }
}

}  // namespace cs::gpu::variants::hopper
