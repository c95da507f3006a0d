// hopper-pp-fp16 / hopper-pp-bf16 / hopper-pp-tf32 — Hopper rung 4: rung 3 (TMA producer
// warpgroup, persistent grid, setmaxnreg) with ping-pong consumers. The kernel is rung 3's
// (wgmma_ws.cu, template flag kPingPong); this file is the consumer side that differs.
//
// Idea: in rung 3 both consumer warpgroups work on one 128 x BN tile (64 rows each) and then
// both run the epilogue, so the tensor cores idle while a tile's accumulators are converted
// and stored, once per tile (measured cost: rung 3 sits at 83-96% of cuBLAS on conv2-5 while
// cuDNN reaches 98-103%; the epilogue of a 128x128 fp16 tile is 32 KB of stores against a
// ~13 us mainloop on conv3, ~8-10%). Here each consumer warpgroup owns whole 128 x BN tiles
// (two wgmma m64nBN per k-step, BN fp32 accumulators per thread, so BN <= 128) and the two
// take turns: warpgroup 0 runs tile i's mainloop while warpgroup 1 runs the epilogue of tile
// i-1, then they swap (CUTLASS's "ping-pong" kernel schedule). The producer is unchanged: it
// streams the CTA's tiles' k-slices through one ring in tile order; warpgroup c consumes the
// slices of tiles c, c+2, ..., skipping the other's by its slice counter (tile i starts at
// slice i*KT). An order barrier per warpgroup (an mbarrier, one arrival per finished
// mainloop) keeps the turns: warpgroup c starts tile i only after the other finished tile
// i-1's mainloop. That is also what makes the parity waits on the ring sound: every round
// before the one a warpgroup waits for has completed (the other warpgroup waited for it), so
// a parity can never be mistaken for one two rounds old. Each stage is released by one
// warpgroup (empty count 1 instead of 2).
//
// Prediction (H200, N=128, fp16): the epilogue hidden under the other warpgroup's mainloop
// gives back the ~8-12% rung 3 loses on conv3-5 -> ~0.060 / 0.085 / 0.063 ms (1.0x cuDNN's
// 0.061 / 0.086 / 0.063); conv2 on 128x128 tiles (1458 of them, 11 waves, no half-empty last
// wave) ~0.19-0.20 (cuDNN 0.181); conv1 unchanged (L2-bound, see rung 2). tf32 alike: conv2
// ~0.29, conv3-5 ~0.10 / 0.145 / 0.11.
// Measured (H200, N=128, tools/dev/hopper/test_hopper --big-only, L2 flushed, median of 20,
// default tiles; rung 3 beside it, same run):
//            fp16 NHWC rung 3 -> 4        tf32 NHWC rung 3 -> 4
//   conv1    0.309 -> 0.305               0.335 -> 0.334
//   conv2    0.215 -> 0.249 (128x128)     0.304 -> 0.298
//   conv3    0.0656 -> 0.0585 (-11%)      0.108 -> 0.104
//   conv4    0.0914 -> 0.0833 (-9%)       0.153 -> 0.149
//   conv5    0.0683 -> 0.0644 (-6%)       0.117 -> 0.115
// conv3-5 as predicted: 655 / 689 / 595 TFLOP/s, at or above cuBLAS's own GEMM of the shape
// (672 / 679 / 576), 0.98-1.06x cuDNN fp16 in the sweeps. conv2 loses: rung 3's 128x256
// tile reads each A slice once for 256 filters (half the shared-memory traffic per MMA of
// 128x128) and its 729 tiles beat 1458 tiles' 11.05 waves (the 12th nearly empty); a
// ping-pong schedule for conv2 needs 64x256 per warpgroup (m64n256, 128 accumulators), a
// 64-row ring. ptxas: 168 registers at launch, no spills (the 128 accumulators fit the 232
// of setmaxnreg); SASS as rung 3 (HGMMA x 2 per 32 bytes of K).
// Split-K (rungs 3 and 4, wgmma_ws.cu's choose_ksplit) applies here too.
#pragma once

#include "hopper_core.cuh"

