// The persistent Hopper kernels' tile schedulers (kernels/hopper/tile_scheduler.cuh), walked
// on the host exactly as every CTA of the grid walks them: each output tile's k-slices are run
// exactly once, whole tiles run all of them, a cut tile's finisher reads exactly the slots its
// contributors write (no slot written twice), and the grid finishes when a finisher waits for
// its contributors (no wait cycle), for data-parallel, split-K (and its fused form: one part per
// CTA, every flag its own), stream-K and split-tail on the
// AlexNet shapes' tile counts and on odd ones.
#include "catch.hpp"

#include "tile_scheduler.cuh"

#include <map>
#include <set>
#include <vector>

using cs::gpu::variants::hopper::kCutFused;
using cs::gpu::variants::hopper::kCutNone;
using cs::gpu::variants::hopper::kCutStreamK;
using cs::gpu::variants::hopper::kCutTail;
using cs::gpu::variants::hopper::Role;
using cs::gpu::variants::hopper::TileSched;
using cs::gpu::variants::hopper::Work;

namespace {

struct Unit {
    int cta;
    Work w;
};

// Every CTA's units, in its order. kCuts = false: the walk of the kernels for data-parallel
// and split-K (no stream-K or split-tail code), which must give the same units there.
template <bool kCuts = true>
std::vector<std::vector<Unit>> walk(const TileSched& s) {
    std::vector<std::vector<Unit>> per(s.grid);
    for (int c = 0; c < s.grid; ++c) {
        TileSched::Cursor cur;
        Work w;
        int guard = 0;
        while (s.template next<kCuts>(c, cur, w)) {
            per[c].push_back({c, w});
            REQUIRE(++guard < 1000000);
        }
    }
    return per;
}

// The walk the kernels run (TileSched::for_each_unit with the scheduler's cut kind: two loops
// per CTA for split-tail and stream-K); it must give next()'s units in next()'s order.
template <int kCut, bool kClK = false>
void walk_kernel_cta(const TileSched& s, int c, std::vector<Unit>& out) {
    s.for_each_unit<kCut, kClK>(c, [&](const Work& w) {
        out.push_back({c, w});
        REQUIRE(out.size() < 1000000);
    });
}
std::vector<std::vector<Unit>> walk_kernel(const TileSched& s) {
    std::vector<std::vector<Unit>> per(s.grid);
    for (int c = 0; c < s.grid; ++c) {
        if (s.mode == TileSched::kSplitKCluster) {
            walk_kernel_cta<kCutNone, true>(s, c, per[c]);
            continue;
        }
        switch (s.cut_kind()) {
            case kCutTail: walk_kernel_cta<kCutTail>(s, c, per[c]); break;
            case kCutStreamK: walk_kernel_cta<kCutStreamK>(s, c, per[c]); break;
            case kCutFused: walk_kernel_cta<kCutFused>(s, c, per[c]); break;
            default: walk_kernel_cta<kCutNone>(s, c, per[c]); break;
        }
    }
    return per;
}

// Two walks give every CTA the same units in the same order (every field of each unit).
void require_same_units(const std::vector<std::vector<Unit>>& got, const std::vector<std::vector<Unit>>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t c = 0; c < want.size(); ++c) {
        REQUIRE(got[c].size() == want[c].size());
        for (std::size_t i = 0; i < want[c].size(); ++i) {
            const Work &a = want[c][i].w, &b = got[c][i].w;
            REQUIRE((a.tile == b.tile && a.k0 == b.k0 && a.k1 == b.k1 && a.part == b.part && a.slot == b.slot &&
                     a.role == b.role));
        }
    }
}

