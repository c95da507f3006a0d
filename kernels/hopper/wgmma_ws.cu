// The persistent warp-specialised Hopper rungs (hopper-ws, hopper-pp, hopper-tmastore,
// hopper-sk, hopper-mc and the fp32-class hopper-ws-3xtf32 / -3xfp16): the plan that turns a
// rung's defaults and a row's axis values into one instantiation of ws_kernel.cuh — tile
// (tiles.hpp), schedule (cooperative, ping-pong), tile scheduler (data-parallel, split-K with
// a reduction kernel, fused or over a cluster summing through distributed shared memory,
// stream-K, split-tail), epilogue (direct, TMA store) and cluster (1, or 2 with the B tile
// multicast) —
// plus the transforms of hopper_transforms.cuh (NCHW, channel
// padding, space-to-depth for conv1, the fp32 splits).
//
// Idea of the persistent kernel: a TMA producer warpgroup (setmaxnreg 40) keeps a ring of
// k-slices full across tile boundaries while two consumer warpgroups (setmaxnreg 232) issue
// wgmma from it; one CTA per SM walks the tiles the scheduler gives it, so the pipeline fill is
// paid once per CTA, not once per tile. What each policy adds is measured per layer in the
// report's Hopper ladder and in NOTES.md ("Hopper core v2"), from the committed sweeps.
//
// Default tile per problem: the tile a committed tile sweep measured fastest for the rung's
// policies (the fp32-class splits apart: none measured), element size, layer shape and nearest
// N within a factor of 4 (the tuning table, bench/tuning.hpp: tuning/<card>.json from the
// committed tile sweeps; N=1 runs split-K, N=32 and up data-parallel, so one says little of the other);
// where none was measured, the rule (default_tile, from
// the H200 tile sweeps of the earlier rungs): 128x96 for
// M <= 96; 128x256 where M is a multiple of 256 and the tiles make >= 4 waves (conv2), with
// 64 B k-slices where C is a multiple of 64 B but not of 128 B (C=96 halves: 3 exact slices per
// tap); else 128x128 (conv3-5). Ping-pong takes BN <= 128. 3xFP16 keeps 128 B slices where 64 B
// ones would add more barriers than the padding costs (C'=288: 11% padding).
// The fp32-class splits (3xtf32, 3xfp16) scale both tensors by powers of two found on the
// device each run (range_scale.hpp: one reduction kernel inside run(), so inside kernel_ms);
// the transforms apply them, the epilogue (or the split-K reduction) undoes them exactly from
// device memory (WsArgs::ops.mul), and data outside max|x| max|w| K < 2^127 or not finite is
// an ERROR naming that range (Plan::run_error, read after the run).
// Split-K (scheduler auto) where the tiles leave more than half the SMs idle (N=1): the
// largest divisor d of the k-slices with tiles x d <= SMs and >= 4 slices a part.
#include "hopper_core.cuh"
#include "hopper_tma.cuh"
#include "tuning.hpp"
#include "ws_launch.cuh"
#include "ws_plan.hpp"

#include <cmath>
#include <type_traits>

