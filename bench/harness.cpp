#include "harness.hpp"

#include "harness_run.hpp"
#include "join.hpp"
#include "nvtx.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

namespace cs::gpu {

std::string_view to_string(MemoryMode m) {
    switch (m) {
        case MemoryMode::pageable: return "pageable";
        case MemoryMode::pinned: return "pinned";
        case MemoryMode::managed: return "managed";
        case MemoryMode::managed_prefetch: return "managed-prefetch";
        case MemoryMode::streams: return "streams";
    }
    return "?";
}

const std::vector<MemoryMode>& all_memory_modes() {
    static const std::vector<MemoryMode> m = {MemoryMode::pageable, MemoryMode::pinned, MemoryMode::managed,
                                              MemoryMode::managed_prefetch, MemoryMode::streams};
    return m;
}

std::optional<MemoryMode> parse_memory_mode(std::string_view s) {
    for (auto m : all_memory_modes())
        if (to_string(m) == s) return m;
    if (s == "managed_prefetch") return MemoryMode::managed_prefetch;
    return std::nullopt;
}

std::string memory_mode_names() {
    return join(all_memory_modes(), ", ", [](MemoryMode m) { return to_string(m); });
}

std::string_view to_string(Status s) {
    switch (s) {
        case Status::pass: return "PASS";
        case Status::fail: return "FAIL";
        case Status::skip: return "SKIP";
        case Status::error: return "ERROR";
        case Status::unchecked: return "UNCHECKED";
    }
    return "?";
}

Stat Stat::of(std::vector<double> v) {
    Stat s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.count = int(v.size());
    s.min = v.front();
    s.max = v.back();
    const std::size_t h = v.size() / 2;
    s.median = v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
    auto quantile = [&](double q) {
        const double at = q * double(v.size() - 1);
        const std::size_t lo = std::size_t(at);
        const std::size_t hi = std::min(lo + 1, v.size() - 1);
        return v[lo] + (at - double(lo)) * (v[hi] - v[lo]);
    };
    s.p10 = quantile(0.1);
    s.p90 = quantile(0.9);
    s.p99 = quantile(0.99);
    return s;
}

namespace {

using harness_detail::AddWallTime;
using harness_detail::is_sticky;
using harness_detail::Run;
using harness_detail::RunMismatch;

// SKIP is for a variant that refused, or tensors that cannot be had, before any of its
// kernels ran; once one may have run, every failure is an ERROR (a SKIP would hide it). A later
// run that differs from the checked one is a FAIL that names the run. Returns false when the
// row leaves the rotation.
template <typename F>
bool guarded(Run& run, RunResult& r, F&& f) {
    auto skip_or_error = [&](std::string why) {
        if (run.started()) {
            r.status = Status::error;
            r.reason = "after the variant's kernels started: " + why;
        } else {
            r.status = Status::skip;
            r.reason = std::move(why);
        }
    };
    try {
        return f();
    } catch (const RunMismatch& e) {
        r.status = Status::fail;
        r.reason = e.what();
    } catch (const Skip& e) {
        skip_or_error(e.what());
    } catch (const CudaError& e) {
        r.status = Status::error;
        r.reason = e.what();
        r.fatal = is_sticky(e.code());
        if (!r.fatal && e.code() == cudaErrorMemoryAllocation)
            skip_or_error(std::string("out of device memory: ") + e.what());
    } catch (const std::bad_alloc&) {
        skip_or_error("out of host memory");
    } catch (const std::exception& e) {
        r.status = Status::error;
        r.reason = e.what();
    }
    // A failed launch or allocation must not leak into the next row's error checks.
    if (!r.fatal) (void)cudaGetLastError();
    return false;
}

// Device bytes a row's tensors take (float copies, and the variant's own when it converts).
double tensor_bytes(const Variant& v, const Problem& p) {
    const double elems = double(p.layer.input_elems(p.N) + p.layer.weight_elems() + p.layer.output_elems(p.N));
    return elems * (4.0 + (v.io != DType::f32 ? double(dtype_bytes(v.io)) : 0.0));
}

}  // namespace

std::uint64_t order_seed_of(const RunOptions& opt, std::size_t group_index) {
    std::uint64_t x = opt.order_seed + 0x9e3779b97f4a7c15ull * (group_index + 1);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 27);
}

