// Tile schedulers of the persistent Hopper kernels (the `scheduler` axis): which work units
// (an output tile and a range of its k-slices) each CTA of a persistent grid runs, in order.
// One runtime scheduler covers the three decompositions, as CUTLASS's stream-K scheduler does:
//   data-parallel  unit = a whole tile; CTA c takes tiles c, c + grid, ...
//   split-K        unit = (tile, one of `ksplit` equal k parts); fp32 partial tiles, summed in
//                  part order by splitk_reduce_kernel (hopper_store.cuh): deterministic
//   split-K fused  the same units, one per CTA (units <= grid: all resident at once), and no
//                  second kernel: each part writes its fp32 partial tile and raises its flag,
//                  waits for the flags of its tile's other parts, then sums its 1/ksplit of the
//                  tile's rows over all parts in part order (the reduction kernel's order:
//                  the same bits) and writes them (ws_kernel.cuh, splitk_fixup)
//   split-K cluster  the `ksplit` k-parts of a tile are the CTAs of one cluster (ksplit <= 8;
//                  parts of KT * r / ksplit .. slices, one unit per CTA, CTA c: tile c / ksplit,
//                  part = cluster rank): each writes its fp32 accumulators to its own shared
//                  memory, and after a cluster barrier rank r sums its row share over the
//                  cluster's CTAs through distributed shared memory in rank order (ws_kernel.cuh,
//                  cluster_split_finish): no fp32 partial in global memory, no second kernel
//   stream-K       whole tiles for all but the last one or two waves (data-parallel), then the
//                  remaining tiles' k-slices cut into `grid` equal contiguous ranges, one per
//                  CTA, so that no SM idles in a half-empty last wave. A tile cut between CTAs
//                  is finished by the CTA holding its first slices (it runs them last, so it
//                  seldom waits): the others write their fp32 partial accumulators to a
//                  per-CTA slot and raise a flag; the finisher adds the slots in CTA order
//                  (deterministic) and runs the epilogue. The flags hold a launch epoch, so no
//                  memset is needed between launches.
//   split-tail     data-parallel for the whole waves (`full` x grid tiles), then each tile of
//                  the last, partial wave cut into `tail_q` equal k-parts, one unit each, dealt
//                  out like tiles (CTA c takes tail units c, c + grid, ...): the parts of a tile
//                  run side by side on neighbouring CTAs at the same time, so they read the
//                  same A rows and B slices together (stream-K's free ranges do not: its CTAs
//                  start at unrelated k offsets). Part 0's CTA finishes the tile as stream-K's
//                  finisher does; parts 1.. write fp32 slots, one per tail unit. No wait cycle:
//                  a finisher waits only on later units of the same tile, fewer than grid
//                  apart, which are contributors.
//   cluster = 2    (data-parallel and split-K only) the grid is clusters of two CTAs; a
//                  unit is a pair of tiles on the same filters and adjacent pixel rows
//                  (2j, 2j + 1), rank r of the cluster taking row 2j + r, so both CTAs walk
//                  the same sequence of k-slices of the same B tile (multicast, pipeline.cuh).
//                  An odd last row leaves rank 1 a tile past the output: its loads are zero
//                  fill, its epilogue writes nothing (rows >= P are clipped).
//                  mc_a: along the filters instead — a unit is a pair of filter tiles
//                  (2j, 2j + 1) of one pixel row, rank r taking 2j + r, both reading the same A
//                  rows (multicast); tiles_n is padded even, a phantom tile's filters are >= M
//                  (zero fill, clipped stores).
// Producer and consumers walk the same sequence (next()), so their rings stay in step.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

// The walk is plain C++ callable on the host too (tests/test_tile_scheduler.cpp checks that
// every scheduler covers each tile's k-slices exactly once); the kernels call it with blockIdx.x.
#if defined(__CUDACC__)
#define CS_SCHED_HD __host__ __device__ __forceinline__
#else
#define CS_SCHED_HD inline
#endif

