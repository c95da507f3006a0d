#include "tolerance.hpp"

#include <algorithm>
#include <cmath>

namespace cs::gpu {

double threshold(Precision p) {
    switch (p) {
        case Precision::fp32: return 1e-4;
        case Precision::tf32: return 5e-3;
        case Precision::fp16: return 5e-3;
        case Precision::fp16acc: return 5e-2;
    }
    return 0;
}

const char* threshold_reason(Precision p) {
    switch (p) {
        case Precision::fp32: return "float accumulation of K<=3456 terms drifts ~1e-5 of max|out|; 10x margin";
        case Precision::tf32: return "operands rounded to 10-bit mantissa (2^-11): ~3e-4 of max|out| by random walk";
        case Precision::fp16: return "half operands and outputs (2^-11 rounding), float accumulation: ~5e-4 of max|out|";
        case Precision::fp16acc: return "running sum rounded to 11 bits every step: ~1e-2 of max|out|";
    }
    return "";
}

ErrorStats compare(const float* out, const float* golden, std::int64_t count) {
    double max_abs = 0, max_g = 0, sq_err = 0, sq_g = 0;
    std::int64_t nonfinite = 0, worst = -1;
#pragma omp parallel
    {
        double l_max_abs = 0, l_max_g = 0, l_sq_err = 0, l_sq_g = 0;
        std::int64_t l_nonfinite = 0, l_worst = -1;
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < count; ++i) {
            const double g = golden[i];
            const double o = out[i];
            l_max_g = std::max(l_max_g, std::fabs(g));
            l_sq_g += g * g;
            if (!std::isfinite(o)) {
                ++l_nonfinite;
                if (l_worst < 0) l_worst = i;
                continue;
            }
            const double d = std::fabs(o - g);
            l_sq_err += d * d;
            if (d > l_max_abs) {
                l_max_abs = d;
                l_worst = i;
            }
        }
#pragma omp critical
        {
            if (l_max_abs > max_abs) {
                max_abs = l_max_abs;
                worst = l_worst;
            } else if (worst < 0) {
                worst = l_worst;
            }
            max_g = std::max(max_g, l_max_g);
            sq_err += l_sq_err;
            sq_g += l_sq_g;
            nonfinite += l_nonfinite;
        }
    }
    ErrorStats e;
    e.max_abs_err = nonfinite ? INFINITY : max_abs;
    e.max_abs_golden = max_g;
    e.max_rel_err = max_g > 0 ? e.max_abs_err / max_g : e.max_abs_err;
    e.rel_l2_err = nonfinite ? INFINITY : (sq_g > 0 ? std::sqrt(sq_err / sq_g) : std::sqrt(sq_err));
    e.nonfinite = nonfinite;
    e.worst_index = worst;
    e.compared = count;
    return e;
}

ErrorStats compare_sampled(const float* out, const std::int64_t* indices, const double* golden_values,
                           std::int64_t count, double max_abs_golden) {
    double max_abs = 0, sq_err = 0, sq_g = 0;
    std::int64_t nonfinite = 0, worst = -1;
    for (std::int64_t i = 0; i < count; ++i) {
        const double o = out[indices[i]];
        const double g = golden_values[i];
        sq_g += g * g;
        if (!std::isfinite(o)) {
            ++nonfinite;
            if (worst < 0) worst = indices[i];
            continue;
        }
        const double d = std::fabs(o - g);
        sq_err += d * d;
        if (d > max_abs) {
            max_abs = d;
            worst = indices[i];
        }
    }
    ErrorStats e;
    e.max_abs_err = nonfinite ? INFINITY : max_abs;
    e.max_abs_golden = max_abs_golden;
    e.max_rel_err = max_abs_golden > 0 ? e.max_abs_err / max_abs_golden : e.max_abs_err;
    e.rel_l2_err = nonfinite ? INFINITY : (sq_g > 0 ? std::sqrt(sq_err / sq_g) : std::sqrt(sq_err));
    e.nonfinite = nonfinite;
    e.worst_index = worst;
    e.compared = count;
    return e;
}

bool passes(const ErrorStats& e, Precision p) {
    return e.nonfinite == 0 && std::isfinite(e.max_rel_err) && e.max_rel_err <= threshold(p);
}

}  // namespace cs::gpu