// Runs the grid: a CTA's unit finishes when it is a whole tile, a split part or a
// contributor, or a finisher whose contributor slots are all written; returns false on a
// wait cycle (no CTA can move).
bool runs_to_the_end(const TileSched& s, const std::vector<std::vector<Unit>>& per) {
    std::vector<std::size_t> pos(per.size(), 0);
    std::set<int> written;
    for (;;) {
        bool moved = false, left = false;
        for (std::size_t c = 0; c < per.size(); ++c) {
            if (pos[c] == per[c].size()) continue;
            left = true;
            const Unit& u = per[c][pos[c]];
            if (u.w.role == Role::sk_finish) {
                int first = 0, last = -1;
                s.contributors(u.cta, u.w, first, last);
                bool ready = true;
                for (int x = first; x <= last; ++x) ready = ready && written.count(x) > 0;
                if (!ready) continue;
            }
            if (u.w.role == Role::sk_contrib) written.insert(u.w.slot);
            ++pos[c];
            moved = true;
        }
        if (!left) return true;
        if (!moved) return false;
    }
}

void check(const TileSched& s) {
    INFO(s.describe() << ", grid " << s.grid << ", KT " << s.KT);
    const auto per = walk(s);
    if (s.mode == TileSched::kDataParallel || s.mode == TileSched::kSplitK) require_same_units(walk<false>(s), per);
    // the kernels' walk (for_each_unit of the scheduler's kernel instance) is next()'s
    require_same_units(walk_kernel(s), per);
    std::map<int, std::vector<int>> runs;  // tile -> how often each k-slice ran
    std::map<int, std::set<int>> contrib_slots;
    std::set<int> slots;
    std::vector<Unit> finishers;
    for (const auto& units : per)
        for (const Unit& u : units) {
            const Work& w = u.w;
            REQUIRE(w.tile >= 0);
            REQUIRE(0 <= w.k0);
            REQUIRE(w.k0 < w.k1);
            REQUIRE(w.k1 <= s.KT);
            if (w.tile >= s.ntiles) {  // clusters of two: rank 1's tile past an odd last row
                REQUIRE(s.cluster == 2);
                continue;
            }
            auto& k = runs[w.tile];
            k.resize(s.KT, 0);
            for (int i = w.k0; i < w.k1; ++i) ++k[i];
            if (w.role == Role::whole) REQUIRE((w.k0 == 0 && w.k1 == s.KT));
            if (w.role == Role::sk_finish) {
                REQUIRE(w.k0 == 0);
                finishers.push_back(u);
            }
            if (w.role == Role::sk_contrib) {
                REQUIRE(w.k0 > 0);
                REQUIRE(slots.insert(w.slot).second);  // a slot is written once
                REQUIRE(w.slot < s.slots());
                contrib_slots[w.tile].insert(w.slot);
            }
        }
    REQUIRE(int(runs.size()) == s.ntiles);
    for (const auto& [tile, k] : runs)
        for (int i = 0; i < s.KT; ++i) {
            INFO("tile " << tile << " k-slice " << i);
            REQUIRE(k[i] == 1);
        }
    for (const Unit& f : finishers) {
        int first = 0, last = -1;
        s.contributors(f.cta, f.w, first, last);
        std::set<int> want;
        for (int x = first; x <= last; ++x) want.insert(x);
        INFO("finisher of tile " << f.w.tile);
        REQUIRE(want == contrib_slots[f.w.tile]);
    }
    REQUIRE(runs_to_the_end(s, per));
    // Fused split-K: a part waits for the other parts of its tile, so each CTA runs exactly one
    // unit (all parts resident at once), and a tile's parts are 0 .. ksplit - 1 on distinct
    // flags (unit tile * ksplit + part, below fused_flags()).
    // Cluster split-K: CTA c runs part c % ksplit of tile c / ksplit (its cluster's rank), one
    // unit each, the parts' k-ranges nonempty.
    if (s.mode == TileSched::kSplitKCluster) {
        REQUIRE(s.grid == s.ntiles * s.ksplit);
        for (int c = 0; c < s.grid; ++c) {
            REQUIRE(per[c].size() == 1);
            const Work& w = per[c][0].w;
            REQUIRE(w.role == Role::split_cluster);
            REQUIRE(w.tile == c / s.ksplit);
            REQUIRE(w.part == c % s.ksplit);
        }
    }
    if (s.mode == TileSched::kSplitKFused) {
        std::set<int> flags;
        for (const auto& units : per) {
            REQUIRE(units.size() == 1);
            const Work& w = units[0].w;
            REQUIRE(w.role == Role::split_fused);
            REQUIRE((0 <= w.part && w.part < s.ksplit));
            REQUIRE(flags.insert(w.tile * s.ksplit + w.part).second);
            REQUIRE(w.tile * s.ksplit + w.part < s.fused_flags());
        }
        REQUIRE(int(flags.size()) == s.ntiles * s.ksplit);
        REQUIRE(s.cuts());
    }
    // A cluster's two CTAs (2c, 2c + 1) walk the same k-slices of a pair of tiles: the same
    // filters on adjacent rows, or (mc_a) the same row on adjacent filter tiles.
    if (s.cluster == 2)
        for (int c = 0; c + 1 < s.grid; c += 2) {
            REQUIRE(per[c].size() == per[c + 1].size());
            for (std::size_t i = 0; i < per[c].size(); ++i) {
                const Work &a = per[c][i].w, &b = per[c + 1][i].w;
                REQUIRE((a.k0 == b.k0 && a.k1 == b.k1));
                if (s.mc_a)
                    REQUIRE((b.tile == a.tile + 1 && a.tile % 2 == 0));
                else
                    REQUIRE(b.tile == a.tile + s.tiles_n);
            }
        }
}

}  // namespace

