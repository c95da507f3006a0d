// hopper-halo-{fp16,bf16} — the halo mainloop: conv1's space-to-depth GEMM with its A operand
// read in place from one halo tile in shared memory per output tile, and the weights resident.
//
// Idea: after space-to-depth conv1 is a 3x3 stride-1 unpadded convolution over 57x57 pixels of
// C' = 48 channels. The im2col mainloop (hopper-tmastore) loads every input pixel once per tap
// (9 times) and the whole weight tile once per output tile: 709 MB of L2 traffic at N=128 for
// 40 MB of input (Nsight Compute, NOTES.md "conv1's transform as a full-width copy"), an
// L2-bound GEMM at 60% tensor pipe. Here the GEMM's rows are the positions of the padded
// Hp x Wp grid of the transformed input (q = (n Hp + y) Wp + x; rows with y >= E or x >= F are
// computed and dropped), so the input row of tap (r, s) for GEMM row q is q + r Wp + s: the
// same shift for every row. A tile of 256 rows needs input rows [q0, q0 + 256 + (R'-1) Wp +
// S' - 1) — 372 rows for conv1, loaded once — and each tap's A operand is that halo read from
// a shifted start. The wgmma descriptor does the shift: the halo is stored as planes of
// 8 channels (16 bytes per row, no swizzle), so 8 consecutive rows of one plane are one core
// matrix at any row offset (LBO: the next plane, SBO: the next 8 rows). The weights (all
// filters, all taps: 81 KiB for conv1) are loaded once per CTA in the same plane layout.
// Per tile: 36 KiB of A from L2 instead of 9 x 128 x 256 B = 288 KiB (and no B).
//
// Kernel: persistent, 384 threads. Warp 0, one thread: the loads by TMA (tiled maps, no
// swizzle, boxes one plane wide): the weights once, each tile's halo into a ring of stages,
// one per tile. Warpgroups 1-2: the consumers (128 rows each, two m64n96k16 accumulators
// sharing each B read; 9 taps x 3 k-steps per tile), which then stage their 128 x 96 rows and
// each row's output offset in shared memory. Warps 1-3: the storers, staging to global memory
// while the consumers run on (rows of padding positions dropped; NHWC in 16-byte pieces, or
// elements; NCHW per filter). The `schedule` axis (HaloShape): cooperative — 256-row tiles,
// both warpgroups on each (two 192-row boxes per plane, 2 stages); ping-pong — 128-row tiles,
// the warpgroups on alternate ones, so that one stages while the other multiplies (one
// 256-row box per plane, 3 stages; the halo is 1.9x a tile's rows instead of 1.45x); auto,
// the default — ping-pong but for NCHW output past one wave of tiles.
//
// The `launch` axis: pdl (the default) launches the kernel as the input transform's
// programmatic dependent — its prologue (barriers, the resident weights' loads) runs as the
// transform's last blocks leave the SMs, and the loader waits (griddepcontrol.wait) for the
// transform's writes before the first halo load; plain launches it after the transform. With
// s2d=loader there is no input transform: plain is its default, and pdl makes it the dependent
// of the kernel before it (the weights' transform in a sweep's run), its loader warp waiting
// before the kernel's first global read. Measured, H200 fp16 NHWC: pdl faster on every row of
// its own sweep (results/h200/chain/conv1_loader_launch.csv.gz), slower as auto-fp16's conv1
// in plans/alexnet-goal.json's process (results/h200/networks/alexnet_goal_loader_pdl.csv.gz
// against alexnet_goal.csv.gz): no default that holds in both, so plain stays.
//
// The `s2d` axis: copy (the default) reads the transform's output; loader does the rewrite in
// the kernel — the loader warp brings each 256-row halo's raw NHWC run (its grid rows' input
// rows: one contiguous run, by bulk copies of its 16-byte-aligned part, its last few elements by
// one lane) into one of two 32 KiB buffers in turn (tile k's run lands while tile k-1's is
// gathered), and a fourth warpgroup (the gatherers) writes the halo's 8-channel planes from it
// (2 ring stages): a thread takes a grid row and every plane of it; conv1's blocks (b = 4, C = 3)
// by runs of aligned words funnel-shifted into pairs and masked by the row's columns
// (halo_raw.hpp's RowGather), other layers element by element through a channel table (both
// checked on the CPU by tests/test_halo_raw.cpp); no transform pass and no input workspace. The
// consumer warpgroups share one staging buffer (they stage alternate tiles; one drained-buffer
// barrier each), which makes room for the second run buffer. NHWC input, the ping-pong
// schedule, a run of at most 16384 elements (supports() in plan_t says which). Registers: 512
// threads at 128, rebalanced to 56 (loader and storers), 56 (gatherers), 200 (consumers).
// s2d=loader-ring3: the same with one run buffer, whose shared memory holds a third ring stage:
// a run's load and its gather in series, the gathered halos up to two tiles ahead of the
// consumers instead of one (the loader form's two stages against the copy form's three is the
// suspect in its lower tensor share: results/h200/chain/kernels_conv1_loader.csv); measured slower
// (results/h200/chain/conv1_ring3.csv.gz). s2d=loader-wide: the loader form with a second
// gatherer warpgroup (640 threads; consumers at 168 registers): the gatherers set the loader
// form's pace under Nsight Compute (results/h200/chain/conv1_loader_profile.csv).
// Measured (H200, results/h200/chain/conv1_loader.csv.gz): ahead of the copy form at N=128,
// level at N=32, behind at N=1; the tuning file takes it where `tune` found it faster.
// History: the first form (one run buffer, an element-by-element gather through shared
// tables; git show 30aec14:kernels/hopper/halo_conv.cu) measured 1.9x the copy form at
// N=128 (H200): one buffer put each tile's load and its gather in series, and the gather's
// dependent shared loads set the pace.
//
// Prediction (conv1, N=128, fp16): 128 x 3249 rows x 96 x 432 x 2 = 34.5 GFLOP (7.4% of the
// rows are padding positions), L2 traffic ~60 MB in + 74 MB out: tensor-bound, well ahead of
// the im2col GEMM. Measured: docs/findings.md, "The Hopper family" (the first runs, the
// transform's share and the Nsight Compute profile: git show 3ab0d79:gpu/variants/hopper/halo_conv.cu);
// NCHW output storer-bound. The forms, the profiles and what comes next: docs/findings.md.
//
// Range: the transform's unpadded stride-1 input (a strided layer whose C % 8 != 0, by
// space-to-depth; or an unpadded stride-1 layer with channel padding), C' a multiple of 16 and
// at most 48, at most 9 taps (the unrolled k-loop; the resident weights), (R'-1) W' + S' - 1
// <= 128 (the halo), M <= 96; fp16 and bf16 (tf32's weights would need twice the shared
// memory). halo_supports() (supports.cpp) names the limit a layer exceeds (tests/test_halo_supports.cpp).
#include "halo_raw.hpp"
#include "halo_shape.hpp"
#include "hopper_core.cuh"
#include "hopper_tma.cuh"
#include "pipeline.cuh"
#include "rungs.hpp"
#include "tile_scheduler.cuh"

