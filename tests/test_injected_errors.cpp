// Does the check catch real bugs in every precision class? On each AlexNet layer (N=1, the
// tool's generator data), every precision class's arithmetic is emulated on the CPU — for
// the correct convolution and for three injected bugs — and the result is put through the
// tool's own check (bench/tolerance.hpp: compare() and passes(), with the golden output and
// its bound B = sum|w*x| exactly as `convstudy generate` makes them):
//   (a) a dropped tap: one (c, r, s) term missing from every output of one output channel
//       (the channel's largest-|w| tap: the largest such error);
//   (b) a wrong output channel: one channel computed with the next channel's filter;
//   (c) padding shifted by one pixel: one channel computed with its window one column to
//       the left (reading x[e*stride + r - pad][f*stride + s - pad - 1]).
// Each bug is injected into one output channel only, the rest of the output being the
// correct emulated result, so the check has to find it among all the others.
// The correct result must PASS, every injected one must FAIL — except the one documented
// limit: under half accumulation (fp16acc) one tap of conv2-5 (K >= 2304, |w| <= 0.036,
// so it moves an output by <= 0.036) is smaller than the rounding noise of the running sum
// itself (up to ~0.05 per output there), and so is a whole input channel of conv4-5 (9
// taps). No comparison of values with the exact result can tell those from rounding; the
// test asserts what fp16acc does catch there — the 32 largest taps of the channel dropped
// (measured: 4 on conv2, 2 on conv3, 8 on conv4 and conv5) — and reports the rest.
//
// Emulation of each class (what a GPU kernel of that class does, in the worst order):
//   fp32      float operands, float fma chain over k = (c, r, s) in order (= conv2d_ref<float>)
//   tf32      operands rounded to 10 mantissa bits, to nearest; float fma chain
//   tf32 rz   the same, truncated (tensor cores take fp32 registers and drop the low bits)
//   fp16      operands rounded to half; float fma chain; output rounded to half
//   fp16 part as fp16, but each channel's R*S partial sum rounded to half before the float
//             sum over channels (mk-sw-mt-si-c-half's half workspace)
//   bf16      operands rounded to bf16 (8 significant bits), float fma chain, bf16 output
//   fp16acc   operands rounded to half, the running sum rounded to half after every fma
//             (__hfma: one rounding of x*w + s), half output
// The report printed at the end (max_rel_err and max_bound_ratio of each case, and the
// smallest dropped tap each class catches on each layer) is what README "Tests and checks"
// and tolerance.hpp quote.
#include "catch.hpp"
#include "chain_emulation.hpp"

#include "conv_ref.hpp"
#include "datagen.hpp"
#include "layer.hpp"
#include "tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using cs::Layer;
using cs::gpu::Precision;

