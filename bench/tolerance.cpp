#include "tolerance.hpp"

#include "error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace cs::gpu {

const PrecisionFacts& facts(Precision p) {
    for (const auto& f : kPrecisions)
        if (f.id == p) return f;
    throw Error("precision class " + std::to_string(int(p)) + " has no row in kPrecisions (precision.hpp)");
}

std::string_view to_string(Precision p) { return facts(p).name; }

std::optional<Precision> parse_precision(std::string_view s) {
    for (const auto& f : kPrecisions)
        if (f.name == s) return f.id;
    return std::nullopt;
}

Precision anchor_class(Precision p) { return facts(p).anchor; }

Precision ceiling_class(Precision p) { return facts(p).ceiling; }

// The numbers and their reasons: tolerance.hpp and the table (precision.hpp).
double threshold(Precision p) { return facts(p).max_rel_err; }

double bound_factor(Precision p, std::int64_t terms) { return bound_factor(facts(p), terms); }

double bound_factor(const PrecisionFacts& f, std::int64_t terms) {
    const double tau = f.tau;
    constexpr double kCalibrated = 363;  // the fewest products per output on AlexNet (conv1)
    if (terms <= 0 || double(terms) >= kCalibrated) return tau;
    const double rigorous = 2 * f.u_in + double(terms) * f.u_acc;
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

double output_roundoff(Precision p) { return facts(p).u_out; }

const char* threshold_reason(Precision p) { return facts(p).reason; }

namespace {

// The allowance of one element and the ratio of its error to it; an element whose allowance
// is 0 (every product exactly 0, so the exact sum is 0 in any precision) must be exact.
inline double bound_ratio(double err, double golden, double bound, double tau, double u_out) {
    const double allowed = tau * bound + u_out * std::fabs(golden);
    if (!(allowed >= 0)) return INFINITY;  // a NaN or negative bound: a damaged file fails
    return allowed > 0 ? err / allowed : (err == 0 ? 0.0 : INFINITY);
}

// The running sums of a comparison (one thread's, or all merged): the largest |error| and
// where, the sums of squares, the NaN/Inf count, and the largest bound ratio and where.
struct ErrorSums {
    double max_abs = 0, max_g = 0, sq_err = 0, sq_g = 0, max_ratio = 0;
    std::int64_t nonfinite = 0, worst = -1, ratio_worst = -1;

    // Output `o` against golden `g` at output index `index`; with `bounded`, also the error's
    // ratio to the allowance of `bound` (B).
    void add(double o, double g, bool bounded, double bound, std::int64_t index, double tau, double u_out) {
        max_g = std::max(max_g, std::fabs(g));
        sq_g += g * g;
        if (!std::isfinite(o)) {
            ++nonfinite;
            if (worst < 0) worst = index;
            return;
        }
        const double d = std::fabs(o - g);
        sq_err += d * d;
        if (d > max_abs) {
            max_abs = d;
            worst = index;
        }
        if (bounded) {
            const double r = bound_ratio(d, g, bound, tau, u_out);
            if (ratio_worst < 0 || r > max_ratio) {
                max_ratio = r;
                ratio_worst = index;
            }
        }
    }

    // Another thread's sums.
    void merge(const ErrorSums& t) {
        if (t.max_abs > max_abs) {
            max_abs = t.max_abs;
            worst = t.worst;
        } else if (worst < 0) {
            worst = t.worst;
        }
        if (t.ratio_worst >= 0 && (ratio_worst < 0 || t.max_ratio > max_ratio)) {
            max_ratio = t.max_ratio;
            ratio_worst = t.ratio_worst;
        }
        max_g = std::max(max_g, t.max_g);
        sq_err += t.sq_err;
        sq_g += t.sq_g;
        nonfinite += t.nonfinite;
    }

    // The statistics of `count` compared outputs, errors relative to `max_abs_golden`.
    ErrorStats stats(double max_abs_golden, bool bounded, double tau, std::int64_t count) const {
        ErrorStats e;
        e.max_abs_golden = max_abs_golden;
        e.bound_checked = bounded;
        e.bound_tau = bounded ? tau : 0;
        e.max_bound_ratio = bounded ? max_ratio : 0;
        e.bound_worst_index = bounded ? ratio_worst : -1;
        e.max_abs_err = nonfinite ? INFINITY : max_abs;
        e.max_rel_err = e.max_abs_golden > 0 ? e.max_abs_err / e.max_abs_golden : e.max_abs_err;
        e.rel_l2_err = nonfinite ? INFINITY : (sq_g > 0 ? std::sqrt(sq_err / sq_g) : std::sqrt(sq_err));
        e.nonfinite = nonfinite;
        e.worst_index = worst;
        e.compared = count;
        if (nonfinite && e.bound_checked) e.max_bound_ratio = INFINITY;
        return e;
    }
};

}  // namespace

ErrorStats compare(const float* out, const float* golden, std::int64_t count, const float* bound, Precision p,
                   std::int64_t terms) {
    return compare(out, golden, count, bound, facts(p), terms);
}

ErrorStats compare(const float* out, const float* golden, std::int64_t count, const float* bound,
                   const PrecisionFacts& p, std::int64_t terms) {
    const double tau = bound_factor(p, terms), u_out = p.u_out;
    ErrorSums all;
#pragma omp parallel
    {
        ErrorSums mine;
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < count; ++i)
            mine.add(out[i], golden[i], bound != nullptr, bound ? bound[i] : 0.0f, i, tau, u_out);
#pragma omp critical
        all.merge(mine);
    }
    return all.stats(all.max_g, bound != nullptr, tau, count);
}