#include <cstdio>

namespace cs::gpu::variants::hopper {
namespace {

constexpr int kHStorers = 96;                    // warps 1-3

template <class T>
struct HaloArgs {
    T* out;
    TileSched sched;
    int R, S, Wp, HWp, E, F, M;
    int rows;     // N Hp Wp
    int nchw;
    RawGeom rg;  // s2d=loader: the raw NHWC input's geometry (halo_raw.hpp)
    const T* raw_in;  // s2d=loader: the raw NHWC input (16-byte aligned) and its elements
    int raw_total;
    OutOps<T> ops;  // the chain's fused bias and ReLU (held in registers: HeldOps), applied as the tile is staged
};

// How the kernel follows the input transform: as its programmatic dependent (the kernel's
// prologue — barriers, the resident weights' loads — under the transform's last blocks; it
// waits for the transform's writes before its first halo load), or after it completes.

// The output offset of GEMM row q (NHWC: p M; NCHW: n M E F + y F + x), or -1 for a padding
// position (y >= E or x >= F) or q >= rows. 32-bit divisions (rows < 2^31, supports()): a
// 64-bit division is a subroutine call, after which ptxas cannot prove the consumers
// converged and serializes their wgmmas.
template <class T>
__device__ __forceinline__ std::int64_t out_offset(const HaloArgs<T>& a, int q) {
    if (q >= a.rows) return -1;
    const int n = q / a.HWp;
    const int rem = q - n * a.HWp;
    const int y = rem / a.Wp, x = rem - y * a.Wp;
    if (y >= a.E || x >= a.F) return -1;
    const std::int64_t EF = std::int64_t(a.E) * a.F, yx = std::int64_t(y) * a.F + x;
    return a.nchw ? std::int64_t(n) * a.M * EF + yx : (std::int64_t(n) * EF + yx) * a.M;
}

// tmA: the transformed input's map (unused by the loader form, kRaw); tmB: the weights' map.
// kRB: s2d=loader's raw-run buffers (2, or 1 with a third ring stage: HaloShape). kGW: its
// gatherer warpgroups (1, or 2: loader-wide).
template <class T, int CK, bool kPP, bool kRaw, int kRB = 2, int kGW = 1>
__global__ void __launch_bounds__(kRaw ? 384 + 128 * kGW : 384, 1)
    halo_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, const HaloArgs<T> a) {
#ifdef CS_HOPPER_DEVICE
    using H = HaloShape<kPP, kRaw, kRB>;
    constexpr int kBM = H::kBM, kStages = H::kStages;
    constexpr int kThreads = kRaw ? 384 + 128 * kGW : 384;
    static_assert(kGW == 1 || (kRaw && kGW == 2), "one gatherer warpgroup, or two for the loader form");
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t raw = smem_u32(smem_raw);
    const std::uint32_t sbase = (raw + 127u) & ~127u;
    unsigned char* const gbase = smem_raw + (sbase - raw);
    const std::uint32_t sB = sbase, sA = sB + kHB, sR = sA + H::kRing, sT = sR + (kRaw ? kRB * kHRaw : 0),
                        sE = sT + (kRaw ? kHTable : 0), bars = sE + H::kEpiBufs * kHEpi;
    const std::uint32_t bfull = bars, full0 = bars + 8, empty0 = full0 + 8 * kStages, efull0 = empty0 + 8 * kStages,
                        eempty0 = efull0 + 16, order0 = eempty0 + 16, rfull0 = order0 + 16, rempty0 = rfull0 + 8 * kRB;
    static_assert(8 + 16 * kStages + 48 + (kRaw ? 16 * kRB : 0) <= 16 * 8, "the barriers' 128 bytes");
    const int tid = int(threadIdx.x), wg = tid >> 7, warp = tid >> 5, lane = tid & 31;
    const int taps = a.R * a.S;
    constexpr int kE8 = 16 / int(sizeof(T));  // elements of a plane's 16 bytes
    if (tid == 0) {
        mbar_init(bfull, 1);
#pragma unroll
        for (int s = 0; s < kStages; ++s) {
            mbar_init(full0 + 8 * s, 1);
            mbar_init(empty0 + 8 * s, kPP ? 1 : 2);  // the warpgroup(s) reading the stage
        }
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            mbar_init(efull0 + 8 * s, 128);
            mbar_init(eempty0 + 8 * s, 1);
            mbar_init(order0 + 8 * s, 1);  // ping-pong's turns
        }
        if constexpr (kRaw) {
#pragma unroll
            for (int s = 0; s < kRB; ++s) {
                mbar_init(rfull0 + 8 * s, 1);   // the loader's expect_tx; the raw run's bytes
                mbar_init(rempty0 + 8 * s, 1);  // the gatherers' leader: the run is read
            }
        }
        mbar_fence_init();
    }
    // Taps past the layer's (up to kHTaps, the unrolled k-loop) multiply zero weights.
    for (int i = tid; i < CK * (kHTaps - taps) * kHBTap / 16; i += kThreads) {
        const int blk = i / (kHBTap / 16), c = blk / (kHTaps - taps), t = taps + blk % (kHTaps - taps);
        *reinterpret_cast<uint4*>(gbase + (c * kHTaps + t) * kHBTap + (i % (kHBTap / 16)) * 16) = make_uint4(0, 0, 0, 0);
    }
    fence_proxy_async_smem();
    __syncthreads();
    // The resident weights, as (plane, tap) blocks of 96 filters x 16 bytes (one thread).
    const auto load_weights = [&] {
        mbar_arrive_expect_tx(bfull, std::uint32_t(CK * taps * kHBTap));
        for (int c = 0; c < CK; ++c)
            for (int t = 0; t < taps; ++t)
                tma_load_3d(sB + std::uint32_t((c * kHTaps + t) * kHBTap), &tmB, bfull, c * kE8, t, 0);
    };
    if (wg == 0) {
        // 128 x 72 + 256 x 216 registers <= 64 Ki; s2d=loader: 2 x 128 x 56 + 256 x 200;
        // loader-wide: 3 x 128 x 56 + 256 x 168
        if constexpr (kRaw)
            setmaxnreg_dec<56>();
        else
            setmaxnreg_dec<72>();
        if (kRaw && warp == 0) {
            // ---- loader, s2d=loader (the warp's 32 lanes): the weights once (lane 0); tile k's
            // raw run into raw buffer k % kRB once the gatherers have read tile k-kRB's from it:
            // with two buffers a run lands while the last one is gathered; with one (loader-ring3)
            // the load waits for the gather, and the third ring stage keeps the consumers fed.
            // launch=pdl: launched as the programmatic dependent of the kernel before it (the
            // weights' transform where the run has one), the kernel got here under that kernel's
            // tail; the weights and the raw input are read only once it has completed (a no-op
            // in a plain launch). Every global read of the kernel is this warp's or after it.
            grid_dependency_wait();
            if (lane == 0) {
                load_weights();
            }
            TileSched::Cursor cur;
            Work w;
            int k = 0;
            while (a.sched.template next<false>(int(blockIdx.x), cur, w)) {
                const int rb = k % kRB;
                if (k >= kRB) mbar_wait(rempty0 + 8 * rb, std::uint32_t((k / kRB - 1) & 1));
                // The run's elements [e0, end) in the tensor: its 16-byte-aligned part by bulk
                // copies of up to 8 KiB (a few copies, not one tensor box per 256 elements), the
                // last few elements by lane 0 before its arrive (the arrive releases them). Past
                // the tensor nothing is read: those rows are zeros.
                const RawRun rr = raw_run(a.rg, w.tile * kBM, H::kBox);
                const int end = min(rr.e0 + rr.nbox * kHRawBox, a.raw_total), aend = max(rr.e0, end & ~7);
                const std::uint32_t bytes = std::uint32_t(aend - rr.e0) * 2u, dst = sR + std::uint32_t(rb * kHRaw);
                if (lane == 0) {
                    T* const rawp = reinterpret_cast<T*>(gbase + (dst - sbase));
                    for (int e = aend; e < end; ++e) rawp[e - rr.e0] = a.raw_in[e];
                    mbar_arrive_expect_tx(rfull0 + 8 * rb, bytes);
                }
                __syncwarp();
                bulk_copy_run<32>(dst, reinterpret_cast<const unsigned char*>(a.raw_in + rr.e0), bytes, rfull0 + 8 * rb,
                                  lane);
                ++k;
            }
        } else if (warp == 0) {
            // ---- loader (one thread): the weights once, as (plane, tap) blocks of 96 filters x
            // 16 bytes; each tile's halo as kBoxes boxes per plane (rows past the input are zero
            // fill), into the ring in the CTA's tile order
            if (lane == 0) {
                load_weights();
                // Launched as the input transform's programmatic dependent (`launch=pdl`), the
                // kernel got here while the transform still runs: its halo is read only once the
                // transform has completed and its writes are visible. (The weights above were
                // written by a kernel before the transform.) A no-op in a plain launch.
                grid_dependency_wait();
                Ring<kStages> r;
                bool first_round = true;
                TileSched::Cursor cur;
                Work w;
                while (a.sched.template next<false>(int(blockIdx.x), cur, w)) {
                    if (!first_round) mbar_wait(empty0 + 8 * r.stage, r.phase ^ 1u);
                    const int q0 = w.tile * kBM;
                    const std::uint32_t st = sA + std::uint32_t(r.stage) * H::kStage, bar = full0 + 8 * r.stage;
                    mbar_arrive_expect_tx(bar, std::uint32_t(H::kStage / kHChunks * CK));
#pragma unroll
                    for (int c = 0; c < CK; ++c)
#pragma unroll
                        for (int b = 0; b < H::kBoxes; ++b)
                            tma_load_2d(st + std::uint32_t(c * H::kPlane + b * H::kBox * 16), &tmA, bar, c * kE8,
                                        q0 + b * H::kBox);
                    r.advance();
                    if (r.stage == 0) first_round = false;
                }
            }
        } else {
            // ---- storers (warps 1-3, 96 threads): each consumer warpgroup's staged 128 rows to
            // global memory in turn, rows of padding positions dropped (the consumers' offset
            // table). NHWC, M % 8 == 0: 16-byte pieces, M/8 threads a row, 96 / (M/8) rows at a time;
            // else elements (NCHW: a lane a row, consecutive x, a warp a filter at a time).
            const int s = tid - 32;
            TileSched::Cursor cur;
            Work w;
            int k = 0;  // the CTA's tiles so far
            const std::int64_t EF = std::int64_t(a.E) * a.F;
            while (a.sched.template next<false>(int(blockIdx.x), cur, w)) {
                // cooperative: both buffers (rows 128 cw.. of the tile); ping-pong: buffer k & 1;
                // s2d=loader: the one buffer, every tile
                for (int cw = kPP ? (k & 1) : 0; cw < (kPP ? (k & 1) + 1 : 2); ++cw) {
                    const int eb = kRaw ? 0 : cw;
                    const unsigned char* buf = gbase + (sE - sbase) + eb * kHEpi;
                    const std::int64_t* offs = reinterpret_cast<const std::int64_t*>(buf + kHEpiRows);
                    mbar_wait(efull0 + 8 * eb, std::uint32_t((kRaw ? k : kPP ? k >> 1 : k) & 1));
                    if (!a.nchw && a.M % 8 == 0) {
                        // Each thread loads kU rows' pieces before it stores any: the compiler
                        // cannot move a shared load above a global store through generic
                        // pointers, so a load-store loop waits a shared-memory latency per store
                        // (Nsight Compute: the consumers then waited on the storers; kU = 4 was
                        // chosen by measurement, git show 3ab0d79:gpu/variants/hopper/halo_conv.cu).
                        constexpr int kU = 4;
                        // M/8 threads a row, as many rows a pass as fill the 96 threads (8 rows of
                        // 12 pieces for conv1's 96 filters: every lane stores)
                        const int pieces = a.M / 8, step = kHStorers / pieces;  // rows a pass
                        const int pc = s % pieces;
                        if (s < step * pieces)
                            for (int row0 = s / pieces; row0 < 128; row0 += kU * step) {
                                std::int64_t o[kU];
                                uint4 v[kU];
#pragma unroll
                                for (int u = 0; u < kU; ++u) {
                                    const int row = row0 + u * step;
                                    o[u] = row < 128 ? offs[row] : -1;
                                    if (row < 128)
                                        v[u] = *reinterpret_cast<const uint4*>(buf + row * kHEpiPitch + pc * 16);
                                }
#pragma unroll
                                for (int u = 0; u < kU; ++u)
                                    if (o[u] >= 0) *reinterpret_cast<uint4*>(a.out + o[u] + pc * 8) = v[u];
                            }
                    } else {
                        const int sw = s >> 5;  // storer warp 0..2
                        // (the load-store loop: loading kU filters' values first measured
                        // slower here, H200 conv1 NCHW; not understood yet)
                        for (int row = lane; row < 128; row += 32) {
                            const std::int64_t o = offs[row];
                            if (o < 0) continue;
                            for (int m = sw; m < a.M; m += 3)
                                a.out[o + (a.nchw ? m * EF : m)] =
                                    *reinterpret_cast<const T*>(buf + row * kHEpiPitch + m * 2);
                        }
                    }
                    named_sync(1, kHStorers);
                    // the drained buffer: one barrier a warpgroup (s2d=loader too, whose two share
                    // the buffer: a barrier for all tiles would let a warpgroup two phases ahead
                    // pass a parity wait)
                    if (s == 0) mbar_arrive(eempty0 + 8 * cw);
                }
                ++k;
            }
        }
        return;
    }
    if constexpr (kRaw) {
        if (wg >= 3) {
            // ---- gatherers, s2d=loader (warpgroup 3; loader-wide: 3 and 4): each tile's halo
            // from its raw run into the planes of a ring stage, the space-to-depth map
            // (halo_raw.hpp): a thread takes a grid row at a time (rows kG apart, GridWalk), every
            // plane of it, and a warp's stores are consecutive rows of one plane. conv1's blocks
            // (b = 4, C = 3: 48 channels, 6 planes) by RowGather's runs of words; any other layer
            // by the table.
            setmaxnreg_dec<56>();
            constexpr int kG = 128 * kGW;  // gatherer threads
            const int gt = tid - 384;
            const RawGeom& rg = a.rg;
            TabEntry* const tab = reinterpret_cast<TabEntry*>(gbase + (sT - sbase));
            for (int c = gt; c < CK * 8; c += kG) tab[c] = tab_entry(rg, c);
            if (gt < 8) reinterpret_cast<std::uint32_t*>(gbase + (sT - sbase) + kHZeros)[gt] = 0u;
            named_sync(4, kG);
            const int hrows = kBM + (a.R - 1) * a.Wp + a.S - 1;  // the rows the taps read (<= kBox)
            const bool by_rows = rg.b == 4 && rg.C0 == 3;  // conv1's blocks (so CK == 6)
            struct Src {
                const std::uint32_t* w;
                const TabEntry* t;
                int z;  // the table's zero words, from w
                __device__ std::uint32_t word(int i) const { return w[i]; }
                __device__ int zeros() const { return z; }
                __device__ unsigned short half(int e) const { return reinterpret_cast<const unsigned short*>(w)[e]; }
                __device__ TabEntry tab(int c) const { return t[c]; }
            };
            Ring<kStages> r;
            bool first_round = true;
            TileSched::Cursor cur;
            Work w;
            int k = 0;
            while (a.sched.template next<false>(int(blockIdx.x), cur, w)) {
                const int rb = k % kRB;
                mbar_wait(rfull0 + 8 * rb, std::uint32_t((k / kRB) & 1));
                if (!first_round) mbar_wait(empty0 + 8 * r.stage, r.phase ^ 1u);
                const int q0 = w.tile * kBM;
                const RawRun rr = raw_run(rg, q0, H::kBox);
                const Src src{reinterpret_cast<const std::uint32_t*>(gbase + (sR - sbase) + rb * kHRaw), tab,
                              int(sT + kHZeros - sR - std::uint32_t(rb * kHRaw)) / 4};
                unsigned char* const st = gbase + (sA - sbase) + r.stage * H::kStage;
                GridWalk wk(rg, q0 + gt);
                for (int i = gt; i < hrows; i += kG) {
                    const RowOrigin o = row_origin(rg, wk.n, wk.Y, wk.X, q0 + i < a.rows, rr.e0);
                    const auto put = [&](int p, std::uint32_t w0, std::uint32_t w1, std::uint32_t w2, std::uint32_t w3) {
                        *reinterpret_cast<uint4*>(st + p * H::kPlane + i * 16) = make_uint4(w0, w1, w2, w3);
                    };
                    bool done = false;
                    if constexpr (CK == 6) {
                        if (by_rows) {
                            RowGather<4, 3>::row<CK>(src, rg, o, put);
                            done = true;
                        }
                    }
                    if (!done) {
#pragma unroll
                        for (int p = 0; p < CK; ++p) {
                            const Piece pc = gather_piece(src, rg, o, p);
                            put(p, pc.w[0], pc.w[1], pc.w[2], pc.w[3]);
                        }
                    }
                    wk.step(rg, kG);
                }
                // the planes for the consumers' wgmma (the async proxy), the run free for the next
                fence_proxy_async_smem();
                named_sync(4, kG);
                if (gt == 0) {
                    mbar_arrive(rempty0 + 8 * rb);
                    mbar_arrive(full0 + 8 * r.stage);
                }
                r.advance();
                if (r.stage == 0) first_round = false;
                ++k;
            }
            return;
        }
    }
    // ---- consumers. Cooperative: warpgroup cw owns rows 128 cw .. 128 cw + 127 of every tile;
    // ping-pong: the whole 128 rows of every other tile (the CTA's tiles k with k % 2 == cw).
    // Either way it stages into buffer cw.
    if constexpr (kRaw)
        setmaxnreg_inc<kGW == 2 ? 168 : 200>();
    else
        setmaxnreg_inc<216>();
    const int ct = tid - 128, t = ct & 127;
    // warp-uniform for the compiler (a shuffle from lane 0): ping-pong branches on it around the wgmmas
    const int cw = __shfl_sync(0xffffffffu, ct >> 7, 0);
    mbar_wait(bfull, 0);
    Ring<kStages> r;
    TileSched::Cursor cur;
    Work w;
    int k = 0, n = 0;  // the CTA's tiles so far, this warpgroup's
    constexpr std::uint32_t kLboB = kHTaps * kHBTap;  // the next plane of the weights
    // s2d=loader: one staging buffer, the warpgroups' alternate tiles in turn
    unsigned char* const ebuf = gbase + (sE - sbase) + (kRaw ? 0 : cw) * kHEpi;
    const int row0 = kPP ? 0 : cw * 128;
    // The chain's bias (every tile holds all the filters) loaded once: no tile's staging waits
    // on it. Columns 2 (t & 3) + 8j, as store_tile's fragment (m0 = 0).
    HeldOps<T, kHBN> held;
    held.load(a.ops, 2 * (t & 3));
    while (a.sched.template next<false>(int(blockIdx.x), cur, w)) {
        if (kPP && (k & 1) != cw) {  // the other warpgroup's tile
            r.advance();
            ++k;
            continue;
        }
        if constexpr (kPP) PingPongOrder{order0}.wait(cw, k);  // the other warpgroup has issued tile k-1
        mbar_wait(full0 + 8 * r.stage, r.phase);
        const std::int64_t my_off = out_offset(a, w.tile * kBM + row0 + t);  // this thread's row (branches: before the MMAs)
        const std::uint32_t sa = sA + std::uint32_t(r.stage) * H::kStage + std::uint32_t(row0 * 16);
        float acc0[kHBN / 2], acc1[kHBN / 2];
        zero(acc0);
        zero(acc1);
        // the zeros in place before the first wgmma (else ptxas moves acc1's after it and waits
        // for the first wgmma before the second: C7517, a wgmma latency per tile)
        fence_regs(acc0);
        fence_regs(acc1);
        wgmma_fence();
        // Unrolled over kHTaps taps, branch-free (a runtime trip count or a branch among the
        // wgmmas makes ptxas serialize them): a tap past the layer's reads the zero weights
        // cleared above, from the halo's first row.
#pragma unroll
        for (int tap = 0; tap < kHTaps; ++tap) {
            const int kr = tap / a.S, kc = tap - kr * a.S;  // tap's row offset in the halo: kr Wp + kc
            const std::uint32_t at = sa + std::uint32_t(tap < taps ? kr * a.Wp + kc : 0) * 16u;
#pragma unroll
            for (int s = 0; s < CK / 2; ++s) {
                const std::uint64_t db = smem_desc_plain(sB + std::uint32_t((2 * s * kHTaps + tap) * kHBTap), kLboB, 128);
                const std::uint64_t da = smem_desc_plain(at + std::uint32_t(2 * s * H::kPlane), H::kPlane, 128);
                WgmmaSS<T, kHBN>::mma(acc0, da, db);
                WgmmaSS<T, kHBN>::mma(acc1, da + 64, db);  // 64 rows further: 1024 bytes
            }
        }
        wgmma_commit();
        if constexpr (kPP) PingPongOrder{order0}.arrive(cw, t);  // the other warpgroup may issue its tile
        wgmma_wait<0>();
        fence_regs(acc0);
        fence_regs(acc1);
        if (t == 0) mbar_arrive(empty0 + 8 * r.stage);
        // The storers have drained this warpgroup's last staging: one thread waits (a spin-wait
        // by every thread, a divergent loop between the wgmmas and the accumulators' use, makes
        // ptxas serialize the wgmmas), a named barrier releases the warpgroup.
        if (kRaw ? k > 0 : n > 0) {
            if (t == 0) {
                if constexpr (kRaw)
                    // tile k-1 drained: the other warpgroup's barrier, its ((k-1)/2)-th phase
                    mbar_wait(eempty0 + 8 * (cw ^ 1), std::uint32_t(((k - 1) >> 1) & 1));
                else
                    mbar_wait(eempty0 + 8 * cw, std::uint32_t((n - 1) & 1));
            }
            named_sync(2 + cw, 128);
        }
        // Stage the 128 x 96 tile (store_tile's NHWC path into a 128 x kHEpiPitch / 2 matrix) and
        // each row's output offset for the storers.
        ConvGeom eg{};
        eg.P = 128, eg.M = kHEpiPitch / 2;
        held.apply(acc0);
        held.apply(acc1);
        store_tile<T, kHBN>(acc0, reinterpret_cast<T*>(ebuf), eg, 0, 0, false, t);
        store_tile<T, kHBN>(acc1, reinterpret_cast<T*>(ebuf), eg, 64, 0, false, t);
        reinterpret_cast<std::int64_t*>(ebuf + kHEpiRows)[t] = my_off;
        mbar_arrive(efull0 + 8 * (kRaw ? 0 : cw));
        r.advance();
        ++k;
        ++n;
    }
#else
    (void)tmA, (void)tmB, (void)a;
#endif
}

