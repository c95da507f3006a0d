// The precision classes and their facts, in one table (issue 50): each class's spelling, the
// element type of its operands in device memory, the classes it counts as for the anchors and
// the ceilings, the inputs of its pass rule (tolerance.hpp says what each means and how each
// number was derived) and its colour in the figures. Every function that answers a question
// about a class (to_string, parse_precision, anchor_class, ceiling_class, threshold,
// bound_factor, output_roundoff, threshold_reason) reads this table, and `convstudy list --json`
// prints it ("precisions", in this order), which is where plots/ takes the order and colours.
//
// Adding a class: its enumerator below, its row in kPrecisions (the order there is the order
// of the tables and figures), its conversion kernel (convert.cu) and its kernels' traits.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace cs::gpu {

// Precision class: decides the pass threshold (tolerance.hpp).
enum class Precision {
    fp32,     // float inputs, float accumulation
    tf32,     // float inputs rounded to tf32 inside the matrix units, float accumulation
    fp16,     // half inputs and weights, float accumulation
    bf16,     // bfloat16 inputs and weights, float accumulation
    fp16acc,  // half inputs and weights, half accumulation (at least in part)
};

// Element type of in/w/out in device memory, as the variant's kernels see them. The host
// always holds float data: for f16 and bf16 the harness converts on the GPU (convert_ms).
enum class DType { f32, f16, bf16 };
std::string_view to_string(DType d);
inline std::size_t dtype_bytes(DType d) { return d == DType::f32 ? 4 : 2; }

struct PrecisionFacts {
    Precision id;
    std::string_view name;    // the CSV's and the command line's spelling
    DType operands;           // the operands' element type in device memory
    Precision anchor;         // the cuDNN class ours_over_cudnn compares with (anchor_class)
    Precision ceiling;        // the cuBLAS class pct_peak divides by (ceiling_class)
    double max_rel_err;       // threshold()
    double tau, u_in, u_acc;  // bound_factor(): calibrated tau, operand and running-sum roundoff
    double u_out;             // output_roundoff(): the output type's unit roundoff
    const char* reason;       // threshold_reason()
    std::string_view colour;  // the figures' colour for the class
};

// fp16acc (half accumulation) has no cuDNN or cuBLAS counterpart of its own: it counts as fp16
// (half operands and output) for both; every other class is its own.
inline constexpr PrecisionFacts kPrecisions[] = {
    {Precision::fp32, "fp32", DType::f32, Precision::fp32, Precision::fp32, 1e-4, 7e-6, 0, 0x1p-24, 0,
     "float accumulation of K<=3456 terms drifts ~3e-6 of max|out| (emulated); 7e-6 of sum|w*x| per element "
     "(honest fp32 rows use <= 0.66 of it, a two-product split >= 3.2x)",
     "#1f77b4"},
    {Precision::tf32, "tf32", DType::f32, Precision::tf32, Precision::tf32, 5e-3, 6e-4, 0x1p-10, 0x1p-24, 0,
     "operands rounded to a 10-bit mantissa: ~3e-4 of max|out| (8e-4 truncated); 6e-4 of sum|w*x| per element",
     "#2ca02c"},
    {Precision::fp16, "fp16", DType::f16, Precision::fp16, Precision::fp16, 5e-3, 4e-4, 0x1p-11, 0x1p-24, 0x1p-11,
     "half operands and output (2^-11), float accumulation: ~5e-4 of max|out|; 4e-4 of sum|w*x| + 2^-11|out| per "
     "element",
     "#ff7f0e"},
    {Precision::bf16, "bf16", DType::bf16, Precision::bf16, Precision::bf16, 1e-2, 2e-3, 0x1p-8, 0x1p-24, 0x1p-8,
     "bf16 operands and output (2^-8), float accumulation: ~4e-3 of max|out|; 2e-3 of sum|w*x| + 2^-8|out| per "
     "element",
     "#9467bd"},
    {Precision::fp16acc, "fp16acc", DType::f16, Precision::fp16, Precision::fp16, 5e-2, 6e-3, 0x1p-11, 0x1p-11,
     0x1p-11, "running sum rounded to half every step: ~2e-2 of max|out|; 6e-3 of sum|w*x| + 2^-11|out| per element",
     "#d62728"},
};

// The row of class p (every enumerator has one: tests/test_tolerance.cpp).
const PrecisionFacts& facts(Precision p);
std::string_view to_string(Precision p);
// The class named by to_string(Precision), or nothing.
std::optional<Precision> parse_precision(std::string_view s);

}  // namespace cs::gpu