namespace {

// ---- rounding to the formats: reference/chain_emulation.hpp's (round_mantissa, round_half,
// round_bf16), the same bit manipulation the chain's emulation uses ----
using cs::emu::round_bf16;
using cs::emu::round_half;
using cs::emu::round_mantissa;

// ---- the emulated classes ------------------------------------------------------------

// The operand formats and their rounding are the chain emulation's (reference/chain_emulation.hpp).
using cs::emu::Operand;
using cs::emu::round_operand;
enum class Accum { f32, f16_partials, f16 };
enum class Output { f32, f16, bf16 };

struct Emulation {
    const char* name;
    Precision precision;
    Operand operand;
    Accum accum;
    Output output;
};

const Emulation kEmulations[] = {
    {"fp32", Precision::fp32, Operand::f32, Accum::f32, Output::f32},
    {"tf32", Precision::tf32, Operand::tf32_rn, Accum::f32, Output::f32},
    {"tf32 rz", Precision::tf32, Operand::tf32_rz, Accum::f32, Output::f32},
    {"fp16", Precision::fp16, Operand::f16, Accum::f32, Output::f16},
    {"fp16 part", Precision::fp16, Operand::f16, Accum::f16_partials, Output::f16},
    {"bf16", Precision::bf16, Operand::bf16, Accum::f32, Output::bf16},
    {"fp16acc", Precision::fp16acc, Operand::f16, Accum::f16, Output::f16},
};

float round_output(Output o, double v) {
    switch (o) {
        case Output::f32: return float(v);
        case Output::f16: return float(round_half(double(float(v))));
        case Output::bf16: return round_bf16(float(v));
    }
    return float(v);
}

// Output channels [m0, m1) of the emulated convolution of the (already rounded) in and w,
// written into out (N*M*E*F). `shift` moves every window `shift` columns to the left (the
// padding bug); taps outside the input read zero, as padding does.
void emulate(const Emulation& em, const Layer& l, std::int64_t N, const float* in, const float* w, float* out,
             int m0, int m1, int shift = 0) {
    const int E = l.E(), F = l.F();
#pragma omp parallel for collapse(2) schedule(dynamic)
    for (std::int64_t n = 0; n < N; ++n)
        for (int m = m0; m < m1; ++m)
            for (int e = 0; e < E; ++e)
                for (int f = 0; f < F; ++f) {
                    float sf = 0.0f;   // float accumulation
                    double sh = 0.0;   // half accumulation (a half value, held in double)
                    for (int c = 0; c < l.C; ++c) {
                        float part = 0.0f;
                        for (int r = 0; r < l.R; ++r) {
                            const int ih = e * l.stride + r - l.pad;
                            if (ih < 0 || ih >= l.H) continue;
                            for (int s = 0; s < l.S; ++s) {
                                const int iw = f * l.stride + s - l.pad - shift;
                                if (iw < 0 || iw >= l.W) continue;
                                const float x = in[((n * l.C + c) * l.H + ih) * l.W + iw];
                                const float wv = w[((std::int64_t(m) * l.C + c) * l.R + r) * l.S + s];
                                switch (em.accum) {
                                    case Accum::f32: sf = std::fma(x, wv, sf); break;
                                    case Accum::f16_partials: part = std::fma(x, wv, part); break;
                                    case Accum::f16: sh = round_half(double(x) * double(wv) + sh); break;
                                }
                            }
                        }
                        if (em.accum == Accum::f16_partials) sf += float(round_half(part));
                    }
                    const double v = em.accum == Accum::f16 ? sh : double(sf);
                    out[((n * l.M + m) * E + e) * F + f] = round_output(em.output, v);
                }
}

// The whole emulated output: the float chain is conv2d_ref<float> (the same fma chain in
// the same order, bit for bit, and much faster); the others take emulate().
std::vector<float> emulate_all(const Emulation& em, const Layer& l, std::int64_t N, const std::vector<float>& in,
                               const std::vector<float>& w) {
    std::vector<float> out(std::size_t(l.output_elems(N)));
    if (em.accum == Accum::f32) {
        cs::conv2d_ref<float>(l, N, in.data(), w.data(), out.data());
        if (em.output != Output::f32)
            for (auto& v : out) v = round_output(em.output, v);
    } else {
        emulate(em, l, N, in.data(), w.data(), out.data(), 0, l.M);
    }
    return out;
}

struct Problem {
    Layer layer;
    std::int64_t N = 1;
    std::vector<float> in, w, golden, bound;
};

Problem make_problem(const Layer& l, std::int64_t N) {
    Problem p;
    p.layer = l;
    p.N = N;
    p.in.resize(std::size_t(l.input_elems(N)));
    p.w.resize(std::size_t(l.weight_elems()));
    p.golden.resize(std::size_t(l.output_elems(N)));
    p.bound.resize(p.golden.size());
    cs::make_input(l, N, cs::kDefaultSeed, p.in.data());
    cs::make_weights(l, cs::kDefaultSeed, p.w.data());
    cs::conv2d_ref<double>(l, N, p.in.data(), p.w.data(), p.golden.data());
    cs::conv2d_bound(l, N, p.in.data(), p.w.data(), p.bound.data());
    return p;
}

cs::gpu::ErrorStats check(const Problem& p, const Emulation& em, const std::vector<float>& out) {
    return cs::gpu::compare(out.data(), p.golden.data(), std::int64_t(out.size()), p.bound.data(), em.precision);
}

// One emulated class on one layer: the correct result and the channel-m recomputations.
struct Case {
    const Problem& p;
    const Emulation& em;
    std::vector<float> in, w;  // rounded operands
    std::vector<float> correct;
    int m;                     // the output channel the bugs go into

    Case(const Problem& p_, const Emulation& em_) : p(p_), em(em_), in(p_.in), w(p_.w) {
        for (auto& v : in) v = round_operand(em.operand, v);
        for (auto& v : w) v = round_operand(em.operand, v);
        correct = emulate_all(em, p.layer, p.N, in, w);
        m = p.layer.M / 2;
    }
    const Layer& l() const { return p.layer; }
    std::int64_t K() const { return l().K(); }

