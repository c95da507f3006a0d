// The network ops and the chain on the CPU (see network_ref.hpp). The convolution with its
// bias and ReLU is conv2d_ref's own implicit GEMM with an epilogue (conv_ref.cpp); this file
// adds the pool, one layer with its ops, the chain, and the plain loops that check them.
#include "network_ref.hpp"

#include "conv_ref.hpp"
#include "datagen.hpp"
#include "error.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace cs {

void maxpool3x3s2_ref(std::int64_t planes, int H, int W, const float* in, float* out) {
    const int E = maxpool3x3s2_size(H), F = maxpool3x3s2_size(W);
    const std::int64_t HW = std::int64_t(H) * W, EF = std::int64_t(E) * F;
#pragma omp parallel for schedule(static)
    for (std::int64_t p = 0; p < planes; ++p) {
        const float* src = in + p * HW;
        float* dst = out + p * EF;
        for (int i = 0; i < E; ++i)
            for (int j = 0; j < F; ++j) {
                const float* win = src + std::int64_t(2 * i) * W + 2 * j;
                float m = win[0];
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b) {
                        const float v = win[std::int64_t(a) * W + b];
                        if (v > m || std::isnan(v)) m = v;  // a NaN sticks: no comparison replaces it
                    }
                dst[std::int64_t(i) * F + j] = m;
            }
    }
}

std::int64_t post_op_elems(const Layer& l, std::int64_t N) {
    return N * l.M * std::int64_t(l.pooled_E()) * l.pooled_F();
}

template <typename Acc>
void layer_ops_ref(const Layer& l, std::int64_t N, const float* in, const float* w, const float* bias, float* out) {
    if (l.bias && !bias) throw Error("layer '" + l.name + "' has a bias, but no bias values were given");
    const float* b = l.bias ? bias : nullptr;
    if (l.pool == Pool::none) {
        conv2d_bias_relu_ref<Acc>(l, N, in, w, b, l.relu, out);
        return;
    }
    std::vector<float> conv(static_cast<std::size_t>(l.output_elems(N)));
    conv2d_bias_relu_ref<Acc>(l, N, in, w, b, l.relu, conv.data());
    maxpool3x3s2_ref(N * l.M, l.E(), l.F(), conv.data(), out);
}

template void layer_ops_ref<float>(const Layer&, std::int64_t, const float*, const float*, const float*, float*);
template void layer_ops_ref<double>(const Layer&, std::int64_t, const float*, const float*, const float*, float*);

namespace {

void require_chain(const LayerTable& table) {
    if (table.layers.empty()) throw Error(table.source + ": the table has no layers, so it is not a chain");
    if (const auto why = chain_error(table))
        throw Error(table.source + ": table '" + table.name + "' is not a chain: " + *why);
}

}  // namespace

ChainData make_chain_data(const LayerTable& table, std::int64_t N, std::uint64_t seed) {
    require_chain(table);
    if (N < 1) throw Error("chain: batch size " + std::to_string(N) + " must be at least 1");
    ChainData d;
    d.N = N;
    const Layer& first = table.layers.front();
    d.input.resize(static_cast<std::size_t>(first.input_elems(N)));
    make_input(first, N, seed, d.input.data());
    for (const Layer& l : table.layers) {
        d.weights.emplace_back(static_cast<std::size_t>(l.weight_elems()));
        make_weights(l, seed, d.weights.back().data());
        d.bias.emplace_back(l.bias ? std::size_t(l.M) : 0);
        if (l.bias) make_bias(l, seed, d.bias.back().data());
    }
    return d;
}

template <typename Acc>
std::vector<std::vector<float>> chain_ref(const LayerTable& table, const ChainData& data) {
    require_chain(table);
    const std::size_t L = table.layers.size();
    if (data.N < 1 || data.weights.size() != L || data.bias.size() != L ||
        data.input.size() != std::size_t(table.layers.front().input_elems(data.N)))
        throw Error("chain: the data does not fit table '" + table.name + "'");
    std::vector<std::vector<float>> out(L);
    for (std::size_t i = 0; i < L; ++i) {
        const Layer& l = table.layers[i];
        if (data.weights[i].size() != std::size_t(l.weight_elems()) ||
            data.bias[i].size() != (l.bias ? std::size_t(l.M) : 0))
            throw Error("chain: the weights or bias of layer '" + l.name + "' do not fit its shape");
        out[i].resize(static_cast<std::size_t>(post_op_elems(l, data.N)));
        const float* in = i == 0 ? data.input.data() : out[i - 1].data();
        layer_ops_ref<Acc>(l, data.N, in, data.weights[i].data(), l.bias ? data.bias[i].data() : nullptr,
                           out[i].data());
    }
    return out;
}

template std::vector<std::vector<float>> chain_ref<float>(const LayerTable&, const ChainData&);
template std::vector<std::vector<float>> chain_ref<double>(const LayerTable&, const ChainData&);

double layer_ops_element(const Layer& l, const float* in, const float* w, const float* bias, std::int64_t n, int m,
                         int i, int j) {
    auto value = [&](int e, int f) {
        double v = conv2d_element(l, in, w, n, m, e, f);
        if (l.bias) v += double(bias[m]);
        return l.relu ? std::max(v, 0.0) : v;
    };
    if (l.pool == Pool::none) return value(i, j);
    double best = -INFINITY;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) best = std::max(best, value(2 * i + a, 2 * j + b));
    return best;
}

std::vector<float> layer_ops_naive(const Layer& l, std::int64_t N, const float* in, const float* w,
                                   const float* bias) {
    if (l.bias && !bias) throw Error("layer '" + l.name + "' has a bias, but no bias values were given");
    const int E = l.E(), F = l.F();
    std::vector<double> sum(static_cast<std::size_t>(l.output_elems(N)));
    conv2d_naive(l, N, in, w, sum.data());
    std::vector<float> conv(sum.size());
    for (std::int64_t n = 0; n < N; ++n)
        for (int m = 0; m < l.M; ++m)
            for (int e = 0; e < E; ++e)
                for (int f = 0; f < F; ++f) {
                    const std::size_t at = std::size_t(((n * l.M + m) * E + e) * F + f);
                    double v = sum[at];
                    if (l.bias) v += double(bias[m]);
                    float r = float(v);
                    if (l.relu && !(r > 0.0f)) r = 0.0f;
                    conv[at] = r;
                }
    if (l.pool == Pool::none) return conv;
    const int PE = l.pooled_E(), PF = l.pooled_F();
    std::vector<float> out(static_cast<std::size_t>(N * l.M * PE * PF));
    for (std::int64_t p = 0; p < N * l.M; ++p)
        for (int i = 0; i < PE; ++i)
            for (int j = 0; j < PF; ++j) {
                float best = -INFINITY;
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b)
                        best = std::max(best, conv[std::size_t((p * E + 2 * i + a) * F + 2 * j + b)]);
                out[std::size_t((p * PE + i) * PF + j)] = best;
            }
    return out;
}

}  // namespace cs
