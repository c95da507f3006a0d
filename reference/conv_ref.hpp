// The CPU reference convolution (NCHW, cross-correlation, zero padding, no bias).
//
// One implementation templated on the accumulator: conv2d_ref<double> makes the golden
// output, conv2d_ref<float> is the CPU baseline that every speedup divides. Each output
// element is summed over k = (c, r, s) in one fixed order, so the result is bit-identical
// whatever the thread count. OpenMP across the batch and output tiles, SIMD inside.
#pragma once

#include "layer.hpp"

#include <cstdint>

namespace cs {

// out[N][M][E][F] = sum_{c,r,s} in[n][c][e*stride+r-pad][f*stride+s-pad] * w[m][c][r][s],
// accumulated in Acc and rounded to float at the end.
template <typename Acc>
void conv2d_ref(const Layer& layer, std::int64_t N, const float* in, const float* w, float* out);

extern template void conv2d_ref<float>(const Layer&, std::int64_t, const float*, const float*, float*);
extern template void conv2d_ref<double>(const Layer&, std::int64_t, const float*, const float*, float*);

// Plain nested loops in double, no blocking and no threads: the check on the check.
void conv2d_naive(const Layer& layer, std::int64_t N, const float* in, const float* w, double* out);

// One output element in double (for sampled checks of batches without golden files).
double conv2d_element(const Layer& layer, const float* in, const float* w, std::int64_t n, int m, int e, int f);

// The per-element error bound's scale B = sum_{c,r,s} |in * w| of every output (the
// golden set's <layer>.bound.npy; bench/tolerance.hpp says how it is used): conv2d_ref<double>
// of |in| and |w|, so exact products, double accumulation, rounded to float once.
void conv2d_bound(const Layer& layer, std::int64_t N, const float* in, const float* w, float* bound);
// B of one output element, in double (for sampled checks).
double conv2d_element_bound(const Layer& layer, const float* in, const float* w, std::int64_t n, int m, int e, int f);
// conv2d_element and conv2d_element_bound at `count` flat NCHW output indices (((n*M + m)*E +
// e)*F + f, as sample_indices gives them), in parallel: value[i] and bound[i] of idx[i].
void conv2d_elements(const Layer& layer, const float* in, const float* w, const std::int64_t* idx, std::int64_t count,
                     double* value, double* bound);

}  // namespace cs
