// The emulated chain of a precision class (see chain_emulation.hpp).
#include "chain_emulation.hpp"

#include "conv_ref.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace cs::emu {

float round_mantissa(float v, int keep, bool truncate) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    const int drop = 23 - keep;
    if (!truncate) u += (std::uint32_t(1) << (drop - 1)) - 1u + ((u >> drop) & 1u);
    u &= ~((std::uint32_t(1) << drop) - 1u);
    std::memcpy(&v, &u, 4);
    return v;
}

double round_half(double v) {
    if (std::fabs(v) < 0x1p-14) return std::nearbyint(v * 0x1p24) * 0x1p-24;
    std::uint64_t u;
    std::memcpy(&u, &v, 8);
    constexpr int drop = 52 - 10;
    u += (std::uint64_t(1) << (drop - 1)) - 1u + ((u >> drop) & 1u);
    u &= ~((std::uint64_t(1) << drop) - 1u);
    std::memcpy(&v, &u, 8);
    return v;
}

float round_bf16(float v) { return round_mantissa(v, 7, false); }

float round_operand(Operand o, float v) {
    switch (o) {
        case Operand::f32: return v;
        case Operand::tf32_rn: return round_mantissa(v, 10, false);
        case Operand::tf32_rz: return round_mantissa(v, 10, true);
        case Operand::f16: return float(round_half(v));
        case Operand::bf16: return round_bf16(v);
    }
    return v;
}

float round_store(Store s, float v) {
    switch (s) {
        case Store::f32: return v;
        case Store::f16: return float(round_half(double(v)));
        case Store::bf16: return round_bf16(v);
    }
    return v;
}

namespace {

// conv + bias + ReLU with the running sum rounded to half after every fma, the bias added in
// half, the result a half value (held in float).
void conv_half_accum(const Layer& l, std::int64_t N, const float* in, const float* w, const float* bias, float* out) {
    const int E = l.E(), F = l.F();
#pragma omp parallel for collapse(2) schedule(dynamic)
    for (std::int64_t n = 0; n < N; ++n)
        for (int m = 0; m < l.M; ++m)
            for (int e = 0; e < E; ++e)
                for (int f = 0; f < F; ++f) {
                    double sh = 0.0;  // a half value, held in double
                    for (int c = 0; c < l.C; ++c)
                        for (int r = 0; r < l.R; ++r) {
                            const int ih = e * l.stride + r - l.pad;
                            if (ih < 0 || ih >= l.H) continue;
                            for (int s = 0; s < l.S; ++s) {
                                const int iw = f * l.stride + s - l.pad;
                                if (iw < 0 || iw >= l.W) continue;
                                const double x = in[((n * l.C + c) * l.H + ih) * l.W + iw];
                                const double wv = w[((std::int64_t(m) * l.C + c) * l.R + r) * l.S + s];
                                sh = round_half(x * wv + sh);  // one rounding of x*w + s, as __hfma
                            }
                        }
                    if (bias) sh = round_half(sh + double(bias[m]));
                    if (l.relu && !(sh > 0)) sh = 0;
                    out[((n * l.M + m) * E + e) * F + f] = float(sh);
                }
}

}  // namespace

std::vector<std::vector<float>> emulate_chain(const LayerTable& table, const ChainData& data, const ChainEmulation& em) {
    std::vector<std::vector<float>> out(table.layers.size());
    std::vector<float> in = data.input;
    for (std::size_t i = 0; i < table.layers.size(); ++i) {
        const Layer& l = table.layers[i];
        for (auto& v : in) v = round_operand(em.operand, v);
        std::vector<float> w = data.weights[i], b = data.bias[i];
        for (auto& v : w) v = round_operand(em.operand, v);
        for (auto& v : b) v = round_store(em.store, v);
        const float* bias = l.bias ? b.data() : nullptr;
        std::vector<float> conv(static_cast<std::size_t>(l.output_elems(data.N)));
        if (em.accum == Accum::f32) {
            conv2d_bias_relu_ref<float>(l, data.N, in.data(), w.data(), bias, l.relu, conv.data());
            for (auto& v : conv) v = round_store(em.store, v);
        } else {
            conv_half_accum(l, data.N, in.data(), w.data(), bias, conv.data());
        }
        if (l.pool == Pool::none) {
            out[i] = std::move(conv);
        } else {
            out[i].resize(static_cast<std::size_t>(post_op_elems(l, data.N)));
            maxpool3x3s2_ref(data.N * l.M, l.E(), l.F(), conv.data(), out[i].data());
        }
        in = out[i];
    }
    return out;
}

double max_rel_err(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0, g = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        if (!std::isfinite(a[i])) return INFINITY;
        m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
        g = std::max(g, std::fabs(double(b[i])));
    }
    return g > 0 ? m / g : m;
}

}  // namespace cs::emu