namespace cs::gpu::variants::hopper {
namespace {

constexpr int kMinSlices = TileSched::kMinSlicesPerPart;

// The rule where no sweep measured the problem.
int pick_ws(int bn, int rowb) { return find_tile(bn, rowb, 1, 8); }

// mc_a (clusters along the filters): filter tiles that pair up exactly where one does
// (M = 2 x 192: conv3-4, 4 x 96 in ping-pong, whose tiles are at most 128 filters; M = 2 x 128
// and its multiples: conv2, conv5).
int default_tile(const Setup& u, std::int64_t n, int sms, int es, bool pp, bool mc_a = false) {
    const bool k128 = choose_bk(u.g.C, es) * es == 128;
    const int e128 = 128 / es, e64 = 64 / es;  // elements of a 128 B / 64 B row
    const bool exact64 = u.g.C % e128 != 0 && u.g.C % e64 == 0;
    const bool pad_heavy = exact64 && ((u.g.C + e128 - 1) / e128 * e128 - u.g.C) * 8 > u.g.C;
    const std::int64_t rows = (n * u.g.EF + kBM - 1) / kBM;
    if (mc_a && u.g.M == 384) return pick_ws(pp ? 96 : 192, k128 ? 128 : 64);
    if (mc_a && u.g.M % 256 == 0) return pick_ws(128, (k128 && !pad_heavy) ? 128 : 64);
    if (u.g.M <= 96) return pick_ws(96, k128 ? 128 : 64);
    if (pp) return pick_ws(128, (k128 && !exact64) ? 128 : 64);
    if (u.g.M % 256 == 0 && rows * (u.g.M / 256) >= 4 * std::int64_t(sms)) return pick_ws(256, (k128 && !exact64) ? 128 : 64);
    return pick_ws(128, (k128 && !pad_heavy) ? 128 : 64);
}

// The resolved policies of one plan.
struct WsChoice {
    int tile = 0;
    Schedule schedule = Schedule::cooperative;
    TileScheduler scheduler = TileScheduler::automatic;  // resolved: never automatic after choose_split
    Epilogue epilogue = Epilogue::direct;
    int ksplit = 1;
    int cluster = 1;  // CTAs per cluster (2: a tile multicast)
    bool mc_a = false;  // cluster along the filters: the A tile multicast (Cluster::one_by_two), else B (two)
    bool pdl = false;   // launched as the input transform's programmatic dependent (launch=pdl)
    std::optional<Tf32Mode> tf32;  // tf32 rows: round (the operands pass through a transform) or truncate
    Cluster cluster_policy() const { return cluster == 1 ? Cluster::one : mc_a ? Cluster::one_by_two : Cluster::two; }
    std::string config() const {
        return "tile=" + tile_name(tile) + ";schedule=" + std::string(name_of(kScheduleNames, schedule)) +
               ";scheduler=" + std::string(name_of(kTileSchedulerNames, scheduler)) +
               ";epilogue=" + std::string(name_of(kEpilogueNames, epilogue)) +
               ";cluster=" + std::string(name_of(kClusterNames, cluster_policy())) +
               ";launch=" + std::string(name_of(kLaunchNames, pdl ? Launch::pdl : Launch::plain)) +
               (tf32 ? ";tf32=" + std::string(name_of(kTf32ModeNames, *tf32)) : "");
    }
    // The filter tiles of M filters: along the filters (mc_a) pairs of them, an odd count
    // padded by a phantom tile past M.
    int filter_tiles(int M) const {
        const int n = (M + kTiles[tile].bn - 1) / kTiles[tile].bn;
        return n + (mc_a ? n % 2 : 0);
    }
    // The TMA boxes: the weight map's filters per load (half the tile where the B tile is
    // multicast) and the input map's pixels per load (half the tile where A is; a 64-pixel
    // tile's 64; a 256-pixel tile's A is two boxes of 128).
    int b_box() const { return mc_a ? kTiles[tile].bn : kTiles[tile].bn / cluster; }
    int a_box() const { return mc_a ? kBM / 2 : std::min(kBM, kTiles[tile].bm); }
    // split-K summed through distributed shared memory: clusters of up to 8 parts, or 16
    bool cluster_split() const { return hopper::cluster_split(scheduler); }
};

template <class T, class TO, int kDown>
struct WsGemm {
    WsChoice c;
    int sms = 132;
    Buffer partial;  // split-K: ksplit x P x M; stream-K / split-tail: TileSched::slots() x BM x BN fp32
    Buffer flags;    // stream-K / split-tail: one int per slot
    int epoch = 0;
    std::string info;
    CUtensorMap a{}, b{}, o{};
    const void* key_in = nullptr;
    const void* key_w = nullptr;
    const void* key_out = nullptr;
    int key_n = -1;
    const float* out_mul = nullptr;  // the split's 2^(ex+ew) (HopperPlan sets it), else null
    // The chain's fused bias (M values of TO) and ReLU for the next launch (HopperPlan sets them
    // from DeviceIO each run), else none.
    const void* bias = nullptr;
    bool relu = false;
    // HopperPlan sets it where the input transform runs before the GEMM; with launch=pdl the
    // GEMM is then the transform's programmatic dependent: its prologue (barriers, the tensor
    // maps' fetch, the consumers' registers) under the transform's tail, the producer waiting
    // for the transform's writes before its first load.
    bool after_transform = false;
    // HopperPlan sets it for a launch the caller asked to be dependent (DeviceIO::dependent, a
    // chain's layer) where the GEMM is the plan's first kernel: the producer's wait before its
    // first load (ws_kernel.cuh) is what makes that safe, as after the transform.
    bool chain_dependent = false;
    bool dependent_launch() const { return (after_transform && c.pdl) || chain_dependent; }

