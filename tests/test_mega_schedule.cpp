// The chain megakernel's work split (kernels/chain/mega_schedule.hpp), walked on the host as
// every CTA of the grid walks it: each tile's K steps run exactly once, a split layer's units fit
// in one wave (its parts wait for each other, so they must all be resident), no part is empty,
// and every part finishes a row range of its tile that together cover the tile once.
#include "catch.hpp"

#include "mega_schedule.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

using cs::gpu::mega::GemmSplit;
using cs::gpu::mega::kMinSplitSteps;
using cs::gpu::mega::kStepK;
using cs::gpu::mega::kTileM;
using cs::gpu::mega::kTileP;
using cs::gpu::mega::plan_split;
using cs::gpu::mega::Unit;

namespace {

struct Shape {
    long long P;
    int M, K;
};

// Walks the split as the kernel does (CTA b: units b, b + grid, ...) and checks coverage.
void walk(const GemmSplit& s, int grid) {
    std::map<std::pair<int, int>, std::vector<int>> steps;  // (tile_p, tile_m) -> K steps run
    std::map<int, int> units_of_cta;
    for (int b = 0; b < grid; ++b)
        for (int u = b; u < s.units(); u += grid) {
            const Unit x = s.unit(u);
            REQUIRE(x.tile_p >= 0);
            REQUIRE(x.tile_p < s.tiles_p);
            REQUIRE(x.tile_m >= 0);
            REQUIRE(x.tile_m < s.tiles_m);
            REQUIRE(x.split < s.splits);
            REQUIRE(x.k1 > x.k0);  // no empty part
            for (int k = x.k0; k < x.k1; ++k) steps[{x.tile_p, x.tile_m}].push_back(k);
            ++units_of_cta[b];
        }
    REQUIRE(int(steps.size()) == s.tiles());
    for (auto& [tile, ks] : steps) {
        INFO("tile " << tile.first << "," << tile.second);
        REQUIRE(int(ks.size()) == s.ksteps);
        REQUIRE(int(std::set<int>(ks.begin(), ks.end()).size()) == s.ksteps);
    }
    if (s.splits > 1) {
        // all parts resident at once: one unit a CTA
        REQUIRE(s.units() <= grid);
        for (const auto& [b, n] : units_of_cta) REQUIRE(n == 1);
        // the finishing rows: part r takes [kTileP r / splits, kTileP (r + 1) / splits)
        std::vector<int> rows(kTileP, 0);
        for (int r = 0; r < s.splits; ++r)
            for (int i = kTileP * r / s.splits; i < kTileP * (r + 1) / s.splits; ++i) ++rows[std::size_t(i)];
        for (const int n : rows) REQUIRE(n == 1);
    }
}

}  // namespace

TEST_CASE("the megakernel's split covers every tile's K steps once, in one wave when split", "[mega][cpu]") {
    // AlexNet at N=1 (conv1 as its space-to-depth rewrite: K = 3*3*48), N=2, and odd shapes
    const std::vector<Shape> shapes{{3025, 96, 432},   {729, 256, 2400},  {169, 384, 2304}, {169, 384, 3456},
                                    {169, 256, 3456},  {6050, 96, 432},   {338, 256, 3456}, {361, 5, 75},
                                    {64, 7, 125},      {64, 9, 63},       {1, 1, 1},        {9, 3, 4097},
                                    {100000, 64, 64}};
    for (const int grid : {1, 7, 132, 264, 528})
        for (const Shape& sh : shapes) {
            INFO("P=" << sh.P << " M=" << sh.M << " K=" << sh.K << " grid=" << grid);
            const GemmSplit s = plan_split(sh.P, sh.M, sh.K, grid);
            CHECK(s.tiles_p == int((sh.P + kTileP - 1) / kTileP));
            CHECK(s.tiles_m == (sh.M + kTileM - 1) / kTileM);
            CHECK(s.ksteps == (sh.K + kStepK - 1) / kStepK);
            REQUIRE(s.splits >= 1);
            if (s.splits > 1) CHECK(s.ksteps / s.splits >= kMinSplitSteps);
            walk(s, grid);
        }
}

TEST_CASE("the megakernel splits AlexNet's small layers at N=1 to fill the grid", "[mega][cpu]") {
    // conv5 at N=1 on 132 SMs x 2 CTAs: 3 x 4 tiles, 108 K steps: as many parts as the grid
    // holds (264 / 12) or the depth allows (108 / kMinSplitSteps), whichever is fewer
    const GemmSplit conv5 = plan_split(169, 256, 3456, 264);
    CHECK(conv5.tiles() == 12);
    CHECK(conv5.splits == std::min(264 / 12, 108 / kMinSplitSteps));
    CHECK(conv5.units() <= 264);
    // conv2 at N=1: 48 tiles, 75 K steps -> 5 parts (264 / 48: the grid bounds it)
    CHECK(plan_split(729, 256, 2400, 264).splits == 5);
    // conv1 at N=128 has far more tiles than CTAs: no split, the CTAs walk the tiles
    CHECK(plan_split(128LL * 55 * 55, 96, 432, 264).splits == 1);
    // a shallow K is never cut below kMinSplitSteps steps a part
    CHECK(plan_split(64, 64, (2 * kMinSplitSteps - 1) * kStepK, 264).splits == 1);
    CHECK(plan_split(64, 64, 2 * kMinSplitSteps * kStepK, 264).splits == 2);
}
