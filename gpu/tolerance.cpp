#include "tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cs::gpu {

Precision anchor_class(Precision p) { return p == Precision::fp16acc ? Precision::fp16 : p; }

Precision ceiling_class(Precision p) { return p == Precision::fp16acc ? Precision::fp16 : p; }

std::optional<Precision> parse_precision(std::string_view s) {
    for (auto p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp16acc})
        if (to_string(p) == s) return p;
    return std::nullopt;
}

// The numbers and their reasons: tolerance.hpp.
double threshold(Precision p) {
    switch (p) {
        case Precision::fp32: return 1e-4;
        case Precision::tf32: return 5e-3;
        case Precision::fp16: return 5e-3;
        case Precision::bf16: return 1e-2;
        case Precision::fp16acc: return 5e-2;
    }
    return 0;
}

double bound_factor(Precision p, std::int64_t terms) {
    double tau = 0, u_in = 0, u_acc = 0x1p-24;
    switch (p) {
        case Precision::fp32: tau = 7e-6; break;   // tolerance.hpp: "fp32" derives it
        case Precision::tf32: tau = 6e-4, u_in = 0x1p-10; break;
        case Precision::fp16: tau = 4e-4, u_in = 0x1p-11; break;
        case Precision::bf16: tau = 2e-3, u_in = 0x1p-8; break;
        case Precision::fp16acc: tau = 6e-3, u_in = 0x1p-11, u_acc = 0x1p-11; break;
    }
    constexpr double kCalibrated = 363;  // the fewest products per output on AlexNet (conv1)
    if (terms <= 0 || double(terms) >= kCalibrated) return tau;
    const double rigorous = 2 * u_in + double(terms) * u_acc;
    return std::max(tau, std::min(rigorous, tau * std::sqrt(kCalibrated / double(terms))));
}

std::int64_t min_terms(const Layer& l) {
    // Taps of a filter row (or column) inside the input at output position e (or f).
    auto inside = [](int e, int stride, int pad, int R, int H) {
        int n = 0;
        for (int r = 0; r < R; ++r) {
            const int h = e * stride - pad + r;
            n += (h >= 0 && h < H) ? 1 : 0;
        }
        return n;
    };
    int rows = l.R, cols = l.S;
    for (int e = 0; e < l.E(); ++e) rows = std::min(rows, inside(e, l.stride, l.pad, l.R, l.H));
    for (int f = 0; f < l.F(); ++f) cols = std::min(cols, inside(f, l.stride, l.pad, l.S, l.W));
    return std::int64_t(l.C) * rows * cols;
}

double output_roundoff(Precision p) {
    switch (p) {
        case Precision::fp32:
        case Precision::tf32: return 0;
        case Precision::fp16:
        case Precision::fp16acc: return 0x1p-11;
        case Precision::bf16: return 0x1p-8;
    }
    return 0;
}

const char* threshold_reason(Precision p) {
    switch (p) {
        case Precision::fp32:
            return "float accumulation of K<=3456 terms drifts ~3e-6 of max|out| (emulated); 7e-6 of sum|w*x| per "
                   "element (honest fp32 rows use <= 0.66 of it, a two-product split >= 3.2x)";
        case Precision::tf32:
            return "operands rounded to a 10-bit mantissa: ~3e-4 of max|out| (8e-4 truncated); 6e-4 of sum|w*x| per "
                   "element";
        case Precision::fp16:
            return "half operands and output (2^-11), float accumulation: ~5e-4 of max|out|; 4e-4 of sum|w*x| + "
                   "2^-11|out| per element";
        case Precision::bf16:
            return "bf16 operands and output (2^-8), float accumulation: ~4e-3 of max|out|; 2e-3 of sum|w*x| + "
                   "2^-8|out| per element";
        case Precision::fp16acc:
            return "running sum rounded to half every step: ~2e-2 of max|out|; 6e-3 of sum|w*x| + 2^-11|out| per "
                   "element";
    }
    return "";
}

namespace {

// The allowance of one element and the ratio of its error to it; an element whose allowance
// is 0 (every product exactly 0, so the exact sum is 0 in any precision) must be exact.
inline double bound_ratio(double err, double golden, double bound, double tau, double u_out) {
    const double allowed = tau * bound + u_out * std::fabs(golden);
    if (!(allowed >= 0)) return INFINITY;  // a NaN or negative bound: a damaged file fails
    return allowed > 0 ? err / allowed : (err == 0 ? 0.0 : INFINITY);
}

void finish(ErrorStats& e, double max_abs, double sq_err, double sq_g, std::int64_t nonfinite, std::int64_t worst,
            std::int64_t count) {
    e.max_abs_err = nonfinite ? INFINITY : max_abs;
    e.max_rel_err = e.max_abs_golden > 0 ? e.max_abs_err / e.max_abs_golden : e.max_abs_err;
    e.rel_l2_err = nonfinite ? INFINITY : (sq_g > 0 ? std::sqrt(sq_err / sq_g) : std::sqrt(sq_err));
    e.nonfinite = nonfinite;
    e.worst_index = worst;
    e.compared = count;
    if (nonfinite && e.bound_checked) e.max_bound_ratio = INFINITY;
}

}  // namespace

