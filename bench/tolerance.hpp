// How a GPU result is compared with the golden output, and the pass rule of each precision
// class — defined here and nowhere else (passes()).
//
// Metrics: max_abs_err (the study's "max epsilon"), max_rel_err = max_abs_err / max|golden|,
// rel_l2_err = ||out - golden||_2 / ||golden||_2, and, where the per-element bound
// B = sum_k |w_k * x_k| of every output is known (the golden set's <layer>.bound.npy, or
// computed for each sample of a sampled check), max_bound_ratio = the largest
//     |out_i - golden_i| / (tau * B_i + u_out * |golden_i|)
// over the elements: the error of each element as a fraction of what the class allows it.
// A non-finite output element (NaN poison left unwritten, an overflow) fails whatever the
// numbers say.
//
// PASS = no non-finite element, max_rel_err <= threshold(p), and (when B is known)
// max_bound_ratio <= 1. Why two rules: max_rel_err compares every error with the largest
// output, so it cannot see an error that is small against max|golden| but large against
// what that element's own rounding allows — one dropped filter tap of conv2-5 moves an output
// by at most |w_k| ~ 0.03, 1e-2 of max|golden|: under the 5e-2 of fp16acc and about the
// 5e-3 of tf32/fp16. The element-wise rule scales each element's allowance with its own
// sum of |products| (the quantity every rounding-error bound of a dot product is stated in:
// |fl(sum) - sum| <= gamma * sum|w*x|) plus the rounding of the output itself (u_out, exact:
// the variant stores a half or bf16 output, so that rounding is <= u_out * |value|).
//
// The numbers come from an emulation, not a guess (tests/test_injected_errors.cpp does it
// and prints the table): the tool's generator data (inputs uniform in [-1, 1), weights
// scaled by sqrt(3/K)), the five AlexNet layers, inputs and weights rounded to the class's
// format (tf32 both to nearest and truncated, as tensor cores may take fp32 operands),
// products summed in float in (c, r, s) order, or for fp16acc rounded to half after every
// step (__hfma), half or bf16 outputs rounded once. Largest values seen at N = 1, 2 and 8
// (conv1, K = 363, is the worst case everywhere but fp16acc):
//   class     max_rel_err              (|err| - u_out|golden|) / B      threshold   tau
//   fp32      2.7e-6                   3.0e-7                           1e-4        7e-6
//   tf32      3.0e-4 (RN) 8.1e-4 (RZ)  9.8e-5 (RN) 2.7e-4 (RZ)          5e-3        6e-4
//   fp16      5.2e-4                   9.0e-5 (1.2e-4 half partials)    5e-3        4e-4
//   bf16      4.1e-3                   7.2e-4                           1e-2        2e-3
//   fp16acc   2.1e-2                   2.7e-3                           5e-2        6e-3
// The correct results use at most 0.45 of the per-element allowance at N=1 (the test asserts
// <= 0.5) and 0.46 at N=8 (the hidden test "[injected-margin]" checks <= 0.6). The H200
// agrees with the emulation: half-baseline's max_rel_err on conv4 is 2.130e-2, the
// emulation's at N=8 2.130e-2; the cuDNN, cuBLAS and WMMA tf32 rows give 2.95e-4 (rounded
// to nearest), the fp16 rows 5.2e-4.
//  - fp32: float accumulation of K <= 3456 terms drifts ~sqrt(K) * 2^-24 * |partial sums|,
//    2.7e-6 of max|golden| at worst; 1e-4 leaves a 40x margin (cuDNN's Winograd engines
//    reach 2e-5). tau = 7e-6, set so that the per-element rule tells a three-product split
//    (3xTF32, 3xFP16: fp32 class) from a two-product one (a product dropped: not fp32 class),
//    which max_rel_err barely sees (1.6-2.3e-4 against 1e-4). Derivation, in units of
//    |out - golden| / B (B = sum|w*x|):
//      honest fp32 rows, largest seen: 4.91e-6 — cudnn-fp32 (FFT) on conv3 N=128 NCHW, the
//        max of max_bound_ratio (0.0490816 of the old tau 1e-4) over every fp32 PASS row of
//        plots/h100/sweep_all_variants.csv (N = 1, 32, 128, both layouts; 498 rows; the
//        H200 sweeps give the same maximum). Ours: split-tf32 4.10e-6, hopper-ws-3xtf32
//        3.42e-6, winograd-f3x3-5x5 2.72e-6, hopper-ws-3xfp16 1.86e-6, the Winograd 3xFP16
//        rungs 1.05e-6, the direct and GEMM rows <= 4.6e-7.
//      two-product split (input low parts zeroed), smallest seen on the GPU: 2.14e-5 on conv5
//        (the "[split-mutation]" GPU test at 4f737dc, H100, N=1: max_bound_ratio 2.85 for
//        split-tf32, 2.88 for hopper-ws-3xfp16 / -3xtf32 at the then tau 7.5e-6;
//        plots/h100/gpu_tests.log); the CPU emulation "[split-emulation]" gives 2.39e-5
//        on conv5 .. 7.4e-5 on conv1.
//    tau = 7e-6 (2.14e-5 / 3 = 7.1e-6, rounded down): a two-product split fails by >= 3.05x,
//    the honest rows use at most 4.91e-6 / 7e-6 = 0.70 of it (a 1.43x margin), the emulation
//    3.0e-7 (0.04). The two margins multiply to 4.35 (2.14e-5 / 4.91e-6, cuDNN's FFT being
//    the least accurate honest row), so no tau gives both a wider one. Short sums: for fp32
//    (u_in = 0) the rigorous bound terms * 2^-24 stays below 7e-6 for terms < 117, so tau is
//    7e-6 there too. tests/test_injected_errors.cpp emulates the two-product split
//    ("[split-emulation]") and tests/gpu/test_split_range_gpu.cpp runs it on the GPU
//    ("[split-mutation]").
//  - tf32: operands rounded to a 10-bit mantissa (unit roundoff 2^-11 = 4.9e-4 rounded to
//    nearest, 2^-10 truncated); their errors add like a random walk. threshold 5e-3;
//    tau 6e-4 covers truncated operands with 2.2x margin.
//  - fp16 (half operands, float accumulation, half output): operand rounding as tf32 plus
//    one output rounding (u_out = 2^-11); a half workspace of per-channel partial sums
//    (mk-sw-mt-si-c-half) adds a little. threshold 5e-3; tau 4e-4.
//  - bf16 (bf16 operands, float accumulation, bf16 output): bf16 keeps 8 significant bits,
//    unit roundoff 2^-8 = 3.9e-3, 8x half's. The output rounding alone reaches 3.9e-3 of
//    max|golden|; the emulation's worst is 4.1e-3. threshold 1e-2 (2.4x), tau 2e-3 (2.8x),
//    u_out = 2^-8.
//  - fp16acc (half accumulation): the running sum is rounded to 11 bits at every step,
//    ~sqrt(K) * 2^-11 * |partial sum|: 2.1e-2 of max|golden| on conv4. threshold 5e-2,
//    tau 6e-3 (2.2x), u_out = 2^-11.
// What each class catches (AlexNet, N=1; the README's "Tests and checks" has the table): a
// wrong output channel and a padding shifted by one pixel fail in every class on every
// layer, by 14x to 4000x. A single dropped tap of the largest |w| fails in fp32, tf32, fp16
// and bf16 on every layer; the smallest dropped tap that fails, as |w| / weight scale:
// fp32 <= 0.01, tf32 0.04-0.30, fp16 0.03-0.24, bf16 0.15-0.76, fp16acc 0.46 on conv1
// (max_rel_err alone: tf32 and fp16 ~0.4 on conv4, fp16acc not even the largest tap).
// Under half accumulation one tap of conv2-5 (<= 0.036 per output) is below the running
// sum's own rounding noise (up to ~0.05 per output), so no comparison of values can see
// it: fp16acc there catches a dropped input channel of conv2-3 (25 or 9 taps) and the 4, 2,
// 8 and 8 largest taps of a filter dropped on conv2, 3, 4 and 5.
#pragma once