namespace cs::gpu::variants::hopper {

enum class Role : int {
    whole = 0,        // all k-slices of the tile: run the epilogue
    split_part = 1,   // split-K part: write the fp32 partial tile
    sk_finish = 2,    // stream-K: first k-slices of a cut tile; add the others' slots, epilogue
    sk_contrib = 3,   // stream-K: later k-slices of a cut tile; write this CTA's slot, flag
    split_fused = 4,  // fused split-K part: write the fp32 partial, flag, wait, fix up a row share
    split_cluster = 5,  // cluster split-K part: accumulators to shared memory, sum a row share over the cluster
};

// The persistent kernel's instance for a scheduler (ws_kernel's kCut): none (data-parallel,
// split-K, cluster split-K), or one of its own per scheduler that cuts tiles, whose walk and
// roles the others do not carry.
enum CutKind : int { kCutNone = 0, kCutTail = 1, kCutStreamK = 2, kCutFused = 3 };

struct Work {
    int tile = 0;
    int k0 = 0, k1 = 0;  // k-slices [k0, k1) of the tile
    int part = 0;        // split-K part
    int slot = 0;        // sk_contrib: the fp32 slot (and flag) it writes; sk_finish: its own index
    Role role = Role::whole;
};

struct TileSched {
    enum Mode : int { kDataParallel = 0, kSplitK = 1, kStreamK = 2, kSplitTail = 3, kSplitKFused = 4, kSplitKCluster = 5 };
    int mode = kDataParallel;
    int ntiles = 0, tiles_n = 0;
    int KT = 0;          // k-slices per tile
    int ksplit = 1;      // split-K parts (modes kSplitK, kSplitKFused, kSplitKCluster: CTAs per cluster)
    int grid = 1;
    int tiles_dp = 0;    // stream-K: tiles run whole before the stream-K ranges
    int sk_iters = 0;    // stream-K: (ntiles - tiles_dp) * KT; sk_iters * grid < 2^31 (stream_k)
    int cluster = 1;     // CTAs per cluster (1 or 2)
    int mc_a = 0;        // cluster 2 along the filters: a unit is a pair of adjacent filter tiles
                         // of one pixel row (tiles_n even: a phantom tile past M pads it)
    int units = 0;       // data-parallel / split-K: work units (cluster_units x ksplit)
    int tail_q = 1;      // split-tail: k-parts per tile of the last wave

    struct Cursor {
        int i = 0;           // units taken so far in the data-parallel part
        int it = -1;         // stream-K: next global iteration (-1: not started)
    };

    // The walks below divide in 32 bits: a 64-bit division is a subroutine CALL in SASS (the
    // cut-tile kernels held 1624 of them; NOTES.md, "The cut tiles' walk in 32 bits").
    // stream_k() keeps sk_iters * grid under 2^31.
    CS_SCHED_HD int sk_begin(int c) const { return c * sk_iters / grid; }
    // The CTA whose stream-K range holds iteration `it`.
    CS_SCHED_HD int sk_owner(int it) const {
        const int c = ((it + 1) * grid - 1) / sk_iters;
        return c < grid - 1 ? c : grid - 1;
    }

    // The kernel instance this scheduler runs (ws_kernel's kCut): one of its own for each
    // scheduler that cuts tiles between CTAs that then wait for each other (split-tail,
    // stream-K, fused split-K), with the cut tiles' walk, roles and waits.
    CS_SCHED_HD int cut_kind() const {
        return mode == kSplitTail ? kCutTail : mode == kStreamK ? kCutStreamK : mode == kSplitKFused ? kCutFused : kCutNone;
    }
    CS_SCHED_HD bool cuts() const { return cut_kind() != kCutNone; }

