// The halo mainloop's range (kernels/hopper/halo_conv.cu, hopper-halo-{fp16,bf16}),
// checked without a GPU through the registry rows' supports() on an sm_90 device description:
// conv1 runs in both layouts and both classes; every other AlexNet layer and every shape past
// one of the rung's limits is refused with a reason that names the limit; a GPU other than
// sm_90 is refused; there is no tf32 row (its resident weights would not fit).
#include "catch.hpp"
#include "layer.hpp"
#include "test_util.hpp"
#include "variant.hpp"

#include <optional>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::hopper_prop;
using cs::test::make_layer;

namespace {

std::optional<std::string> why(const char* variant, const Layer& l, Layout layout, std::int64_t N = 128,
                               const cudaDeviceProp& prop = hopper_prop()) {
    const Variant* v = find_variant(variant).variant;
    REQUIRE(v != nullptr);
    Problem p;
    p.layer = l;
    p.N = N;
    p.layout = layout;
    return v->supports(p, prop);
}

bool says(const std::optional<std::string>& r, const std::string& part) {
    return r && r->find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("hopper-halo runs conv1 in both layouts and classes, and no other AlexNet layer", "[hopper][halo]") {
    const LayerTable& t = default_layer_table();
    for (const char* v : {"hopper-halo-fp16", "hopper-halo-bf16"})
        for (Layout lay : {Layout::nhwc, Layout::nchw})
            for (const Layer& l : t.layers) {
                INFO(v << " " << l.name << " " << to_string(lay));
                const auto r = why(v, l, lay);
                if (l.name == "conv1") {
                    CHECK(!r);
                } else {
                    // conv2-5: C % 8 == 0 and padding, so no transform makes an unpadded input
                    CHECK(says(r, "unpadded stride-1 input"));
                    CHECK(says(r, "pad " + std::to_string(l.pad)));
                }
            }
    CHECK(find_variant("hopper-halo-tf32").variant == nullptr);
}

TEST_CASE("hopper-halo names the limit a shape exceeds", "[hopper][halo]") {
    // Within the range: the GPU tests' strided odd shapes (2 and 6 planes, 3x2 and 3x3 taps).
    CHECK(!why("hopper-halo-fp16", make_layer("odd_c3_s2", 3, 19, 23, 5, 5, 3, 2, 1), Layout::nhwc, 3));
    CHECK(!why("hopper-halo-bf16", make_layer("odd_s4_c3", 3, 35, 31, 7, 11, 11, 4, 0), Layout::nchw, 3));
    // 11x11 at stride 2: 6x6 taps after space-to-depth
    CHECK(says(why("hopper-halo-fp16", make_layer("s2_11x11", 3, 64, 64, 16, 11, 11, 2, 0), Layout::nhwc),
               "at most 9 filter taps"));
    // C=5 at stride 4: C' = 80 channels
    CHECK(says(why("hopper-halo-fp16", make_layer("c5_s4", 5, 64, 64, 16, 11, 11, 4, 0), Layout::nhwc),
               "16 to 48 transformed channels in steps of 16; C'=80"));
    // 128 filters: more than the one resident filter tile
    CHECK(says(why("hopper-halo-fp16", make_layer("m128", 3, 227, 227, 128, 11, 11, 4, 0), Layout::nhwc),
               "M <= 96, not 128"));
    // 600 columns: W' = 150, the halo of a 256-row tile needs 2 x 150 + 2 rows more
    CHECK(says(why("hopper-halo-fp16", make_layer("wide", 3, 40, 600, 16, 11, 11, 4, 0), Layout::nhwc),
               "this layer needs 302"));
    // stride 1, C % 8 != 0 but padded: the channel-padding transform keeps the padding
    CHECK(says(why("hopper-halo-fp16", make_layer("odd_c7_p1", 7, 9, 9, 4, 3, 3, 1, 1), Layout::nhwc),
               "unpadded stride-1 input"));
    // stride 1, C = 2, no padding: C' = 8, one plane (a k-step needs two)
    CHECK(says(why("hopper-halo-fp16", make_layer("odd_tile2", 2, 40, 37, 3, 4, 4, 1, 0), Layout::nhwc), "C'=8"));
}

TEST_CASE("hopper-halo refuses a GPU other than sm_90", "[hopper][halo]") {
    cudaDeviceProp ampere = hopper_prop();
    ampere.major = 8;
    const LayerTable& t = default_layer_table();
    CHECK(says(why("hopper-halo-fp16", *t.find("conv1"), Layout::nhwc, 128, ampere), "needs sm_90"));
}

TEST_CASE("hopper-halo has a schedule axis: auto, cooperative and ping-pong", "[hopper][halo]") {
    const Variant* v = find_variant("hopper-halo-fp16").variant;
    REQUIRE(v != nullptr);
    bool found = false;
    for (const Axis& a : v->axes)
        if (a.name == "schedule") {
            found = true;
            CHECK(a.values == std::vector<std::string>{"auto", "cooperative", "pingpong"});
        }
    CHECK(found);
}