#include "variant.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cs::gpu {

// ---- what a precision class counts as --------------------------------------------------
// A row is measured against others of its anchor class (ours_over_cudnn: the fastest cuDNN row of
// that class) and its ceiling class (peak_tflops, pct_peak, im2col_gemm_ms: the cuBLAS GEMM
// of that class). fp16acc (half accumulation) has no cuDNN or cuBLAS counterpart of its own:
// it counts as fp16 (half operands and output) for both. Every other class is its own. These
// two functions are the only place the rule is written: the sweep writes both classes into
// the CSV (columns anchor_class, ceiling_class) and plots/ and `compare` read them from there.
Precision anchor_class(Precision p);
Precision ceiling_class(Precision p);

// Limit on max_rel_err.
double threshold(Precision p);
// tau: factor of B = sum|w*x| in the per-element allowance, for outputs that sum at least
// `terms` products (0: the class's value as calibrated on AlexNet, where every output sums
// >= 363 products). The calibrated tau holds for long sums, whose rounding errors partly
// cancel (they grow like sqrt(terms), B like terms); a short sum can have all its products'
// errors of one sign, so for terms < 363 tau grows like sqrt(363/terms), capped at the
// rigorous forward-error bound of a dot product of rounded operands, 2*u_in + terms*u_acc
// (u_in the operands' unit roundoff, tf32 taken as truncated: 2^-10; u_acc the running
// sum's). Seen on the H200: cuDNN bf16 on a 1x1 layer of 5 channels used 1.05x the
// calibrated 2e-3 — correct, within the rigorous 2^-7.
double bound_factor(Precision p, std::int64_t terms = 0);
double bound_factor(const PrecisionFacts& p, std::int64_t terms = 0);
// Fewest products any output of the layer sums (C times the filter taps inside the input
// at the most-padded output position).
std::int64_t min_terms(const Layer& l);
// u_out: unit roundoff of the class's output type (half 2^-11, bf16 2^-8, float 0).
double output_roundoff(Precision p);
// One-line reason for the threshold, for `convstudy list --thresholds` and the README.
const char* threshold_reason(Precision p);

