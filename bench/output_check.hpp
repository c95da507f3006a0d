// The check of every run after the checked one (harness.hpp): on the device, the output's
// non-finite elements are counted, a checksum of its bits is taken, and the elements of the
// tile-covering sample (sample_grid.hpp) are gathered, converted to float; only those few
// numbers come back to the host. Outside every timed interval.
#pragma once

#include "buffers.hpp"
#include "variant.hpp"

#include <cstdint>
#include <vector>

namespace cs::gpu {

struct OutputDigest {
    std::uint64_t checksum = 0;  // sum over elements of a hash of (index, bits): order-free, position-sensitive
    std::int64_t nonfinite = 0;  // NaN or Inf elements (the NaN poison included)
};

class OutputVerifier {
public:
    // `sample`: NCHW flat output indices (sorted); `layout` and `dtype`: how the output is stored.
    OutputVerifier(const Layer& l, std::int64_t N, Layout layout, DType dtype, const std::vector<std::int64_t>& sample);
    // Enqueues the digest and the gather of `out` on `s`, waits, and returns the digest; the
    // sample's values (float) are in samples() after it.
    OutputDigest digest(const void* out, cudaStream_t s);
    const std::vector<float>& samples() const { return host_samples_; }
    const std::vector<std::int64_t>& indices() const { return indices_; }

private:
    Layer layer_;
    std::int64_t N_ = 0;
    Layout layout_;
    DType dtype_;
    std::vector<std::int64_t> indices_;
    Buffer d_indices_, d_samples_, d_acc_, h_acc_;
    std::vector<float> host_samples_;
};

}  // namespace cs::gpu
