// winograd-3xfp16-wgmma-ws-f3x3-5x5 — winograd-3xfp16-wgmma-f3x3-5x5 with the fold taken out of
// the MMA warpgroup (warp specialisation, as FlashAttention-3 splits softmax from its GEMMs).
// Same transforms, split, fold arithmetic and epilogue (winograd_3xfp16.cuh, winograd_wgmma.cuh);
// the block is 64 tiles x 64 filters and its work is split by role:
//   warpgroup 0, MMA (setmaxnreg 136): thread 0 issues the TMA loads of the stages (as the
//     one-warpgroup rung: refills a buffer once its products are complete); per position the
//     18 wgmma m64n64k16 into three accumulators (96 registers), wait, then the merged products
//     m = hi*hi + 2^-11 (hi*lo + lo*hi) go to one of two buffers in shared memory (16 KiB each), whose
//     mbarriers hand them to the fold warpgroups;
//   warpgroups 1, 2, fold (setmaxnreg 184): each owns 32 of the 64 filters (the 144 folded
//     outputs per thread of the one-warpgroup rung); per position wait for the buffer, read its
//     16 products (4 x 16 B), release the buffer, fold; at the end the epilogue, staged in
//     shared memory (winograd_wgmma.cuh: wtc_store_staged).
// One block per SM (3 stages x 48 KiB + 2 x 16 KiB). Every thread arrives on the handoff
// mbarriers (its own stores or reads are released with its arrival: racecheck clean).
//
// Why: the one-warpgroup rung's main kernel (conv2 N=128, ncu) issues ~470 instructions per
// warp and position and stalls on its barrier waits, wait and gmma; the fold runs between one
// position's products and the next's, and the tensor pipe is idle most of the time. Here the
// MMA warpgroup's only work between positions is the merge and 8 shared stores, and the fold of
// position p runs under the products of p+1.
// Prediction: tensor-bound at ~18 x 32 cycles per position (m64n64k16 reads 4 KiB of operands:
// 32 cycles at 128 B/clk, as the math at 2048 fp16 FMA/clk/SM) plus the handoff (~250 cycles):
// 648 blocks x 49 positions x ~830 cycles / 132 SMs for the main kernel.
//
// The steps, in the order they were measured (H200, conv2 N=128; main kernel by ncu, variant by
// the conv2 sweeps of the same calls; the times: git show 3ab0d79:gpu/variants/hopper/winograd_wgmma_ws.cu):
//   two warpgroups of 64 x 32 sharing the V rows, each folding its own filters, a producer
//     warpgroup (first try: is the L2 the bound? L2 traffic 3.0 -> 2.25 GB)
//   fold taken out (this design)
//   + three accumulator chains (hi*hi, hi*lo, lo*hi) instead of two              no change
//   + the epilogue's tile location hoisted out of the element loop               no change
//   + the epilogue staged in shared memory, row-contiguous stores
// None far from the one-warpgroup rung, and far from the prediction.
// Diagnostic builds (git show 388ba50:tools/dev/fp32fast/diag_epilogue_fold.sh; rows FAIL):
// without the output stores, and also with the fold reduced to one output, the MMA pipeline
// alone still takes several times the tensor pipe's busy time: the fold warpgroups wait for
// the products (their top stall), the MMA warpgroup on its wgmma (the group's first
// HGMMA and the wait for the group) — each position ends in wait<0> and the handoff,
// so the tensor core drains once per position, and one MMA warpgroup per SM has nothing to
// overlap that with. Next: a second accumulator set so that position p+1's products are issued
// before p is handed off (needs the fold warpgroups' registers: 64 x 32 outputs x 9 per 128
// threads is 144 of their 184), or two MMA warpgroups taking alternate positions, 32 filters each.
//
// Range (all three 3xFP16 rungs, winograd_3xfp16.cuh): per-tensor power-of-two scales found on
// the GPU each run keep the transformed operands (up to 225|x| and 25/9|w|) inside fp16; fp32
// class for any finite data with max|x| max|w| K < 2^127, else an ERROR naming the range.
#include "fp32fast_rungs.hpp"
#include "winograd_wgmma.cuh"