struct ErrorStats {
    double max_abs_err = 0;
    double max_rel_err = 0;
    double rel_l2_err = 0;
    double max_abs_golden = 0;
    std::int64_t nonfinite = 0;       // NaN or Inf elements in the output
    std::int64_t worst_index = -1;    // where max_abs_err was found
    std::int64_t compared = 0;        // elements compared
    // Per-element rule: only when a bound was given.
    bool bound_checked = false;
    double max_bound_ratio = 0;       // max |out - golden| / (tau * B + u_out * |golden|)
    double bound_tau = 0;             // the tau used (bound_factor of the class and the layer)
    std::int64_t bound_worst_index = -1;
};

// Compares `count` elements of out against golden. bound: B per element (the golden set's
// bound file), or null to skip the per-element rule; p gives tau and u_out.
ErrorStats compare(const float* out, const float* golden, std::int64_t count, const float* bound, Precision p,
                   std::int64_t terms = 0);
ErrorStats compare(const float* out, const float* golden, std::int64_t count, const float* bound,
                   const PrecisionFacts& p, std::int64_t terms = 0);
// Compares a sample: out[indices[i]] against golden_values[i] (double, from the CPU), with
// bound_values[i] its B (or null).
ErrorStats compare_sampled(const float* out, const std::int64_t* indices, const double* golden_values,
                           const double* bound_values, std::int64_t count, double max_abs_golden, Precision p,
                           std::int64_t terms = 0);
ErrorStats compare_sampled(const float* out, const std::int64_t* indices, const double* golden_values,
                           const double* bound_values, std::int64_t count, double max_abs_golden,
                           const PrecisionFacts& p, std::int64_t terms = 0);

// The one pass rule (see the header comment).
bool passes(const ErrorStats& e, Precision p);
// Why e does not pass (empty when it does): the first rule it breaks, with its numbers.
std::string failure_reason(const ErrorStats& e, Precision p);
// The same on a class's row itself (the overloads above look theirs up in kPrecisions): what a
// class a test defines runs through, as tests/test_tolerance.cpp shows with a test-only row.
bool passes(const ErrorStats& e, const PrecisionFacts& p);
std::string failure_reason(const ErrorStats& e, const PrecisionFacts& p);

}  // namespace cs::gpu