template <class T>
struct HaloGemm {
    int sms = 0;
    bool pp = false;  // the `schedule` axis: ping-pong, else cooperative
    HaloLaunch how = HaloLaunch::pdl;  // the `launch` axis
    HaloS2d s2d = HaloS2d::copy;  // the `s2d` axis: copy, else the halo gathered from the raw NHWC input
    bool raw() const { return s2d != HaloS2d::copy; }
    bool ring3() const { return s2d == HaloS2d::loader_ring3; }  // one raw-run buffer, three ring stages
    bool wide() const { return s2d == HaloS2d::loader_wide; }    // two gatherer warpgroups
    int C0 = 0, H0 = 0, W0 = 0, b = 1, pad = 0;  // raw: the input's shape, the block factor, padding
    std::string info;
    // Cached maps and what they were encoded for.
    CUtensorMap ma{}, mb{};
    const void* key_in = nullptr;
    const void* key_w = nullptr;
    int key_n = -1;
    int bm() const { return pp ? HaloShape<true>::kBM : HaloShape<false>::kBM; }
    template <bool kPP, bool kRaw = false, int kRB = 2, int kGW = 1>
    static auto kernel(int ck) {
        return ck == 2   ? halo_kernel<T, 2, kPP, kRaw, kRB, kGW>
               : ck == 4 ? halo_kernel<T, 4, kPP, kRaw, kRB, kGW>
                         : halo_kernel<T, 6, kPP, kRaw, kRB, kGW>;
    }
    // the loader forms' kernel for the plane count
    auto raw_kernel(int ck) const {
        return ring3() ? kernel<true, true, 1>(ck) : wide() ? kernel<true, true, 2, 2>(ck) : kernel<true, true>(ck);
    }
    void prepare() const {
        for (int ck : {2, 4, 6}) {
            for (auto* k : {kernel<false>(ck), kernel<true>(ck)})
                CS_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kHSmem));
            for (auto* k : {kernel<true, true>(ck), kernel<true, true, 2, 2>(ck)})
                CS_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   HaloShape<true, true>::kSmem));
            CS_CUDA_CHECK(cudaFuncSetAttribute(kernel<true, true, 1>(ck), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               HaloShape<true, true, 1>::kSmem));
        }
    }
    // The chain's fused bias (M values of T) and ReLU for the next launch (HopperPlan sets them
    // from DeviceIO each run), else none.
    const void* bias = nullptr;
    bool relu = false;
    bool raw_input() const { return raw(); }  // HopperPlan: no transform before the kernel
    void launch(const T* in, const T* w, T* out, const ConvGeom& g, bool nchw, cudaStream_t stream) {
        if (g.P == 0) return;
        HaloArgs<T> a{};
        a.out = out;
        a.R = g.R, a.S = g.S, a.Wp = g.W, a.HWp = g.H * g.W, a.E = g.E, a.F = g.F, a.M = g.M;
        a.rows = g.N * g.H * g.W;
        a.nchw = nchw ? 1 : 0;
        a.ops = OutOps<T>{nullptr, static_cast<const T*>(bias), g.M, relu ? 1 : 0};
        a.rg = RawGeom{a.rows, a.HWp, a.Wp, C0, H0, W0, b, pad};
        a.raw_in = in;
        a.raw_total = raw() ? g.N * H0 * W0 * C0 : 0;
        a.sched = TileSched::data_parallel((a.rows + bm() - 1) / bm(), 1, 1, sms);
        if (in != key_in || w != key_w || g.N != key_n) {
            const int box = pp ? HaloShape<true>::kBox : HaloShape<false>::kBox;
            const std::string err =
                raw() ? encode_halo_raw_weights<T>(mb, g, in, w, kHBN)  // ma: unused by the loader form
                    : encode_halo_maps<T>(ma, mb, g, in, w, a.rows, box, kHBN);
            if (!err.empty()) throw cs::Error("hopper-halo: " + err);
            key_in = in, key_w = w, key_n = g.N;
        }
        // one kernel per plane count (the k-steps of a tap unrolled: C' = 16, 32, 48), schedule
        // and loader
        const int ck = g.C * int(sizeof(T)) / 16;
        auto* k = raw() ? raw_kernel(ck) : pp ? kernel<true>(ck) : kernel<false>(ck);
        cudaLaunchAttribute at{};
        at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at.val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(unsigned(a.sched.grid));
        cfg.blockDim = dim3(raw() ? (wide() ? 640 : 512) : 384);
        cfg.dynamicSmemBytes = raw() ? (ring3() ? HaloShape<true, true, 1>::kSmem : HaloShape<true, true>::kSmem) : kHSmem;
        cfg.stream = stream;
        cfg.attrs = &at;
        cfg.numAttrs = how == HaloLaunch::pdl ? 1 : 0;
        CS_CUDA_CHECK(cudaLaunchKernelEx(&cfg, k, ma, mb, a));
    }
    std::string detail() const { return info; }
    std::string config() const {
        return std::string("schedule=") + (pp ? "pingpong" : "cooperative") +
               ";launch=" + std::string(name_of(kHaloLaunchNames, how)) +
               ";s2d=" + std::string(name_of(kHaloS2dNames, s2d));
    }
    std::size_t workspace_bytes() const { return 0; }
};

