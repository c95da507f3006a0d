// How a GPU result is compared with the golden output, and the pass threshold of each
// precision class — defined here and nowhere else.
//
// Metrics: max_abs_err (the study's "max epsilon"), max_rel_err = max_abs_err / max|golden|,
// and rel_l2_err = ||out - golden||_2 / ||golden||_2. A non-finite output element (NaN
// poison left unwritten, an overflow) fails whatever the numbers say.
//
// The pass test is max_rel_err <= threshold(precision). Why these numbers: inputs are
// uniform in [-1, 1) and weights scaled by sqrt(3/K), so every output is a sum of K terms
// whose variance is 1/K each, |out| = O(1) and max|golden| is about 4-5 on AlexNet.
//  - fp32: float accumulation of K <= 3456 terms drifts like sqrt(K) * 2^-24 * |partial
//    sum| ~ 1e-5 at worst seen; 1e-4 leaves a 10x margin and is still 10^4 below the O(1)
//    error of any indexing bug.
//  - tf32 and fp16 (half inputs, float accumulation): each operand is rounded to a 10-bit
//    mantissa (unit roundoff 2^-11 = 4.9e-4); the rounding errors of K products add like a
//    random walk to ~1e-3 absolute, ~3e-4 relative to max|golden|; half outputs add one
//    more 2^-11 rounding. Threshold 5e-3.
//  - fp16acc (half accumulation): the running sum itself is rounded to 11 bits at every
//    step, ~sqrt(K) * 2^-11 * |partial sum| ~ 3e-2 absolute. Threshold 5e-2.
#pragma once

#include "variant.hpp"

#include <cstdint>

namespace cs::gpu {

double threshold(Precision p);
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
};

// Compares `count` elements of out against golden.
ErrorStats compare(const float* out, const float* golden, std::int64_t count);
// Compares a sample: out[indices[i]] against golden_values[i] (double, from the CPU).
ErrorStats compare_sampled(const float* out, const std::int64_t* indices, const double* golden_values,
                           std::int64_t count, double max_abs_golden);

bool passes(const ErrorStats& e, Precision p);

}  // namespace cs::gpu