    // Channel m recomputed with the weights `wm` (K values) in place of its filter.
    std::vector<float> with_filter(const std::vector<float>& wm, int shift = 0) const {
        std::vector<float> wb = w;
        std::copy(wm.begin(), wm.end(), wb.begin() + std::int64_t(m) * K());
        std::vector<float> out = correct;
        emulate(em, l(), p.N, in.data(), wb.data(), out.data(), m, m + 1, shift);
        return out;
    }
    std::vector<float> filter(int mm) const {
        return {w.begin() + std::int64_t(mm) * K(), w.begin() + std::int64_t(mm + 1) * K()};
    }
    // (a) taps k of channel m dropped (their weights zero: fma(x, 0, s) == s, also in half).
    std::vector<float> dropped(const std::vector<std::int64_t>& taps) const {
        auto wm = filter(m);
        for (auto k : taps) wm[std::size_t(k)] = 0.0f;
        return with_filter(wm);
    }
    // (b) channel m computed with filter m+1: the correct result's channel m+1.
    std::vector<float> wrong_channel() const {
        std::vector<float> out = correct;
        const std::int64_t P = std::int64_t(l().E()) * l().F();
        const int other = (m + 1) % l().M;
        for (std::int64_t n = 0; n < p.N; ++n)
            std::copy_n(correct.begin() + (n * l().M + other) * P, P, out.begin() + (n * l().M + m) * P);
        return out;
    }
    // (c) channel m with its window shifted one column.
    std::vector<float> shifted_padding() const { return with_filter(filter(m), 1); }

    // Channel m's taps, largest |w| first (the unrounded weights decide).
    std::vector<std::int64_t> taps_by_size() const {
        std::vector<std::int64_t> k(static_cast<std::size_t>(K()));
        for (std::int64_t i = 0; i < K(); ++i) k[std::size_t(i)] = i;
        const float* wm = p.w.data() + std::int64_t(m) * K();
        std::stable_sort(k.begin(), k.end(), [&](auto a, auto b) { return std::fabs(wm[a]) > std::fabs(wm[b]); });
        return k;
    }
    // The whole input channel of tap k (its R*S taps).
    std::vector<std::int64_t> input_channel_of(std::int64_t k) const {
        const std::int64_t RS = std::int64_t(l().R) * l().S, c = k / RS;
        std::vector<std::int64_t> out;
        for (std::int64_t i = 0; i < RS; ++i) out.push_back(c * RS + i);
        return out;
    }
    bool caught(const std::vector<float>& out) const { return !cs::gpu::passes(check(p, em, out), em.precision); }

    // The fewest of channel m's largest taps (1, 2, 4, ...) whose drop is caught; 0: none.
    std::int64_t fewest_largest_taps_caught() const {
        const auto taps = taps_by_size();
        for (std::int64_t j = 1;; j *= 2) {
            j = std::min(j, K());
            if (caught(dropped({taps.begin(), taps.begin() + j}))) return j;
            if (j == K()) return 0;
        }
    }

    // The smallest |w| / weight scale of a tap of channel m whose drop is caught: bisection
    // over the taps sorted by |w| (the error a drop makes grows with |w|; the search
    // assumes that order and reports where it ends). 0 when even the smallest is caught,
    // infinity when not even the largest is.
    double smallest_caught_tap() const {
        const auto taps = taps_by_size();
        const float* wm = p.w.data() + std::int64_t(m) * K();
        const double scale = cs::weight_scale(l());
        if (!caught(dropped({taps.front()}))) return INFINITY;
        std::size_t lo = 0, hi = taps.size() - 1;  // lo caught
        if (caught(dropped({taps[hi]}))) return std::fabs(wm[taps[hi]]) / scale;
        while (hi - lo > 1) {
            const std::size_t mid = (lo + hi) / 2;
            (caught(dropped({taps[mid]})) ? lo : hi) = mid;
        }
        return std::fabs(wm[taps[lo]]) / scale;
    }
};

// Under half accumulation one tap of a layer this long is below the noise (header).
bool single_tap_below_noise(const Emulation& em, const Layer& l) { return em.accum == Accum::f16 && l.K() > 1000; }

}  // namespace