namespace cs::gpu::variants::hopper {

// The consumer side of rung 4, for consumer thread ct (0..255; warpgroup ct / 128).
// sbase: the first stage (1024-aligned); full0 / empty0: the ring's barriers; order0: two
// order barriers (warpgroup c arrives on order0 + 8c after each mainloop).
// Work units as rung 3's: tile (unit / ksplit) x K part (unit % ksplit) of KT slices; a split
// unit's tile goes to partial[part] (fp32, P x M), reduced by splitk_reduce_kernel.
template <class T, int BN, int BK, int STAGES, class TO, int kDown>
__device__ __forceinline__ void pingpong_consume(TO* __restrict__ out, const ConvGeom& g, int tiles_n, int nunits,
                                                 int KT, std::uint32_t sbase, std::uint32_t full0,
                                                 std::uint32_t empty0, std::uint32_t order0, int ct, bool nchw,
                                                 int ksplit, float* __restrict__ partial) {
    static_assert(BN <= 128, "a ping-pong warpgroup holds a whole 128 x BN tile: BN fp32 registers per thread");
    using Sw = SwizzleOf<BK, int(sizeof(T))>;
    constexpr int ROWB = BK * int(sizeof(T)), A_BYTES = kBM * ROWB, ST_BYTES = A_BYTES + BN * ROWB;
    const int cw = ct >> 7, t = ct & 127;
    for (int i = cw, j = 0;; i += 2, ++j) {
        const std::int64_t unit = std::int64_t(blockIdx.x) + std::int64_t(i) * gridDim.x;
        if (unit >= nunits) break;
        const int tile = int(unit / ksplit), part = int(unit - std::int64_t(tile) * ksplit);
        // Wait for the other warpgroup's mainloop of tile i-1: its arrival number
        // (i-1 - other) / 2, i.e. j for warpgroup 1 and j-1 for warpgroup 0.
        if (i > 0) mbar_wait(order0 + 8u * std::uint32_t(1 - cw), std::uint32_t(cw ? j : j - 1) & 1u);
        const int pt = tile / tiles_n, nt = tile - pt * tiles_n;
        const int p0 = pt * kBM, m0 = nt * BN;
        float acc0[BN / 2], acc1[BN / 2];
#pragma unroll
        for (int k = 0; k < BN / 2; ++k) acc0[k] = 0.0f, acc1[k] = 0.0f;
        const std::int64_t q = std::int64_t(i) * KT;  // the ring's slice counter at this tile
        int stage = int(q % STAGES);
        std::uint32_t phase = std::uint32_t(q / STAGES) & 1u;
        int prev = -1;
        for (int kt = 0; kt < KT; ++kt) {
            mbar_wait(full0 + 8 * stage, phase);
            const std::uint32_t sA = sbase + std::uint32_t(stage) * ST_BYTES;
            const std::uint32_t sB = sA + A_BYTES;
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < ROWB / 32; ++kk) {
                const std::uint64_t db = smem_desc(sB + kk * 32, Sw::kSbo, Sw::kLayout);
                WgmmaSS<T, BN>::mma(acc0, smem_desc(sA + kk * 32, Sw::kSbo, Sw::kLayout), db);
                WgmmaSS<T, BN>::mma(acc1, smem_desc(sA + 64 * ROWB + kk * 32, Sw::kSbo, Sw::kLayout), db);
            }
            wgmma_commit();
            wgmma_wait<1>();
            if (prev >= 0 && t == 0) mbar_arrive(empty0 + 8 * prev);
            prev = stage;
            if (++stage == STAGES) {
                stage = 0;
                phase ^= 1u;
            }
        }
        // Every slice of this tile has arrived: the other warpgroup may start its tile.
        if (t == 0) mbar_arrive(order0 + 8u * std::uint32_t(cw));
        wgmma_wait<0>();
        fence_regs(acc0);
        fence_regs(acc1);
        if (t == 0) mbar_arrive(empty0 + 8 * prev);
        if (ksplit > 1) {
            float* dst = partial + std::int64_t(part) * g.P * g.M;
            store_tile<float, BN>(acc0, dst, g, p0, m0, false, t);
            store_tile<float, BN>(acc1, dst, g, p0 + 64, m0, false, t);
        } else {
            store_tile<TO, BN, kDown>(acc0, out, g, p0, m0, nchw, t);
            store_tile<TO, BN, kDown>(acc1, out, g, p0 + 64, m0, nchw, t);
        }
    }
}

}  // namespace cs::gpu::variants::hopper