    // The next unit of CTA `cta` (the kernels: blockIdx.x); false when it has none left.
    // kCuts = false: the data-parallel and split-K walk alone (next_dp), the one the halo and
    // ping-pong kernels loop over; true: every scheduler in one walk, the host's reference
    // order (tests/test_tile_scheduler.cpp). The persistent kernel walks by for_each_unit
    // below, which gives the same units: for the cut-tile schedulers in two loops, one per
    // kind of unit (next_whole, then next_tail_part or next_sk_step: next_tail's and next_sk's
    // two halves). A kernel looping over next() (a branch on the loop-carried index between
    // the kinds, or between the schedulers) kept its consumers' ring state in vector registers
    // with a WARPSYNC before every wgmma batch (NOTES.md, "The cut tiles' walk in 32 bits":
    // probes v16, v18-v24).
    template <bool kCuts = true>
    CS_SCHED_HD bool next(int cta, Cursor& cur, Work& w) const {
        if constexpr (!kCuts) {
            return next_dp(cta, cur, w);
        } else {
            if (mode == kSplitKCluster) return next_cluster_part(cta, cur, w);
            if (mode == kSplitTail) return next_tail(cta, cur, w);
            if (mode != kStreamK) return next_dp(cta, cur, w);
            return next_sk(cta, cur, w);
        }
    }
    // split-K cluster: CTA c's one unit, part c % ksplit (its cluster rank) of tile c / ksplit.
    // Walked as units c, c + grid, ... (grid == units: the second is past the end), not as
    // "the first call only": a loop the compiler can prove runs once made ptxas serialize the
    // consumers' wgmmas in every cluster split-K kernel (C7515).
    CS_SCHED_HD bool next_cluster_part(int cta, Cursor& cur, Work& w) const {
        const int u = cta + cur.i * grid;
        if (u >= units) return false;
        ++cur.i;
        w.tile = u / ksplit;
        w.part = u - w.tile * ksplit;
        w.slot = 0;
        w.k0 = w.part * KT / ksplit;
        w.k1 = (w.part + 1) * KT / ksplit;
        w.role = Role::split_cluster;
        return true;
    }
    // split-tail: whole waves data-parallel, then each tile of the last wave in tail_q parts
    CS_SCHED_HD bool next_tail(int cta, Cursor& cur, Work& w) const {
        return next_whole(cta, cur, w) || next_tail_part(cta, cur, w);
    }
    // stream-K and split-tail, phase 0: tile c, c + grid, ... below tiles_dp, whole
    CS_SCHED_HD bool next_whole(int cta, Cursor& cur, Work& w) const {
        const int t = cta + cur.i * grid;
        if (t >= tiles_dp) return false;
        ++cur.i;
        w.tile = t, w.part = 0, w.k0 = 0, w.k1 = KT, w.role = Role::whole;
        return true;
    }
    // split-tail, phase 1: the last wave's tiles in tail_q parts each, dealt out like tiles
    CS_SCHED_HD bool next_tail_part(int cta, Cursor& cur, Work& w) const {
        const int v = cta + cur.i * grid - tiles_dp;  // tail unit
        if (v >= (ntiles - tiles_dp) * tail_q) return false;
        ++cur.i;
        const int q = v / tail_q, part = v - q * tail_q;
        w.tile = tiles_dp + q;
        w.part = 0;
        w.slot = v;
        w.k0 = part * KT / tail_q;  // part < kMaxTailParts: no overflow
        w.k1 = (part + 1) * KT / tail_q;
        w.role = tail_q == 1 ? Role::whole : (part == 0 ? Role::sk_finish : Role::sk_contrib);
        return true;
    }
    // data-parallel, split-K; units fit in int: plan() checks tiles * ksplit
    CS_SCHED_HD bool next_dp(int cta, Cursor& cur, Work& w) const {
        // cluster 2: unit = (pair of tile rows, filters, part); tile = the rank's row
        const int u = cluster == 2 ? (cta >> 1) + cur.i * (grid >> 1) : cta + cur.i * grid;
        const int rank = cluster == 2 ? (cta & 1) : 0;
        if (u >= units) return false;
        ++cur.i;
        int tile = u / ksplit;
        if (cluster == 2 && mc_a) {
            tile = 2 * tile + rank;
        } else if (cluster == 2) {
            const int pr = tile / tiles_n, nt = tile - pr * tiles_n;
            tile = (2 * pr + rank) * tiles_n + nt;
        }
        if (ksplit == 1) {
            w.tile = tile, w.part = 0, w.k0 = 0, w.k1 = KT, w.role = Role::whole;
            return true;
        }
        w.tile = tile;
        w.part = u - (u / ksplit) * ksplit;
        const int kp = KT / ksplit;
        w.k0 = w.part * kp;
        w.k1 = w.k0 + kp;
        w.role = mode == kSplitKFused ? Role::split_fused : Role::split_part;
        return true;
    }
    // stream-K: whole tiles first, then this CTA's range of the rest's k-slices
    CS_SCHED_HD bool next_sk(int cta, Cursor& cur, Work& w) const {
        return (cur.it < 0 && next_whole(cta, cur, w)) || next_sk_range(cta, cur, w);
    }
    // stream-K, phase 1: this CTA's range of the k-slices of the tiles past tiles_dp
    CS_SCHED_HD bool next_sk_range(int cta, Cursor& cur, Work& w) const {
        if (cur.it < 0) cur.it = sk_begin(cta);
        return next_sk_step(cta, sk_begin(cta + 1), cur, w);
    }
    // One step of that range, [cur.it, end): the kernels' loop (for_each_unit) sets cur.it and
    // end once before it, so the loop has no branch on whether the range has started.
    CS_SCHED_HD bool next_sk_step(int cta, int end, Cursor& cur, Work& w) const {
        if (cur.it >= end) return false;
        const int t = cur.it / KT;
        w.tile = tiles_dp + t;
        w.part = 0;
        w.k0 = cur.it - t * KT;
        const int tend = (t + 1) * KT;
        w.k1 = (end < tend ? end : tend) - t * KT;
        w.role = w.k0 > 0 ? Role::sk_contrib : (w.k1 == KT ? Role::whole : Role::sk_finish);
        w.slot = cta;  // one slot per CTA: a stream-K range cuts at most one tile at its start
        cur.it = t * KT + w.k1;
        return true;
    }
    // The walk the kernels run (ws_kernel.cuh: the producer and the consumers each call it, so
    // they take the same units in the same order): f(w) on each unit of CTA `cta`. kCut is the
    // kernel's cut_kind(): split-tail and stream-K walk in two loops, one per kind of unit, the
    // stream-K range's bounds set before its loop; the others in one loop (kClK: the cluster
    // split-K walk). It gives next()'s units in next()'s order (tests/test_tile_scheduler.cpp).
    template <int kCut, bool kClK, class F>
    CS_SCHED_HD void for_each_unit(int cta, F&& f) const {
        Cursor cur;
        Work w;
        if constexpr (kCut == kCutTail || kCut == kCutStreamK) {
            while (next_whole(cta, cur, w)) f(w);
            if constexpr (kCut == kCutTail) {
                while (next_tail_part(cta, cur, w)) f(w);
            } else {
                cur.it = sk_begin(cta);
                const int end = sk_begin(cta + 1);
                while (next_sk_step(cta, end, cur, w)) f(w);
            }
        } else {
            while (kClK ? next_cluster_part(cta, cur, w) : next_dp(cta, cur, w)) f(w);
        }
    }
    // For a sk_finish unit: the slots (and flags) of its tile's later k-slices — stream-K: the
    // CTAs that hold them; split-tail: the tile's parts 1 .. tail_q - 1.
    CS_SCHED_HD void contributors(int cta, const Work& w, int& first, int& last) const {
        if (mode == kSplitTail) {
            first = w.slot + 1;
            last = w.slot + tail_q - 1;
            return;
        }
        const int t = w.tile - tiles_dp;
        first = cta + 1;
        last = sk_owner((t + 1) * KT - 1);
    }
#if defined(__CUDACC__)
    template <bool kCuts = true>
    __device__ __forceinline__ bool next(Cursor& cur, Work& w) const {
        return next<kCuts>(int(blockIdx.x), cur, w);
    }
    __device__ __forceinline__ void contributors(const Work& w, int& first, int& last) const {
        contributors(int(blockIdx.x), w, first, last);
    }
#endif