TEST_CASE("every precision class passes its correct result and fails a dropped tap, a wrong channel and a "
          "shifted padding on every AlexNet layer",
          "[tolerance][injected]") {
    std::printf("injected errors, AlexNet N=1: max_rel_err / max_bound_ratio (PASS needs <= threshold / <= 1)\n");
    std::printf("%-6s %-10s %-19s %-19s %-19s %-19s %-19s %s\n", "layer", "class", "correct", "dropped tap",
                "dropped in-channel", "wrong channel", "shifted padding",
                "smallest tap caught (|w|/scale); fewest largest taps caught");
    for (const auto& layer : cs::default_layer_table().layers) {
        const Problem p = make_problem(layer, 1);
        for (const auto& em : kEmulations) {
            INFO(layer.name << " " << em.name);
            const Case cs_(p, em);
            auto fmt = [&](const std::vector<float>& out) {
                const auto e = check(p, em, out);
                char b[64];
                std::snprintf(b, sizeof b, "%.2e/%-8.3g%s", e.max_rel_err, e.max_bound_ratio,
                              cs::gpu::passes(e, em.precision) ? "P" : "F");
                return std::string(b);
            };
            const auto taps = cs_.taps_by_size();
            const auto tap = cs_.dropped({taps.front()});
            const auto in_channel = cs_.dropped(cs_.input_channel_of(taps.front()));
            const auto wrong = cs_.wrong_channel();
            const auto shifted = cs_.shifted_padding();
            const double smallest = cs_.smallest_caught_tap();
            const std::int64_t fewest = cs_.fewest_largest_taps_caught();
            std::printf("%-6s %-10s %-19s %-19s %-19s %-19s %-19s %.3g; %lld\n", layer.name.c_str(), em.name,
                        fmt(cs_.correct).c_str(), fmt(tap).c_str(), fmt(in_channel).c_str(), fmt(wrong).c_str(),
                        fmt(shifted).c_str(), smallest, static_cast<long long>(fewest));

            const auto ok = check(p, em, cs_.correct);
            INFO("correct: max_rel_err " << ok.max_rel_err << ", max_bound_ratio " << ok.max_bound_ratio);
            CHECK(ok.bound_checked);
            CHECK(cs::gpu::passes(ok, em.precision));
            // Margin: the correct result uses at most half of either allowance.
            CHECK(ok.max_rel_err <= 0.5 * cs::gpu::threshold(em.precision));
            CHECK(ok.max_bound_ratio <= 0.5);
            if (single_tap_below_noise(em, layer)) {
                CHECK(fewest >= 1);
                CHECK(fewest <= 32);
            } else {
                CHECK(cs_.caught(tap));
                CHECK(cs_.caught(in_channel));
                CHECK(smallest < 1);
            }
            CHECK(cs_.caught(wrong));
            CHECK(cs_.caught(shifted));
        }
    }
}

TEST_CASE("the per-element bound is what catches a dropped tap where max_rel_err cannot", "[tolerance][injected]") {
    // conv4: dropping a tap of |w| ~ 0.3 of the weight scale moves outputs by up to ~0.009,
    // ~3e-3 of max|golden|: within the 5e-3 max_rel_err threshold of tf32 and fp16, so
    // without the bound their check would pass it; with it, it fails.
    const Problem p = make_problem(*cs::default_layer_table().find("conv4"), 1);
    for (const auto& em : kEmulations) {
        if (em.precision != Precision::tf32 && em.precision != Precision::fp16) continue;
        INFO(em.name);
        const Case cs_(p, em);
        const auto taps = cs_.taps_by_size();
        const float* wm = p.w.data() + std::int64_t(cs_.m) * p.layer.K();
        const double target = 0.3 * cs::weight_scale(p.layer);
        const auto k = *std::min_element(taps.begin(), taps.end(), [&](auto a, auto b) {
            return std::fabs(std::fabs(wm[a]) - target) < std::fabs(std::fabs(wm[b]) - target);
        });
        const auto out = cs_.dropped({k});
        const auto with = cs::gpu::compare(out.data(), p.golden.data(), std::int64_t(out.size()), p.bound.data(),
                                           em.precision);
        const auto without =
            cs::gpu::compare(out.data(), p.golden.data(), std::int64_t(out.size()), nullptr, em.precision);
        INFO("max_rel_err " << with.max_rel_err << ", max_bound_ratio " << with.max_bound_ratio);
        CHECK(cs::gpu::passes(without, em.precision));
        CHECK_FALSE(cs::gpu::passes(with, em.precision));
    }
}