TEST_CASE("tile schedulers: every k-slice of every tile once, slots matched, no wait cycle", "[sched]") {
    // (tiles, tiles_n, KT): AlexNet conv2-5 at N=1/32/128 with 128x128 / 128x256 tiles, and odd
    for (auto [nt, tn, kt] : std::vector<std::array<int, 3>>{{338, 2, 54},
                                                           {86, 2, 54},
                                                           {4, 2, 54},
                                                           {507, 3, 36},
                                                           {729, 1, 75},
                                                           {14, 2, 36},
                                                           {400, 2, 9},
                                                           {133, 1, 7},
                                                           {1, 1, 5},
                                                           {263, 1, 64}}) {
        for (int sms : {132, 114, 7}) {
            check(TileSched::data_parallel(nt, tn, kt, sms));
            for (int d : {2, 3})
                if (kt % d == 0) check(TileSched::data_parallel(nt, tn, kt, sms, d));
            if (sms % 2 == 0) {
                check(TileSched::data_parallel(nt, tn, kt, sms, 1, 2));
                // along the filters: tiles_n padded even (a phantom tile past M)
                const int tn2 = tn + tn % 2, nt2 = nt / tn * tn2;
                check(TileSched::data_parallel(nt2, tn2, kt, sms, 1, 2, 1));
                if (kt % 3 == 0) check(TileSched::data_parallel(nt2, tn2, kt, sms, 3, 2, 1));
            }
            // fused split-K where every part gets its own CTA
            for (int d : {2, 3, 9})
                if (kt % d == 0 && nt * d <= sms) check(TileSched::split_k_fused(nt, tn, kt, sms, d));
            // cluster split-K (one cluster of k CTAs per tile) where k <= KT
            for (int k : {2, 5, 8})
                if (k <= kt && nt * k <= 4 * sms) check(TileSched::split_k_cluster(nt, tn, kt, k));
            check(TileSched::stream_k(nt, tn, kt, sms));
            check(TileSched::split_tail(nt, tn, kt, sms, 4));
        }
    }
}

