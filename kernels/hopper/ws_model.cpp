// The Hopper rungs' cost model (the persistent rungs and rung 1): ws_model.hpp says what it
// prices and how.
#include "ws_model.hpp"

#include "geometry.hpp"
#include "rowhalo_shape.hpp"
#include "tile_scheduler.cuh"
#include "tiles.hpp"
#include "ws_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <string>

namespace cs::gpu::variants::hopper {
namespace {

// sm_90's rates, as the model prices them (architectural: no layer's shape).
// The SM clock under a sustained MMA load (H100/H200 SXM boost 1.98 GHz, lower under load).
constexpr double kClockHz = 1.755e9;
// A grid of fewer CTAs than SMs (one partial wave) leaves SMs idle all its time, so the timed
// loop's power stays under the cap and the clock rises: dynamic power goes as the clock cubed,
// so the busy SMs' MMAs run (SMs / CTAs)^(1/3) faster, up to the tensor core's rate per clock
// (4096 dense 2-byte FLOPs an SM) over the sustained one above. On ResNet's one-wave layers at
// N=32 (results/h200/networks/sk_l2_profile.csv.gz: 52 and 98 CTAs of m128n128, tf32 and fp16)
// data-parallel's k-slices took 470-540 clocks at kClockHz against 630 for their MMAs as priced.
constexpr double kMmaPeakFlopsPerClk2B = 4096;
constexpr double kPowerLawExponent = 1.0 / 3.0;
// Dense wgmma FLOPs per SM and clock on 2-byte operands, sustained: cuBLAS's large-GEMM rate as
// the H200's ceilings measure it (the CSV's peak_tflops), over its SMs at kClockHz; 4-byte (tf32)
// operands run half.
constexpr double kMmaFlopsPerClk2B = 3330;
constexpr int kTwoByte = 2;
// The cp.async loader's k-slice: 128 bytes of K a row (wgmma_cpasync.cu).
constexpr int kCpAsyncRowBytes = 128;
// The fp32-class splits' channel blocks (hi, lo and hi again: geometry.hpp's parts).
constexpr int kSplitParts = 3;
// Bytes per SM and clock that TMA brings from L2 into shared memory: by tiled loads (the weights'
// B tiles, partial tiles), and by the im2col loads of the A operand, which walk the input a
// pixel at a time and run slower. The im2col rate is fitted to the committed network rows
// (tests/test_auto_choice.cpp): swept from 64 (the tiled rate) down, the network rows' error
// falls (median 1.088 to 1.079, p90 1.227 to 1.221, max 1.737 to 1.706) with the same-process
// pairs no worse and the N=1 grid better. At 50 the error falls further, but the H200 then
// measured VGG's conv1_2 in tf32 on the m256n96 tile the model took there 1.2x slower than on
// m128n64 (results/h200/networks/heuristic_vgg16_n32.csv.gz, d4cd286): n96 tiles are priced
// under their time (a fifth, on the committed rows), so 56, where it keeps m128n64. The rows it
// moves are 64-filter tiles L2-bound on A (ResNet's l1_3x3: the row-halo mainloop is then
// priced ahead at N=128) and the stream-K rows of ResNet's last 3x3 layers at N=32.
constexpr double kL2BytesPerClk = 64;
constexpr double kIm2colBytesPerClk = 56;
// The same loads where the SMs at the same moment fetch unrelated A rows and B slices: stream-K's
// cut tiles, whose CTAs start at any k-slice. Under Nsight Compute (results/h200/networks/
// sk_l2_profile.csv.gz: ResNet's l4_proj, l4_1x1a and l3_3x3 at N=32 on one tile, tf32 and fp16)
// stream-K's L2 sectors were 1.5-1.75x data-parallel's for the same k-slices at about the same L2
// throughput, its tensor pipe busy 40-53% against 70-83%: data-parallel's neighbours, walking k
// together, share their fetches, which the rates above were fitted on. Fitted with the clock
// above to those six groups (the model now takes each group's fastest scheduler; it took
// stream-K, up to 1.38x the fastest, on two) and to the committed checks (tests/
// test_auto_choice.cpp: the network rows' error falls, median 1.079 to 1.070, p90 1.221 to 1.198).
constexpr double kScatteredL2BytesPerClk = 48;
// The pipeline's handshake per k-slice (the full and empty barriers, the consumers' wait).
constexpr double kSliceSyncClk = 60;
// A cluster's k-slice: a multicast load refills a stage only once both CTAs' consumers have freed
// it (the empty barrier counts the peer's through a remote arrive), which couples the pair at
// every slice. Fitted to the same-process pairs of tuned and heuristic rows on the networks
// (tests/test_auto_choice.cpp), where the multicast rungs were the model's most frequent wrong
// choice: the smallest value where the pairs' loss stops falling; AlexNet's regret unchanged.
constexpr double kClusterSliceClk = 120;
// A stream-K fix-up's handshake beyond its bytes: the contributor's release (a fence, then its
// flag) and the finisher's acquire poll, each a round trip through L2, which split-tail's parts,
// finishing together, overlap and stream-K's ranges, cut at any k-slice, do not. Fitted to the
// same-process pairs of the networks (tests/test_auto_choice.cpp), where stream-K was then the
// model's most frequent wrong choice (tiles fewer than the SMs, every tile cut): swept from 1000 to
// 4000, the value that leaves every other check of the model as it was (from 1500 the network
// rows' error grows, from 2500 AlexNet's regret).
constexpr double kStreamKFixupClk = 1000;
// A work unit's start: accumulators cleared, the scheduler's next unit, its first slice's wait.
constexpr double kUnitClk = 250;
// The epilogue's writes per SM and clock, from registers (the direct store: each thread's
// fragments, strided) or as TMA bulk stores from shared memory; and its fixed part (fences, the
// store's issue).
constexpr double kDirectStoreBytesPerClk = 12;
constexpr double kTmaStoreBytesPerClk = 32;
constexpr double kEpilogueClk = 300;
// One kernel launch on a stream as event timing sees it (a dependent kernel's gap and tail), and
// a persistent CTA's prologue: its fixed part (barriers, the tensor maps' fetch) and the ring's
// first loads, which all the grid's CTAs issue at once, paid in full by a grid on every SM and
// by a share of the SMs' (the grid's CTAs over them) where it leaves SMs idle. The launch and
// the sum of the two were fitted to the committed H200 measurements of the persistent rungs at
// N=1 and 32; the split to ResNet's 1x1 layers at N=1 (results/h200/networks/
// n1_small_tiles.csv.gz), where a grid of 8-100 CTAs had been priced 1.2-1.47x its time and
// rung 1 taken over faster persistent grids: of the splits that keep every other check of the
// model within its bound (tests/test_auto_choice.cpp), the even one fits that grid best.
constexpr double kLaunchUs = 4;
constexpr double kPrologueUs = 2;
constexpr double kPrologueFillUs = 2;
// A GEMM launched as its input transform's programmatic dependent (launch=pdl) starts its launch
// and prologue under the transform's tail: what that saved on the committed H200 rows of the
// packed 3-channel layers at N=1 (results/h200/networks/pdl_pack_*.csv.gz: VGG's conv1_1 and
// ResNet's stem, fp16, bf16 and tf32, the median of the six plain - pdl differences). At N=32 it
// saved more on 16-bit rows and lost on the stem in tf32; not priced.
constexpr double kDependentOverlapUs = 1.8;
// Split-K summed inside the kernel (across a cluster, or fused: a part per CTA, each summing its
// share of the tile from the others' partials): the handshake between the parts (two cluster
// barriers, or the flags) and the accumulator bytes a CTA moves per clock (stored, then read back
// by its peers through distributed shared memory or L2): fitted to the committed H200 grid of tile
// schedulers at N=1 (results/h200/networks/n1_schedulers_resnet50.csv.gz), the rate raised to
// where VGG's tf32 grid at N=1 ranks the cluster split first on conv4_2-3
// (results/h200/networks/n1_vgg_tf32.csv.gz) with the regret over the committed grids unchanged.
constexpr double kSplitReduceUs = 1.0;
constexpr double kSplitReduceBytesPerClk = 24;
// The cp.async rung (hopper-wgmma): the bytes per clock its threads' 16-byte copies bring from L2
// into an SM's shared memory, and the copies' latency, which a CTA alone on its SM waits out over
// its prefetch distance (stages - 2 slices in flight): fitted to the committed H200 rows of that
// rung on AlexNet's layers (results/h200/sweep_all_variants.csv.gz).
constexpr double kCpAsyncBytesPerClk = 30;
constexpr double kCpAsyncLatencyClk = 1500;
constexpr int kCpAsyncUnprefetched = 2;  // stages a CTA does not prefetch into (wgmma_cpasync.cu)
// The first wave's CTAs' start (their launch on the SMs, the shared memory's set-up: later waves'
// starts are in kCpAsyncTurnClk), and how much faster the copies run where the grid leaves SMs
// idle (the rate above times 1 + gain x the idle share): fitted to ResNet's 1x1 layers at N=1
// (results/h200/networks/n1_small_tiles.csv.gz), where 1-2-slice grids of 25-100 CTAs were priced
// at 0.81-0.84x their time and 8-16-slice grids of 8-14 at 1.1-1.2x; the AlexNet rows' error
// fell with them (geometric mean 1.158 -> 1.141, worst 1.55 -> 1.54).
constexpr double kCpAsyncStartClk = 2000;
constexpr double kCpAsyncIdleGain = 0.5;
// Between waves, an SM's CTA hands over to the next (its exit, the next one's launch and
// prologue), which a co-resident CTA (minb > 1) half hides: fitted to the committed rows of the
// rung on ResNet's stem, whose CTAs run 4 k-slices (results/h200/networks/packprice_resnet50,
// cpasync_stem_n32 and tuned_resnet50_*: m128n64k128B-s8 at 24 and 96 waves, priced a fifth under
// its time without it, within a few percent with it; m128n96k128B-s3-x2 within 10% either way),
// and no worse on AlexNet's rows (tests/test_auto_choice.cpp).
constexpr double kCpAsyncTurnClk = 1800;
// The tap-packing kernel (wgmma_ws.cu's prep_pack_rows_kernel): the elements it writes per SM and
// clock. It gathers R*S*C elements a packed row from short source rows, element by element where
// a row is not whole vectors, at well under the DRAM rate: its written elements over its duration
// on ResNet's stem at N=32 under Nsight Compute (results/h200/networks/packvec_stem_ncu.csv.gz:
// dram__bytes_write / 2 over gpu__time_duration), over 132 SMs at kClockHz. Counted in elements,
// not bytes: 4-byte rows cost what 2-byte ones do (VGG's first layer in tf32 was priced at twice
// its measured time in bytes). Measured at this price on the GPU (wip/pack-price,
// results/h200/networks/packprice_*.csv.gz): the stem left the packed path at half its time.
constexpr double kPackElemsPerClk = 1.87;
// The row-halo mainloop (rowhalo_conv.cu), fitted to its committed H200 rows
// (results/h200/networks/rowhalo_{vgg16,resnet50}.csv.gz, both values of its `operands` axis, and
// rowhalo_tf32_{vgg16,resnet50}.csv.gz):
// - its fill before the first MMA (the weights, R input rows), the whole of what the rows at N=1
//   take beyond their MMAs, a launch and its prologue: as 128-byte swizzled box rows it arrives at
//   the tiled rate (kL2BytesPerClk); as 16-byte planes at about a box row per SM and clock;
// - its prologue (the barriers' set-up, the tensor maps' fetch; its first loads are the fill,
//   priced apart, as a persistent GEMM's kPrologueFillUs prices its ring's first loads);
// - what its wgmmas read from shared memory a clock (the 64 filters' 2 KiB and the row's 32
//   bytes a pixel a k-step, in either element size) sets the pace of a narrow row, where the MMA
//   alone would not (ResNet's l1_3x3, 56-pixel rows, and tf32's 56-pixel segments: about 80
//   bytes a clock from no-swizzle core matrices, 84 from swizzled rows); VGG's 224-pixel rows of
//   2-byte channels stay MMA-bound.
// The prologue and the swizzled rate were fitted together to the 30 rows (24 of 2-byte channels,
// 6 of tf32): with the persistent prologue and 90 bytes a clock, l1_3x3 at N=1 was priced at
// 1.44x (fp16) and 1.55x (tf32) its time; now every row at N=1 within 1.17x and at N=32 and 128
// within 1.15x (tests/test_rowhalo.cpp).
constexpr double kTmaBoxBytesPerClk = 16;
constexpr double kPlainSmemBytesPerClk = 80;
constexpr double kSwizzledSmemBytesPerClk = 84;
constexpr double kRowHaloPrologueUs = 1;
// HBM3 and HBM3e: bytes per second per bit of the memory bus (the H100's and the H200's rated
// bandwidths over their bus widths, between the two); a device that reports no bus width is
// taken as the H100's.
constexpr double kDramBytesPerBusBit = 0.72e9;
constexpr int kDefaultBusBits = 5120;
// fp32 partial sums (split-K, cut tiles).
constexpr int kAccBytes = 4;
constexpr int kClusterPortable = TileSched::kPortableClusterParts;
constexpr int kClusterLarge = TileSched::kMaxClusterParts;
constexpr double kUsPerS = 1e6, kMsPerUs = 1e-3;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A kernel's time us against the DRAM floor: its fixed part (the launch, a persistent CTA's
// prologue) comes before any of the traffic the floor counts, so a GEMM at the floor still pays
// it (the N=32 network rows at the floor were priced at 0.6-0.9 of their time without it).
double above_floor(double us, double fixed_us, double floor_us) {
    return std::max(us, fixed_us + floor_us);
}

// The DRAM side of a GEMM of P rows after the problem's transforms (Setup u): the bus's bytes a
// second, the output's bytes, the transform kernels' time (a launch and their traffic each: the
// input's, the weights') and the compulsory floor (the GEMM's input, transformed where it is
// (the tap packing's is R*S times the source at stride 1), the weights and the output). es: the
// GEMM's operand bytes; src_es: the source tensors'; out_es: the output's.
struct Dram {
    double bus = 0, out_bytes = 0, transforms_us = 0, floor_us = 0;
};
Dram dram(const Setup& u, const Problem& p, std::int64_t P, int es, int src_es, int out_es, const cudaDeviceProp& prop) {
    Dram d;
    d.bus = double(prop.memoryBusWidth > 0 ? prop.memoryBusWidth : kDefaultBusBits) * kDramBytesPerBusBit;
    const double in_bytes = double(p.N) * u.src_img * src_es, w_bytes = double(u.w_elems) * es;
    d.out_bytes = double(P) * u.g.M * out_es;
    // the packing kernel at its own rate where that is below the bus's (u.pack), else the DRAM's
    const double ws_bytes = double(p.N) * u.ws_img * es;
    const double pack_rate = kPackElemsPerClk * es * std::max(1, prop.multiProcessorCount) * kClockHz;
    if (u.tin)
        d.transforms_us +=
            kLaunchUs + std::max((in_bytes + ws_bytes) / d.bus, u.pack ? ws_bytes / pack_rate : 0) * kUsPerS;
    if (u.tw) d.transforms_us += kLaunchUs + (double(u.s.M) * u.s.C * u.s.R * u.s.S * src_es + w_bytes) / d.bus * kUsPerS;
    const double gemm_in = u.tin ? double(p.N) * u.ws_img * es : in_bytes;
    d.floor_us = (gemm_in + w_bytes + d.out_bytes) / d.bus * kUsPerS;
    return d;
}

// The busiest CTA's work under the scheduler the plan resolves: k-slices, units (epilogues) and
// the partial tiles it adds into a cut tile; nothing where the plan would SKIP.
struct Load {
    double slices = 0, units = 0, fixups = 0;
    double scattered = 0;  // of the slices, stream-K's cut ones (their CTAs at unrelated k offsets)
    int ksplit = 1;
    TileScheduler scheduler = TileScheduler::data_parallel;
    double ctas = 0;  // the CTAs the grid runs at once (its first loads start together)
};

std::optional<Load> busiest(TileScheduler sched, std::int64_t tiles, int tiles_n, int kslices, int sms, int cluster,
                            bool mc_a, bool coop_alone, bool nchw, int tile) {
    const std::int64_t units = TileSched::cluster_units(tiles, tiles_n, cluster, mc_a ? 1 : 0);
    const int slots = sms / cluster;
    Load l;
    l.scheduler = sched;
    // K in `parts` parts: the busiest slot's units (a part each; split-K across clusters: a
    // cluster a unit, as many at once as fit, TileSched::cluster_fit) and their k-slices
    auto split_units = [&](int parts, bool across_cluster = false) {
        l.ksplit = parts;
        l.units = double(across_cluster ? ceil_div(units, TileSched::cluster_fit(slots, parts))
                                        : ceil_div(units * parts, slots));
        l.slices = l.units * double(ceil_div(kslices, parts));
        const std::int64_t at_once = across_cluster ? std::int64_t(TileSched::cluster_fit(slots, parts)) * parts
                                                    : std::int64_t(slots);
        l.ctas = double(std::min<std::int64_t>(at_once, units * parts) * cluster);
    };
    switch (sched) {
        case TileScheduler::automatic: {  // the plan's own rule (wgmma_ws.cu's choose_split)
            const AutoSchedule a = auto_schedule(units, kslices, slots, coop_alone, tile, nchw);
            l.scheduler = a.scheduler;
            split_units(a.parts, cluster_split(a.scheduler));
            return l;
        }
        case TileScheduler::data_parallel: split_units(1); return l;
        case TileScheduler::split_k:
        case TileScheduler::split_k_fused: {
            const int parts = TileSched::split_parts(units, kslices, slots, true, TileSched::kMinSlicesPerPart);
            if (parts == 1) return std::nullopt;
            if (sched == TileScheduler::split_k_fused && (!coop_alone || units * parts > slots)) return std::nullopt;
            split_units(parts);
            return l;
        }
        case TileScheduler::split_k_cluster:
        case TileScheduler::split_k_cluster16: {
            const int parts = std::min(sched == TileScheduler::split_k_cluster16 ? kClusterLarge : kClusterPortable, kslices);
            if (!coop_alone || parts < 2) return std::nullopt;
            split_units(parts, true);
            return l;
        }
        case TileScheduler::stream_k: {
            const TileSched s = TileSched::stream_k(int(tiles), tiles_n, kslices, sms);
            const double whole = double(s.tiles_dp) / sms;
            const double cut = double(ceil_div(s.sk_iters, std::max(1, s.grid)));
            // a CTA's range crosses tile boundaries: a unit per tile it touches, and at each
            // boundary a partial tile written by one CTA and added by another; where more CTAs
            // than tiles share the cut, a tile's finisher adds the partials of all its sharers
            const double touched = s.sk_iters > 0 ? double(ceil_div(std::int64_t(cut), kslices)) + 1 : 0;
            const std::int64_t cut_tiles = std::max<std::int64_t>(1, tiles - s.tiles_dp);
            const double sharers = double(ceil_div(s.grid, cut_tiles));
            l.units = whole + touched;
            l.slices = whole * kslices + cut;
            l.scattered = cut;
            l.ctas = s.grid;
            l.fixups = s.sk_iters > 0 ? std::max(0.0, touched - 1) + std::max(0.0, sharers - 1) : 0;
            return l;
        }
        case TileScheduler::split_tail: {
            const TileSched s = TileSched::split_tail(int(tiles), tiles_n, kslices, sms, TileSched::kMinSlicesPerPart);
            const double whole = double(s.tiles_dp) / sms;
            const std::int64_t tail_units = (tiles - s.tiles_dp) * s.tail_q;
            const double tail = double(ceil_div(tail_units, std::max(1, s.grid)));
            l.units = whole + tail;
            l.slices = whole * kslices + tail * double(ceil_div(kslices, s.tail_q));
            l.fixups = s.tail_q > 1 ? s.tail_q : 0;  // the last part adds the others'
            l.ksplit = s.tail_q;
            l.ctas = s.grid;
            return l;
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<Estimate> ws_estimate(const WsPolicy& rung, SplitKind split, DType io, const Problem& p,
                                    const cudaDeviceProp& prop) {
    const WsRequest r = ws_request(rung, split, p.axes);
    const WsPolicy& w = r.policy;
    if (!w.tile.chosen() || w.tile.index >= kNumTiles) return std::nullopt;
    const int ti = w.tile.index;
    const Tile& t = kTiles[ti];
    if (!ws_tile_ok_rt(ti, w.schedule)) return std::nullopt;
    const bool split3 = split != SplitKind::none;
    const int es = split == SplitKind::x3fp16 ? kTwoByte : split3 || io == DType::f32 ? kAccBytes : kTwoByte;
    const int out_es = split3 ? kAccBytes : es;
    const Setup u = make_setup(p, split3 ? kSplitParts : 1, es);  // as the plan (wgmma_ws.cu)
    if (t.kb && u.g.C * es > t.kb) return std::nullopt;
    const int cluster = w.cluster == Cluster::one ? 1 : 2;
    const bool mc_a = w.cluster == Cluster::one_by_two;
    if (cluster > 1 && (t.bm != kBM || cuts_tiles(w.scheduler))) return std::nullopt;
    if (w.launch == Launch::pdl && !u.tin) return std::nullopt;
    const int sms = std::max(1, prop.multiProcessorCount);

    // the GEMM and its tiles
    const int bk = t.rowb / es;
    const std::int64_t P = p.N * std::int64_t(u.g.EF);
    if (P == 0) return std::nullopt;
    const int n_tiles = int(ceil_div(u.g.M, t.bn));
    const int tiles_n = n_tiles + (mc_a ? n_tiles % 2 : 0);
    const std::int64_t tiles = ceil_div(P, t.bm) * tiles_n;
    const int kslices = u.g.R * u.g.S * int(ceil_div(u.g.C, bk));
    const bool coop_alone = w.schedule == Schedule::cooperative && cluster == 1;
    const auto load = busiest(w.scheduler, tiles, tiles_n, kslices, sms, cluster, mc_a, coop_alone, u.src_nchw, ti);
    if (!load) return std::nullopt;

    // one k-slice on one SM: MMAs over the slice's covered bytes, loads of A and B from L2
    const double flops_per_clk = kMmaFlopsPerClk2B * kTwoByte / es;
    // data-parallel in one partial wave: the clock's headroom (kPowerLawExponent)
    const bool one_wave = load->scheduler == TileScheduler::data_parallel && load->ksplit == 1 && cluster == 1 &&
                          tiles < sms;
    const double headroom =
        one_wave ? std::min(kMmaPeakFlopsPerClk2B / kMmaFlopsPerClk2B,
                            std::pow(double(sms) / double(tiles), kPowerLawExponent))
                 : 1.0;
    const double mma = double(t.bm) * t.bn * (t.mma_bytes() / es) * 2 / flops_per_clk / headroom;
    // the prologue: its fixed part, and the ring's first loads, which every CTA of the grid
    // issues at the same moment (a share of the whole's where the grid leaves SMs idle)
    const double prologue_us = kPrologueUs + kPrologueFillUs * std::min(1.0, load->ctas / sms);
    const double a_bytes = double(t.bm) * t.rowb / (mc_a ? 2 : 1);
    const double b_bytes = double(t.bn) * t.rowb / (cluster == 2 && !mc_a ? 2 : 1);
    const double slice = std::max(mma, a_bytes / kIm2colBytesPerClk + b_bytes / kL2BytesPerClk) + kSliceSyncClk +
                         (cluster > 1 ? kClusterSliceClk : 0);
    // stream-K's cut slices: no neighbour loads the same A rows or B slice at the same time
    const double scattered_slice = std::max(mma, (a_bytes + b_bytes) / kScatteredL2BytesPerClk) + kSliceSyncClk;
    // a unit's epilogue: hidden under the next unit's mainloop by the TMA store (where the plan can
    // run it: tma_store_blocker, as the plan asks it) and by ping-pong, all but the last
    const bool split_k = load->scheduler == TileScheduler::split_k || load->scheduler == TileScheduler::split_k_fused;
    const bool cluster_split_k = cluster_split(load->scheduler);
    const bool tma_store = w.epilogue.store == Epilogue::tma_store &&
                           tma_store_blocker(u, out_es, ti, split_k || cluster_split_k).empty();
    // (split-K across a cluster: each part stores its share of the summed tile's rows)
    const double epilogue = kEpilogueClk + double(t.bm) * t.bn * out_es /
                                               (cluster_split_k ? load->ksplit : 1) /
                                               (tma_store ? kTmaStoreBytesPerClk : kDirectStoreBytesPerClk);
    // (only as far as that mainloop lasts: a unit of one or a few k-slices, as a 1x1 layer of
    // few channels or the tap packing gives, leaves the rest of each epilogue exposed)
    const bool hidden = tma_store || w.schedule == Schedule::pingpong;
    const double unit_mainloop = load->units > 0 ? load->slices / load->units * slice : 0;
    const double exposed = std::max(0.0, epilogue - unit_mainloop);
    // (split-K: each unit's fp32 partial tile leaves by the direct store, none hidden)
    const double partial_store = kEpilogueClk + double(t.bm) * t.bn * kAccBytes / kDirectStoreBytesPerClk;
    const double epilogues_clk = split_k  ? load->units * partial_store
                                 : hidden ? epilogue + std::max(0.0, load->units - 1) * exposed
                                          : load->units * epilogue;
    // each partial tile a cut tile's finisher adds: written by its CTA, read back through L2
    const double fixup = load->fixups * (2 * double(t.bm) * t.bn * kAccBytes / kL2BytesPerClk +
                                         (load->scheduler == TileScheduler::stream_k ? kStreamKFixupClk : 0));
    const double gemm_clk = (load->slices - load->scattered) * slice + load->scattered * scattered_slice +
                            load->units * kUnitClk + epilogues_clk + fixup;
    double us = prologue_us + gemm_clk / kClockHz * kUsPerS + kLaunchUs;
    // split-K summed inside the kernel: each unit ends with the parts' reduction; across a
    // cluster a CTA runs one unit, so each wave of them also pays the prologue
    if (cluster_split_k || load->scheduler == TileScheduler::split_k_fused)
        us += load->units * (kSplitReduceUs + double(t.bm) * t.bn * kAccBytes / kSplitReduceBytesPerClk / kClockHz * kUsPerS) +
              (cluster_split_k ? (load->units - 1) * prologue_us : 0);

    // DRAM: the compulsory traffic, the transforms', split-K's partials and reduction kernel
    const int src_es = split3 || io == DType::f32 ? kAccBytes : kTwoByte;
    const Dram d = dram(u, p, P, es, src_es, out_es, prop);
    double extra_us =
        d.transforms_us - (w.launch == Launch::pdl ? std::min(kDependentOverlapUs, d.transforms_us) : 0);
    if (load->scheduler == TileScheduler::split_k)
        extra_us += kLaunchUs + (double(2 * load->ksplit) * double(P) * u.g.M * kAccBytes + d.out_bytes) / d.bus * kUsPerS;
    const double compute_us = us + extra_us;
    us = above_floor(us, prologue_us + kLaunchUs, d.floor_us) + extra_us;

    const std::string how = tile_name(ti) + ", " + std::to_string(tiles) + " tiles, " +
                            std::string(name_of(kTileSchedulerNames, load->scheduler)) + " x" +
                            std::to_string(load->ksplit) + ", busiest CTA " + std::to_string(std::llround(load->slices)) + " k-slices, " +
                            (mma >= (a_bytes + b_bytes) / kL2BytesPerClk ? "MMA" : "L2") + "-bound slices";
    return Estimate{us * kMsPerUs, how, compute_us * kMsPerUs};
}

std::optional<Estimate> cpasync_estimate(DType io, const Problem& p, const cudaDeviceProp& prop) {
    const auto tile = p.axes.id("tile");
    if (!tile || *tile < 0 || *tile >= kNumTiles) return std::nullopt;  // the plan's own rule: not priced
    const Tile& t = kTiles[*tile];
    if (t.rowb != kCpAsyncRowBytes || t.bm != kBM || t.kb) return std::nullopt;  // the plan SKIPs
    const int es = io == DType::f32 ? kAccBytes : kTwoByte;
    const Setup u = make_setup(p);  // as the plan (wgmma_cpasync.cu): channel padding or space-to-depth
    const int sms = std::max(1, prop.multiProcessorCount);
    const std::int64_t P = p.N * std::int64_t(u.g.EF);
    if (P == 0) return std::nullopt;
    // the implicit GEMM: k-slices run across the taps (K = R*S*C padded at its end), one CTA a
    // tile, t.minb CTAs an SM sharing its tensor cores and its copies
    const int bk = t.rowb / es;
    const std::int64_t tiles = ceil_div(P, t.bm) * ceil_div(u.g.M, t.bn);
    const double kslices = double(ceil_div(u.g.K, bk));
    const double per_sm = std::min<double>(t.minb, double(ceil_div(tiles, sms)));  // CTAs at once
    const double waves = double(ceil_div(tiles, std::int64_t(sms) * t.minb));
    const double flops_per_clk = kMmaFlopsPerClk2B * kTwoByte / es;
    const double mma = double(t.bm) * t.bn * bk * 2 / flops_per_clk;
    // (a grid that leaves SMs idle copies faster: less contention for L2)
    const double share = std::min(1.0, double(tiles) / (double(sms) * t.minb));
    const double load = double(t.bm + t.bn) * t.rowb / (kCpAsyncBytesPerClk * (1 + kCpAsyncIdleGain * (1 - share)));
    const double latency = kCpAsyncLatencyClk / std::max(1, t.stages - kCpAsyncUnprefetched);
    const double slice = std::max(per_sm * std::max(mma, load), latency);
    const int out_es = es;
    const double epilogue = kEpilogueClk + double(t.bm) * t.bn * out_es / kDirectStoreBytesPerClk;
    // a wave's CTAs start cold: their first slice's copies wait out the whole latency (nothing
    // before them to hide under), which a CTA of few k-slices (a layer of few channels) pays in
    // full at every wave; and between waves each SM's CTA hands over to the next
    const double wave_clk = kCpAsyncLatencyClk + kslices * slice + per_sm * epilogue;
    double us = (kCpAsyncStartClk + waves * wave_clk + (waves - 1) * kCpAsyncTurnClk / per_sm) / kClockHz * kUsPerS + kLaunchUs;
    // DRAM: the compulsory traffic and the transforms'
    const Dram d = dram(u, p, P, es, es, out_es, prop);
    const double compute_us = us + d.transforms_us;
    us = above_floor(us, kLaunchUs, d.floor_us) + d.transforms_us;
    const std::string how = tile_name(*tile) + ", " + std::to_string(tiles) + " CTAs in " +
                            std::to_string(std::llround(waves)) + " wave(s), " + std::to_string(std::llround(kslices)) +
                            " k-slices each, " + (per_sm * std::max(mma, load) >= latency ? "throughput" : "latency") +
                            "-bound slices";
    return Estimate{us * kMsPerUs, how, compute_us * kMsPerUs};
}

std::optional<Estimate> rowhalo_estimate(DType io, const Problem& p, const cudaDeviceProp& prop) {
    const int es = io == DType::f32 ? kAccBytes : kTwoByte;
    const Setup u = make_setup(p);
    const int kn = rh_width(u.g.F, es), segs = rh_segments(u.g.F, es);
    const std::int64_t P = p.N * std::int64_t(u.g.EF);
    if (kn == 0 || P == 0) return std::nullopt;
    const int sms = std::max(1, prop.multiProcessorCount);
    // bands of output rows (of row segments) as the plan cuts them, a CTA's bands one after
    // another; each row's k-steps are 64 filters x kn pixels at the sustained MMA rate or their
    // operands' reads from shared memory, the slower (the ping-pong's staging under the other
    // warpgroup's MMAs), and only the first band's fill is exposed (the ring runs on)
    const RowBands b = row_bands(int(p.N), u.g.E, sms, segs);
    const int step_k = kRhStepBytes / es;  // a wgmma's K in channels
    const double step_mma = 2.0 * kRhFilters * kn * step_k / (kMmaFlopsPerClk2B * kTwoByte / es);
    const bool swizzled = rh_operands(p.axes.as<RowHaloOperands>("operands")) == RowHaloOperands::swizzled;
    const double step_smem = double(kRhFilters + kn) * step_k * es /
                             (swizzled ? kSwizzledSmemBytesPerClk : kPlainSmemBytesPerClk);
    const double row_clk = double(u.g.K) / step_k * std::max(step_mma, step_smem);
    const double waves = double(ceil_div(b.units, sms));
    const double fill_clk = (double(rh_weight_bytes(es)) + double(kRhR) * rh_slot_bytes(kn, es)) /
                            (swizzled ? kL2BytesPerClk : kTmaBoxBytesPerClk);
    const double fixed_us = kLaunchUs + kRowHaloPrologueUs;
    double us = fixed_us + (fill_clk + waves * b.per_band * row_clk) / kClockHz * kUsPerS;
    const Dram d = dram(u, p, P, es, es, es, prop);
    const double compute_us = us;
    us = above_floor(us, fixed_us, d.floor_us);
    const std::string how = "rows of " + std::to_string(segs) + " x " + std::to_string(kn) + " pixels, bands of " +
                            std::to_string(b.per_band) + " rows on " + std::to_string(b.grid) + " CTAs in " +
                            std::to_string(std::llround(waves)) + " wave(s)";
    return Estimate{us * kMsPerUs, how, compute_us * kMsPerUs};
}

}  // namespace cs::gpu::variants::hopper
