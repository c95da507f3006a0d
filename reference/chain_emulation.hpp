// A precision class's arithmetic through a whole chain, emulated on the CPU: what the chain
// thresholds (bench/chain_tolerance.hpp) are derived from, as the per-layer thresholds are from
// tests/test_injected_errors.cpp's emulation of one layer.
//
// Each layer of the chain, in the class's formats:
//   operands  the layer's input (the previous layer's emulated output, or the network input)
//             and its weights rounded to the class's operand format (tf32 to nearest or
//             truncated, half, bf16; float: unchanged);
//   sum       float accumulation, an fma chain over k = (c, r, s) in order (conv2d_ref<float>
//             of the rounded operands), or half accumulation: the running sum rounded to half
//             after every fma (__hfma), as fp16acc;
//   bias      stored in the class's output format, added to the sum in the accumulator
//             (float, or half with one more rounding), then ReLU;
//   output    rounded once to the output format (half, bf16; float: unchanged), then the
//             3x3 stride-2 max-pool, which is exact in any format.
// Bit-identical whatever the thread count.
#pragma once

#include "layer.hpp"
#include "network_ref.hpp"

#include <vector>

namespace cs::emu {

enum class Operand { f32, tf32_rn, tf32_rz, f16, bf16 };
enum class Accum { f32, f16 };
enum class Store { f32, f16, bf16 };  // the output's and the bias's format

struct ChainEmulation {
    const char* name;
    Operand operand;
    Accum accum;
    Store store;
};

// Keeps `keep` of float's 23 mantissa bits: round to nearest even, or truncate.
float round_mantissa(float v, int keep, bool truncate);
// IEEE binary16, round to nearest even, subnormals included (no value here reaches 65504).
double round_half(double v);
// bfloat16 (8 significant bits), round to nearest even.
float round_bf16(float v);

float round_operand(Operand o, float v);
float round_store(Store s, float v);

// Every layer's post-op output of the chain in the emulated class (see above).
std::vector<std::vector<float>> emulate_chain(const LayerTable& table, const ChainData& data, const ChainEmulation& em);

// max |a - b| / max |b| over the elements (a NaN or Inf in a: infinity).
double max_rel_err(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace cs::emu