ErrorStats compare(const float* out, const float* golden, std::int64_t count, const float* bound, Precision p,
                   std::int64_t terms) {
    const double tau = bound_factor(p, terms), u_out = output_roundoff(p);
    double max_abs = 0, max_g = 0, sq_err = 0, sq_g = 0, max_ratio = 0;
    std::int64_t nonfinite = 0, worst = -1, ratio_worst = -1;
#pragma omp parallel
    {
        double l_max_abs = 0, l_max_g = 0, l_sq_err = 0, l_sq_g = 0, l_max_ratio = 0;
        std::int64_t l_nonfinite = 0, l_worst = -1, l_ratio_worst = -1;
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
            if (bound) {
                const double r = bound_ratio(d, g, bound[i], tau, u_out);
                if (l_ratio_worst < 0 || r > l_max_ratio) {
                    l_max_ratio = r;
                    l_ratio_worst = i;
                }
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
            if (l_ratio_worst >= 0 && (ratio_worst < 0 || l_max_ratio > max_ratio)) {
                max_ratio = l_max_ratio;
                ratio_worst = l_ratio_worst;
            }
            max_g = std::max(max_g, l_max_g);
            sq_err += l_sq_err;
            sq_g += l_sq_g;
            nonfinite += l_nonfinite;
        }
    }
    ErrorStats e;
    e.max_abs_golden = max_g;
    e.bound_checked = bound != nullptr;
    e.bound_tau = bound ? tau : 0;
    e.max_bound_ratio = bound ? max_ratio : 0;
    e.bound_worst_index = bound ? ratio_worst : -1;
    finish(e, max_abs, sq_err, sq_g, nonfinite, worst, count);
    return e;
}

ErrorStats compare_sampled(const float* out, const std::int64_t* indices, const double* golden_values,
                           const double* bound_values, std::int64_t count, double max_abs_golden, Precision p,
                           std::int64_t terms) {
    const double tau = bound_factor(p, terms), u_out = output_roundoff(p);
    double max_abs = 0, sq_err = 0, sq_g = 0, max_ratio = 0;
    std::int64_t nonfinite = 0, worst = -1, ratio_worst = -1;
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
        if (bound_values) {
            const double r = bound_ratio(d, g, bound_values[i], tau, u_out);
            if (ratio_worst < 0 || r > max_ratio) {
                max_ratio = r;
                ratio_worst = indices[i];
            }
        }
    }
    ErrorStats e;
    e.max_abs_golden = max_abs_golden;
    e.bound_checked = bound_values != nullptr;
    e.bound_tau = bound_values ? tau : 0;
    e.max_bound_ratio = bound_values ? max_ratio : 0;
    e.bound_worst_index = bound_values ? ratio_worst : -1;
    finish(e, max_abs, sq_err, sq_g, nonfinite, worst, count);
    return e;
}

bool passes(const ErrorStats& e, Precision p) {
    if (e.nonfinite != 0 || !std::isfinite(e.max_rel_err) || !(e.max_rel_err <= threshold(p))) return false;
    if (e.bound_checked && !(e.max_bound_ratio <= 1.0)) return false;
    return true;
}

std::string failure_reason(const ErrorStats& e, Precision p) {
    char b[320];
    if (e.nonfinite)
        std::snprintf(b, sizeof b, "%lld outputs are NaN/Inf (unwritten or overflowed), first at index %lld",
                      static_cast<long long>(e.nonfinite), static_cast<long long>(e.worst_index));
    else if (!(e.max_rel_err <= threshold(p)))
        std::snprintf(b, sizeof b, "max_rel_err %.3g > threshold %.3g (max_abs_err %.3g at index %lld)", e.max_rel_err,
                      threshold(p), e.max_abs_err, static_cast<long long>(e.worst_index));
    else if (e.bound_checked && !(e.max_bound_ratio <= 1.0))
        std::snprintf(b, sizeof b,
                      "an element's error is %.3g x its bound %.3g*sum|w*x| + %.3g*|golden| (at index %lld; "
                      "max_rel_err %.3g is within %.3g)",
                      e.max_bound_ratio, e.bound_tau, output_roundoff(p),
                      static_cast<long long>(e.bound_worst_index), e.max_rel_err, threshold(p));
    else
        return {};
    return b;
}

}  // namespace cs::gpu