namespace cs::gpu::variants {
namespace fp32fast {

template <class Cfg, class K>
__global__ void __launch_bounds__(K::NT, 1)
    wtc_wgmma_ws_kernel(const __grid_constant__ CUtensorMap tmV, const __grid_constant__ CUtensorMap tmU,
                        const WtcArgs a) {
#ifdef CS_HOPPER_DEVICE
    constexpr int MT = Cfg::MT, NX = Cfg::NX, CH = Cfg::CH, BT = Cfg::BT, BM = Cfg::BM, FW = K::FW;
    constexpr int STAGES = K::STAGES, G = K::G, EL = BM / 2, FEL = EL / FW;  // products per MMA / fold thread
    using Sw = hw::SwizzleOf<64>;  // 64 halves = one 128 B row per (row, chunk)
    static_assert(2 * CH * 2 == Sw::kRowBytes, "a chunk row is one 128 B swizzle row");
    static_assert(BT == 64 && K::NT == 128 * (1 + FW) && FEL % 4 == 0, "an MMA warpgroup of 64 x BM + FW fold warpgroups");
    using St = WtcStage<Cfg, G>;
    constexpr std::uint32_t ST_BYTES = St::BYTES, MBUF = 128 * EL * 4;  // a products buffer: 128 threads x EL floats

    extern __shared__ __align__(16) unsigned char wtc_smem_raw[];
    const std::uint32_t sbase = (hw::smem_u32(wtc_smem_raw) + 1023u) & ~1023u;
    const std::uint32_t mbase = sbase + STAGES * ST_BYTES;  // 2 products buffers
    float4* const mbuf = reinterpret_cast<float4*>(wtc_smem_raw + (mbase - hw::smem_u32(wtc_smem_raw)));
    const std::uint32_t full0 = mbase + 2 * MBUF, mfull0 = full0 + 8 * STAGES, mempty0 = mfull0 + 16;
    const int tid = int(threadIdx.x), wg = tid >> 7, ct = tid & 127, lane = tid & 31;
    const int mb = int(blockIdx.x % unsigned(a.mblocks)), tb = int(blockIdx.x / unsigned(a.mblocks));
    const int t0 = tb * BT, m0 = mb * BM;
    const int nkc = a.Cp / CH, ngrp = (nkc + G - 1) / G, total = NX * ngrp;

    if (tid == 0) {
        for (int st = 0; st < STAGES; ++st) hw::mbar_init(full0 + 8 * st, 1);
        for (int b = 0; b < 2; ++b) {
            hw::mbar_init(mfull0 + 8 * b, 128);        // every MMA thread
            hw::mbar_init(mempty0 + 8 * b, 128 * FW);  // every fold thread
        }
        hw::mbar_fence_init();
    }
    __syncthreads();

    // Buffer b holds, for fold warpgroup f and k = 0 .. FEL/4-1, float4 [(b*FW + f)*FEL/4 + k][ct]:
    // MMA thread ct's products 4*(f*FEL/4 + k) .. +3 = fold thread ct's products 4k .. 4k+3 (the
    // accumulator fragment of m64nBM restricted to filters 32f..: the m64n32 fragment).
    if (wg == 0) {  // ---- MMA warpgroup ----
        hw::setmaxnreg_dec<K::MMA_REGS>();
        auto issue = [&](int s) {
            const int xi = s / ngrp, st = s % STAGES;
            St::issue(&tmV, &tmU, sbase + std::uint32_t(st) * ST_BYTES, full0 + 8 * st, xi, (s - xi * ngrp) * G, t0, m0);
        };
        if (tid == 0)
            for (int s = 0; s < STAGES && s < total; ++s) issue(s);
        float acc[3][EL];
#pragma unroll
        for (int e = 0; e < EL; ++e) acc[0][e] = acc[1][e] = acc[2][e] = 0.0f;
        const std::uint64_t dA0 = hw::smem_desc(sbase, Sw::kSbo, Sw::kLayout);
        const std::uint64_t dB0 = hw::smem_desc(sbase + St::A_BYTES, Sw::kSbo, Sw::kLayout);
        // Refill the buffer consumed at step s with step s + STAGES (thread 0), once its products are complete.
        auto refill = [&](int s) {
            if (s >= 0 && tid == 0 && s + STAGES < total) issue(s + STAGES);
        };
        int stage = 0, cgrp = 0, cxi = 0, pending = -1;
        std::uint32_t phase = 0;
        for (int s = 0; s < total; ++s) {
            hw::mbar_wait(full0 + 8 * stage, phase);
            const std::uint64_t off = std::uint64_t(stage) * (ST_BYTES >> 4);
            wtc_stage_mma<Cfg, G, BM>(acc, dA0 + off, dB0 + off);
            if (++cgrp == ngrp) {  // the position is complete: hand it to the fold warpgroups
                cgrp = 0;
                hw::wgmma_wait<0>();
                refill(pending);
                refill(s);
                pending = -1;
                __syncwarp();  // warp 0 reconverges
                const int b = cxi & 1, use = cxi >> 1;
                if (use > 0) hw::mbar_wait(mempty0 + 8 * b, std::uint32_t(use - 1) & 1u);
#pragma unroll
                for (int j = 0; j < 3; ++j) hw::fence_regs(acc[j]);
#pragma unroll
                for (int q = 0; q < EL / 4; ++q)  // q = f*FEL/4 + k
                    mbuf[(b * (EL / 4) + q) * 128 + ct] = make_float4(
                        wtc_merged(acc, 4 * q), wtc_merged(acc, 4 * q + 1), wtc_merged(acc, 4 * q + 2), wtc_merged(acc, 4 * q + 3));
#pragma unroll
                for (int e = 0; e < EL; ++e) acc[0][e] = acc[1][e] = acc[2][e] = 0.0f;
                hw::mbar_arrive(mfull0 + 8 * b);  // every thread: its stores are released with its arrival
                ++cxi;
            } else {  // the previous stage's products are complete
                hw::wgmma_wait<1>();
                refill(pending);
                pending = s;
                __syncwarp();
            }
            if (++stage == STAGES) {
                stage = 0;
                phase ^= 1u;
            }
        }
        hw::wgmma_wait<0>();  // (nothing is in flight: the last step completes a position)
        return;
    }

    // ---- fold warpgroups ----
    hw::setmaxnreg_inc<K::FOLD_REGS>();
    const int f = wg - 1;
    float Y[MT * MT][FEL];
#pragma unroll
    for (int y = 0; y < MT * MT; ++y)
#pragma unroll
        for (int e = 0; e < FEL; ++e) Y[y][e] = 0.0f;
    for (int xi = 0; xi < NX; ++xi) {
        const int b = xi & 1;
        hw::mbar_wait(mfull0 + 8 * b, std::uint32_t(xi >> 1) & 1u);
        float m[FEL];
#pragma unroll
        for (int k = 0; k < FEL / 4; ++k) {
            const float4 v = mbuf[(b * (EL / 4) + f * (FEL / 4) + k) * 128 + ct];
            m[4 * k + 0] = v.x;
            m[4 * k + 1] = v.y;
            m[4 * k + 2] = v.z;
            m[4 * k + 3] = v.w;
        }
        hw::mbar_arrive(mempty0 + 8 * b);
        wtc_fold_merged<MT, Cfg::R, FEL>(Y, m, xi);
    }
    // Each fold warpgroup stages its 64 x 32 outputs in its own part of the stage and products
    // buffers (idle now: the MMA warpgroup has finished); the barrier spans both fold warpgroups,
    // since the second part overlays the products buffer the other may still be reading.
    static_assert(FW * 2 * FEL * WTC_SP * 4 <= STAGES * ST_BYTES + 2 * MBUF, "the output tiles fit in the buffers");
    float* const S = reinterpret_cast<float*>(wtc_smem_raw + (sbase - hw::smem_u32(wtc_smem_raw))) + f * 2 * FEL * WTC_SP;
    wtc_store_staged<MT, 2 * FEL>(a, Y, t0, m0 + f * 2 * FEL, (tid >> 5) & 3, lane, S,
                                    [] { asm volatile("bar.sync 1, %0;\n" ::"n"(128 * FW) : "memory"); });
#else
    (void)tmV, (void)tmU, (void)a;
#endif
}

// WtcPlan's Main: the tile (WtcWgmmaWsTile, fp32fast_tiles.hpp: an MMA warpgroup and FW fold
// warpgroups, their setmaxnreg budgets, 3 stages of 3 chunks) and its launch.
template <class Cfg>
struct WtcWgmmaWs : WtcTmaMain<WtcWgmmaWs<Cfg>, Cfg>, WtcWgmmaWsTile<Cfg> {
    static std::string what() {
        return "wgmma m64n" + std::to_string(Cfg::BM) + "k16 (an MMA warpgroup issuing TMA, " +
               std::to_string(WtcWgmmaWs::FW) + " fold warpgroups fed through shared memory)";
    }
    static auto kernel() { return wtc_wgmma_ws_kernel<Cfg, WtcWgmmaWs>; }
};

using WtcF35WgmmaWs = WtcWgmmaWs<WtcF35Ws>;  // 64 tiles x 64 filters
}  // namespace fp32fast

std::unique_ptr<Plan> winograd_3xfp16_wgmma_ws_f3x3_5x5_plan(const Problem& p, const PlanContext& ctx) {
    return std::make_unique<fp32fast::WtcPlan<fp32fast::WtcF35Ws, fp32fast::WtcF35WgmmaWs>>(p, ctx, "F(3x3,5x5)");
}

}  // namespace cs::gpu::variants
