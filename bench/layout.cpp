#include "layout.hpp"

#include <cstddef>

namespace cs::gpu {

void nchw_to_nhwc(const float* src, float* dst, std::int64_t n, int c, int h, int w) {
    const std::int64_t hw = std::int64_t(h) * w;
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t p = 0; p < hw; ++p) {
            const float* s = src + i * c * hw + p;
            float* d = dst + (i * hw + p) * c;
            for (int k = 0; k < c; ++k) d[k] = s[std::int64_t(k) * hw];
        }
}

void nhwc_to_nchw(const float* src, float* dst, std::int64_t n, int c, int h, int w) {
    const std::int64_t hw = std::int64_t(h) * w;
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
        for (int k = 0; k < c; ++k) {
            const float* s = src + i * hw * c + k;
            float* d = dst + (i * c + k) * hw;
            for (std::int64_t p = 0; p < hw; ++p) d[p] = s[p * c];
        }
}

}  // namespace cs::gpu
