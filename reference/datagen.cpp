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

#include "error.hpp"

#include <cmath>
#include <cstdlib>
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

void check_data_scale(double scale, const std::string& what) {
    int e = 0;
    if (!std::isfinite(scale)) throw Error(what + ": the scale must be finite");
    if (!(scale > 0)) throw Error(what + ": the scale must be positive (an exact power of two)");
    if (std::frexp(scale, &e) != 0.5)
        throw Error(what + ": the scale must be an exact power of two (2^-24 to 2^20, e.g. 2^-12, 0.25, 4096)");
    if (scale < kMinDataScale || scale > kMaxDataScale)
        throw Error(what + ": the scale " + data_scale_string(scale) + " is outside 2^-24 to 2^20");
}

double parse_data_scale(const std::string& text, const std::string& what) {
    const std::string bad = what + ": '" + text + "' is not a data scale; ";
    double v = 0;
    if (text.rfind("2^", 0) == 0) {
        const std::string ex = text.substr(2);
        std::size_t digits = ex.size() > 0 && (ex[0] == '-' || ex[0] == '+') ? 1 : 0;
        if (ex.size() == digits || ex.size() - digits > 4 ||
            ex.find_first_not_of("0123456789", digits) != std::string::npos)
            throw Error(bad + "write a power of two as 2^E with an integer E from -24 to 20, e.g. 2^-24");
        v = std::ldexp(1.0, std::atoi(ex.c_str()));
    } else {
        const char* begin = text.c_str();
        char* end = nullptr;
        v = std::strtod(begin, &end);
        if (text.empty() || end != begin + text.size() || std::isspace(static_cast<unsigned char>(text[0])))
            throw Error(bad + "expected an exact power of two from 2^-24 to 2^20 (e.g. 2^-24, 0.25, 4096, 1)");
    }
    check_data_scale(v, what);
    return v;
}

std::string data_scale_string(double scale) {
    int e = 0;
    if (!std::isfinite(scale) || !(scale > 0) || std::frexp(scale, &e) != 0.5) {
        std::ostringstream os;
        os.precision(17);
        os << scale;
        return os.str();
    }
    return e - 1 == 0 ? "1" : "2^" + std::to_string(e - 1);
}

// The scales are exact powers of two, so element * float(base * scale) rounds like
// (element * base) and then multiplies exactly: the scaled data is the unscaled data times
// the scale, bit for bit (no element leaves float's normal range from 2^-24 to 2^20).
void make_input(const Layer& layer, std::int64_t N, std::uint64_t seed, float* dst, double scale) {
    fill_uniform(dst, layer.input_elems(N), seed, tensor_id(layer.name, TensorKind::input), 0, float(scale));
}

float weight_scale(const Layer& layer) { return float(std::sqrt(3.0 / double(layer.K()))); }

void make_weights(const Layer& layer, std::uint64_t seed, float* dst, double scale) {
    fill_uniform(dst, layer.weight_elems(), seed, tensor_id(layer.name, TensorKind::weights), 0,
                 weight_scale(layer) * float(scale));
}

float bias_scale() { return float(0.5 * kOutputScale); }

void make_bias(const Layer& layer, std::uint64_t seed, float* dst) {
    fill_uniform(dst, layer.M, seed, tensor_id(layer.name, TensorKind::bias), 0, bias_scale());
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

std::string chain_generator_description() {
    return generator_description() +
           "; chain: the network input is the first layer's input, each layer's weights as above,"
           " bias kind=3: bias[m] = float(x[m] * float(0.5/sqrt(3))) (uniform in [-0.5, 0.5) times the output"
           " scale 1/sqrt(3)), m = output channel";
}

}  // namespace cs