// The fp32 class's tau (7e-6, bench/tolerance.hpp) must tell a three-product split from a
// two-product one: the split with the input's low parts dropped (each input rounded to its
// high part: fp16 after the range scale's power of two, max|x'| in [2^14, 2^15), for 3xFP16;
// tf32 rounded to nearest for 3xTF32), products and sums in float, must FAIL the fp32 class
// on every AlexNet layer at N=1 by at least 3x its per-element allowance. (On the GPU:
// tests/gpu/test_split_range_gpu.cpp, "[split-mutation]".)
TEST_CASE("a two-product split fails the fp32 class by at least 3x on every AlexNet layer",
          "[tolerance][injected][split-emulation]") {
    for (const auto& layer : cs::default_layer_table().layers) {
        const Problem p = make_problem(layer, 1);
        double maxabs = 0;
        for (float v : p.in) maxabs = std::max(maxabs, double(std::fabs(v)));
        const int ex = int(std::floor(std::log2(maxabs))) - 14;
        for (const bool half : {true, false}) {
            std::vector<float> hi(p.in.size());
            for (std::size_t i = 0; i < hi.size(); ++i)
                hi[i] = half ? float(std::ldexp(round_half(std::ldexp(double(p.in[i]), -ex)), ex))
                             : round_mantissa(p.in[i], 10, false);
            std::vector<float> out(p.golden.size());
            cs::conv2d_ref<float>(layer, 1, hi.data(), p.w.data(), out.data());
            const auto e = cs::gpu::compare(out.data(), p.golden.data(), std::int64_t(out.size()), p.bound.data(),
                                            Precision::fp32);
            std::printf("%-6s two-product %s split: max_rel_err %.3g, max_bound_ratio %.3g (fp32 class)\n",
                        layer.name.c_str(), half ? "3xFP16" : "3xTF32", e.max_rel_err, e.max_bound_ratio);
            INFO(layer.name << (half ? " 3xFP16" : " 3xTF32") << ": max_bound_ratio " << e.max_bound_ratio);
            CHECK_FALSE(cs::gpu::passes(e, Precision::fp32));
            CHECK(e.max_bound_ratio >= 3.0);
        }
    }
}

// Hidden (run with "[injected-margin]"): the correct results at a larger batch, where the
// largest error over more elements is larger; prints how much of each allowance they use.
TEST_CASE("correct results keep their margin at N=8", "[.][injected-margin]") {
    for (const auto& layer : cs::default_layer_table().layers) {
        const Problem p = make_problem(layer, 8);
        for (const auto& em : kEmulations) {
            INFO(layer.name << " " << em.name);
            const Case cs_(p, em);
            const auto e = check(p, em, cs_.correct);
            std::printf("%-6s %-10s N=8: max_rel_err %.3g of threshold, max_bound_ratio %.3g\n", layer.name.c_str(),
                        em.name, e.max_rel_err / cs::gpu::threshold(em.precision), e.max_bound_ratio);
            CHECK(cs::gpu::passes(e, em.precision));
            CHECK(e.max_bound_ratio <= 0.6);
        }
    }
}

TEST_CASE("the emulated roundings are the formats' own", "[tolerance][injected]") {
    // half: 11 significant bits, ties to even, subnormals at 2^-24
    CHECK(round_half(1.0 + 0x1p-11) == 1.0);                 // tie, to even
    CHECK(round_half(1.0 + 3 * 0x1p-11) == 1.0 + 0x1p-9);    // tie, to even (up)
    CHECK(round_half(1.0 + 0x1p-11 + 0x1p-20) == 1.0 + 0x1p-10);
    CHECK(round_half(0x1p-25 * 3) == 0x1p-24 * 2);           // subnormal 1.5 ulp -> 2 ulp (even)
    CHECK(round_half(-2.0 / 3.0) == -0.66650390625);
    // tf32: 10 mantissa bits; truncation drops them
    CHECK(round_mantissa(1.0f + 0x1p-11f + 0x1p-15f, 10, false) == 1.0f + 0x1p-10f);
    CHECK(round_mantissa(1.0f + 0x1p-11f + 0x1p-15f, 10, true) == 1.0f);
    CHECK(round_mantissa(-1.999f, 10, true) == -(2.0f - 0x1p-9f));  // -1.99805: 1022/1024
    // bf16: 7 mantissa bits
    CHECK(round_bf16(1.0f + 0x1p-8f) == 1.0f);               // tie, to even
    CHECK(round_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);
    CHECK(round_bf16(3.14159265f) == 3.140625f);
}