TEST_CASE("split-tail: the parts per tile of the last wave", "[sched]") {
    // The parts take one round of the grid: ResNet's l4_3x3 fp16 at N=128 (196 tiles of 128x128,
    // 72 k-slices) on 132 SMs: one whole wave, the last 64 tiles in 2 parts (128 units)
    auto s = TileSched::split_tail(196, 4, 72, 132, 4);
    CHECK(s.tiles_dp == 132);
    CHECK(s.tail_q == 2);
    CHECK(s.grid == 132);
    CHECK(s.slots() == 128);
    // conv5 fp16 N=128 (338 tiles, 54 k-slices): 2 whole waves, then 74 tiles, which two parts
    // each would spread over two rounds: whole (3 parts over 2 rounds measured 1.11x, results/
    // h200/networks/split_tail_rounds_alexnet.csv.gz); so conv5 at N=32 (86 tiles)
    s = TileSched::split_tail(338, 2, 54, 132, 4);
    CHECK(s.tiles_dp == 264);
    CHECK(s.tail_q == 1);
    CHECK(s.slots() == 0);
    s = TileSched::split_tail(86, 2, 54, 132, 4);
    CHECK(s.tiles_dp == 0);
    CHECK(s.tail_q == 1);
    // ResNet's l4_1x1a at N=32 (52 tiles, 16 k-slices): 2 parts, 104 units in one round
    s = TileSched::split_tail(52, 4, 16, 132, 4);
    CHECK(s.tail_q == 2);
    CHECK(s.grid == 104);
    // whole waves only: nothing cut, no slots
    s = TileSched::split_tail(264, 2, 54, 132, 4);
    CHECK(s.tail_q == 1);
    CHECK(s.slots() == 0);
    // few k-slices: parts of at least 4 slices
    s = TileSched::split_tail(10, 1, 9, 132, 4);
    CHECK(s.tail_q == 2);
    CHECK(s.grid == 20);
    // at most kMaxTailParts parts
    s = TileSched::split_tail(1, 1, 1000, 132, 4);
    CHECK(s.tail_q == TileSched::kMaxTailParts);
    CHECK(s.describe().find("in 8 k-parts each") != std::string::npos);
}

TEST_CASE("stream-K: the walk in 32 bits, and the tiles whole where it would overflow", "[sched]") {
    // conv5 fp16 N=128 on 132 SMs (338 tiles of 128x128, 54 k-slices): one whole wave, then
    // 206 tiles' k-slices in 132 ranges; every product of the walk (sk_iters x grid) fits in 32 bits
    auto s = TileSched::stream_k(338, 2, 54, 132);
    CHECK(s.mode == TileSched::kStreamK);
    CHECK(s.tiles_dp == 132);
    CHECK(s.sk_iters == 206 * 54);
    CHECK((long long)s.sk_iters * s.grid < TileSched::kWalkLimit);
    CHECK(s.sk_begin(s.grid) == s.sk_iters);
    CHECK(s.sk_owner(s.sk_iters - 1) == s.grid - 1);
    // a tile of 10^6 k-slices: 133 tiles on 132 SMs would take sk_iters x grid past 2^31, so
    // the tiles run whole (data-parallel) rather than with a walk that overflows
    s = TileSched::stream_k(133, 1, 1000000, 132);
    CHECK(s.mode == TileSched::kDataParallel);
    CHECK(s.describe() == "data-parallel");
    // just under the limit: stream-K, and the walk covers every slice once
    s = TileSched::stream_k(133, 1, 120000, 132);  // 133 x 120000 x 132 = 2.107e9
    CHECK(s.mode == TileSched::kStreamK);
    CHECK((long long)s.sk_iters * s.grid < TileSched::kWalkLimit);
    check(s);
}

