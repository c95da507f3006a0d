// Counter-based data generator (see datagen.hpp).
//
// Element i of the stream (seed, id):
//   key   = mix64(seed ^ mix64(id))
//   z     = mix64(key + (i + 1) * 0x9E3779B97F4A7C15)      (SplitMix64 at counter i+1)
//   value = (int(z >> 40) - 2^23) * 2^-23                    (24 high bits -> [-1, 1))
// mix64 is SplitMix64's finaliser. Pure integer arithmetic plus one exact int->float
// conversion and one exact power-of-two scaling, so the value is the same on every
// machine, compiler and thread count.
#include "datagen.hpp"

#include <cmath>
#include <sstream>

namespace cs {

namespace {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

constexpr std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

constexpr std::uint64_t stream_key(std::uint64_t seed, std::uint64_t id) { return mix64(seed ^ mix64(id)); }

inline float element_from_key(std::uint64_t key, std::uint64_t index) {
    const std::uint64_t z = mix64(key + (index + 1) * kGolden);
    const auto v = std::int32_t(z >> 40) - (std::int32_t(1) << 23);  // in [-2^23, 2^23)
    return float(v) * 0x1p-23f;                                       // exact
}

}  // namespace

std::uint64_t tensor_id(std::string_view layer_name, TensorKind kind) {
    // FNV-1a 64 of the name, then the kind mixed in through SplitMix64's finaliser.
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const char ch : layer_name) {
        h ^= std::uint64_t(static_cast<unsigned char>(ch));
        h *= 0x100000001b3ull;
    }
    return mix64(h ^ mix64(std::uint64_t(kind) * kGolden));
}

float uniform_element(std::uint64_t seed, std::uint64_t id, std::uint64_t index) {
    return element_from_key(stream_key(seed, id), index);
}

void fill_uniform(float* dst, std::int64_t count, std::uint64_t seed, std::uint64_t id,
                  std::uint64_t first_index, float scale) {
    const std::uint64_t key = stream_key(seed, id);
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < count; ++i)
        dst[i] = element_from_key(key, first_index + std::uint64_t(i)) * scale;
}

void make_input(const Layer& layer, std::int64_t N, std::uint64_t seed, float* dst) {
    fill_uniform(dst, layer.input_elems(N), seed, tensor_id(layer.name, TensorKind::input), 0, 1.0f);
}

float weight_scale(const Layer& layer) { return float(std::sqrt(3.0 / double(layer.K()))); }

void make_weights(const Layer& layer, std::uint64_t seed, float* dst) {
    fill_uniform(dst, layer.weight_elems(), seed, tensor_id(layer.name, TensorKind::weights), 0,
                 weight_scale(layer));
}

std::string generator_description() {
    std::ostringstream os;
    os << kGeneratorName
       << ": mix64 = SplitMix64 finaliser; id = mix64(fnv1a64(layer name) ^ mix64(kind * 0x9E3779B97F4A7C15)),"
          " kind input=1 weights=2; key = mix64(seed ^ mix64(id));"
          " x[i] = ((mix64(key + (i+1) * 0x9E3779B97F4A7C15) >> 40) - 2^23) * 2^-23,"
          " i = NCHW / MCRS element index; inputs uniform in [-1, 1),"
          " weights = float(x[i] * float(sqrt(3/K)))";
    return os.str();
}

}  // namespace cs
