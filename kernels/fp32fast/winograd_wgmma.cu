// winograd-3xfp16-wgmma-f3x3-5x5 — winograd-3xfp16-f3x3-5x5 with the position GEMMs on the
// Hopper warpgroup MMA (wgmma) instead of mma.sync; same transforms, tile, split and fold
// (winograd_3xfp16.cuh), only the main kernel differs.
//
// Range (all three 3xFP16 rungs, winograd_3xfp16.cuh): per-tensor power-of-two scales found on
// the GPU each run keep the transformed operands (up to 225|x| and 25/9|w|) inside fp16; fp32
// class for any finite data with max|x| max|w| K < 2^127, else an ERROR naming the range.
//
// Why: the mma.sync rung's main kernel, under ncu, ran at low occupancy (242 registers: the 144
// folded output accumulators) with the tensor pipe at a small share of the dense fp16 rate —
// each warp waits on its ldmatrix -> mma chains with two warps per scheduler to hide them.
// wgmma takes both operands straight from shared memory (no fragment registers, no ldmatrix)
// and runs asynchronously, so the next stage's copies are issued while a stage's products are
// in flight.
//
// Main kernel: block = 64 tiles x 32 filters, one warpgroup, 2 blocks per SM: wgmma m64n32k16 on
// the 64 tiles (A = V rows) and the 32 filters (B = U rows), accumulators 3 x 16 fp32 per thread
// (hi*hi, hi*lo, lo*hi), folded output tile 9 x 16 (236 registers). Stage = one position, 3 chunks of
// 32 channels (conv2's 96): per chunk 64 + 32 rows of 128 B in the 128 B swizzle (hopper_ptx.cuh:
// SwizzleOf<64>), brought by two tiled TMA loads (maps over V and U, encoded once per plan) that
// complete on the stage's mbarrier; 3 stages; descriptors stepped 32 B per k16 (hi at bytes
// 0/32, lo at 64/96 of the row). After a stage's 18 wgmma: wait (all of them when the position
// is complete, then fold; else all but the newest group), thread 0 refills the buffer the last
// complete stage used. No __syncthreads in the loop.
//
// The steps, in the order they were measured (conv2 N=128 on the H200, the whole variant in a
// conv2 sweep and the main kernel under ncu; the times: git show 3ab0d79:gpu/variants/hopper/winograd_wgmma.cu):
//   2 warpgroups x 32 filters, 6-stage cp.async, division-based addressing
//   + addressing set up once and advanced by additions (WtcLoader): the one large gain
//   + one warpgroup of 32 filters, 2 blocks/SM (the other block fills one's fold and barrier)
//   + 3 chunks per stage (one barrier per position)
//   + TMA instead of cp.async (no copy instructions in the loop: 104M instead of 157M
//     instructions)
//   The last three about level; G = 1 with 8 stages of 12 KiB was slower. The prediction
//   assumed the tensor pipe or shared memory bound; under ncu neither the tensor pipe nor the
//   issue slots are near busy. Three experiments ruled out the obvious bounds (none kept):
//   - L2 traffic (2.3 GB): clusters of 4 blocks along the filters sharing one V tile by TMA
//     multicast (empty barriers across the cluster) halved it — and ran slower, the blocks
//     waiting on each other's releases.
//   - the epilogue's scattered 4-byte stores: staging the output tile in the idle stage buffers
//     for row-wise stores: no change (more instructions for the index arithmetic).
//   - the fold serialised behind the products: two accumulator sets, position p's wgmma in
//     flight while p-1 is folded after wait<1>: ptxas serialises the wgmma (C7514: accumulators
//     read between issue and wait, whatever the set) — slower.
//   What is left (ncu per SASS instruction, and diagnostic builds): the main kernel's time splits
//   into writing the outputs (96 MB, 144 scattered 4-byte stores per thread when a block ends),
//   the fold, and the MMA pipeline itself, the largest part. Products in three accumulator
//   chains (hi*hi, hi*lo, lo*hi; kept) instead of two changed nothing, so consecutive wgmma do
//   not wait on each other's accumulators; the warps stall on each position's first wgmma and
//   on its wait<0>. The fold taken out into other warpgroups is the next rung
//   (winograd_wgmma_ws.cu); the epilogue there is staged through shared memory (here it was
//   not faster: the other block on the SM already overlaps this one's epilogue).
//
#include "fp32fast_rungs.hpp"
#include "winograd_wgmma.cuh"