template <class T>
std::unique_ptr<Plan> plan_t(const Problem& p, const PlanContext& ctx) {
    Setup u = make_setup(p);
    HaloGemm<T> gemm;
    gemm.sms = ctx.prop.multiProcessorCount;
    const ConvGeom& g = u.g;
    const auto sched = p.axes.as<HaloSchedule>("schedule");
    if (!sched || *sched == HaloSchedule::automatic) {
        // Ping-pong, except for NCHW output past one wave of 256-row tiles: the NCHW path is
        // storer-bound (well above the NHWC time in either schedule) and there the cooperative
        // schedule's fewer, larger tiles store as fast or faster (H200, conv1 N=128 ahead, N=32
        // level; ping-pong ahead or level everywhere else; chosen by measurement: git show
        // 3ab0d79:gpu/variants/hopper/halo_conv.cu, docs/findings.md "The Hopper family").
        const std::int64_t tiles = (p.N * g.H * g.W + HaloShape<false>::kBM - 1) / HaloShape<false>::kBM;
        gemm.pp = !(p.layout == Layout::nchw && tiles > std::int64_t(gemm.sms));
    } else {
        gemm.pp = *sched == HaloSchedule::pingpong;
    }
    const auto launch = p.axes.as<HaloLaunch>("launch");
    gemm.how = launch.value_or(HaloLaunch::pdl);
    const auto s2d = p.axes.as<HaloS2d>("s2d");
    if (s2d && *s2d != HaloS2d::copy) {
        // The halo gathered from the raw NHWC input by the kernel (no transform pass): NHWC
        // input, the ping-pong schedule's 256-row halos, whose raw run must fit kHRaw.
        const auto n = [](long long v) { return std::to_string(v); };
        if (p.layout != Layout::nhwc)
            throw Skip("hopper-halo: s2d=loader reads NHWC input; NCHW input takes the transform (s2d=copy)");
        if (sched == HaloSchedule::cooperative)
            throw Skip("hopper-halo: s2d=loader runs the ping-pong schedule (a 256-row halo's raw run in shared "
                       "memory); schedule=cooperative takes s2d=copy");
        const RawGeom rg{0, g.H * g.W, g.W, u.s.C, u.s.H, u.s.W, u.b, u.padf};
        const std::int64_t run = raw_run_bound(rg, HaloShape<true>::kBox);
        if (run > std::int64_t(kHRawBox) * kHRawBoxes)
            throw Skip("hopper-halo: s2d=loader holds a halo's raw run in " + n(kHRawBox * kHRawBoxes) +
                       " elements; this layer's takes up to " + n(run));
        if (std::int64_t(p.N) * u.s.H * u.s.W * u.s.C > std::int64_t(INT_MAX) - kHRawBox * kHRawBoxes)
            throw Skip("hopper-halo: s2d=loader indexes the raw input in 32 bits; N*H*W*C = " +
                       n(std::int64_t(p.N) * u.s.H * u.s.W * u.s.C));
        gemm.s2d = *s2d;
        gemm.pp = true;
        // no input transform to follow: plain unless asked (pdl: the dependent of the kernel before
        // it, the weights' transform in a run that has one)
        gemm.how = launch.value_or(HaloLaunch::plain);
        gemm.C0 = u.s.C, gemm.H0 = u.s.H, gemm.W0 = u.s.W, gemm.b = u.b, gemm.pad = u.padf;
    }
    gemm.prepare();
    const std::int64_t maxn = std::max<std::int64_t>(1, ctx.max_chunk_N);
    const std::int64_t rows = maxn * g.H * g.W;
    const int bm = gemm.bm();
    char b[1024];
    std::snprintf(b, sizeof b,
                  "wgmma m64n96k16 %s, A read in place from a halo tile per %d rows of the %dx%d grid (%d rows x "
                  "%d channels in 16-byte planes, no swizzle; each of the %dx%d taps a shifted descriptor; %.1f%% "
                  "of the rows are padding positions), the weights resident (%d KiB), %lld tiles on a persistent "
                  "grid, %s, %s, 3 storer warps (the staged tile to global memory under the next tile's MMAs), %s",
                  Elem<T>::name, bm, g.H, g.W, bm + (g.R - 1) * g.W + g.S - 1, g.C, g.R, g.S,
                  100.0 * (1.0 - double(g.E) * g.F / (double(g.H) * g.W)), g.R * g.S * g.C * kHBN * 2 / 1024,
                  (long long)((rows + bm - 1) / bm),
                  gemm.pp ? "ping-pong (each consumer warpgroup alternate 128-row tiles)"
                          : "cooperative (both consumer warpgroups on each 256-row tile)",
                  !gemm.raw() ? "TMA loads of the transformed input by one thread"
                  : gemm.ring3()
                      ? "space-to-depth in the loader (each halo's raw NHWC run by bulk copies into one buffer, "
                        "gathered into a ring of three stages by a fourth warpgroup; no transform pass)"
                  : gemm.wide()
                      ? "space-to-depth in the loader (each halo's raw NHWC run by bulk copies into two buffers in "
                        "turn, gathered into a ring of two stages by a fourth and a fifth warpgroup; no transform pass)"
                      : "space-to-depth in the loader (each halo's raw NHWC run by bulk copies into two buffers in "
                        "turn, gathered into a ring of two stages by a fourth warpgroup; no transform pass)",
                  gemm.raw() ? (gemm.how == HaloLaunch::pdl ? "launched as the programmatic dependent of the kernel "
                                                            "before it (the weights' transform)"
                                                          : "launched after the weights' transform")
                  : gemm.how == HaloLaunch::pdl ? "launched as the input transform's programmatic dependent"
                                                : "launched after the input transform");
    gemm.info = b;
    return make_hopper_plan<T>(p, ctx, std::move(u), std::move(gemm));
}

}  // namespace

std::unique_ptr<Plan> halo_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx) {
    if (row.io == DType::bf16) return plan_t<__nv_bfloat16>(p, ctx);
    return plan_t<__half>(p, ctx);
}

}  // namespace cs::gpu::variants::hopper
