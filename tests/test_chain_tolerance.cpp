// The chain thresholds (bench/chain_tolerance.hpp) against their derivation: each precision
// class emulated through a whole chain (reference/chain_emulation.hpp), compared layer by
// layer with the double chain. The regular cases run tests/data/chain_small.json (C=3,
// 37x37, 5/7/9 filters, pools after layers 1 and 3) at N = 1 and 2 and check that the stored
// thresholds hold the rule there; the hidden case "[chain-derivation]" adds AlexNet's chain
// at N = 1 and 2 (about a minute, the half-accumulation emulation being scalar), prints the
// table chain_tolerance.hpp and docs/check.md quote, and checks each stored threshold IS the
// rule's value: max(per-layer threshold, the smallest 1-2-5 step >= 2 x the worst error).
#include "catch.hpp"

#include "chain_emulation.hpp"
#include "chain_tolerance.hpp"
#include "datagen.hpp"
#include "layer.hpp"
#include "network_ref.hpp"
#include "tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using cs::gpu::Precision;
namespace emu = cs::emu;

namespace {

struct ClassEmulation {
    Precision precision;
    emu::ChainEmulation em;
};

// tf32 twice: tensor cores may round fp32 operands to nearest or truncate them.
const ClassEmulation kClasses[] = {
    {Precision::fp32, {"fp32", emu::Operand::f32, emu::Accum::f32, emu::Store::f32}},
    {Precision::tf32, {"tf32", emu::Operand::tf32_rn, emu::Accum::f32, emu::Store::f32}},
    {Precision::tf32, {"tf32 rz", emu::Operand::tf32_rz, emu::Accum::f32, emu::Store::f32}},
    {Precision::fp16, {"fp16", emu::Operand::f16, emu::Accum::f32, emu::Store::f16}},
    {Precision::bf16, {"bf16", emu::Operand::bf16, emu::Accum::f32, emu::Store::bf16}},
    {Precision::fp16acc, {"fp16acc", emu::Operand::f16, emu::Accum::f16, emu::Store::f16}},
};
const Precision kPrecisions[] = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16,
                                 Precision::fp16acc};

cs::LayerTable small_chain() { return cs::load_layer_table(std::string(CS_SOURCE_DIR) + "/tests/data/chain_small.json"); }

// The worst max_rel_err of any layer output, per precision class, over the chains and batches.
struct Worst {
    double value[5] = {0, 0, 0, 0, 0};
    std::string where[5];
    double& of(Precision p) { return value[int(p)]; }
};

void measure(const cs::LayerTable& t, std::int64_t N, Worst& worst, bool print) {
    const cs::ChainData d = cs::make_chain_data(t, N, cs::kDefaultSeed);
    const auto golden = cs::chain_ref<double>(t, d);
    for (const auto& c : kClasses) {
        const auto out = emu::emulate_chain(t, d, c.em);
        if (print) std::printf("  %-8s %-12s N=%lld", c.em.name, t.name.c_str(), static_cast<long long>(N));
        for (std::size_t i = 0; i < t.layers.size(); ++i) {
            const double e = emu::max_rel_err(out[i], golden[i]);
            if (print) std::printf("  %s %.2e", t.layers[i].name.c_str(), e);
            if (e > worst.of(c.precision)) {
                worst.of(c.precision) = e;
                worst.where[int(c.precision)] = std::string(c.em.name) + " " + t.name + " " + t.layers[i].name +
                                                " N=" + std::to_string(N);
            }
        }
        if (print) std::printf("\n");
    }
}

double rule(Precision p, double worst) { return std::max(cs::gpu::threshold(p), cs::gpu::round_up_125(2 * worst)); }

}  // namespace

TEST_CASE("the chain emulation's roundings are the formats' own", "[chain][tolerance]") {
    CHECK(emu::round_half(1.0 + 0x1p-11) == 1.0);                 // tie, to even
    CHECK(emu::round_half(1.0 + 3 * 0x1p-11) == 1.0 + 0x1p-9);    // tie, to even (up)
    CHECK(emu::round_half(1.0 + 0x1p-11 + 0x1p-20) == 1.0 + 0x1p-10);
    CHECK(emu::round_half(0x1p-25 * 3) == 0x1p-24 * 2);           // subnormal 1.5 ulp -> 2 ulp (even)
    CHECK(emu::round_half(-2.0 / 3.0) == -0.66650390625);
    CHECK(emu::round_mantissa(1.0f + 0x1p-11f + 0x1p-15f, 10, false) == 1.0f + 0x1p-10f);
    CHECK(emu::round_mantissa(1.0f + 0x1p-11f + 0x1p-15f, 10, true) == 1.0f);
    CHECK(emu::round_bf16(1.0f + 0x1p-8f) == 1.0f);               // tie, to even
    CHECK(emu::round_bf16(3.14159265f) == 3.140625f);
    CHECK(emu::round_store(emu::Store::f32, 0.1f) == 0.1f);
    CHECK(emu::round_operand(emu::Operand::f16, 0.1f) == float(emu::round_half(0.1f)));
}