    WsLaunch launch_desc(bool prepare_only) const {
        return WsLaunch{&a, &b, &o, c.tile, c.schedule, c.epilogue, prepare_only, c.cluster, c.mc_a, nullptr, 0,
                        dependent_launch() && !prepare_only};
    }
    // Sets the kernel's shared memory; with a cluster, `sms` becomes the CTAs that fit at once
    // in clusters (cudaOccupancyMaxActiveClusters x 2), the persistent grid's size.
    void prepare() {
        WsLaunch l = launch_desc(true);
        int ctas = 0;
        l.max_ctas = &ctas;
        l.split_parts = c.cluster_split() ? c.ksplit : 0;
        launch_ws<T, TO, kDown>(l, WsArgs<TO>{}, nullptr);
        if (c.cluster > 1) {
            if (ctas < 2) throw Skip("no cluster of " + std::to_string(c.cluster) + " CTAs of this kernel fits on the device");
            sms = ctas;
        }
        if (c.cluster_split() && ctas < c.ksplit)
            throw Skip("no cluster of " + std::to_string(c.ksplit) + " CTAs of this kernel fits on the device");
    }

    TileSched sched_for(const ConvGeom& g) const {
        const int bk = kTiles[c.tile].rowb / int(sizeof(T));
        const int tiles_n = c.filter_tiles(g.M);
        const int bm = kTiles[c.tile].bm;
        const int ntiles = (g.P + bm - 1) / bm * tiles_n;
        const int KT = g.R * g.S * ((g.C + bk - 1) / bk);
        if (c.scheduler == TileScheduler::stream_k) return TileSched::stream_k(ntiles, tiles_n, KT, sms);
        if (c.scheduler == TileScheduler::split_tail) return TileSched::split_tail(ntiles, tiles_n, KT, sms, kMinSlices);
        if (c.scheduler == TileScheduler::split_k_fused)
            return TileSched::split_k_fused(ntiles, tiles_n, KT, sms, c.ksplit);
        if (c.cluster_split()) return TileSched::split_k_cluster(ntiles, tiles_n, KT, c.ksplit);
        return TileSched::data_parallel(ntiles, tiles_n, KT, sms, c.ksplit, c.cluster, c.mc_a ? 1 : 0);
    }