std::vector<RunResult> run_group(DeviceContext& ctx, const std::vector<GroupRow>& rows, const HostData& data,
                                 const RunOptions& opt, std::uint64_t order_seed) {
    std::vector<RunResult> results(rows.size());
    // Rows whose tensors together fit in half the free device memory share one rotation; a
    // group too large for that is timed as several rotations, one after another.
    std::size_t first = 0;
    while (first < rows.size()) {
        const double budget = 0.5 * double(ctx.free_bytes());
        double used = 0;
        std::size_t last = first;
        while (last < rows.size()) {
            const double b = tensor_bytes(*rows[last].variant, rows[last].problem);
            if (last > first && used + b > budget) break;
            used += b;
            ++last;
        }
        std::vector<std::unique_ptr<Run>> runs(last - first);
        std::vector<std::size_t> alive;
        bool lost = false;
        for (std::size_t i = first; i < last && !lost; ++i) {
            RunResult& r = results[i];
            r.threshold = threshold(rows[i].variant->precision);
            r.algo = rows[i].variant->algo;
            r.order_seed = order_seed;
            const nvtx::Range row(nvtx::row_name(rows[i].problem.layer.name, static_cast<long long>(rows[i].problem.N),
                                                 rows[i].variant->name, std::string(to_string(rows[i].problem.layout)),
                                                 std::string(to_string(rows[i].mode))));
            auto& run = runs[i - first];
            run = std::make_unique<Run>(ctx, *rows[i].variant, rows[i].mode, rows[i].problem, data, opt, r);
            const bool ok = guarded(*run, r, [&] {
                run->prepare();
                return run->check();
            });
            if (ok && opt.repeats > 0)
                alive.push_back(i);
            else if (ok)
                run->finish();
            else
                run.reset();  // its memory back before the next row's
            lost = r.fatal;
        }
        // Round-robin: every timed repeat (and warm-up) runs each row of the rotation once, in an
        // order shuffled per round from the group's seed; a row's statistics are over its own runs.
        std::mt19937_64 rng(order_seed);
        const int rounds = lost ? 0 : opt.warmup + opt.repeats;
        for (int it = 0; it < rounds && !alive.empty(); ++it) {
            std::vector<std::size_t> order = alive;
            std::shuffle(order.begin(), order.end(), rng);
            for (std::size_t i : order) {
                Run& run = *runs[i - first];
                const AddWallTime add{results[i].loop_ms};
                const bool ok = guarded(run, results[i], [&] {
                    if (it == opt.warmup) run.note_clock_power(true);
                    run.iteration(it);
                    if (it + 1 == rounds) run.note_clock_power(false);
                    return true;
                });
                if (!ok) {
                    alive.erase(std::find(alive.begin(), alive.end(), i));
                    runs[i - first].reset();
                    if (results[i].fatal) {
                        lost = true;
                        break;
                    }
                }
            }
            if (lost) break;
        }
        for (std::size_t i : alive) {
            if (lost) {
                results[i].status = Status::error;
                results[i].reason = "not finished: the CUDA context was lost to another row of its timing group";
                results[i].fatal = true;
            } else {
                runs[i - first]->finish();
            }
        }
        runs.clear();
        if (lost) {
            for (std::size_t i = last; i < rows.size(); ++i) {
                results[i].status = Status::error;
                results[i].reason = "not run: the CUDA context was lost to another row of its timing group";
                results[i].fatal = true;
            }
            break;
        }
        first = last;
    }
    return results;
}

RunResult run_variant(DeviceContext& ctx, const Variant& v, MemoryMode mode, const Problem& p, const HostData& data,
                      const RunOptions& opt) {
    return run_group(ctx, {GroupRow{&v, mode, p}}, data, opt, order_seed_of(opt, 0)).front();
}

}  // namespace cs::gpu