TEST_CASE("round_up_125 gives the smallest 1-2-5 step at or above a value", "[chain][tolerance]") {
    CHECK(cs::gpu::round_up_125(4.4e-6) == Approx(5e-6));
    CHECK(cs::gpu::round_up_125(6.6e-3) == Approx(1e-2));
    CHECK(cs::gpu::round_up_125(1.1e-2) == Approx(2e-2));
    CHECK(cs::gpu::round_up_125(2e-3) == Approx(2e-3));
    CHECK(cs::gpu::round_up_125(2.0001e-3) == Approx(5e-3));
    CHECK(cs::gpu::round_up_125(0.3) == Approx(0.5));
    CHECK(cs::gpu::round_up_125(7) == Approx(10));
}

TEST_CASE("the chain thresholds hold the emulated small chain with the rule's margin", "[chain][tolerance]") {
    const auto t = small_chain();
    Worst worst;
    for (const std::int64_t N : {1, 2}) measure(t, N, worst, false);
    for (const Precision p : kPrecisions) {
        INFO(cs::gpu::to_string(p) << ": worst " << worst.of(p) << " (" << worst.where[int(p)] << "), chain threshold "
                                   << cs::gpu::chain_threshold(p));
        // At most half of the threshold, and never tighter than a layer alone.
        CHECK(2 * worst.of(p) <= cs::gpu::chain_threshold(p));
        CHECK(rule(p, worst.of(p)) <= cs::gpu::chain_threshold(p));
        CHECK(cs::gpu::chain_threshold(p) >= cs::gpu::threshold(p));
        // The emulation does round: every class but fp32 errs far above float's own.
        if (p != Precision::fp32) CHECK(worst.of(p) > 1e-4);
        CHECK(std::string(cs::gpu::chain_threshold_reason(p)).size() > 20);
    }
}

TEST_CASE("a wrong bias on one channel of the middle layer fails the chain threshold in every class",
          "[chain][tolerance]") {
    // The GPU chain test injects a wrong bias; here the emulated chain of each class gets the
    // bias of c2's channel with the largest |bias| negated, and its c2 output must fail.
    const auto t = small_chain();
    const cs::ChainData d = cs::make_chain_data(t, 1, cs::kDefaultSeed);
    const auto golden = cs::chain_ref<double>(t, d);
    cs::ChainData bad = d;
    auto& b = bad.bias[1];
    const auto at = std::size_t(std::max_element(b.begin(), b.end(), [](float x, float y) {
                                    return std::fabs(x) < std::fabs(y);
                                }) - b.begin());
    b[at] = -b[at];
    for (const auto& c : kClasses) {
        const auto out = emu::emulate_chain(t, bad, c.em);
        INFO(c.em.name << ": c2 max_rel_err " << emu::max_rel_err(out[1], golden[1]));
        CHECK(emu::max_rel_err(out[1], golden[1]) > cs::gpu::chain_threshold(c.precision));
    }
}

TEST_CASE("the chain thresholds are the rule's values on AlexNet's chain", "[.][chain-derivation]") {
    Worst worst;
    std::printf("max_rel_err of each layer output, emulated chain vs double chain:\n");
    for (const std::int64_t N : {1, 2}) {
        measure(cs::default_layer_table(), N, worst, true);
        measure(small_chain(), N, worst, true);
    }
    std::printf("class     worst (where)                         2 x worst  per-layer  rule      stored\n");
    for (const Precision p : kPrecisions) {
        std::printf("%-8s  %.2e (%-28s)  %.2e   %.0e      %.0e     %.0e\n", std::string(cs::gpu::to_string(p)).c_str(),
                    worst.of(p), worst.where[int(p)].c_str(), 2 * worst.of(p), cs::gpu::threshold(p),
                    rule(p, worst.of(p)), cs::gpu::chain_threshold(p));
        INFO(cs::gpu::to_string(p));
        CHECK(cs::gpu::chain_threshold(p) == Approx(rule(p, worst.of(p))).epsilon(1e-9));
    }
}
