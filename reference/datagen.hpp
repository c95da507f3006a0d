// Counter-based data generator: every element of every tensor is a pure function of
// (seed, tensor id, element index), so generation is parallel and bit-identical on every
// machine and thread count, and image n of a batch is the same whatever the batch size.
//
// Inputs are uniform in [-1, 1); weights uniform in [-1, 1) scaled by sqrt(3/K), so each
// output is a sum of K terms of variance 1/K (O(1)) and half precision does not overflow.
//
// Data scales: an exact power of two S_in multiplies every input, S_w every weight (default
// 1 and 1: the data above, bit for bit). Because the scales are powers of two from 2^-24 to
// 2^20, the scaled data is the unscaled data times S exactly, and so is every product, sum
// and the golden output (times S_in * S_w): the same problem at another magnitude.
#pragma once

#include "layer.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace cs {

inline constexpr std::uint64_t kDefaultSeed = 20261123;
inline constexpr const char* kGeneratorName = "splitmix64-counter-v1";

// The scales of the data: exact powers of two in [kMinDataScale, kMaxDataScale].
inline constexpr double kMinDataScale = 0x1p-24;
inline constexpr double kMaxDataScale = 0x1p20;
struct DataScales {
    double input = 1;
    double weights = 1;
    bool is_default() const { return input == 1 && weights == 1; }
    bool operator==(const DataScales& o) const { return input == o.input && weights == o.weights; }
    bool operator!=(const DataScales& o) const { return !(*this == o); }
};

// Parses a data scale: a power of two written "2^-24" (or "2^20", "2^0"), as a decimal or
// integer ("0.25", "4096", "1"), or in any other form strtod reads exactly ("0x1p-24",
// "5.9604644775390625e-08"). Throws cs::Error, naming `what` (e.g. "--input-scale"), for
// anything else: not a number, not finite, zero or negative, not an exact power of two, or
// outside [2^-24, 2^20].
double parse_data_scale(const std::string& text, const std::string& what);
// Checks a scale read from elsewhere (a manifest) against the same rules; cs::Error if not.
void check_data_scale(double scale, const std::string& what);
// "2^-24", "1" (for 2^0), "2^20": how commands and directory names write a scale.
std::string data_scale_string(double scale);

enum class TensorKind : std::uint32_t { input = 1, weights = 2, bias = 3 };

// Mixes the layer name and the tensor kind into the id the generator keys on.
std::uint64_t tensor_id(std::string_view layer_name, TensorKind kind);

// The element at `index` of the stream (seed, id): uniform in [-1, 1), exactly a multiple
// of 2^-23, so float, double and half conversions of it are exact in float.
float uniform_element(std::uint64_t seed, std::uint64_t id, std::uint64_t index);

// dst[i] = uniform_element(seed, id, first_index + i) * scale, OpenMP-parallel.
void fill_uniform(float* dst, std::int64_t count, std::uint64_t seed, std::uint64_t id,
                  std::uint64_t first_index, float scale);

// The layer's input for a batch of N images (N*C*H*W floats, NCHW), times `scale` (a data
// scale, see DataScales: exactly the unscaled input times scale).
void make_input(const Layer& layer, std::int64_t N, std::uint64_t seed, float* dst, double scale = 1);
// The layer's weights (M*C*R*S floats, MCRS), scaled by sqrt(3/K), times `scale` (exactly).
void make_weights(const Layer& layer, std::uint64_t seed, float* dst, double scale = 1);
float weight_scale(const Layer& layer);

// The output scale of a layer: the standard deviation of one output of the convolution when
// all K taps are inside the input, for the generator's inputs x ~ U[-1, 1) (variance 1/3)
// and weights w ~ U[-1, 1) * sqrt(3/K) (variance 1/K), all independent with mean 0:
// Var(sum_k x_k w_k) = K * (1/3) * (1/K) = 1/3, so the scale is 1/sqrt(3) for every layer
// (docs/check.md, "The chain").
inline constexpr double kOutputScale = 0.57735026918962576451;  // 1/sqrt(3)
// The bias scale: bias values are uniform in [-0.5, 0.5) times the output scale, i.e.
// x[i] * float(0.5/sqrt(3)) for x[i] the generator's U[-1, 1) element.
float bias_scale();
// The layer's bias (M floats, one per output channel): uniform_element(seed, tensor_id(name,
// bias), m) * bias_scale(). Independent of the batch size and the thread count.
void make_bias(const Layer& layer, std::uint64_t seed, float* dst);

// One line for the manifest: name, formula and distribution.
std::string generator_description();
// The same for the chain golden files: generator_description() plus the bias rule.
std::string chain_generator_description();

}  // namespace cs