ErrorStats compare_sampled(const float* out, const std::int64_t* indices, const double* golden_values,
                           const double* bound_values, std::int64_t count, double max_abs_golden, Precision p,
                           std::int64_t terms) {
    return compare_sampled(out, indices, golden_values, bound_values, count, max_abs_golden, facts(p), terms);
}

ErrorStats compare_sampled(const float* out, const std::int64_t* indices, const double* golden_values,
                           const double* bound_values, std::int64_t count, double max_abs_golden,
                           const PrecisionFacts& p, std::int64_t terms) {
    const double tau = bound_factor(p, terms), u_out = p.u_out;
    ErrorSums sums;
    for (std::int64_t i = 0; i < count; ++i)
        sums.add(out[indices[i]], golden_values[i], bound_values != nullptr, bound_values ? bound_values[i] : 0.0,
                 indices[i], tau, u_out);
    return sums.stats(max_abs_golden, bound_values != nullptr, tau, count);
}

bool passes(const ErrorStats& e, Precision p) { return passes(e, facts(p)); }

bool passes(const ErrorStats& e, const PrecisionFacts& p) {
    if (e.nonfinite != 0 || !std::isfinite(e.max_rel_err) || !(e.max_rel_err <= p.max_rel_err)) return false;
    if (e.bound_checked && !(e.max_bound_ratio <= 1.0)) return false;
    return true;
}

std::string failure_reason(const ErrorStats& e, Precision p) { return failure_reason(e, facts(p)); }

std::string failure_reason(const ErrorStats& e, const PrecisionFacts& p) {
    char b[320];
    if (e.nonfinite)
        std::snprintf(b, sizeof b, "%lld outputs are NaN/Inf (unwritten or overflowed), first at index %lld",
                      static_cast<long long>(e.nonfinite), static_cast<long long>(e.worst_index));
    else if (!(e.max_rel_err <= p.max_rel_err))
        std::snprintf(b, sizeof b, "max_rel_err %.3g > threshold %.3g (max_abs_err %.3g at index %lld)", e.max_rel_err,
                      p.max_rel_err, e.max_abs_err, static_cast<long long>(e.worst_index));
    else if (e.bound_checked && !(e.max_bound_ratio <= 1.0))
        std::snprintf(b, sizeof b,
                      "an element's error is %.3g x its bound %.3g*sum|w*x| + %.3g*|golden| (at index %lld; "
                      "max_rel_err %.3g is within %.3g)",
                      e.max_bound_ratio, e.bound_tau, p.u_out, static_cast<long long>(e.bound_worst_index),
                      e.max_rel_err, p.max_rel_err);
    else
        return {};
    return b;
}

}  // namespace cs::gpu
