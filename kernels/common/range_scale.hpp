// Range safety of the split variants (fp32 class on fp16 / tf32 tensor cores: hopper-ws-3xfp16,
// hopper-ws-3xtf32, the Winograd 3xFP16 rungs): one per-tensor power-of-two scale for the input
// and one for the weights, found on the device inside the plan's run() (so inside kernel_ms), no
// host synchronisation. One kernel (range_scale_kernel in range_scale.cu) reduces max|x| and
// max|w| (atomicMax on the float bits) and its last block turns them into
//   ex = floor(log2 max|x|) - in_log2,  ew = floor(log2 max|w|) - w_log2
// so that the scaled tensors x' = x 2^-ex, w' = w 2^-ew have max|x'| in [2^in_log2, 2^(in_log2+1))
// and max|w'| in [2^w_log2, 2^(w_log2+1)): the targets a variant picks so that its hi parts stay
// below fp16's 65504 (with any transform's growth) and its lo parts above fp16's subnormals.
// The split transforms multiply by in_mul / w_mul (two floats each: 2^-ex may lie outside one
// float's exponent range for subnormal data) and the epilogue by out_mul = 2^(ex+ew) (two floats,
// read from device memory). Powers of two: every scaling is exact (away from fp32's subnormals),
// so the result is the unscaled one's.
//
// What cannot be represented sets `flag` (the plan reads it after the run, outside the timed
// region: Plan::run_error, which the harness turns into an ERROR naming the range):
//   1  max|x| is not finite (an input element is inf or NaN)
//   2  max|w| is not finite
//   3  max|x| * max|w| * K >= 2^127 (K: products per output): an output may exceed fp32's range.
// Inside that range (finite data with max|x| max|w| K < 2^127) a split variant gives an
// fp32-class result: the split's relative precision (~2^-22 per operand) holds for every element
// whose magnitude is above 2^-28 (3xFP16 input), 2^-17 (3xFP16 weights) of its tensor's max,
// smaller elements keep an absolute error below 2^-36 of the max, a contribution fp32's own
// rounding of the sum (2^-24 of the largest partial sum) already exceeds.
//
// The same structure carries the test-only split mutations (split_mutation.hpp): lo_keep_in
// multiplies the input's low parts, lo_keep_w_half the weights' low parts of the first half of the
// channels (1 normally; 0 drops a product), so a test can prove the check tells two products from
// three. The plan sets them once when it is built.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>

namespace cs::gpu::variants {

struct RangeScale {
    float in_mul[2];        // x' = x * in_mul[0] * in_mul[1]  (= x 2^-ex)
    float w_mul[2];         // w' = w * w_mul[0] * w_mul[1]    (= w 2^-ew)
    float out_mul[2];       // out = acc * out_mul[0] * out_mul[1]  (= acc 2^(ex+ew))
    float lo_keep_in;       // test-only mutation: 0 zeroes the input's low parts
    float lo_keep_w_half;   // test-only mutation: 0 zeroes the weights' low parts of channels < C/2
    unsigned max_in_bits;   // running max|x| (float bits); reset to 0 by the last block
    unsigned max_w_bits;
    unsigned blocks_done;
    int flag;               // 0, or what cannot be represented (see above)
    int ex, ew;
    unsigned last_in_bits, last_w_bits;  // the maxima the last run found (for the error message)
};

// Where a variant wants its scaled tensors: max|x'| in [2^in_log2, 2^(in_log2+1)), likewise w.
struct RangeTargets {
    int in_log2 = 0;
    int w_log2 = 0;
    std::int64_t terms = 1;  // products per output (K = C*R*S): the output-range check
};

// A plan's device-side scale: allocated (and zeroed) once with the plan.
class RangeScaleBuffer {
public:
    RangeScaleBuffer() = default;
    // lo_keep_in / lo_keep_w_half: 1 normally (the split mutation sets 0).
    RangeScaleBuffer(RangeTargets t, float lo_keep_in, float lo_keep_w_half);
    ~RangeScaleBuffer();
    RangeScaleBuffer(const RangeScaleBuffer&) = delete;
    RangeScaleBuffer& operator=(const RangeScaleBuffer&) = delete;
    RangeScaleBuffer(RangeScaleBuffer&& o) noexcept;
    RangeScaleBuffer& operator=(RangeScaleBuffer&& o) noexcept;

    // Enqueues the reduction over n_in input and n_w weight floats and the scales' update.
    void compute(const float* in, std::int64_t n_in, const float* w, std::int64_t n_w, cudaStream_t stream) const;
    RangeScale* device() const { return d_; }
    const float* in_mul() const;
    const float* w_mul() const;
    const float* out_mul() const;
    // After the run (synchronises the device): the error naming the range, or nothing.
    std::optional<std::string> error(const std::string& variant_kind) const;
    // One line for a plan's detail: the targets and the guaranteed range.
    std::string describe() const;

private:
    RangeScale* d_ = nullptr;
    RangeTargets t_{};
    int sms_ = 132;
};

}  // namespace cs::gpu::variants