namespace cs::gpu::variants {
namespace fp32fast {

template <class Cfg, class K>
__global__ void __launch_bounds__(K::NT, K::CTAS)
    wtc_wgmma_kernel(const __grid_constant__ CUtensorMap tmV, const __grid_constant__ CUtensorMap tmU, const WtcArgs a) {
#ifdef CS_HOPPER_DEVICE
    constexpr int MT = Cfg::MT, NX = Cfg::NX, CH = Cfg::CH, BT = Cfg::BT, BM = Cfg::BM;
    constexpr int STAGES = K::STAGES, EL = K::WN / 2, G = K::G;
    using Sw = hw::SwizzleOf<64>;  // 64 halves = one 128 B row per (row, chunk)
    static_assert(2 * CH * 2 == Sw::kRowBytes, "a chunk row is one 128 B swizzle row");
    static_assert(BT == 64 && BM == K::WN && K::NT == 128, "one warpgroup, one m64nBM wgmma per k16 and product");
    using St = WtcStage<Cfg, G>;
    constexpr std::uint32_t A_BYTES = St::A_BYTES, ST_BYTES = St::BYTES;

    extern __shared__ __align__(16) unsigned char wtc_smem_raw[];
    const std::uint32_t sbase = (hw::smem_u32(wtc_smem_raw) + 1023u) & ~1023u;
    const std::uint32_t full0 = sbase + STAGES * ST_BYTES;  // STAGES mbarriers of 8 bytes
    const int tid = int(threadIdx.x), warp = tid >> 5, lane = tid & 31;
    const int mb = int(blockIdx.x % unsigned(a.mblocks)), tb = int(blockIdx.x / unsigned(a.mblocks));
    const int t0 = tb * BT, m0 = mb * BM;
    const int nkc = a.Cp / CH, ngrp = (nkc + G - 1) / G, total = NX * ngrp;

    if (tid == 0) {
        for (int st = 0; st < STAGES; ++st) hw::mbar_init(full0 + 8 * st, 1);
        hw::mbar_fence_init();
    }
    __syncthreads();

    auto issue = [&](int s, int st) {
        const int xi = s / ngrp;
        St::issue(&tmV, &tmU, sbase + std::uint32_t(st) * ST_BYTES, full0 + 8 * st, xi, (s - xi * ngrp) * G, t0, m0);
    };
    if (tid == 0)
        for (int s = 0; s < STAGES && s < total; ++s) issue(s, s);

    float acc[3][EL], Y[MT * MT][EL];
#pragma unroll
    for (int e = 0; e < EL; ++e) {
        acc[0][e] = acc[1][e] = acc[2][e] = 0.0f;
#pragma unroll
        for (int y = 0; y < MT * MT; ++y) Y[y][e] = 0.0f;
    }

    // Descriptors of stage 0 (a stage is ST_BYTES >> 4 more).
    const std::uint64_t dA0 = hw::smem_desc(sbase, Sw::kSbo, Sw::kLayout);
    const std::uint64_t dB0 = hw::smem_desc(sbase + A_BYTES, Sw::kSbo, Sw::kLayout);
    int stage = 0, cgrp = 0, cxi = 0;
    std::uint32_t phase = 0;
    for (int s = 0; s < total; ++s) {
        hw::mbar_wait(full0 + 8 * stage, phase);
        const std::uint64_t dA = dA0 + std::uint64_t(stage) * (ST_BYTES >> 4);
        const std::uint64_t dB = dB0 + std::uint64_t(stage) * (ST_BYTES >> 4);
        wtc_stage_mma<Cfg, G, K::WN>(acc, dA, dB);
        // Once stage s-1's products are complete (wait<1>, or wait<0> before a fold), thread 0
        // refills its buffer with stage s-1+STAGES, before the fold so the copies fly during it.
        auto refill = [&] {
            if (s > 0 && tid == 0 && s - 1 + STAGES < total) issue(s - 1 + STAGES, stage == 0 ? STAGES - 1 : stage - 1);
            __syncwarp();  // warp 0 reconverges before the next (warpgroup-collective) wgmma
        };
        if (++cgrp == ngrp) {  // the position is complete: fold it
            cgrp = 0;
            hw::wgmma_wait<0>();
            refill();
#pragma unroll
            for (int j = 0; j < 3; ++j) hw::fence_regs(acc[j]);
            float m[EL];
#pragma unroll
            for (int e = 0; e < EL; ++e) {
                m[e] = wtc_merged(acc, e);
                acc[0][e] = acc[1][e] = acc[2][e] = 0.0f;
            }
            wtc_fold_merged<MT, Cfg::R, EL>(Y, m, cxi++);
        } else {
            hw::wgmma_wait<1>();
            refill();
        }
        if (++stage == STAGES) {
            stage = 0;
            phase ^= 1u;
        }
    }
    hw::wgmma_wait<0>();

    wtc_store_direct<MT, K::WN>(a, Y, t0, m0, warp, lane);
#else
    (void)tmV, (void)tmU, (void)a;
#endif
}

// WtcPlan's Main: the tile (WtcWgmmaTile, fp32fast_tiles.hpp: one warpgroup, 2 blocks per SM, 3
// stages of 3 chunks) and its launch.
template <class Cfg>
struct WtcWgmma : WtcTmaMain<WtcWgmma<Cfg>, Cfg>, WtcWgmmaTile<Cfg> {
    static std::string what() {
        return "wgmma m64n" + std::to_string(WtcWgmma::WN) + "k16 (one warpgroup, " + std::to_string(WtcWgmma::CTAS) +
               " blocks/SM)";
    }
    static auto kernel() { return wtc_wgmma_kernel<Cfg, WtcWgmma>; }
};

using WtcF35Wgmma = WtcWgmma<WtcF35W>;  // 64 tiles x 32 filters
}  // namespace fp32fast

std::unique_ptr<Plan> winograd_3xfp16_wgmma_f3x3_5x5_plan(const Problem& p, const PlanContext& ctx) {
    return std::make_unique<fp32fast::WtcPlan<fp32fast::WtcF35W, fp32fast::WtcF35Wgmma>>(p, ctx, "F(3x3,5x5)");
}

}  // namespace cs::gpu::variants