TEST_CASE("split-K's part count and auto's choice of the cluster sum on AlexNet at N=1", "[sched]") {
    // 132 SMs, 128 x 128 tiles, at least 4 k-slices a part. conv2 fp16 (12 tiles, 75 k-slices
    // of 32 channels): the reduction kernel's 5 parts of 15 slices against the cluster's 8 of
    // at most 10: the cluster sum.
    CHECK(TileSched::split_parts(12, 75, 132, false, 4) == 5);
    CHECK(TileSched::prefer_cluster_split(12, 75, 5, 132, false));
    // conv3 fp16 (6 tiles, 36 slices): 9 parts of 4 against 8 of at most 5: cluster.
    CHECK(TileSched::split_parts(6, 36, 132, false, 4) == 9);
    CHECK(TileSched::prefer_cluster_split(6, 36, 9, 132, false));
    // conv3 tf32 (72 slices of 32 floats): 18 parts of 4 against 8 of 9: 5 slices more, the
    // bound's side measured faster in the cluster form.
    CHECK(TileSched::split_parts(6, 72, 132, false, 4) == 18);
    CHECK(TileSched::prefer_cluster_split(6, 72, 18, 132, false));
    // conv4 tf32 (6 tiles, 108 slices): 18 parts of 6 against 8 of 14: 8 more, the reduction
    // kernel in NHWC; NCHW output takes the cluster sum.
    CHECK(TileSched::split_parts(6, 108, 132, false, 4) == 18);
    CHECK_FALSE(TileSched::prefer_cluster_split(6, 108, 18, 132, false));
    CHECK(TileSched::prefer_cluster_split(6, 108, 18, 132, true));
    // conv5 3xFP16 (4 tiles, 162 slices): 27 parts of 6 against 8 of 21: the reduction kernel.
    CHECK(TileSched::split_parts(4, 162, 132, false, 4) == 27);
    CHECK_FALSE(TileSched::prefer_cluster_split(4, 162, 27, 132, false));
    // clusters past one wave (24 tiles x 8 parts > 132 SMs), or no split at all: never.
    CHECK_FALSE(TileSched::prefer_cluster_split(24, 18, 3, 132, true));
    CHECK_FALSE(TileSched::prefer_cluster_split(6, 36, 1, 132, true));
    // 16 clusters of 8 divide into 132 SMs, but only 15 fit at once (cluster_fit: the GPCs'
    // remainders): ResNet's l4_1x1a_b1 at N=1 (16 tiles of 64 x 128, 16 k-slices) takes the
    // reduction kernel; 15 tiles would take the cluster.
    CHECK(TileSched::cluster_fit(132, 8) == 15);
    CHECK(TileSched::cluster_fit(132, 16) == 7);
    CHECK(TileSched::cluster_fit(132, 2) == 66);
    CHECK(TileSched::cluster_fit(8, 8) == 1);  // at least one
    CHECK_FALSE(TileSched::prefer_cluster_split(16, 16, 4, 132, false));
    CHECK(TileSched::prefer_cluster_split(15, 16, 4, 132, false));
    // the tiles alone fill the grid: no split unforced; forced, the smallest divisor past 1.
    CHECK(TileSched::split_parts(129, 54, 132, false, 4) == 1);
    CHECK(TileSched::split_parts(129, 54, 132, true, 4) == 2);
}

TEST_CASE("scheduler=auto's k-split: the plan's and the cost model's one rule", "[sched]") {
    // auto_split composes the two rules above as the persistent plan and the cost model both take
    // them: conv2 fp16 at N=1 sums through the cluster where the plan can run one; a 256-pixel
    // tile, or another schedule (cluster_ok false), keeps the reduction kernel's 5 parts.
    const auto a = TileSched::auto_split(12, 75, 132, true, false);
    CHECK(a.cluster);
    CHECK(a.parts == TileSched::kPortableClusterParts);
    const auto b = TileSched::auto_split(12, 75, 132, false, false);
    CHECK_FALSE(b.cluster);
    CHECK(b.parts == 5);
    // conv4 tf32: the reduction kernel in NHWC, the cluster in NCHW
    CHECK_FALSE(TileSched::auto_split(6, 108, 132, true, false).cluster);
    CHECK(TileSched::auto_split(6, 108, 132, true, true).cluster);
    // 2 tiles of 12 k-slices: 3 parts of 4 for the reduction kernel, 8 (at most 2 slices each)
    // for the cluster
    CHECK(TileSched::auto_split(2, 12, 132, false, true).parts == 3);
    const auto c = TileSched::auto_split(2, 12, 132, true, true);
    CHECK(c.cluster);
    CHECK(c.parts == 8);
    // the tiles fill the grid: no split, whatever cluster_ok says
    const auto d = TileSched::auto_split(129, 54, 132, true, true);
    CHECK(d.parts == 1);
    CHECK_FALSE(d.cluster);
}