    // Host: the units a cluster of `cluster` CTAs takes before any K split: tiles, or pairs of
    // tile rows x filter tiles (an odd last row's pair included).
    // mc_a: pairs of filter tiles (tiles_n even).
    static long long cluster_units(long long ntiles, int tiles_n, int cluster, int mc_a = 0) {
        if (cluster == 2 && mc_a) return ntiles / 2;
        return cluster == 2 ? (ntiles / tiles_n + 1) / 2 * tiles_n : ntiles;
    }
    // Host: the decomposition for `ntiles` tiles of KT slices on `sms` SMs.
    // cluster = 2: `sms` is the CTAs that can run at once in clusters of two (even).
    // mc_a (cluster 2 along the filters): tiles_n must be even (the caller pads it).
    static TileSched data_parallel(int ntiles, int tiles_n, int KT, int sms, int ksplit = 1, int cluster = 1,
                                   int mc_a = 0) {
        TileSched s;
        s.mode = ksplit > 1 ? kSplitK : kDataParallel;
        s.ntiles = ntiles, s.tiles_n = tiles_n, s.KT = KT, s.ksplit = ksplit, s.cluster = cluster, s.mc_a = mc_a;
        s.units = int(cluster_units(ntiles, tiles_n, cluster, mc_a) * ksplit);
        s.grid = cluster * int(std::min<long long>(s.units, sms / cluster));
        return s;
    }
    // Host: split-K in one kernel (mode kSplitKFused); the caller keeps units <= grid (every
    // part resident at once: a part waits for its tile's others).
    static TileSched split_k_fused(int ntiles, int tiles_n, int KT, int sms, int ksplit) {
        TileSched s = data_parallel(ntiles, tiles_n, KT, sms, ksplit);
        s.mode = kSplitKFused;
        return s;
    }
    static constexpr int kMinSlicesPerPart = 4;      // split-K's and split-tail's least k-slices a part
    static constexpr int kPortableClusterParts = 8;  // the cluster split's parts (split-k-cluster)
    static constexpr int kMaxClusterParts = 16;      // a non-portable cluster (split-k-cluster16)
    // Host: the k-parts of split-K with the reduction kernel: the largest divisor d of the
    // k-slices with at least min_slices slices a part and units x d within the slots (forced:
    // the smallest divisor past 1 where none fits); 1 unforced where 2 x units > slots (the
    // tiles alone fill the grid).
    static int split_parts(long long units, int kslices, int slots, bool forced, int min_slices) {
        if (!forced && 2 * units > slots) return 1;
        int best = 1;
        for (int d = 2; d <= kslices / min_slices; ++d)
            if (kslices % d == 0 && (units * d <= slots || (forced && best == 1))) best = d;
        return best;
    }
    // Host: whether split-K's parts sum through distributed shared memory (split_k_cluster,
    // min(8, k-slices) parts) rather than the reduction kernel's `ksplit` parts: where the
    // clusters fit in one wave and their parts run at most kClusterExtraSlices k-slices more
    // than the reduction kernel's, or where the output is NCHW (the reduction kernel's
    // transposed write is the slower part there). Measured, H200 N=1, conv2-5, the 128-pixel
    // rungs of fp16, bf16, tf32, 3xTF32, 3xFP16 (plots/h200/splitk_forms_n1.csv, NOTES.md
    // "Cluster split-K"): NHWC, the cluster sum faster up to 5 slices more a part, level or
    // slower from 7.5 on; NCHW, faster or level on every row. kClusterExtraSlices sits between
    // the two (the times: git show 3ab0d79:gpu/variants/hopper/tile_scheduler.cuh).
    static constexpr double kClusterExtraSlices = 6.0;
    // Host: the clusters of `parts` CTAs, one an SM, that run at once on `sms` SMs. A cluster
    // lies within one GPC; a pair fits any GPC's TPCs, but a larger cluster leaves each GPC's
    // remainder idle, and the product's harvest makes GPCs uneven (an H100's or H200's 132 SMs
    // in 8 GPCs of 14 to 18): one cluster fewer than the SMs divide into, 15 of 8 and 7 of 16
    // there (cudaOccupancyMaxActiveClusters; tests/gpu/test_cluster_fit_gpu.cu checks it on the
    // device). Measured, H200 N=1: split-K over 16 clusters of 8 ran at about twice the time of
    // 14 (results/h200/networks/n1_schedulers_resnet50, the resnet50 auto and heuristic sweeps).
    static int cluster_fit(int sms, int parts) {
        if (parts <= 2) return sms / std::max(1, parts);
        return std::max(1, (sms - parts) / parts);
    }
    static bool prefer_cluster_split(long long units, int kslices, int ksplit, int slots, bool nchw_out) {
        const int parts = std::min(kPortableClusterParts, kslices);
        if (ksplit < 2 || parts < 2 || units > cluster_fit(slots, parts)) return false;
        const double extra = double((kslices + parts - 1) / parts) - double(kslices) / ksplit;
        return nchw_out || extra <= kClusterExtraSlices;
    }
    // Host: scheduler=auto's k-split, the one rule of the persistent plan (wgmma_ws.cu's
    // choose_split) and of the cost model (ws_model.cpp): the reduction kernel's parts
    // (split_parts, unforced) where the tiles leave slots idle, summed through distributed shared
    // memory instead (cluster: min(kPortableClusterParts, k-slices) parts) where
    // prefer_cluster_split says so and the plan can run it (cluster_ok: the cooperative schedule
    // without clusters of two, a tile of at most 128 pixels).
    struct AutoSplit {
        int parts = 1;
        bool cluster = false;
    };
    static AutoSplit auto_split(long long units, int kslices, int slots, bool cluster_ok, bool nchw_out) {
        const int parts = split_parts(units, kslices, slots, false, kMinSlicesPerPart);
        if (parts > 1 && cluster_ok && prefer_cluster_split(units, kslices, parts, slots, nchw_out))
            return AutoSplit{std::min(kPortableClusterParts, kslices), true};
        return AutoSplit{parts, false};
    }
    // Host: split-K over clusters of `ksplit` CTAs (2 .. kMaxClusterParts, at most KT): one
    // cluster per tile, one part per CTA.
    static TileSched split_k_cluster(int ntiles, int tiles_n, int KT, int ksplit) {
        TileSched s;
        s.mode = kSplitKCluster;
        s.ntiles = ntiles, s.tiles_n = tiles_n, s.KT = KT, s.ksplit = ksplit;
        s.units = ntiles * ksplit;
        s.grid = s.units;
        return s;
    }
    // Host: the flags a fused split-K launch raises (one per unit: tile * ksplit + part).
    long long fused_flags() const { return mode == kSplitKFused ? (long long)units : 0; }
    static constexpr long long kWalkLimit = 2147483647LL;  // the 32-bit walk's products stay below
    static TileSched stream_k(int ntiles, int tiles_n, int KT, int sms) {
        TileSched s;
        s.mode = kStreamK;
        s.ntiles = ntiles, s.tiles_n = tiles_n, s.KT = KT;
        s.grid = sms;
        const int full = ntiles / sms, rem = ntiles % sms;
        s.tiles_dp = rem == 0 ? ntiles : std::max(0, full - 1) * sms;
        const long long iters = (long long)(ntiles - s.tiles_dp) * KT;
        // No stream-K part, or one whose 32-bit walk would overflow (sk_iters x grid >= 2^31;
        // on 132 SMs at worst from 61000 k-slices a tile, no conv layer's): the tiles whole.
        if (iters == 0 || iters * sms >= kWalkLimit) return data_parallel(ntiles, tiles_n, KT, sms);
        s.sk_iters = int(iters);
        // Fewer iterations than CTAs: one CTA per iteration at most.
        if (s.sk_iters < s.grid) s.grid = s.sk_iters;
        return s;
    }
    static constexpr int kMaxTailParts = 8;  // bounds the slots: < SMs x 8 tiles' fp32 accumulators
    // Host: the k-parts per tile of the last, partial wave: as many as fit in one round of the
    // grid (tail q <= grid), each part at least min_slices k-slices, at most kMaxTailParts; 1 when
    // the waves are whole. One round: parts over two or three rounds (a finisher waiting, then
    // adding its contributors' slots, in each) ran slower than whole tiles on every layer the
    // H200 measured, eight: AlexNet's conv5 at N=32 and 128 in fp16 and tf32 (1.01-1.25x), VGG's
    // conv3_2-3 at N=128 in tf32, ResNet's l3_3x3 and l4_proj at N=32 (1.4-1.7x), l4_3x3's
    // m128n256 in tf32 (1.5x) (results/h200/networks/split_tail_rounds_*, split_tail_turn_*,
    // deep_layers_*, and sk_l2_profile as of 7998879), also with the finisher's role turned each
    // round (b03eae4): a grid of every SM runs each slice slower than the partial wave it
    // replaces (the operands' L2 traffic), which the parts' fewer slices did not make up.
    static int tail_parts(int tail, int KT, int grid, int min_slices) {
        if (tail == 0) return 1;
        return std::max(1, std::min({KT / min_slices, kMaxTailParts, grid / tail}));
    }
    // Host: data-parallel whole waves, then the last wave's tiles cut into tail_parts() parts
    // (with fewer tiles than SMs, all of them are the "last wave").
    static TileSched split_tail(int ntiles, int tiles_n, int KT, int sms, int min_slices) {
        TileSched s;
        s.mode = kSplitTail;
        s.ntiles = ntiles, s.tiles_n = tiles_n, s.KT = KT;
        s.tiles_dp = ntiles / sms * sms;
        const int tail = ntiles - s.tiles_dp;
        s.tail_q = tail_parts(tail, KT, sms, min_slices);
        // whole waves: every SM; else one CTA per tail unit, at most one per SM
        s.grid = s.tiles_dp > 0 ? sms : std::min(sms, tail * s.tail_q);
        return s;
    }
    // Host: the fp32 slots (and flags) a launch needs.
    long long slots() const {
        if (mode == kSplitTail) return tail_q > 1 ? (long long)(ntiles - tiles_dp) * tail_q : 0;  // one part: whole tiles
        return mode == kStreamK ? grid : 0;
    }
    std::string describe() const {
        const std::string cl = cluster != 2 ? ""
                               : mc_a ? " over clusters of 2 CTAs (pairs of filter tiles)"
                                      : " over clusters of 2 CTAs (pairs of tile rows)";
        if (mode == kDataParallel) return "data-parallel" + cl;
        if (mode == kSplitK) return "split-K " + std::to_string(ksplit) + cl;
        if (mode == kSplitKCluster)
            return "split-K " + std::to_string(ksplit) + " over clusters of " + std::to_string(ksplit) +
                   " CTAs (one per tile, summed through distributed shared memory)";
        if (mode == kSplitKFused)
            return "split-K " + std::to_string(ksplit) + " fused (each part fixes up 1/" + std::to_string(ksplit) +
                   " of its tile's rows)";
        if (mode == kSplitTail)
            return "split-tail (" + std::to_string(tiles_dp) + " tiles whole, the last wave's " +
                   std::to_string(ntiles - tiles_dp) + " tiles in " + std::to_string(tail_q) + " k-parts each)";
        return "stream-K (" + std::to_string(tiles_dp) + " tiles whole, " + std::to_string(ntiles - tiles_dp) +
               " tiles' " + std::to_string(sk_iters) + " k-slices over " + std::to_string(grid) + " CTAs)";
    }
};

}  // namespace cs::gpu::variants::hopper