    OutOps<TO> ops(const ConvGeom& g) const {
        return OutOps<TO>{out_mul, static_cast<const TO*>(bias), g.M, relu ? 1 : 0};
    }
    void launch(const T* in, const T* w, TO* out, const ConvGeom& g, bool nchw, cudaStream_t stream) {
        if (g.P == 0) return;
        const int bk = kTiles[c.tile].rowb / int(sizeof(T));
        // Each map is encoded again only when what it describes moved: the operand maps on new
        // operands or a new image count, the output map (TMA-store epilogue only) on a new
        // output, as the streams mode's chunks give.
        if (in != key_in || w != key_w || g.N != key_n) {
            const std::string err = encode_maps<T>(a, b, g, in, w, bk, c.b_box(), c.a_box());
            if (!err.empty()) throw cs::Error("hopper: " + err);
            key_in = in, key_w = w, key_n = g.N, key_out = nullptr;
        }
        if (c.epilogue == Epilogue::tma_store && out != key_out) {
            const std::string err = encode_out_map<TO>(o, out, g.P, g.M);
            if (!err.empty()) throw cs::Error("hopper: " + err);
            key_out = out;
        }
        WsArgs<TO> args{out, g, sched_for(g), (g.C + bk - 1) / bk, nchw ? 1 : 0, partial.as<float>(),
                        flags.as<int>(), ++epoch, ops(g)};
        launch_ws<T, TO, kDown>(launch_desc(false), args, stream);
        if (c.ksplit > 1 && c.scheduler == TileScheduler::split_k) {
            const std::int64_t total = std::int64_t(g.P) * g.M;
            splitk_reduce_kernel<TO, kDown>
                <<<unsigned((total + 255) / 256), 256, 0, stream>>>(partial.as<float>(), out, g, c.ksplit, nchw ? 1 : 0,
                                                                    ops(g));
            CS_CUDA_CHECK_LAUNCH();
        }
    }
    std::string detail() const { return info; }
    std::string config() const { return c.config(); }
    std::size_t workspace_bytes() const { return partial.bytes() + flags.bytes(); }
};

// tf32=round: operands read in place (NHWC input, KRSC weights) go through the transform
// kernels instead, which round them to nearest (OperandOf<float>, as cuDNN and cuBLAS do)
// where the tensor core would truncate them: a pass over each tensor per run. Where a
// transform runs anyway (NCHW, channel padding, space-to-depth) the operands are rounded
// already: round changes nothing there, and truncate cannot be had (SKIP). The config
// column says which one a tf32 row ran.
template <class T, SplitKind kSplit>
void choose_tf32(const WsRequest& r, Setup& u, WsChoice& c) {
    constexpr bool kTf32 = std::is_same_v<T, float> && kSplit == SplitKind::none;
    if (r.tf32) {
        if (!kTf32)
            throw Skip("tf32=" + std::string(name_of(kTf32ModeNames, *r.tf32)) +
                       ": a tf32 row's choice (this row's operands are not tf32)");
        if (*r.tf32 == Tf32Mode::round) u.tin = u.tw = true;
        else if (u.tin)
            throw Skip("tf32=truncate: this row's operands pass through transform kernels (NCHW input, channel "
                       "padding or space-to-depth), which round them to nearest");
    }
    if (kTf32) c.tf32 = u.tin ? Tf32Mode::round : Tf32Mode::truncate;
}

// The tile: the row's or the rung's, else the tuning table's for these policies (the plan
// context's, else the built-in one), else the rule; then whether the layer and the cluster take
// it. Returns how it was chosen.
template <class T, SplitKind kSplit>
std::string choose_tile(const WsRequest& r, const PlanContext& ctx, const Setup& u, WsChoice& c, std::int64_t maxn) {
    constexpr int es = int(sizeof(T));
    constexpr DType dt = std::is_same_v<T, float> ? DType::f32 : std::is_same_v<T, __half> ? DType::f16 : DType::bf16;
    const int sms = ctx.prop.multiProcessorCount;
    std::string note = "rule";
    if (!r.policy.tile.chosen()) {
        const WsTuningKey key{c.schedule, r.policy.epilogue.store,
                              cuts_tiles(c.scheduler) ? c.scheduler : TileScheduler::automatic, r.policy.cluster,
                              kSplit};
        const Tuning& tuning = ctx.tuning ? *ctx.tuning : builtin_tuning();
        const TunedShape shape{u.s.C, u.s.H, u.s.W, u.s.M, u.s.R, u.s.S, u.s.stride, u.s.pad};
        const TileId t = tuning.tile(ctx.prop.name, sms, key, dt, shape, u.src_nchw ? Layout::nchw : Layout::nhwc, maxn);
        if (t.chosen() && ws_tile_ok_rt(t.index, c.schedule)) {
            c.tile = t.index;
            note = "measured";
        } else {
            c.tile = default_tile(u, maxn, sms, es, c.schedule == Schedule::pingpong, c.mc_a);
        }
    } else {
        note = r.tile_set ? "set" : "the rung's";
        c.tile = r.policy.tile.index;
        const std::string tile = tile_name(c.tile);
        if (!ws_tile_ok_rt(c.tile, c.schedule))
            throw Skip("tile " + tile + " does not run in the persistent " +
                       (c.schedule == Schedule::pingpong ? std::string("ping-pong") : std::string("cooperative")) +
                       " kernel (one CTA per SM" +
                       (c.schedule == Schedule::pingpong
                            ? ", a whole 128 x BN tile per warpgroup: 128 pixels, BN <= 128, MMAs over the whole slice)"
                            : ")"));
    }
    const auto& t = kTiles[c.tile];
    if (t.kb && u.g.C * es > t.kb)
        throw Skip("tile " + tile_name(c.tile) + " runs its MMAs over " + std::to_string(t.kb) + " of the " +
                   std::to_string(t.rowb) + " bytes of a slice: a layer of at most " + std::to_string(t.kb / es) +
                   " channels (here C=" + std::to_string(u.g.C) + ")");
    if (t.bm != kBM && c.cluster != 1)
        throw Skip("tile " + tile_name(c.tile) + " (" + std::to_string(t.bm) +
                   " pixels) runs without clusters of two (use cluster=1)");
    return note;
}

// The tile scheduler's k-split over `units` work units of `kslices` k-slices on `slots` CTAs (or
// clusters). The split-K forms that sum in the kernel (fused: each part through L2 after a flag
// wait; cluster: through distributed shared memory) run in the cooperative schedule without
// clusters of the multicast kind. auto never takes the fused form: on the H200 at N=1 it is
// slower than the reduction kernel (git show 3ab0d79:gpu/variants/hopper/wgmma_ws.cu).
void choose_split(WsChoice& c, std::int64_t units, int kslices, int slots, bool src_nchw) {
    const bool coop_alone = c.schedule == Schedule::cooperative && c.cluster == 1;
    if (c.scheduler == TileScheduler::automatic) {
        // the parts may sum through distributed shared memory instead (TileSched::
        // prefer_cluster_split: the rule and its measurements); the cost model takes the same
        // rule (auto_schedule, ws_plan.hpp)
        const AutoSchedule a = auto_schedule(units, kslices, slots, coop_alone, c.tile, src_nchw);
        c.ksplit = a.parts;
        c.scheduler = a.scheduler;
    } else if (c.scheduler == TileScheduler::split_k || c.scheduler == TileScheduler::split_k_fused) {
        c.ksplit = TileSched::split_parts(units, kslices, slots, true, kMinSlices);
        if (c.ksplit == 1)
            throw Skip("split-K needs at least " + std::to_string(2 * kMinSlices) + " k-slices with a divisor (" +
                       std::to_string(kslices) + ")");
        if (c.scheduler == TileScheduler::split_k_fused && !coop_alone)
            throw Skip("fused split-K runs the cooperative schedule without clusters (use scheduler=split-k)");
        if (c.scheduler == TileScheduler::split_k_fused && units * c.ksplit > slots)
            throw Skip("fused split-K runs one part per CTA, all resident at once: " + std::to_string(units) +
                       " tiles x " + std::to_string(c.ksplit) + " parts > " + std::to_string(slots) +
                       " CTAs (use scheduler=split-k)");
    }
    // Cluster split-K: one cluster of min(8, k-slices) CTAs per tile (16: a non-portable
    // cluster), the parts summed through distributed shared memory (no workspace, no second
    // kernel).
    if (c.cluster_split()) {
        if (!coop_alone)
            throw Skip("cluster split-K runs the cooperative schedule without clusters of its own (use cluster=1)");
        const int most =
            c.scheduler == TileScheduler::split_k_cluster16 ? TileSched::kMaxClusterParts : TileSched::kPortableClusterParts;
        c.ksplit = std::min(most, kslices);
        if (c.ksplit < 2) throw Skip("cluster split-K needs at least 2 k-slices (" + std::to_string(kslices) + ")");
    }
}

// The epilogue: the TMA store where it can run (it writes the NHWC output as a P x M matrix with
// 16-byte rows), else the direct one; a row that asked for the TMA store SKIPs where it cannot.
// Returns the detail's note when the rung's TMA store fell back.
template <class TO>
std::string choose_epilogue(const WsRequest& r, const Setup& u, WsChoice& c, bool split_k,
                            const cudaDeviceProp& prop) {
    c.epilogue = r.policy.epilogue.store;
    if (c.epilogue != Epilogue::tma_store) return "";
    std::string why = tma_store_blocker(u, int(sizeof(TO)), c.tile, split_k || c.cluster_split());
    if (why.empty() && ws_smem_bytes(c.tile, Epilogue::tma_store) > int(prop.sharedMemPerBlockOptin))
        why = "tile " + tile_name(c.tile) + " with the staging buffers needs " +
              std::to_string(ws_smem_bytes(c.tile, Epilogue::tma_store)) + " bytes of shared memory, the device " +
              std::to_string(prop.sharedMemPerBlockOptin);
    if (why.empty()) return "";
    if (r.epilogue_set) throw Skip("the TMA-store epilogue cannot run here: " + why);
    c.epilogue = Epilogue::direct;
    return " (TMA store not possible: " + why + ")";
}

// The GEMM's buffers for any call up to the largest (split-K's partials; stream-K's and
// split-tail's slots, one per CTA or per unit of the last wave, where a chunk of fewer images
// can have a larger last wave; the fused and slotted forms' flags), after a trial encoding of
// the TMA maps; then the detail.
template <class T, class Gemm>
void prepare_gemm(Gemm& gemm, const Setup& u, std::int64_t maxn, bool split_k, const std::string& tile_note,
                  const std::string& epi_note) {
    const WsChoice& c = gemm.c;
    constexpr int es = int(sizeof(T));
    const int bn = kTiles[c.tile].bn, bk = kTiles[c.tile].rowb / es, bm = kTiles[c.tile].bm;
    const int wn = kTiles[c.tile].wg_filters();
    const int cs = (u.g.C + bk - 1) / bk;
    const std::int64_t tiles = (maxn * u.g.EF + bm - 1) / bm * c.filter_tiles(u.g.M);
    ConvGeom g = geom_for(u, maxn);
    CUtensorMap a, b;
    const std::string err = encode_maps<T>(a, b, g, reinterpret_cast<const void*>(std::uintptr_t(1) << 20),
                                           reinterpret_cast<const void*>(std::uintptr_t(1) << 21), bk, c.b_box(),
                                           c.a_box());
    if (!err.empty()) throw Skip(err);
    if (split_k) gemm.partial = Buffer(MemKind::device, std::size_t(c.ksplit) * std::size_t(maxn * u.g.EF) * u.g.M * 4);
    const TileSched s = gemm.sched_for(g);
    if (s.fused_flags() > 0) {  // the most units any call up to the largest has
        gemm.flags = Buffer(MemKind::device, std::size_t(s.fused_flags()) * 4);
        CS_CUDA_CHECK(cudaMemset(gemm.flags.get(), 0, gemm.flags.bytes()));
    }
    long long slots = 0;
    for (std::int64_t n = 1; n <= maxn; ++n) slots = std::max(slots, gemm.sched_for(geom_for(u, n)).slots());
    if (slots > 0) {
        gemm.partial = Buffer(MemKind::device, std::size_t(slots) * bm * bn * 4);  // a whole tile per slot
        gemm.flags = Buffer(MemKind::device, std::size_t(slots) * 4);
        CS_CUDA_CHECK(cudaMemset(gemm.flags.get(), 0, gemm.flags.bytes()));
    }
    gemm.info = std::string("wgmma m64n") + std::to_string(wn) + "k" + std::to_string(WgmmaSS<T, 96>::kK) + " " +
                Elem<T>::name + ", TMA producer warpgroup + 2 " +
                (c.schedule == Schedule::pingpong ? "ping-pong" : "cooperative") + " consumer warpgroups, " +
                (c.cluster == 2 ? (c.mc_a ? "clusters of 2 CTAs on one pixel row each loading half of the A tile "
                                            "(64 pixels) and multicasting it, "
                                          : "clusters of 2 CTAs each loading half of the B tile and multicasting it, ")
                                : "") +
                "tile " + tile_text(c.tile, es) + " (" + tile_note + "), " + std::to_string(tiles) + " tiles, " +
                s.describe() + (split_k ? " (fp32 partials reduced in order)" : "") + " on " + std::to_string(s.grid) +
                " CTAs, epilogue " + (c.epilogue == Epilogue::tma_store ? "TMA store" : "direct") + epi_note + "; " +
                std::to_string(u.g.R * u.g.S) + " taps x " + std::to_string(cs) + " slice(s) of " + std::to_string(bk) +
                " (C=" + std::to_string(u.g.C) + ")";
}

// The persistent Hopper plan of one row, in its steps: tf32 reading, schedule and cluster,
// tile, k-split, epilogue, launch, then the GEMM's buffers and the plan.
template <class T, SplitKind kSplit>
std::unique_ptr<Plan> plan_t(const WsRequest& r, const Problem& p, const PlanContext& ctx) {
    constexpr int parts = kSplit == SplitKind::none ? 1 : 3;
    using TO = std::conditional_t<kSplit == SplitKind::x3fp16, float, T>;
    constexpr int kDown = kSplit == SplitKind::x3fp16 ? kLoLog2 : 0;
    using Gemm = WsGemm<T, TO, kDown>;
    constexpr int es = int(sizeof(T));
    Setup u = make_setup(p, parts, es);  // the persistent rungs run the tap packing
    const std::int64_t maxn = std::max<std::int64_t>(1, ctx.max_chunk_N);
    const int sms = ctx.prop.multiProcessorCount;
    WsChoice c;
    choose_tf32<T, kSplit>(r, u, c);
    c.schedule = r.policy.schedule;
    c.cluster = r.policy.cluster == Cluster::one ? 1 : 2;
    c.mc_a = r.policy.cluster == Cluster::one_by_two;
    c.scheduler = r.policy.scheduler;
    if (c.cluster == 2 && cuts_tiles(c.scheduler))
        throw Skip("stream-K and split-tail cut tiles per CTA; a cluster's two CTAs must walk the same k-slices of one "
                   "B tile (use scheduler=data-parallel or split-k with cluster=2)");
    const std::string tile_note = choose_tile<T, kSplit>(r, ctx, u, c, maxn);
    const int bk = kTiles[c.tile].rowb / es, bm = kTiles[c.tile].bm;
    // cluster=1x2 with one filter tile (conv1's M=96, the odd shapes): the pair is that tile and
    // a phantom past M, whose CTA only loads its half of A for the other (half the SMs' MMAs
    // are on zero filters: the rung's honest cost there, not a SKIP).
    const int tiles_n = c.filter_tiles(u.g.M);
    const std::int64_t tiles = (maxn * u.g.EF + bm - 1) / bm * tiles_n;
    const int kslices = u.g.R * u.g.S * ((u.g.C + bk - 1) / bk);
    // With clusters of two, the units are pairs of tiles on pairs of SMs.
    const std::int64_t units = TileSched::cluster_units(tiles, tiles_n, c.cluster, c.mc_a ? 1 : 0);
    const int slots = sms / c.cluster;
    choose_split(c, units, kslices, slots, u.src_nchw);
    const bool split_k = c.scheduler == TileScheduler::split_k || c.scheduler == TileScheduler::split_k_fused;
    const std::string epi_note = choose_epilogue<TO>(r, u, c, split_k, ctx.prop);
    // launch, only where a transform runs before the GEMM. auto: pdl where the units leave
    // half the SMs or more idle (split-K's case; N=1: faster in every class and rung), plain
    // elsewhere (at N=32 and 128, one wave of tiles included, the ping-pong and 3xTF32 rows
    // slower under a programmatic launch, the rest about level): chosen by measurement,
    // git show 3ab0d79:gpu/variants/hopper/wgmma_ws.cu, table h200-launch-axis.
    const Launch launch = r.policy.launch;
    if (launch == Launch::pdl && !u.tin)
        throw Skip("launch=pdl: no transform runs before the GEMM here (the NHWC input read in place)");
    c.pdl = u.tin && (launch == Launch::pdl || (launch == Launch::automatic && 2 * units <= slots));
    Gemm gemm;
    gemm.c = c;
    gemm.sms = sms;
    gemm.prepare();
    prepare_gemm<T>(gemm, u, maxn, split_k, tile_note, epi_note);
    if constexpr (kSplit == SplitKind::x3tf32)
        return make_hopper_plan<T, Gemm, Split3<true>, Split3<false>>(p, ctx, std::move(u), std::move(gemm));
    else if constexpr (kSplit == SplitKind::x3fp16)
        return make_hopper_plan<T, Gemm, Split3Half<true>, Split3Half<false>, float>(p, ctx, std::move(u),
                                                                                      std::move(gemm));
    else
        return make_hopper_plan<T>(p, ctx, std::move(u), std::move(gemm));
}

}  // namespace

std::unique_ptr<Plan> ws_plan(const WsPolicy& rung, SplitKind split, const PrecisionRow& row, const Problem& p,
                              const PlanContext& ctx) {
    const WsRequest r = ws_request(rung, split, p.axes);
    if (split == SplitKind::x3tf32) return plan_t<float, SplitKind::x3tf32>(r, p, ctx);
    if (split == SplitKind::x3fp16) return plan_t<__half, SplitKind::x3fp16>(r, p, ctx);
    if (row.io == DType::f32) return plan_t<float, SplitKind::none>(r, p, ctx);
    if (row.io == DType::bf16) return plan_t<__nv_bfloat16, SplitKind::none>(r, p, ctx);
    return plan_t<__half, SplitKind::none>(r, p, ctx);
}

}  // namespace cs::gpu::variants::hopper
