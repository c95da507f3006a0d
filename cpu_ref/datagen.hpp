// Counter-based data generator: every element of every tensor is a pure function of
// (seed, tensor id, element index), so generation is parallel and bit-identical on every
// machine and thread count, and image n of a batch is the same whatever the batch size.
//
// Inputs are uniform in [-1, 1); weights uniform in [-1, 1) scaled by sqrt(3/K), so each
// output is a sum of K terms of variance 1/K (O(1)) and half precision does not overflow.
#pragma once

#include "layer.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace cs {

inline constexpr std::uint64_t kDefaultSeed = 20261123;
inline constexpr const char* kGeneratorName = "splitmix64-counter-v1";

enum class TensorKind : std::uint32_t { input = 1, weights = 2 };

// Mixes the layer name and the tensor kind into the id the generator keys on.
std::uint64_t tensor_id(std::string_view layer_name, TensorKind kind);

// The element at `index` of the stream (seed, id): uniform in [-1, 1), exactly a multiple
// of 2^-23, so float, double and half conversions of it are exact in float.
float uniform_element(std::uint64_t seed, std::uint64_t id, std::uint64_t index);

// dst[i] = uniform_element(seed, id, first_index + i) * scale, OpenMP-parallel.
void fill_uniform(float* dst, std::int64_t count, std::uint64_t seed, std::uint64_t id,
                  std::uint64_t first_index, float scale);

// The layer's input for a batch of N images (N*C*H*W floats, NCHW).
void make_input(const Layer& layer, std::int64_t N, std::uint64_t seed, float* dst);
// The layer's weights (M*C*R*S floats, MCRS), scaled by sqrt(3/K).
void make_weights(const Layer& layer, std::uint64_t seed, float* dst);
float weight_scale(const Layer& layer);

// One line for the manifest: name, formula and distribution.
std::string generator_description();

}  // namespace cs
