// The Hopper family's measured tile table (gpu/variants/hopper/tuned_tiles.hpp): what the plan
// takes for the AlexNet shapes from the committed tile sweeps, how far a measurement reaches in
// N, and that every entry names a tile the persistent kernel has.
#include "catch.hpp"

#include "../gpu/variants/hopper/tuned_tiles.hpp"

#include <string>

using namespace cs::gpu;
using namespace cs::gpu::variants::hopper;

namespace {
const ConvShape kConv3{256, 13, 13, 384, 3, 3, 1, 1, 13, 13};
const ConvShape kConv2{96, 27, 27, 256, 5, 5, 1, 2, 27, 27};
std::string name_of(int tile) { return tile < 0 ? std::string("none") : tile_name(tile); }
}  // namespace

TEST_CASE("every tuned entry names a tile of the table", "[hopper][tiles]") {
    for (int i = 0; i < kNumTuned; ++i) {
        INFO(kTuned[i].policies << " N=" << kTuned[i].N << " " << kTuned[i].tile);
        CHECK(tile_index(kTuned[i].tile) >= 0);
    }
}

TEST_CASE("N=1 takes the 64-pixel tile the N=1 sweep measured, N=32 and up their own", "[hopper][tiles]") {
    // plots/h200/hopper_tiles_n1.csv: the 64-pixel tile fastest on conv3 at N=1 (both rungs' policies)
    CHECK(name_of(tuned_tile("cooperative/tma-store", 2, kConv3, false, 1)) == "m64n128k128B-s8");
    CHECK(name_of(tuned_tile("cooperative/direct", 2, kConv3, false, 1)) == "m64n128k128B-s8");
    CHECK(name_of(tuned_tile("cooperative/direct", 4, kConv3, false, 1)) == "m64n128k128B-s8");
    // N=2..4 are within reach of the N=1 entry
    CHECK(name_of(tuned_tile("cooperative/tma-store", 2, kConv3, false, 4)) == "m64n128k128B-s8");
    // the N=32 and N=128 entries of the same key stand for their own batches
    CHECK(name_of(tuned_tile("cooperative/tma-store", 2, kConv3, false, 32)) == "m128n128k128B-s6");
    CHECK(name_of(tuned_tile("cooperative/tma-store", 2, kConv3, false, 128)) == "m256n128k128B-s4");
    // N=8 is 8x from N=1 and 4x from N=32: the N=32 entry
    CHECK(name_of(tuned_tile("cooperative/tma-store", 2, kConv3, false, 8)) == "m128n128k128B-s6");
    // conv2 keeps a 128-pixel tile at N=1 in fp16
    CHECK(name_of(tuned_tile("cooperative/tma-store", 2, kConv2, false, 1)) == "m128n128k64B-s8");
}

TEST_CASE("a measurement does not stand for batches past its reach, nor for other policies", "[hopper][tiles]") {
    // hopper-ws's policies were measured at N=1 only: N=32 and 128 take the rule (-1 here)
    CHECK(tuned_tile("cooperative/direct", 2, kConv3, false, 32) == -1);
    CHECK(tuned_tile("cooperative/direct", 2, kConv3, false, 128) == -1);
    // the fp32-class splits have a key of their own, never measured
    CHECK(tuned_tile("cooperative/direct/3xtf32", 4, kConv3, false, 1) == -1);
    CHECK(tuned_tile("cooperative/direct/3xfp16", 2, kConv3, false, 1) == -1);
    // a shape no sweep measured
    const ConvShape odd{7, 9, 11, 20, 3, 3, 1, 1, 9, 11};
    CHECK(tuned_tile("cooperative/tma-store", 2, odd, false, 1) == -1);
}

TEST_CASE("the layout breaks a tie in N only", "[hopper][tiles]") {
    // conv3 fp16 direct at N=1: NCHW measured m64n128k64B-s8 fastest, NHWC m64n128k128B-s8
    CHECK(name_of(tuned_tile("cooperative/direct", 2, kConv3, true, 1)) == "m64n128k64B-s8");
    CHECK(name_of(tuned_tile("cooperative/direct", 2, kConv3, false, 1)) == "m64n128k128B-s8");
}
