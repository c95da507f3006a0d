// The CPU reference of the network ops and of a chain of layers: convolution +
// bias + ReLU, 3x3 stride-2 max-pooling, and every layer of a chain table in order with the
// ops the table gives each layer (Layer::bias, relu, pool).
//
// Like conv2d_ref, templated on the accumulator: Acc = double makes the chain golden files,
// Acc = float is the CPU baseline. The bias is added to the sum in Acc, ReLU applied, and the
// result rounded to float once (ReLU commutes with that rounding: it is monotone and keeps
// 0); pooling takes the maximum of float values, which is exact. Each layer's input in a
// chain is the previous layer's post-op output as float, so a layer of the chain computed
// from the stored previous output gives the stored output again, bit for bit.
// Bit-identical whatever the thread count (OpenMP inside, no reductions across threads).
#pragma once

#include "layer.hpp"

#include <cstdint>
#include <vector>

namespace cs {

// out[n][m][e][f] = relu?( sum_{c,r,s} in * w + bias[m] ), the sum and the bias in Acc,
// rounded to float once. bias may be null (no bias); relu false keeps negative values.
template <typename Acc>
void conv2d_bias_relu_ref(const Layer& layer, std::int64_t N, const float* in, const float* w, const float* bias,
                          bool relu, float* out);

extern template void conv2d_bias_relu_ref<float>(const Layer&, std::int64_t, const float*, const float*,
                                                 const float*, bool, float*);
extern template void conv2d_bias_relu_ref<double>(const Layer&, std::int64_t, const float*, const float*,
                                                  const float*, bool, float*);

// Output size of a 3x3 stride-2 max-pool without padding (floor): (size - 3) / 2 + 1;
// 0 for size < 3.
inline int maxpool3x3s2_size(int size) { return size < 3 ? 0 : (size - 3) / 2 + 1; }

// out[p][i][j] = max_{0<=a,b<3} in[p][2i+a][2j+b] over planes = N*C planes of H x W, out of
// maxpool3x3s2_size(H) x maxpool3x3s2_size(W). A NaN in a window is the window's result.
void maxpool3x3s2_ref(std::int64_t planes, int H, int W, const float* in, float* out);

// One layer of a network with its ops: conv (+ bias when layer.bias, with `bias` its M
// values) (+ ReLU when layer.relu), then the pool when layer.pool says. out holds
// N * M * layer.pooled_E() * layer.pooled_F() floats. cs::Error when layer.bias is set and
// bias is null.
template <typename Acc>
void layer_ops_ref(const Layer& layer, std::int64_t N, const float* in, const float* w, const float* bias, float* out);

extern template void layer_ops_ref<float>(const Layer&, std::int64_t, const float*, const float*, const float*,
                                          float*);
extern template void layer_ops_ref<double>(const Layer&, std::int64_t, const float*, const float*, const float*,
                                           float*);

// Elements of one layer's post-op output (N * M * pooled E * pooled F).
std::int64_t post_op_elems(const Layer& layer, std::int64_t N);

// The data of a chain: the network input (layer 0's input, N x C x H x W) and each layer's
// weights (M x C x R x S) and bias (M values; empty for a layer without bias).
struct ChainData {
    std::int64_t N = 0;
    std::vector<float> input;
    std::vector<std::vector<float>> weights, bias;
};

// The generator's data for a chain (datagen.hpp): the input is layer 0's make_input, each
// layer's weights its make_weights and its bias make_bias (when the layer has one). Image n
// is the same whatever N. cs::Error when the table is not a chain (chain_error).
ChainData make_chain_data(const LayerTable& table, std::int64_t N, std::uint64_t seed);

// Every layer's post-op output, in order: outputs[i] = layer_ops_ref(layer i, input of layer
// i), the input of layer 0 being data.input and of layer i+1 outputs[i]. cs::Error when the
// table is not a chain or the data does not fit it.
template <typename Acc>
std::vector<std::vector<float>> chain_ref(const LayerTable& table, const ChainData& data);

extern template std::vector<std::vector<float>> chain_ref<float>(const LayerTable&, const ChainData&);
extern template std::vector<std::vector<float>> chain_ref<double>(const LayerTable&, const ChainData&);

// One element (n, m, i, j) of a layer's post-op output, in double, from the layer's input:
// the maximum over the pool window (or the single position) of relu?(conv2d_element + bias).
// The golden value is this rounded to float (rounding is monotone, so the max commutes).
double layer_ops_element(const Layer& layer, const float* in, const float* w, const float* bias, std::int64_t n, int m,
                         int i, int j);

// Plain nested loops, no blocking and no threads, in double: the check on the check. conv as
// conv2d_naive, + bias, ReLU, each value rounded to float, then the pool over those floats.
std::vector<float> layer_ops_naive(const Layer& layer, std::int64_t N, const float* in, const float* w,
                                   const float* bias);

}  // namespace cs
